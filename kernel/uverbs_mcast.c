/* SPDX-License-Identifier: MIT */
/*
 * Multicast at the HCA (docs/verbs.md "Multicast"): which UD QPs are
 * attached to which group, and a copy of each packet to a multicast LID
 * for every QP attached to it at the port it reached. The switches'
 * replication by their MulticastForwardingTables is the fabric's
 * (fabric/route.c); joining a group at the SA is the program's.
 *
 * The errors are the kernel's (drivers/infiniband/core/uverbs_cmd.c
 * ib_uverbs_attach_mcast/detach_mcast, verbs.c ib_attach_mcast): EINVAL
 * for a QP that is not UD, a GID that is not multicast (first byte 0xff;
 * on RoCE IPv6 or IPv4-mapped multicast) or, on InfiniBand, an LID that
 * is not (0xc000 to 0xfffe); attaching what is attached is no error;
 * detaching what is not is EINVAL. On a RoCE port an attachment also
 * makes the port a member of its network's group (fabric/mcast.c).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "fabric/mcast.h"
#include "fabric/port.h"
#include "kernel/uverbs_priv.h"

struct uverbs_mcast {
	uint16_t mlid;
	uint8_t gid[16];
	struct uverbs_qp *qp;
	struct port *roce;	/* the RoCE port it made a group member, or NULL */
};

void uverbs_mcast_init(struct uverbs_dev *d)
{
	d->mcast = g_ptr_array_new_with_free_func(g_free);
	d->mcast_groups = g_hash_table_new_full(g_bytes_hash, g_bytes_equal,
						 (GDestroyNotify)g_bytes_unref, g_free);
}

void uverbs_mcast_clear(struct uverbs_dev *d)
{
	if (d->mcast)
		g_ptr_array_free(d->mcast, TRUE);
	if (d->mcast_groups)
		g_hash_table_destroy(d->mcast_groups);
	d->mcast = NULL;
	d->mcast_groups = NULL;
}

static bool same(const struct uverbs_mcast *m, uint16_t mlid, const uint8_t gid[16])
{
	return m->mlid == mlid && !memcmp(m->gid, gid, 16);
}

/* The index of @q's attachment to (@mlid, @gid), or -1. */
static int find(const struct uverbs_dev *d, const struct uverbs_qp *q, uint16_t mlid,
		const uint8_t gid[16])
{
	guint i;

	for (i = 0; i < d->mcast->len; i++) {
		const struct uverbs_mcast *m = g_ptr_array_index(d->mcast, i);

		if (m->qp == q && same(m, mlid, gid))
			return (int)i;
	}
	return -1;
}

/* Attachments to @gid: the count its group has in d->mcast_groups. */
static unsigned *group_count(struct uverbs_dev *d, const uint8_t gid[16], bool make)
{
	GBytes *key = g_bytes_new(gid, 16);
	unsigned *n = g_hash_table_lookup(d->mcast_groups, key);

	if (!n && make) {
		n = g_new0(unsigned, 1);
		g_hash_table_insert(d->mcast_groups, g_bytes_ref(key), n);
	}
	g_bytes_unref(key);
	return n;
}

/* The RoCE port @q is bound to, or NULL (an InfiniBand one, or none). */
static struct port *roce_port(const struct uverbs_dev *d, const struct uverbs_qp *q)
{
	struct port *p = q->port ? node_port(d->node, q->port) : NULL;

	return p && port_is_roce(p) ? p : NULL;
}

static void remove_at(struct uverbs_dev *d, guint i)
{
	struct uverbs_mcast *m = g_ptr_array_index(d->mcast, i);
	unsigned *n = group_count(d, m->gid, false);

	if (m->roce)
		fabric_roce_mcast_leave(d->node->fabric, m->roce, m->gid);

	m->qp->mcast--;
	if (n && !--*n) {
		GBytes *key = g_bytes_new(m->gid, 16);

		g_hash_table_remove(d->mcast_groups, key);
		g_bytes_unref(key);
	}
	g_ptr_array_remove_index(d->mcast, i);
}

