/* SPDX-License-Identifier: MIT */
/*
 * core_rtt: the round trip of one cache line between CPU 0 and CPU 1, in
 * ns (two threads pinned there, 200,000 exchanges of a flag). On a VM the
 * host may place the two vCPUs near each other or far apart, and it
 * changes that over minutes: on the 2-vCPU build machine about 80-130 ns
 * or about 370-400 ns (docs/performance.md). Everything that goes between
 * two pinned ends follows it (a polling pingpong 1.0 against 2.5 us/iter,
 * ib_write_bw 125 against 35 Gbit/s), so the benches print it beside each
 * round (bench/lib.sh core_rtt).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

#define EXCHANGES	200000

static int flag;

static void pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

static void *peer(void *arg)
{
	int i;

	(void)arg;
	pin(1);
	for (i = 0; i < EXCHANGES; i++) {
		while (__atomic_load_n(&flag, __ATOMIC_ACQUIRE) != 1)
			;
		__atomic_store_n(&flag, 0, __ATOMIC_RELEASE);
	}
	return NULL;
}

int main(void)
{
	struct timespec a, b;
	pthread_t t;
	int i;

	pin(0);
	if (pthread_create(&t, NULL, peer, NULL))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < EXCHANGES; i++) {
		__atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&flag, __ATOMIC_ACQUIRE) != 0)
			;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	pthread_join(t, NULL);
	printf("%.0f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / EXCHANGES);
	return 0;
}
