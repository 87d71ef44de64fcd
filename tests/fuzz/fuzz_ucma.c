/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the rdma_cm device (kernel/ucma.c, kernel/cma.c) as
 * hostile processes may drive it: two files on host1 and host3 of a
 * configured default fabric writing commands of any bytes, or commands
 * whose ids and addresses the input picks among sensible ones (the ids
 * they made, the fabric's addresses, a listening port), reading events,
 * migrating ids between them, time passing (CM retransmissions, address
 * timeouts), cables pulled, a file closed and opened again. Each input
 * starts from a fresh fabric.
 *
 * Op byte: low 3 bits the operation, bit 3 the file; operands follow.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <glib.h>

#include "tests/fuzz/fuzz.h"

#include "fabric/configure.h"
#include "fabric/port.h"
#include "kernel/ucma.h"
#include "kernel/umad.h"
#include "lib/timerq.h"
#include "topologies/topo.h"

#include <netinet/in.h>
#include <rdma/rdma_user_cm.h>

#define IDS	8

struct side {
	struct ucma_file *f;
	uint32_t id[IDS];	/* handles it made */
	unsigned nid;
};

/* A command whose body the input gives, with its id and addresses picked
 * among real ones: @buf holds header and body. */
static size_t make_cmd(struct fuzz_input *in, const struct side *s, uint8_t *buf)
{
	static const char *const addrs[] = { "\x0a\x01\x00\x03", "\x0a\x01\x00\x05",
					     "\x0a\x02\x00\x03", "\x0a\x01\x09\x09",
					     "\x00\x00\x00\x00" };
	struct rdma_ucm_cmd_hdr h;
	uint8_t pick[4];
	size_t len;

	fuzz_take(in, pick, sizeof(pick));
	h.cmd = pick[0] % (RDMA_USER_CM_CMD_JOIN_MCAST + 2);
	len = 8 + fuzz_take16(in) % 400;
	h.in = (uint16_t)len;
	h.out = pick[1] & 1 ? 0xffff : pick[1];
	memcpy(buf, &h, sizeof(h));
	fuzz_take(in, buf + sizeof(h), len);
	/* Most commands name the id at 0 or 8, a response at 0 or 8. */
	if (s->nid && (pick[2] & 1)) {
		uint32_t id = s->id[pick[2] % s->nid];

		memcpy(buf + sizeof(h) + (pick[2] & 2 ? 8 : 0), &id, sizeof(id));
	}
	/* An IPv4 sockaddr where BIND, RESOLVE_IP/ADDR and BIND_IP put theirs. */
	if (pick[3] & 1) {
		struct sockaddr_in sin = { .sin_family = AF_INET,
					   .sin_port = htobe16(pick[3] & 2 ? 7174 : 0) };
		size_t off = pick[3] & 4 ? 8 + 16 : 8 + 8;

		memcpy(&sin.sin_addr, addrs[(pick[3] >> 3) % G_N_ELEMENTS(addrs)], 4);
		if (off + sizeof(sin) <= len)
			memcpy(buf + sizeof(h) + off, &sin, sizeof(sin));
	}
	return sizeof(h) + len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	static uint8_t buf[UCMA_WIRE_MAX];
	struct side side[2] = { { 0 } };
	struct ucma_answer a;
	struct fabric *f = topo_load_default(0);
	uint64_t now = 0;
	struct timerq *tq = timerq_new(fuzz_clock, &now);
	struct host *hw = host_new(f, tq);
	struct ucma *u;
	struct umad_host *h;
	unsigned i, ops = 0;

	f->tq = tq;
	host_attach(hw, fabric_find(f, "host1"));
	host_attach(hw, fabric_find(f, "host3"));
	u = ucma_new(hw);
	h = umad_host_new(hw);
	fabric_configure(f, umad_dev_port(umad_host_dev(h, 0)));
	for (i = 0; i < 2; i++)
		side[i].f = ucma_open(u);
	while (in.left && ops++ < 256) {
		uint8_t op;
		struct side *s;
		size_t n;

		fuzz_take(&in, &op, 1);
		s = &side[(op >> 3) & 1];
		switch (op & 7) {
		case 0:	/* any bytes */
			n = fuzz_take16(&in) % sizeof(buf);
			fuzz_take(&in, buf, n);
			ucma_command(s->f, buf, n, &a);
			break;
		case 1: {	/* a command with picked ids and addresses, and a
				 * value of any bytes for SET_OPTION to take */
			static uint8_t val[512];
			size_t vlen = op & 0x10 ? fuzz_take16(&in) % sizeof(val) : 0;

			n = make_cmd(&in, s, buf);
			fuzz_take(&in, val, vlen);
			ucma_command_opt(s->f, buf, n, vlen ? val : NULL, vlen, 0, &a);
			if (a.ret > 0 && ((struct rdma_ucm_cmd_hdr *)buf)->cmd ==
					 RDMA_USER_CM_CMD_CREATE_ID && a.resp_len >= 4 && s->nid < IDS)
				memcpy(&s->id[s->nid++], a.resp, 4);
			break;
		}
		case 2:	/* an event, into a buffer of any size */
			ucma_read_event(s->f, buf, fuzz_take16(&in) % sizeof(buf));
			break;
		case 3:	/* MIGRATE_ID from the other file (or a token of nothing) */
			n = make_cmd(&in, &side[!((op >> 3) & 1)], buf);
			((struct rdma_ucm_cmd_hdr *)buf)->cmd = RDMA_USER_CM_CMD_MIGRATE_ID;
			ucma_command_from(s->f, buf, n, op & 0x10 ? 9999 :
				ucma_file_token(side[!((op >> 3) & 1)].f), &a);
			break;
		case 4:	/* time passes: up to 2 minutes (CM retries, timeouts) */
			fuzz_take(&in, buf, 1);
			now += (uint64_t)buf[0] * 500000;
			timerq_run(tq);
			break;
		case 5:
			ucma_release(s->f);
			s->f = ucma_open(u);
			s->nid = 0;
			break;
		default:	/* a cable pulled or put back */
			fuzz_take(&in, buf, 1);
			port_cable_set(umad_dev_port(umad_host_dev(h, buf[0] & 1)), buf[0] & 2);
			break;
		}
	}
	for (i = 0; i < 2; i++)
		ucma_release(side[i].f);
	umad_host_free(h);
	ucma_free(u);
	host_free(hw);
	timerq_free(tq);
	fabric_free(f);
	return 0;
}
