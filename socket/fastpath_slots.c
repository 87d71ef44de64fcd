/* SPDX-License-Identifier: MIT */
/* The fast path's slots: requests in shared memory; see fastpath_priv.h
 * and fastslot.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <glib-unix.h>

#include "abi/fast_wire.h"
#include "abi/fd_pass.h"
#include "ctl/ctl.h"
#include "dev/serve.h"
#include "dev/vfs.h"
#include "lib/listener.h"
#include "lib/log.h"
#include "socket/fastpath_priv.h"
#include "socket/fastpath_verbs.h"
#include "socket/fastslot.h"

/* ---- the slot (fastslot.h) --------------------------------------------- */

void fp_do_slot(struct fast_chan *ch)
{
	int memfd;

	if (ch->adopted) {
		fp_reply(ch, -EOPNOTSUPP, NULL, 0, -1);
		return;
	}
	if (ch->slot) {
		fp_reply(ch, -EBUSY, NULL, 0, -1);
		return;
	}
	if (!(ch->slot = fastslot_new(&memfd))) {
		fp_reply(ch, -errno, NULL, 0, -1);
		return;
	}
	if (ch->file->ops->set_client)
		ch->file->ops->set_client(ch->file->file, ch->file->pid, "fast, shared memory");
	fp_reply(ch, 0, NULL, 0, memfd);
	close(memfd);
}


/* The slot's new request, if there is one, served; false if none. */
static bool serve_slot(struct fast_chan *ch)
{
	static uint8_t buf[sizeof(struct fast_req) + FAST_SLOT_IN_MAX];
	size_t n = fastslot_take(ch->slot, buf);
	struct fast_req rq;

	if (!n)
		return false;
	memcpy(&rq, buf, sizeof(rq));
	ch->in_slot = true;
	/* Only what needs no fd: writes and ioctls, inline. */
	if ((rq.op != FAST_WRITE && rq.op != FAST_IOCTL) || rq.flags)
		fp_reply(ch, -EINVAL, NULL, 0, -1);
	else
		fp_do_request(ch, buf, n, -1);
	return true;
}

static void set_looking(struct fastpath *fp, bool on)
{
	unsigned i;

	for (i = 0; i < fp->chans->len; i++) {
		struct fast_chan *ch = g_ptr_array_index(fp->chans, i);

		if (ch->slot)
			fastslot_set_looking(ch->slot, on);
	}
}

/* Serve every slot's request; how many there were. (Serving a write or
 * an ioctl adds or removes no channel: the index stays good.) */
static unsigned serve_slots(struct fastpath *fp)
{
	unsigned i, n = 0;

	for (i = 0; i < fp->chans->len; i++) {
		struct fast_chan *ch = g_ptr_array_index(fp->chans, i);

		if (ch->slot && serve_slot(ch))
			n++;
	}
	return n;
}

/*
 * After a request, look at the slots a while, as serve.c does at the
 * FUSE device: the next request is usually there within microseconds,
 * and seeing it costs no system call on either side. Between looks the
 * CPU goes to any other thread that can run (sched_yield): with a
 * program of several threads (opensm's receiver, dispatcher and sender)
 * on few CPUs, looking must not take the CPU of the thread that makes the
 * next request (docs/performance.md), so it can go on far longer than a
 * look that holds the CPU could. Then stop looking, and serve what came
 * meanwhile (its client saw us looking: no ring).
 */
#define SLOT_SPIN_US	1000
#define SLOT_BATCH	64	/* then back to the loop: timers, sockets, FUSE */

void fp_spin_slots(struct fastpath *fp)
{
	int64_t until = g_get_monotonic_time() + SLOT_SPIN_US;
	unsigned batch = 0, n;

	set_looking(fp, true);
	while (batch < SLOT_BATCH) {
		if ((n = serve_slots(fp)))
			until = g_get_monotonic_time() + SLOT_SPIN_US;
		else if (g_get_monotonic_time() >= until)
			break;
		else
			sched_yield();
		batch += n;
	}
	set_looking(fp, false);
	serve_slots(fp);
}
