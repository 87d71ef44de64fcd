/* SPDX-License-Identifier: MIT */
/*
 * The device files' tables (kernel/kfile.h), as any transport drives
 * them: issm's blocking open answered later and in order, cancelled when
 * interrupted, EAGAIN with O_NONBLOCK; umad's read with nothing queued
 * (EAGAIN: the transport blocks) and poll; the verbs command file's CREATE_COMP_CHANNEL held until
 * VERBS_IOC_UPCALL_DONE, its upcall read before the context's records,
 * and its held writes failed by the last close; the calls a kind has no
 * op for.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>

#include "abi/verbs_wire.h"
#include "kernel/kfile.h"
#include "kernel/umad.h"
#include "kernel/uverbs.h"
#include "socket/remote_priv.h"
#include "testfab.h"

struct env {
	struct test_clock clock;
	struct fabric *f;
	struct timerq *tq;
	struct host *hw;
	struct umad_host *h;
	struct uverbs *uv;
};

/* A wait as a transport keeps one: what it was answered, how often. */
struct wait {
	struct kfile_wait w;
	unsigned answers;
	int64_t ret;
	void *file;
};

static void answered(struct kfile_wait *w, int64_t ret, void *file)
{
	struct wait *t = (struct wait *)w;

	t->answers++;
	t->ret = ret;
	t->file = file;
}

static struct wait new_wait(void)
{
	return (struct wait){ .w = { .done = answered } };
}

static const struct kfile_opener who = { .pid = 1, .via = "test" };
static const struct kfile_opener who_nb = { .pid = 1, .flags = O_NONBLOCK, .via = "test" };

static int setup(void **state)
{
	struct env *e = g_new0(struct env, 1);

	e->f = topo_load_default(0);
	e->tq = timerq_new(test_clock_now, &e->clock);
	e->hw = host_new(e->f, e->tq);
	host_attach(e->hw, fabric_find(e->f, "host1"));
	e->h = umad_host_new(e->hw);
	e->uv = uverbs_new(e->hw);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	uverbs_free(e->uv);
	umad_host_free(e->h);
	host_free(e->hw);
	timerq_free(e->tq);
	fabric_free(e->f);
	g_free(e);
	return 0;
}

/* ib_umad_sm_open: one holder; blocking opens wait in order, each answered
 * when the one before lets go; an interrupted one is never answered. */
static void test_issm_waits(void **state)
{
	struct env *e = *state;
	struct umad_dev *d = umad_host_dev(e->h, 0);
	struct wait w1 = new_wait(), w2 = new_wait(), w3 = new_wait();
	void *held = NULL, *f;

	assert_int_equal(issm_fops.open(d, &who, &w1.w, &held), 0);
	assert_true(umad_issm_held(d));
	assert_int_equal(issm_fops.open(d, &who_nb, &w2.w, &f), -EAGAIN);
	assert_int_equal(issm_fops.open(d, &who, &w2.w, &f), KFILE_LATER);
	assert_int_equal(issm_fops.open(d, &who, &w3.w, &f), KFILE_LATER);
	issm_fops.cancel(d, &w2.w);	/* interrupted: w3 is next */
	issm_fops.release(held);
	assert_int_equal(w2.answers, 0);
	assert_int_equal(w3.answers, 1);
	assert_int_equal(w3.ret, 0);
	assert_true(umad_issm_held(d));
	issm_fops.release(w3.file);
	assert_false(umad_issm_held(d));
	assert_null(issm_fops.read);	/* umad_sm_fops: open and release only */
	assert_null(issm_fops.write);
	assert_null(issm_fops.ioctl);
}

/* With nothing queued a read is EAGAIN (the transport blocks the reader)
 * and leaves nothing for the caller; shorter than a header, EINVAL. */
static void test_umad_read(void **state)
{
	struct env *e = *state;
	void *f;
	uint8_t buf[512];
	size_t filled = 99;

	assert_int_equal(umad_fops.open(umad_host_dev(e->h, 0), &who, NULL, &f), 0);
	assert_int_equal(umad_fops.read(f, buf, sizeof(buf), &filled), -EAGAIN);
	assert_int_equal(filled, 0);
	assert_int_equal(umad_fops.read(f, buf, 8, &filled), -EINVAL);
	assert_int_equal(umad_fops.poll(f) & POLLIN, 0);
	assert_true(umad_fops.poll(f) & POLLOUT);
	assert_false(kfile_readable(&umad_fops, f));
	umad_fops.release(f);
}

static void *open_cmd(struct env *e)
{
	void *f = NULL;

	assert_int_equal(uverbs_cmd_fops.open(uverbs_dev_ctx_node(uverbs_dev(e->uv, 0)), &who,
					      NULL, &f), 0);
	return f;
}

/* CREATE_COMP_CHANNEL: held, an upcall record to read, answered with the
 * command's size by UPCALL_DONE (or its error). */
