/* SPDX-License-Identifier: MIT */
/*
 * ibv_attach_mcast and ibv_detach_mcast (docs/verbs.md "Multicast"): the
 * daemon keeps the attachments and gives an attached UD QP a copy of
 * each packet to the group that reaches its port; the checks and errors
 * are the kernel's, made there (abi/verbs_wire.h VERBS_IOC_MCAST_*).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "verbs/provider.h"

static int mcast_ioc(struct ibv_qp *qp, unsigned long cmd, const union ibv_gid *gid,
		     uint16_t lid)
{
	struct verbs_ioc_mcast a = { .qpn = qp->qp_num, .mlid = lid };

	memcpy(a.gid, gid->raw, sizeof(a.gid));
	return ibemu_ioc(to_qp(qp)->ctx, cmd, &a) < 0 ? errno : 0;
}

int ibemu_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return mcast_ioc(qp, VERBS_IOC_MCAST_ATTACH, gid, lid);
}

int ibemu_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return mcast_ioc(qp, VERBS_IOC_MCAST_DETACH, gid, lid);
}
