/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: a verbs context's command file, as a provider (or a
 * process writing it by hand) may drive it (abi/verbs_wire.h,
 * kernel/uverbs.c): two contexts, on host1's and host3's HCAs of a
 * configured default fabric, creating, setting and destroying QPs,
 * sending packet records of any bytes or of fields the input picks (a
 * real LID, a QP the other context made, a payload), reading what comes
 * with any buffer size, upcall answers and wake-ups, time passing, and a
 * context closed and opened again. Each input starts from a fresh fabric.
 *
 * Op byte: low 3 bits the operation, bit 3 the context; operands follow.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <glib.h>

#include "tests/fuzz/fuzz.h"

#include "abi/verbs_wire.h"
#include "fabric/configure.h"
#include "fabric/port.h"
#include "kernel/umad.h"
#include "kernel/uverbs.h"
#include "lib/timerq.h"
#include "topologies/topo.h"

#define QPS	8

struct side {
	struct uverbs_dev *dev;
	struct uverbs_ctx *ctx;
	uint32_t qpn[QPS];	/* made here, for the other side to name */
	unsigned nqp;
};

/* A packet whose fields the input picks among sensible ones, at @buf
 * (where a record may start unaligned, as in a provider's buffer). */
static size_t make_pkt(struct fuzz_input *in, const struct side *peer, uint8_t *buf)
{
	struct verbs_wire_pkt pkt, *p = &pkt;
	uint8_t pick[8];
	size_t len;

	fuzz_take(in, pick, sizeof(pick));
	len = fuzz_take16(in) % (VERBS_PKT_MAX_PAYLOAD + 64);
	memset(p, 0, sizeof(*p));
	p->rec.type = VERBS_REC_PKT;
	p->rec.len = (uint32_t)(sizeof(*p) + len);
	p->port = 1;
	p->opcode = pick[0];
	p->flags = pick[1] & 3;
	p->dlid = pick[2] % 8;	/* the default fabric's LIDs are 1..6 */
	p->sqpn = peer->nqp ? peer->qpn[pick[3] % peer->nqp] : pick[3];
	p->dqpn = peer->nqp ? peer->qpn[pick[4] % peer->nqp] : pick[4];
	p->psn = (uint32_t)pick[5] << 16 | pick[6];
	p->qkey = pick[7] & 1 ? 0x11111111 : 0;
	fuzz_take(in, &p->rkey, sizeof(p->rkey));
	fuzz_take(in, &p->dma_len, sizeof(p->dma_len));
	fuzz_take(in, &p->va, sizeof(p->va));
	p->len = (uint32_t)len;
	memcpy(buf, p, sizeof(*p));
	fuzz_take(in, buf + sizeof(*p), len);
	return sizeof(*p) + len;
}

static void qp_op(struct side *s, struct fuzz_input *in, uint8_t op)
{
	struct verbs_ioc_qp q = { 0 };
	uint8_t b[4];

	fuzz_take(in, b, sizeof(b));
	q.qpn = s->nqp ? s->qpn[b[0] % s->nqp] : b[0];
	switch ((op >> 4) & 3) {
	case 0:
		q.type = b[1] & 1 ? 2 : b[1] & 2 ? 4 : b[1];	/* RC, UD, or anything */
		if (uverbs_ctx_ioctl(s->ctx, VERBS_IOC_QP_CREATE, &q) == 0 && s->nqp < QPS)
			s->qpn[s->nqp++] = q.qpn;
		break;
	case 1:
		q.qkey = b[2] & 1 ? 0x11111111 : b[2];
		q.port = b[3] % 4;
		uverbs_ctx_ioctl(s->ctx, VERBS_IOC_QP_SET, &q);
		break;
	case 2:
		uverbs_ctx_ioctl(s->ctx, VERBS_IOC_QP_DESTROY, &q);
		break;
	default: {
		struct verbs_ioc_upcall_done u = { b[0], -(int32_t)b[1] };

		uverbs_ctx_ioctl(s->ctx, b[2] & 1 ? VERBS_IOC_UPCALL_DONE : VERBS_IOC_WAKE, &u);
	}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	uint64_t now = 1;
	struct fabric *f = topo_load_default(0);
	struct timerq *tq = timerq_new(fuzz_clock, &now);
	struct host *hw = host_new(f, tq);
	struct umad_host *h;
	struct uverbs *uv;
	struct side side[2] = { 0 };
	static uint8_t buf[VERBS_IOC_SEND_MAX + VERBS_PKT_MAX_PAYLOAD];
	unsigned ops = 0, i;

	f->tq = tq;
	host_attach(hw, fabric_find(f, "host1"));
	host_attach(hw, fabric_find(f, "host3"));
	h = umad_host_new(hw);
	fabric_configure(f, umad_dev_port(umad_host_dev(h, 0)));
	uv = uverbs_new(hw);
	for (i = 0; i < 2; i++) {
		side[i].dev = uverbs_dev(uv, i);
		side[i].ctx = uverbs_ctx_open(side[i].dev);
	}
	while (in.left && ops++ < 256) {
		uint8_t op;
		struct side *s, *peer;
		size_t n;

		fuzz_take(&in, &op, 1);
		s = &side[(op >> 3) & 1];
		peer = &side[!((op >> 3) & 1)];
		switch (op & 7) {
		case 0:
			qp_op(s, &in, op);
			break;
		case 1:	/* records of any bytes */
			n = fuzz_take16(&in) % VERBS_IOC_SEND_MAX;
			fuzz_take(&in, buf, n);
			uverbs_ctx_write(s->ctx, buf, n);
			break;
		case 2:	/* one packet of picked fields, or two */
			n = make_pkt(&in, peer, buf);
			if (op & 0x10)
				n += make_pkt(&in, peer, buf + n);
			uverbs_ctx_write(s->ctx, buf, n);
			break;
		case 3:
			uverbs_ctx_read(s->ctx, buf, fuzz_take16(&in) % sizeof(buf));
			break;
		case 4:	/* time passes: up to 25 s (RC timers) */
			fuzz_take(&in, buf, 1);
			now += (uint64_t)buf[0] * 100000;
			timerq_run(tq);
			break;
		case 5:
			uverbs_ctx_close(s->ctx);
			s->ctx = uverbs_ctx_open(s->dev);
			s->nqp = 0;
			break;
		default:	/* a cable pulled or put back: packets dropped, events raised */
			fuzz_take(&in, buf, 1);
			port_cable_set(umad_dev_port(umad_host_dev(h, buf[0] & 1)), buf[0] & 2);
			break;
		}
	}
	for (i = 0; i < 2; i++)
		uverbs_ctx_close(side[i].ctx);
	uverbs_free(uv);
	umad_host_free(h);
	host_free(hw);
	timerq_free(tq);
	fabric_free(f);
	return 0;
}