static void test_comp_channel(void **state)
{
	struct env *e = *state;
	void *f = open_cmd(e);
	uint32_t cmd[4] = { VERBS_CMD_CREATE_COMP_CHANNEL, 4, 2, 0 };
	struct wait w = new_wait(), w2 = new_wait();
	struct verbs_wire_upcall up;
	struct verbs_ioc_upcall_done done = { 0 };
	size_t filled, out = 99;

	assert_int_equal(uverbs_cmd_fops.write(f, cmd, 8, &w.w), -EINVAL);	/* short */
	assert_int_equal(uverbs_cmd_fops.write(f, cmd, sizeof(cmd), NULL), -EOPNOTSUPP);
	assert_int_equal(uverbs_cmd_fops.write(f, cmd, sizeof(cmd), &w.w), KFILE_LATER);
	assert_true(kfile_readable(&uverbs_cmd_fops, f));
	assert_int_equal(uverbs_cmd_fops.read(f, &up, 4, &filled), -EINVAL);	/* no room */
	assert_int_equal(uverbs_cmd_fops.read(f, &up, sizeof(up), &filled), sizeof(up));
	assert_int_equal(up.rec.type, VERBS_REC_UPCALL);
	assert_int_equal(up.command, VERBS_CMD_CREATE_COMP_CHANNEL);
	assert_int_equal(w.answers, 0);
	done.id = up.id + 1;
	assert_int_equal(uverbs_cmd_fops.ioctl(f, VERBS_IOC_UPCALL_DONE, &done, &out), -EINVAL);
	done.id = up.id;
	assert_int_equal(uverbs_cmd_fops.ioctl(f, VERBS_IOC_UPCALL_DONE, &done, &out), 0);
	assert_int_equal(out, 0);
	assert_int_equal(w.answers, 1);
	assert_int_equal(w.ret, sizeof(cmd));
	/* Another command is not the device's; a held one fails at the last close. */
	cmd[0] = 3;
	assert_int_equal(uverbs_cmd_fops.write(f, cmd, sizeof(cmd), &w2.w), -EOPNOTSUPP);
	cmd[0] = VERBS_CMD_CREATE_COMP_CHANNEL;
	assert_int_equal(uverbs_cmd_fops.write(f, cmd, sizeof(cmd), &w2.w), KFILE_LATER);
	uverbs_cmd_fops.release(f);
	assert_int_equal(w2.answers, 1);
	assert_int_equal(w2.ret, -EIO);
}

/* VERBS_IOC_WAKE queues a record of its own; an ioctl the context does
 * not know is ENOTTY (libibverbs then uses write and sysfs). */
static void test_cmd_ioctls(void **state)
{
	struct env *e = *state;
	void *f = open_cmd(e);
	struct verbs_wire_rec rec;
	size_t filled, out;
	char arg[8] = { 0 };

	assert_false(kfile_readable(&uverbs_cmd_fops, f));
	assert_int_equal(uverbs_cmd_fops.read(f, &rec, sizeof(rec), &filled), -EAGAIN);
	assert_int_equal(uverbs_cmd_fops.ioctl(f, VERBS_IOC_WAKE, arg, &out), 0);
	assert_int_equal(uverbs_cmd_fops.read(f, &rec, sizeof(rec), &filled), sizeof(rec));
	assert_int_equal(rec.type, VERBS_REC_WAKE);
	assert_int_equal(uverbs_cmd_fops.ioctl(f, _IOWR(0x1b, 1, uint64_t), arg, &out), -ENOTTY);
	uverbs_cmd_fops.release(f);
}

/* Every kind is in kfile_kinds under a code of its own, and the attaching
 * side's forwarder for it says what the kind says (name, mode, character
 * device), never a code (it is not this emulator's to list). */
static void test_kinds(void **state)
{
	GHashTable *fwd = g_hash_table_new_full(NULL, NULL, NULL, g_free);
	const struct kfile_ops *tables[] = { &umad_fops, &issm_fops, &uverbs_cmd_fops,
					     &uverbs_events_fops, &ucma_fops };
	unsigned i, n;

	(void)state;
	for (n = 0; kfile_kinds[n]; n++)
		;
	assert_int_equal(n, G_N_ELEMENTS(tables));
	for (i = 0; i < G_N_ELEMENTS(tables); i++) {
		const struct kfile_ops *k = tables[i], *f;

		assert_ptr_equal(kfile_kind(k->code), k);
		if (k->stacked)
			continue;	/* mirrored as itself, over a forwarded file */
		f = remote_fops_of(fwd, k);
		assert_ptr_equal(remote_fops_of(fwd, k), f);
		assert_string_equal(f->name, k->name);
		assert_int_equal(f->chardev, k->chardev);
		assert_int_equal(f->everyone, k->everyone);
		assert_int_equal(f->code, 0);
		assert_true(f->forwards);
		assert_false(k->forwards);
	}
	assert_null(kfile_kind(0));
	assert_null(kfile_kind('d'));	/* the listing's directories */
	assert_null(kfile_kind('f'));	/* and attributes */
	g_hash_table_destroy(fwd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_issm_waits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_umad_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_comp_channel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cmd_ioctls, setup, teardown),
		cmocka_unit_test(test_kinds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
