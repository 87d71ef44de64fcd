/* SPDX-License-Identifier: MIT */
/*
 * How the library waits (docs/fast-path.md "Waiting"): for an answer on
 * the channel, for an answer in the slot, and in poll on a data socket.
 *
 * On this kind of machine a thread that sleeps costs most of a round trip
 * to wake (a halted vCPU; docs/performance.md), so each wait looks for
 * what it waits for a while first, on machines with more than one CPU.
 * The slot and poll look with sched_yield() between looks: the CPU goes
 * to any other thread that can run (the emulator, the program's other
 * threads, which in opensm are the ones that make its next request), so
 * looking costs only time nobody else wanted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "preload/fast.h"

long long fast_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int fast_many_cpus(void)
{
	static int cpus;

	if (!cpus)
		cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	return cpus > 1;
}

/*
 * The channel's look does not give the CPU away: when the answer does
 * not come in time (a busy emulator, many clients), this thread sleeps at
 * once for its next requests, so that its looking never takes the CPU the
 * emulator needs.
 */
#define SPIN_BACKOFF	64

static __thread unsigned spin_skip;

int fast_may_spin(void)
{
	if (!fast_many_cpus())
		return 0;
	if (spin_skip) {
		spin_skip--;
		return 0;
	}
	return 1;
}

void fast_spin_missed(void)
{
	spin_skip = SPIN_BACKOFF;
}

/* Does @fds name a data socket of ours? */
static int names_ours(const struct pollfd *fds, nfds_t n)
{
	nfds_t i;

	for (i = 0; i < n; i++)
		if (fds[i].fd >= 0 && fdtab_data(fds[i].fd))
			return 1;
	return 0;
}

/*
 * How long poll looks: FAST_POLL_SPIN_NS, or IBEMU_FAST_POLL_LOOK_US
 * microseconds (a test makes it long, to send a signal while it looks).
 */
static long long poll_look_ns(void)
{
	static long long cached = -1;
	long long ns = __atomic_load_n(&cached, __ATOMIC_RELAXED);
	const char *e;

	if (ns < 0) {
		e = getenv("IBEMU_FAST_POLL_LOOK_US");
		ns = e && *e ? strtoll(e, NULL, 10) * 1000 : FAST_POLL_SPIN_NS;
		__atomic_store_n(&cached, ns, __ATOMIC_RELAXED);
	}
	return ns;
}

/*
 * A program that polls a data socket mostly waits for the answer to the
 * request it has just made, which is microseconds away: look (poll with
 * no timeout) for FAST_POLL_SPIN_NS first. A signal must still interrupt
 * the poll (EINTR) as the kernel's does, so signals stay blocked between
 * looks and every look is a ppoll with the program's own mask: a signal
 * that came meanwhile is taken there, and ends the poll.
 */
int fast_poll(struct pollfd *fds, nfds_t n, int timeout)
{
	long long start, end, left;
	struct timespec ts = { 0, 0 };
	sigset_t all, mask;
	int r, e;

	if (timeout == 0 || !names_ours(fds, n) || !fast_many_cpus())
		return -2;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &mask);
	start = fast_now_ns();
	end = start + poll_look_ns();
	if (timeout > 0 && end > start + timeout * 1000000LL)
		end = start + timeout * 1000000LL;
	do {
		if ((r = ppoll(fds, n, &ts, &mask)) != 0)
			goto out;	/* ready, or a signal came */
		sched_yield();
	} while (fast_now_ns() < end);
	if (timeout < 0) {
		r = ppoll(fds, n, NULL, &mask);
	} else if ((left = start + timeout * 1000000LL - fast_now_ns()) > 0) {
		ts = (struct timespec){ left / 1000000000LL, left % 1000000000LL };
		r = ppoll(fds, n, &ts, &mask);
	}	/* else r is 0: the time ran out while looking */
out:
	e = errno;
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	errno = e;
	return r;
}
