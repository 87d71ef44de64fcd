/* SPDX-License-Identifier: MIT */
/*
 * Fault rules at the packet engine, driven from host1 port 1 of the default
 * fabric with a hand-driven clock: each action, the limits (count, nth,
 * probability) and the seed's replay.
 */
#include "config.h"

#include "fabric/port.h"
#include "testfab.h"

struct env {
	struct test_clock clock;
	struct fabric *f;
	struct timerq *tq;
	struct capture cap;
	struct port *host;
};

static const uint8_t to_host3[] = { 1, 7, 1 };

static int setup(void **state)
{
	struct env *e = g_new0(struct env, 1);

	e->f = topo_load_default(0);
	e->tq = timerq_new(test_clock_now, &e->clock);
	e->f->tq = e->tq;
	e->host = &fabric_find(e->f, "host1")->ports[1];
	capture_attach(&e->cap, e->host);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	g_array_free(e->cap.pkts, TRUE);
	fabric_free(e->f);
	timerq_free(e->tq);
	g_free(e);
	return 0;
}

static struct fault_rule *rule(struct env *e, enum fault_action a, unsigned arg,
			       const char *node, int attr)
{
	struct fault_rule *r = g_new(struct fault_rule, 1);

	fault_rule_defaults(r);
	r->action = a;
	r->arg = arg;
	r->node = node ? fabric_find(e->f, node) : NULL;
	r->attr = attr;
	fault_add(&e->f->faults, r);
	return r;
}

/* Send NodeInfo to host3 @n times; return how many answers came back. */
static unsigned ask(struct env *e, uint16_t attr, unsigned n)
{
	struct mad_pkt p = dr_smp(1, attr, 0, 3, to_host3);
	unsigned i;

	g_array_set_size(e->cap.pkts, 0);
	for (i = 0; i < n; i++)
		fabric_send(e->f, e->host, &p);
	return e->cap.pkts->len;
}

static void test_drop_count_nth(void **state)
{
	struct env *e = *state;
	struct fault_rule *r = rule(e, FAULT_DROP, 0, "host3", UMAD_SM_ATTR_NODE_INFO);

	assert_int_equal(ask(e, UMAD_SM_ATTR_NODE_INFO, 3), 0);
	assert_int_equal(ask(e, UMAD_SM_ATTR_NODE_DESC, 1), 1);	/* other attrs pass */
	assert_int_equal(r->hits, 3);
	r->count = 4;	/* one more drop, then it stops */
	assert_int_equal(ask(e, UMAD_SM_ATTR_NODE_INFO, 3), 2);
	fault_del(&e->f->faults, r->id);
	r = rule(e, FAULT_DROP, 0, "host3", FAULT_ANY);
	r->nth = 2;	/* only the second match */
	assert_int_equal(ask(e, UMAD_SM_ATTR_NODE_INFO, 3), 2);
	assert_int_equal(r->hits, 1);
	assert_int_equal(r->matches, 3);
}

static void test_duplicate_and_corrupt(void **state)
{
	struct env *e = *state;
	struct fault_rule *r = rule(e, FAULT_DUPLICATE, 0, "host3", FAULT_ANY);

	assert_int_equal(ask(e, UMAD_SM_ATTR_NODE_DESC, 1), 2);	/* answered twice */
	fault_del(&e->f->faults, r->id);
	/* Corrupt the first data byte of the response as it arrives home. */
	rule(e, FAULT_CORRUPT, 64, "host1", FAULT_ANY);
	assert_int_equal(ask(e, UMAD_SM_ATTR_NODE_DESC, 1), 1);
	assert_int_equal(smp_data(captured(&e->cap, 0)->mad)[0], 'h' ^ 0xff);
}

static void test_delay_on_the_clock(void **state)
{
	struct env *e = *state;

	rule(e, FAULT_DELAY, 150, "host3", FAULT_ANY);
	assert_int_equal(ask(e, UMAD_SM_ATTR_NODE_INFO, 1), 0);
	e->clock.now_us += 149000;
	timerq_run(e->tq);
	assert_int_equal(e->cap.pkts->len, 0);
	e->clock.now_us += 1000;
	timerq_run(e->tq);
	assert_int_equal(e->cap.pkts->len, 1);	/* delivered once, not re-delayed */
}

static void test_route_filter_and_status(void **state)
{
	struct env *e = *state;
	struct fault_rule *r = rule(e, FAULT_DROP, 0, "host3", FAULT_ANY);

	r->route = 0;	/* LID-routed only: DR passes */
	assert_int_equal(ask(e, UMAD_SM_ATTR_NODE_INFO, 1), 1);
	fault_del(&e->f->faults, r->id);
	rule(e, FAULT_STATUS, 0x1c, "host3", UMAD_SM_ATTR_NODE_INFO);
	assert_int_equal(ask(e, UMAD_SM_ATTR_NODE_INFO, 1), 1);
	assert_int_equal(mad_status(captured(&e->cap, 0)->mad) & 0x7fff, 0x1c);
	/* A status rule at a switch on the way does not answer for host3. */
	rule(e, FAULT_STATUS, 0x0c, "leaf1", UMAD_SM_ATTR_NODE_DESC);
	assert_int_equal(ask(e, UMAD_SM_ATTR_NODE_DESC, 1), 1);
	assert_int_equal(mad_status(captured(&e->cap, 0)->mad) & 0x7fff, 0);
}

