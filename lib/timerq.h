/* SPDX-License-Identifier: MIT */
/*
 * timerq: every timer in ibemu (send timeouts and retries, delay and
 * reorder fault rules, scenario steps, the control socket's idle limit)
 * lives in one queue that reads time from one clock.
 * The daemon's clock is g_get_monotonic_time(); unit tests pass a clock they
 * advance by hand, so no test ever sleeps (docs/architecture.md "One loop").
 */
#ifndef IBEMU_LIB_TIMERQ_H
#define IBEMU_LIB_TIMERQ_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

struct timer;
typedef void (*timer_fn)(struct timer *t, void *ctx);

/* A timer is embedded in its owner; the queue never frees it. */
struct timer {
	uint64_t due_us;
	uint64_t seq;		/* orders timers that fall due together */
	timer_fn fn;
	void *ctx;
	GSequenceIter *it;	/* non-NULL while armed */
};

typedef uint64_t (*clock_fn)(void *ctx);

struct timerq;

struct timerq *timerq_new(clock_fn now, void *now_ctx);
void timerq_free(struct timerq *q);
uint64_t timerq_now(const struct timerq *q);

void timer_init(struct timer *t, timer_fn fn, void *ctx);
static inline bool timer_armed(const struct timer *t) { return t->it != NULL; }
/* (Re)arm @t to fire @delay_us from now. */
void timerq_arm(struct timerq *q, struct timer *t, uint64_t delay_us);
void timerq_cancel(struct timerq *q, struct timer *t);
/* Due time of the earliest timer, or UINT64_MAX when none is armed. */
uint64_t timerq_next_due(const struct timerq *q);
/* Fire every timer due at or before now; returns how many fired. */
unsigned timerq_run(struct timerq *q);

/* The monotonic clock in microseconds, for the daemon. */
uint64_t timerq_monotonic_clock(void *ctx);
/* A GSource that runs @q on the default main context. */
GSource *timerq_source_new(struct timerq *q);

#endif
