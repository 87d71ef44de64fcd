/* SPDX-License-Identifier: MIT */
/*
 * The slot, the client's end (abi/fast_wire.h, docs/fast-path.md "The
 * slot"): a write or an ioctl put in memory the emulator maps too. While
 * the emulator looks at its slots (it does for a while after each
 * request) the request and its answer cost no system call; otherwise one
 * FAST_RING on the channel wakes it. The answer is looked for a while
 * (wait.c), then slept on (a futex), and a channel that hangs up
 * meanwhile means the emulator is gone (EIO).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "abi/fast_wire.h"
#include "preload/fast.h"

/* While asleep, how often to ask whether the emulator is still there. */
#define GONE_CHECK_NS	100000000

struct fast_slot *slot_map(int memfd)
{
	void *m = mmap(NULL, FAST_SLOT_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);

	return m == MAP_FAILED ? NULL : m;
}

void slot_unmap(struct fast_slot *sl)
{
	if (sl)
		munmap(sl, FAST_SLOT_BYTES);
}

/* The emulator has closed the channel: it is gone. */
static int chan_gone(int chan)
{
	struct pollfd p = { .fd = chan, .events = POLLIN };

	struct timespec now = { 0, 0 };

	/* ppoll: libc's own, not this library's poll. */
	return ppoll(&p, 1, &now, NULL) == 1 && (p.revents & (POLLHUP | POLLERR));
}

static int answered(struct fast_slot *sl, uint32_t seq)
{
	return __atomic_load_n(&sl->ans_seq, __ATOMIC_ACQUIRE) == seq;
}

/*
 * 0 once @seq is answered, -EIO if the emulator went first. A signal
 * does not end the wait: the request is made (as exchange()'s). The look
 * first gives the CPU away between looks (wait.c): the thread that makes
 * the answer may need it.
 */
static int wait_answer(struct fast_slot *sl, uint32_t seq, int chan)
{
	struct timespec ts = { 0, GONE_CHECK_NS };
	long long end;
	uint32_t cur;

	if (fast_many_cpus()) {
		end = fast_now_ns() + FAST_SLOT_SPIN_NS;
		do {
			if (answered(sl, seq))
				return 0;
			sched_yield();
		} while (fast_now_ns() < end);
	}
	__atomic_store_n(&sl->sleeping, 1u, __ATOMIC_RELAXED);
	/* Then read ans_seq (the barrier pairs with the emulator's). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	while ((cur = __atomic_load_n(&sl->ans_seq, __ATOMIC_ACQUIRE)) != seq) {
		if (syscall(SYS_futex, &sl->ans_seq, FUTEX_WAIT, cur, &ts, NULL, 0) < 0 &&
		    errno == ETIMEDOUT && chan_gone(chan)) {
			__atomic_store_n(&sl->sleeping, 0u, __ATOMIC_RELAXED);
			return -EIO;
		}
	}
	__atomic_store_n(&sl->sleeping, 0u, __ATOMIC_RELAXED);
	return 0;
}

long slot_call(struct fast_slot *sl, uint32_t *seq, int chan, const struct fast_ident *chan_id,
	       uint32_t op, uint64_t arg, const void *in, size_t in_len, void *out,
	       size_t out_max)
{
	struct fast_req ring = { .version = FAST_VERSION, .op = FAST_RING };
	struct fast_reply rp;
	ssize_t n;

	sl->req = (struct fast_req){ .version = FAST_VERSION, .op = op, .arg = arg };
	sl->in_len = (uint32_t)in_len;
	if (in_len)
		memcpy(sl->in, in, in_len);
	__atomic_store_n(&sl->req_seq, ++*seq, __ATOMIC_RELEASE);
	/* Then read looking (the barrier pairs with the emulator's). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&sl->looking, __ATOMIC_RELAXED)) {
		if (!fast_ident_is(chan, chan_id))
			return -ESTALE;	/* not our channel now: no ring there */
		while ((n = send(chan, &ring, sizeof(ring), MSG_NOSIGNAL)) < 0 && errno == EINTR)
			;
		if (n < 0)
			return -EIO;
	}
	if (wait_answer(sl, *seq, chan) < 0)
		return -EIO;
	rp = sl->rep;
	if (rp.out_len > out_max || rp.out_len > FAST_SLOT_OUT_MAX)
		return -EIO;	/* not an answer we can give */
	if (rp.out_len)
		memcpy(out, sl->out, rp.out_len);
	return (long)rp.ret;
}
