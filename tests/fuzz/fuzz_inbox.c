/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: what a hostile sender of the verbs direct path can
 * put in its sub-ring (abi/verbs_inbox.h, docs/verbs.md "The direct
 * path"), read as the receiving provider reads it (verbs_sub_end,
 * verbs_sub_walk: the code verbs/direct.c runs). The input gives a
 * binding, the receiver's tail, the sender's head, whether the grant
 * still holds and its limit, then the sub-ring's bytes (records of any
 * types and lengths, a PAD or a short gap at an end, or none). Checked
 * for each packet taken: it lies inside the sub-ring's data, carries the
 * binding's source QP, destination QP and Q_Key (UD), no GRH, and the
 * fields the binding sets; nothing is taken past the limit of a grant
 * taken back or more than a ring ahead. ASan and UBSan watch the reads.
 */
#include <stdint.h>
#include <string.h>

#include <glib.h>

#include "tests/fuzz/fuzz.h"

#include "abi/verbs_inbox.h"

struct seen {
	const struct verbs_bind *b;
	const uint8_t *data;
	uint64_t packets, bytes;
};

static void check(void *ctx, const struct verbs_wire_pkt *p, const char *payload)
{
	struct seen *s = ctx;
	const struct verbs_bind *b = s->b;
	const char *lo = (const char *)s->data, *hi = lo + VERBS_SUB_DATA;

	if (payload < lo || payload > hi || p->len > (size_t)(hi - payload) ||
	    p->sqpn != b->sqpn || p->dqpn != b->dqpn || (p->flags & VERBS_PKT_GRH) ||
	    (b->ud && p->qkey != b->qkey) || p->port != b->port || p->slid != b->slid ||
	    p->pkey != b->pkey || p->pkey_index != b->pkey_index || p->sl != b->sl ||
	    p->dlid != b->dlid)
		abort();
	/* Read every byte the receiver would copy: ASan sees an overrun. */
	for (uint32_t i = 0; i < p->len; i++)
		s->bytes += (uint8_t)payload[i];
	s->packets++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t ring[VERBS_SUB_DATA];
	struct fuzz_input in = { data, size };
	struct verbs_bind b = { 0 };
	struct seen s = { &b, ring, 0, 0 };
	uint64_t tail, head, limit, end;
	uint8_t pick[4];
	size_t n;

	fuzz_take(&in, pick, sizeof(pick));
	/* Small QP numbers and Q_Keys, so that records match now and then. */
	b.sqpn = pick[0] & 7;
	b.dqpn = pick[1] & 7;
	b.qkey = pick[2] & 1 ? 0x11111111 : 0;
	b.ud = pick[2] >> 1 & 1;
	b.open = pick[2] >> 2 & 1;
	b.port = 1;
	b.sl = pick[3] & 15;
	b.slid = 3;
	b.dlid = 6;
	b.pkey = 0xffff;
	fuzz_take(&in, &tail, sizeof(tail));
	fuzz_take(&in, &head, sizeof(head));
	fuzz_take(&in, &limit, sizeof(limit));
	/* Mostly near each other, as a sender that plays along leaves them;
	 * the raw values now and then. */
	if (!(pick[3] & 0x80)) {
		tail %= 4 * (uint64_t)VERBS_SUB_DATA;
		head = tail + head % (VERBS_SUB_DATA + 4096) - (pick[3] & 0x40 ? 4096 : 0);
		limit = tail + limit % (VERBS_SUB_DATA + 4096);
	}
	/* The ring's bytes: the input's, from where the receiver reads. */
	memset(ring, 0, sizeof(ring));
	n = MIN(in.left, sizeof(ring));
	for (size_t i = 0; i < n; i++)
		ring[(tail + i) % VERBS_SUB_DATA] = in.p[i];
	end = verbs_sub_end(tail, head, b.open, limit);
	if (end != tail && ((int64_t)(end - tail) < 0 || end - tail > VERBS_SUB_DATA ||
			    (!b.open && (int64_t)(end - limit) > 0) || (int64_t)(end - head) > 0))
		abort();
	verbs_sub_walk(&b, ring, tail, end, check, &s);
	if (s.packets > VERBS_SUB_DATA / sizeof(struct verbs_wire_pkt))
		abort();
	return 0;
}
