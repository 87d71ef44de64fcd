/* SPDX-License-Identifier: MIT */
/*
 * FAST_RDMA_LINK: `rdma link add`, `rdma link delete` and `rdma dev set
 * NAME name`, which the preloaded library's netlink family passes on
 * (docs/netlink.md): the host's CA renamed (kernel/rdma_link.h), and the
 * directory sysfs shows it by (dev/sysfs.h), whose old name the FUSE
 * adapter has the kernel forget.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "abi/fast_wire.h"
#include "dev/sysfs.h"
#include "kernel/rdma_link.h"
#include "lib/log.h"
#include "socket/fastpath_priv.h"

#define CAP_NET_ADMIN_BIT 12	/* linux/capability.h's CAP_NET_ADMIN */

/*
 * The kernel asks CAP_NET_ADMIN of these commands (RDMA_NL_ADMIN_PERM):
 * the asking process's effective set, as /proc says it, in the run's own
 * user namespace (the kernel asks it of the initial one, which no run
 * has: the emulator is the run's kernel). What the library says of
 * itself is not asked.
 */
static bool net_admin(int pid)
{
	char path[64], line[256];
	bool ok = false;
	uint64_t caps;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (pid <= 0 || !(f = fopen(path, "re")))
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %" SCNx64, &caps) == 1) {
			ok = caps >> CAP_NET_ADMIN_BIT & 1;
			break;
		}
	fclose(f);
	return ok;
}

/* The payload's @want NUL-terminated strings, or false. */
static bool strings(const char *payload, size_t n, const char **s, unsigned want)
{
	size_t off = 0;
	unsigned i;

	for (i = 0; i < want; i++) {
		const char *end = off < n ? memchr(payload + off, 0, n - off) : NULL;

		if (!end)
			return false;
		s[i] = payload + off;
		off = (size_t)(end - payload) + 1;
	}
	return off == n;
}

static int64_t do_link(struct fast_chan *ch, uint64_t op, const char *payload, size_t n)
{
	static const unsigned nstrings[] = { [FAST_LINK_RENAME] = 2, [FAST_LINK_ADD] = 3,
					     [FAST_LINK_DEL] = 1 };
	struct host *h = umad_host_hw(ch->fp->host);
	struct rdma_link_renamed r;
	const char *s[3];
	int err;

	/* A tree not the emulator's (--remote) is built once from a
	 * listing: its names cannot change yet. */
	if (!ch->fp->vfs || ch->adopted)
		return -EOPNOTSUPP;
	if (op >= G_N_ELEMENTS(nstrings) || !strings(payload, n, s, nstrings[op]))
		return -EINVAL;
	if (!net_admin(ch->pid))
		return -EPERM;
	err = op == FAST_LINK_RENAME ? rdma_link_rename(h, s[0], s[1], &r) :
	      op == FAST_LINK_ADD ? rdma_link_add(h, s[0], s[1], s[2], &r) :
	      rdma_link_del(h, s[0], &r);
	if (err < 0 || r.k < 0)
		return err;
	if (!sysfs_rename_ca(ch->fp->vfs, r.was, r.now))
		g_warning("rdma link: %s renamed %s, but sysfs has no %s", r.was, r.now, r.was);
	g_debug("rdma link: device %s is now %s", r.was, r.now);
	return 0;
}

void fp_do_rdma_link(struct fast_chan *ch, uint64_t op, const char *payload, size_t n)
{
	fp_reply(ch, do_link(ch, op, payload, n), NULL, 0, -1);
}
