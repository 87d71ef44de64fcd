/* SPDX-License-Identifier: MIT */
/* timerq: timers ordered by due time in a GSequence; see timerq.h. */
#include "config.h"

#include "timerq.h"

struct timerq {
	GSequence *seq;
	clock_fn now;
	void *now_ctx;
	uint64_t next_seq;
};

static gint timer_cmp(gconstpointer a, gconstpointer b, gpointer unused)
{
	const struct timer *x = a, *y = b;

	(void)unused;
	if (x->due_us != y->due_us)
		return x->due_us < y->due_us ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return 0;
}

struct timerq *timerq_new(clock_fn now, void *now_ctx)
{
	struct timerq *q = g_new0(struct timerq, 1);

	q->seq = g_sequence_new(NULL);
	q->now = now;
	q->now_ctx = now_ctx;
	return q;
}

void timerq_free(struct timerq *q)
{
	GSequenceIter *it;

	if (!q)
		return;
	/* Disarm what is left so owners freed later see a clean state. */
	for (it = g_sequence_get_begin_iter(q->seq);
	     !g_sequence_iter_is_end(it); it = g_sequence_iter_next(it))
		((struct timer *)g_sequence_get(it))->it = NULL;
	g_sequence_free(q->seq);
	g_free(q);
}

uint64_t timerq_now(const struct timerq *q)
{
	return q->now(q->now_ctx);
}

void timer_init(struct timer *t, timer_fn fn, void *ctx)
{
	t->fn = fn;
	t->ctx = ctx;
	t->it = NULL;
	t->due_us = 0;
	t->seq = 0;
}

void timerq_cancel(struct timerq *q, struct timer *t)
{
	(void)q;
	if (!t->it)
		return;
	g_sequence_remove(t->it);
	t->it = NULL;
}

void timerq_arm(struct timerq *q, struct timer *t, uint64_t delay_us)
{
	timerq_cancel(q, t);
	t->due_us = timerq_now(q) + delay_us;
	t->seq = q->next_seq++;
	t->it = g_sequence_insert_sorted(q->seq, t, timer_cmp, NULL);
}

uint64_t timerq_next_due(const struct timerq *q)
{
	GSequenceIter *it = g_sequence_get_begin_iter(q->seq);

	if (g_sequence_iter_is_end(it))
		return UINT64_MAX;
	return ((struct timer *)g_sequence_get(it))->due_us;
}

unsigned timerq_run(struct timerq *q)
{
	uint64_t now = timerq_now(q);
	unsigned fired = 0;

	for (;;) {
		GSequenceIter *it = g_sequence_get_begin_iter(q->seq);
		struct timer *t;

		if (g_sequence_iter_is_end(it))
			break;
		t = g_sequence_get(it);
		if (t->due_us > now)
			break;
		g_sequence_remove(it);
		t->it = NULL;
		fired++;
		/* The callback may re-arm or free its own timer. */
		t->fn(t, t->ctx);
	}
	return fired;
}

uint64_t timerq_monotonic_clock(void *ctx)
{
	(void)ctx;
	return (uint64_t)g_get_monotonic_time();
}

struct timerq_source {
	GSource src;
	struct timerq *q;
};

static gboolean tq_prepare(GSource *src, gint *timeout)
{
	struct timerq *q = ((struct timerq_source *)src)->q;
	uint64_t due = timerq_next_due(q), now = timerq_now(q);

	if (due == UINT64_MAX) {
		*timeout = -1;
		return FALSE;
	}
	if (due <= now) {
		*timeout = 0;
		return TRUE;
	}
	/* Round up so we never wake a millisecond early and spin. */
	*timeout = (gint)MIN((due - now + 999) / 1000, (uint64_t)G_MAXINT);
	return FALSE;
}

static gboolean tq_check(GSource *src)
{
	struct timerq *q = ((struct timerq_source *)src)->q;

	return timerq_next_due(q) <= timerq_now(q);
}

static gboolean tq_dispatch(GSource *src, GSourceFunc cb, gpointer data)
{
	(void)cb;
	(void)data;
	timerq_run(((struct timerq_source *)src)->q);
	return G_SOURCE_CONTINUE;
}

static GSourceFuncs tq_funcs = {
	.prepare = tq_prepare,
	.check = tq_check,
	.dispatch = tq_dispatch,
};

GSource *timerq_source_new(struct timerq *q)
{
	GSource *src = g_source_new(&tq_funcs, sizeof(struct timerq_source));

	((struct timerq_source *)src)->q = q;
	g_source_set_name(src, "ibemu timers");
	return src;
}
