/* SPDX-License-Identifier: MIT */
/*
 * librpma's remote write, as its users do it (tests/e2e/roce.sh):
 *
 *   rpma_write server ADDR PORT   registers 64 KiB, listens, hands the
 *                                 region's descriptor to the one client
 *                                 in the connection's private data, waits
 *                                 for it to close the connection, then
 *                                 checks the region holds the pattern
 *   rpma_write client ADDR PORT   connects, RDMA-writes the pattern into
 *                                 the server's region, flushes it to
 *                                 visibility (librpma's RDMA READ after
 *                                 the write), reads the region back and
 *                                 compares, disconnects
 *
 * Each side prints one line saying what it saw; exit 0 only if right.
 */
#include <librpma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIZE	(64 * 1024)

static unsigned char pattern(size_t i) { return (unsigned char)(i * 7 + 3); }

#define CHECK(call)                                                             \
	do {                                                                    \
		int ret_ = (call);                                              \
		if (ret_) {                                                     \
			fprintf(stderr, "rpma_write: %s: %s\n", #call,          \
				rpma_err_2str(ret_));                           \
			return 1;                                               \
		}                                                               \
	} while (0)

static int next_event(struct rpma_conn *conn, enum rpma_conn_event want)
{
	enum rpma_conn_event ev;

	CHECK(rpma_conn_next_event(conn, &ev));
	if (ev != want) {
		fprintf(stderr, "rpma_write: connection event %s, not %s\n",
			rpma_utils_conn_event_2str(ev), rpma_utils_conn_event_2str(want));
		return 1;
	}
	return 0;
}

/* Waits for one completion of @cq and checks it succeeded. */
static int completion(struct rpma_conn *conn, enum ibv_wc_opcode op)
{
	struct rpma_cq *cq;
	struct ibv_wc wc;

	CHECK(rpma_conn_get_cq(conn, &cq));
	CHECK(rpma_cq_wait(cq));
	CHECK(rpma_cq_get_wc(cq, 1, &wc, NULL));
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != op) {
		fprintf(stderr, "rpma_write: completion %s, opcode %d\n",
			ibv_wc_status_str(wc.status), wc.opcode);
		return 1;
	}
	return 0;
}

static int server(struct rpma_peer *peer, const char *addr, const char *port)
{
	struct rpma_conn_private_data pd;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_mr_local *mr;
	struct rpma_ep *ep;
	unsigned char *buf = calloc(1, SIZE);
	char desc[256];
	size_t dsize, i, bad = 0;

	CHECK(rpma_mr_reg(peer, buf, SIZE, RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
					   RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, &mr));
	CHECK(rpma_mr_get_descriptor_size(mr, &dsize));
	if (dsize > sizeof(desc))
		return 1;
	CHECK(rpma_mr_get_descriptor(mr, desc));
	CHECK(rpma_ep_listen(peer, addr, port, &ep));
	CHECK(rpma_ep_next_conn_req(ep, NULL, &req));
	pd.ptr = desc;
	pd.len = (uint8_t)dsize;
	CHECK(rpma_conn_req_connect(&req, &pd, &conn));
	if (next_event(conn, RPMA_CONN_ESTABLISHED) || next_event(conn, RPMA_CONN_CLOSED))
		return 1;
	for (i = 0; i < SIZE; i++)
		bad += buf[i] != pattern(i);
	printf("server: %zu bytes written by the client, %zu wrong\n", (size_t)SIZE, bad);
	CHECK(rpma_conn_disconnect(conn));
	CHECK(rpma_conn_delete(&conn));
	CHECK(rpma_ep_shutdown(&ep));
	CHECK(rpma_mr_dereg(&mr));
	free(buf);
	return bad != 0;
}

static int client(struct rpma_peer *peer, const char *addr, const char *port)
{
	struct rpma_conn_private_data pd;
	struct rpma_mr_remote *remote;
	struct rpma_conn_req *req;
	struct rpma_mr_local *src, *dst;
	struct rpma_conn *conn;
	unsigned char *out = malloc(SIZE), *back = calloc(1, SIZE);
	size_t i;

	for (i = 0; i < SIZE; i++)
		out[i] = pattern(i);
	CHECK(rpma_mr_reg(peer, out, SIZE, RPMA_MR_USAGE_WRITE_SRC, &src));
	CHECK(rpma_mr_reg(peer, back, SIZE, RPMA_MR_USAGE_READ_DST, &dst));
	CHECK(rpma_conn_req_new(peer, addr, port, NULL, &req));
	CHECK(rpma_conn_req_connect(&req, NULL, &conn));
	if (next_event(conn, RPMA_CONN_ESTABLISHED))
		return 1;
	CHECK(rpma_conn_get_private_data(conn, &pd));
	CHECK(rpma_mr_remote_from_descriptor(pd.ptr, pd.len, &remote));
	CHECK(rpma_write(conn, remote, 0, src, 0, SIZE, RPMA_F_COMPLETION_ON_ERROR, NULL));
	CHECK(rpma_flush(conn, remote, 0, SIZE, RPMA_FLUSH_TYPE_VISIBILITY,
			 RPMA_F_COMPLETION_ALWAYS, NULL));
	if (completion(conn, IBV_WC_RDMA_READ))
		return 1;
	CHECK(rpma_read(conn, dst, 0, remote, 0, SIZE, RPMA_F_COMPLETION_ALWAYS, NULL));
	if (completion(conn, IBV_WC_RDMA_READ))
		return 1;
	printf("client: wrote %d bytes, flushed, read back %s\n", SIZE,
	       memcmp(out, back, SIZE) ? "different" : "the same");
	CHECK(rpma_conn_disconnect(conn));
	if (next_event(conn, RPMA_CONN_CLOSED))
		return 1;
	CHECK(rpma_conn_delete(&conn));
	CHECK(rpma_mr_remote_delete(&remote));
	CHECK(rpma_mr_dereg(&src));
	CHECK(rpma_mr_dereg(&dst));
	return memcmp(out, back, SIZE) != 0;
}

int main(int argc, char **argv)
{
	struct ibv_context *dev;
	struct rpma_peer *peer;
	bool srv;
	int rc;

	if (argc != 4 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: rpma_write server|client ADDR PORT\n");
		return 2;
	}
	srv = !strcmp(argv[1], "server");
	CHECK(rpma_utils_get_ibv_context(argv[2], srv ? RPMA_UTIL_IBV_CONTEXT_LOCAL :
					 RPMA_UTIL_IBV_CONTEXT_REMOTE, &dev));
	CHECK(rpma_peer_new(dev, &peer));
	rc = srv ? server(peer, argv[2], argv[3]) : client(peer, argv[2], argv[3]);
	CHECK(rpma_peer_delete(&peer));
	return rc;
}
