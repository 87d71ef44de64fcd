/* SPDX-License-Identifier: MIT */
/*
 * What the round-trip benchmarks (smp_ping.c, transport_floor.c) share: a
 * monotonic clock in nanoseconds and the comparison that sorts their
 * latencies for the median and the 99th percentile.
 */
#ifndef BENCH_LATENCY_H
#define BENCH_LATENCY_H

#include <stdint.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#endif