int uverbs_mcast_attach(struct uverbs_dev *d, struct uverbs_qp *q,
			const struct verbs_ioc_mcast *a)
{
	struct port *rp = roce_port(d, q);
	struct uverbs_mcast *m;
	unsigned *n;

	/* RoCE: an IP multicast GID, and no LID (ib_attach_mcast checks
	 * the LID on InfiniBand only). */
	if (q->type != QPT_UD || (rp ? !fabric_gid_is_mcast(a->gid) :
				  a->gid[0] != 0xff || !verbs_lid_is_mcast(a->mlid)))
		return -EINVAL;
	if (find(d, q, a->mlid, a->gid) >= 0)
		return 0;
	/* The limits the device states (abi/verbs_wire.h): a group is a
	 * GID some QP is attached to. */
	n = group_count(d, a->gid, false);
	if (d->mcast->len >= VERBS_MAX_MCAST_ATTACH || (n && *n >= VERBS_MAX_MCAST_QP_ATTACH) ||
	    (!n && g_hash_table_size(d->mcast_groups) >= VERBS_MAX_MCAST_GRP))
		return -ENOMEM;
	/* The Ethernet switches forward the group to this port now (as
	 * they would once its host joined by IGMP). */
	if (rp && fabric_roce_mcast_join(d->node->fabric, rp, a->gid) < 0)
		return -ENOMEM;
	m = g_new0(struct uverbs_mcast, 1);
	m->roce = rp;
	m->mlid = a->mlid;
	memcpy(m->gid, a->gid, 16);
	m->qp = q;
	q->mcast++;
	(*group_count(d, a->gid, true))++;
	g_ptr_array_add(d->mcast, m);
	return 0;
}

int uverbs_mcast_detach(struct uverbs_dev *d, struct uverbs_qp *q,
			const struct verbs_ioc_mcast *a)
{
	int i = find(d, q, a->mlid, a->gid);

	if (i < 0)
		return -EINVAL;
	remove_at(d, (guint)i);
	return 0;
}

void uverbs_mcast_detach_all(struct uverbs_dev *d, struct uverbs_qp *q)
{
	guint i = 0;

	while (q->mcast && i < d->mcast->len) {
		struct uverbs_mcast *m = g_ptr_array_index(d->mcast, i);

		if (m->qp == q) {
			remove_at(d, i);
		} else {
			i++;
		}
	}
}

/*
 * A packet to a multicast LID reached CA port @in: a copy to every QP
 * attached there to its MLID and, when it has a GRH, to the MGID its
 * DGID names (an HCA matches both). The sender's own QP gets one too if
 * it is attached, as an HCA loops multicast back unless told not to
 * (VERBS_QP_BLOCK_SELF_MCAST: a packet from its own port and QPN).
 */
enum upper_verdict uverbs_mcast_deliver(struct uverbs_dev *d, struct port *in,
					const struct mad_pkt *p)
{
	const struct verbs_wire_pkt *w = g_bytes_get_data(p->data, NULL);
	enum upper_verdict v = UPPER_UNCLAIMED;
	guint i;

	for (i = 0; i < d->mcast->len; i++) {
		const struct uverbs_mcast *m = g_ptr_array_index(d->mcast, i);

		/* A RoCE packet matches by its DGID alone: the MLID is the
		 * fabric's own way of carrying it. */
		if ((!port_is_roce(in) && m->mlid != p->dlid) || m->qp->port != in->num ||
		    ((w->flags & VERBS_PKT_GRH) && memcmp(w->dgid, m->gid, 16)))
			continue;
		if (m->qp->block_self_mcast && w->sqpn == m->qp->qpn && port_owns_lid(in, p->slid))
			continue;	/* its own, not looped back */
		switch (uverbs_qp_deliver(m->qp, in, p)) {
		case UPPER_TAKEN:
			v = UPPER_TAKEN;
			break;
		case UPPER_DROPPED:
			if (v == UPPER_UNCLAIMED)
				v = UPPER_DROPPED;
			break;
		default:
			break;
		}
	}
	return v;	/* taken if any QP took it */
}