static void test_time_window(void **state)
{
	struct env *e = *state;
	struct fault_rule *r = rule(e, FAULT_DROP, 0, "host3", FAULT_ANY);

	r->after_us = 100000;
	r->before_us = 200000;
	assert_int_equal(ask(e, UMAD_SM_ATTR_NODE_INFO, 1), 1);	/* not yet */
	e->clock.now_us = 150000;
	assert_int_equal(ask(e, UMAD_SM_ATTR_NODE_INFO, 1), 0);	/* inside */
	e->clock.now_us = 200000;
	assert_int_equal(ask(e, UMAD_SM_ATTR_NODE_INFO, 1), 1);	/* over */
}

static void test_reorder_jitter_direction(void **state)
{
	struct env *e = *state;
	struct mad_pkt a = dr_smp(1, UMAD_SM_ATTR_NODE_INFO, 0, 3, to_host3);
	struct mad_pkt b = dr_smp(1, UMAD_SM_ATTR_NODE_DESC, 0, 3, to_host3);
	struct fault_rule *r = rule(e, FAULT_REORDER, 100, "host3", UMAD_SM_ATTR_NODE_INFO);
	uint64_t delivered;
	unsigned i;

	/* NodeInfo is held at host3 until NodeDesc arrives, which overtakes it. */
	g_array_set_size(e->cap.pkts, 0);
	fabric_send(e->f, e->host, &a);
	assert_int_equal(e->cap.pkts->len, 0);
	fabric_send(e->f, e->host, &b);
	assert_int_equal(e->cap.pkts->len, 2);
	assert_int_equal(mad_attr_id(captured(&e->cap, 0)->mad), UMAD_SM_ATTR_NODE_DESC);
	assert_int_equal(mad_attr_id(captured(&e->cap, 1)->mad), UMAD_SM_ATTR_NODE_INFO);
	/* With nothing behind it, a held packet goes after its longest hold. */
	assert_int_equal(ask(e, UMAD_SM_ATTR_NODE_INFO, 1), 0);
	e->clock.now_us += 100000;
	timerq_run(e->tq);
	assert_int_equal(e->cap.pkts->len, 1);
	fault_del(&e->f->faults, r->id);

	/* Jitter: delays of 50..60 ms, drawn from the seeded generator. */
	r = rule(e, FAULT_DELAY, 50, "host3", FAULT_ANY);
	r->jitter = 10;
	for (i = 0; i < 20; i++) {
		unsigned ms = fault_delay_ms(&e->f->faults, r);

		assert_true(ms >= 50 && ms <= 60);
	}
	fault_del(&e->f->faults, r->id);

	/* Direction: drop responses only; the request is still answered. */
	r = rule(e, FAULT_DROP, 0, NULL, FAULT_ANY);
	r->direction = 1;
	delivered = e->f->delivered;
	assert_int_equal(ask(e, UMAD_SM_ATTR_NODE_DESC, 1), 0);
	assert_int_equal(e->f->delivered, delivered + 1);	/* host3's SMA */
}

static unsigned run_with_seed(struct env *e, uint32_t seed, GString *log)
{
	struct fault_rule *r;
	unsigned got;
	GList *l;

	fault_set_clear(&e->f->faults);
	fault_set_init(&e->f->faults, seed);
	r = rule(e, FAULT_DROP, 0, "host3", UMAD_SM_ATTR_NODE_INFO);
	r->prob = 0.5;
	got = ask(e, UMAD_SM_ATTR_NODE_INFO, 64);
	for (l = e->f->faults.log.head; l; l = l->next)
		g_string_append_printf(log, "%s\n", (char *)l->data);
	return got;
}

static void test_seed_replays(void **state)
{
	struct env *e = *state;
	GString *a = g_string_new(NULL), *b = g_string_new(NULL), *c = g_string_new(NULL);
	unsigned got = run_with_seed(e, 1, a);

	assert_true(got > 0 && got < 64);	/* some dropped, some not */
	assert_int_equal(run_with_seed(e, 1, b), got);
	assert_string_equal(a->str, b->str);
	run_with_seed(e, 2, c);
	assert_string_not_equal(a->str, c->str);
	g_string_free(a, TRUE);
	g_string_free(b, TRUE);
	g_string_free(c, TRUE);
}

/* The event log keeps the newest FAULT_LOG_MAX lines, numbered on. */
static void test_log_is_a_ring(void **state)
{
	struct env *e = *state;
	struct fault_set *fs = &e->f->faults;
	unsigned i;

	for (i = 0; i < FAULT_LOG_MAX + 5; i++)
		fault_log(fs, "event %u", i);
	assert_int_equal(fs->log.length, FAULT_LOG_MAX);
	assert_int_equal(fs->log_seq, FAULT_LOG_MAX + 5);
	assert_string_equal(g_queue_peek_head(&fs->log), "6 event 5");
	assert_string_equal(g_queue_peek_tail(&fs->log), "10005 event 10004");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_drop_count_nth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicate_and_corrupt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_delay_on_the_clock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_route_filter_and_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_time_window, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reorder_jitter_direction, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seed_replays, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_is_a_ring, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
