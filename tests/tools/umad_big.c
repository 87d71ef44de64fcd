/* SPDX-License-Identifier: MIT */
/*
 * umad_big: one RMPP message of any size there and back, each way moved by
 * a single write(2) (or writev(2)) and a single read(2), checked byte for
 * byte. FUSE and CUSE cut such calls into pieces; the kernel does not.
 *
 *   umad_big server CA                 echo one message (blocking read
 *                                      with a buffer larger than needed)
 *   umad_big client CA LID BYTES [writev]
 *                                      send BYTES (the write count, header
 *                                      included), read the echo: first
 *                                      with BYTES-1 (ENOSPC, the header
 *                                      says BYTES), then with BYTES
 *
 *   umad_big sink CA                   take COUNT Sends the flood makes
 *                                      without reading them until its Set
 *                                      comes (on a file of its own), then
 *                                      count what the first file holds
 *   umad_big flood CA LID COUNT BYTES  COUNT Sends of BYTES, then a Set
 *
 * Vendor class 0x31 (OUI 00:14:05) with kernel RMPP. Prints "ok BYTES".
 * The sink's count shows the per-file limit on unread bytes (README
 * "Limits"): the Sends past it are dropped on every path.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <infiniband/umad.h>

#include "vendor_agent.h"

#define SERVER_BUF	(64u << 20)

static uint8_t pattern(size_t i, unsigned seed)
{
	return (uint8_t)(i * 7 + seed + (i >> 9) + (i >> 17));
}

/* The message a write of @bytes carries (header of umad_size() first). */
static uint8_t *make(size_t bytes, int agent, uint16_t lid, uint8_t method,
		     uint64_t tid, unsigned seed)
{
	uint8_t *buf = calloc(1, bytes), *mad = buf + umad_size();
	struct ib_user_mad *u = (struct ib_user_mad *)buf;
	size_t i, d = bytes - umad_size() - HDR_LEN;
	uint64_t be = __builtin_bswap64(tid);

	umad_set_addr(buf, lid, 1, 0, 0x80010000);
	u->agent_id = agent;
	u->timeout_ms = method & 0x80 ? 0 : 60000;
	mad[0] = 1;
	mad[1] = CLASS;
	mad[2] = 1;
	mad[3] = method;
	memcpy(mad + 8, &be, 8);
	mad[17] = 0x10;
	mad[24] = 1;		/* RMPP version 1 */
	mad[25] = 1;		/* DATA */
	mad[26] = 1;		/* Active: the kernel does the rest */
	mad[38] = 0x14;
	mad[39] = 0x05;
	for (i = 0; i < d; i++)
		mad[HDR_LEN + i] = pattern(i, seed);
	return buf;
}

static int check(const uint8_t *buf, size_t n, size_t bytes, unsigned seed)
{
	const uint8_t *mad = buf + umad_size();
	size_t d = bytes - umad_size() - HDR_LEN;

	if (n != bytes) {
		fprintf(stderr, "read %zu bytes, want %zu\n", n, bytes);
		return -1;
	}
	if (((const struct ib_user_mad *)buf)->length != (uint32_t)bytes) {
		fprintf(stderr, "header length %u, want %zu\n",
			((const struct ib_user_mad *)buf)->length, bytes);
		return -1;
	}
	return check_pattern(mad + HDR_LEN, d, pattern, seed);
}

static int send_all(int fd, const uint8_t *buf, size_t bytes, int use_writev)
{
	ssize_t n;

	if (use_writev) {
		/* Three pieces, none on a page boundary. */
		struct iovec iov[3] = {
			{ (void *)buf, 100 },
			{ (void *)(buf + 100), (bytes - 100) / 3 },
			{ (void *)(buf + 100 + (bytes - 100) / 3), bytes - 100 - (bytes - 100) / 3 },
		};
		n = writev(fd, iov, 3);
	} else {
		n = write(fd, buf, bytes);
	}
	if (n != (ssize_t)bytes) {
		fprintf(stderr, "write of %zu returned %zd: %s\n", bytes, n, strerror(errno));
		return -1;
	}
	return 0;
}

static int serve(const char *ca)
{
	int fd, agent = open_agent(ca, &fd, 1u << 2);	/* Set */
	uint8_t *buf = malloc(SERVER_BUF), *out;
	struct ib_user_mad *u = (struct ib_user_mad *)buf;
	ssize_t n;
	uint64_t tid;

	if (agent < 0 || !buf)
		return 1;
	/* A blocking read with room to spare: one call, one message. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	printf("ready\n");
	fflush(stdout);
	n = read(fd, buf, SERVER_BUF);
	if (n < 0 || check(buf, (size_t)n, (size_t)n, 1)) {
		fprintf(stderr, "server read %zd: %s\n", n, n < 0 ? strerror(errno) : "bad data");
		return 1;
	}
	memcpy(&tid, buf + umad_size() + 8, 8);
	out = make((size_t)n, agent, ntohs(u->addr.lid), 0x81, __builtin_bswap64(tid), 2);
	if (send_all(fd, out, (size_t)n, 0))
		return 1;
	printf("served %zd\n", n);
	return 0;
}

static int client(const char *ca, uint16_t lid, size_t bytes, int use_writev)
{
	int fd, agent = open_agent(ca, &fd, 0);
	uint8_t *buf, *in;
	struct pollfd pfd;
	ssize_t n;

	if (agent < 0)
		return 1;
	buf = make(bytes, agent, lid, 0x02, 0x77, 1);
	if (send_all(fd, buf, bytes, use_writev))
		return 1;
	pfd.fd = fd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 60000) != 1) {
		fprintf(stderr, "no answer\n");
		return 1;
	}
	in = malloc(bytes);
	memset(in, 0xee, bytes);
	n = read(fd, in, bytes - 1);
	if (n != -1 || errno != ENOSPC ||
	    ((struct ib_user_mad *)in)->length != (uint32_t)bytes) {
		fprintf(stderr, "read of %zu: %zd (%s), header length %u; want ENOSPC and %zu\n",
			bytes - 1, n, strerror(errno), ((struct ib_user_mad *)in)->length, bytes);
		return 1;
	}
	n = read(fd, in, bytes);
	if (n < 0 || check(in, (size_t)n, bytes, 2))
		return 1;
	printf("ok %zu\n", bytes);
	return 0;
}

static int sink(const char *ca)
{
	int fd, mark_fd, r = open_agent(ca, &fd, 1u << 3);	/* Send */
	struct pollfd pfd;
	uint8_t *buf = malloc(SERVER_BUF);
	unsigned n = 0;

	if (r < 0 || open_agent(ca, &mark_fd, 1u << 2) < 0 || !buf)	/* Set */
		return 1;
	printf("ready\n");
	fflush(stdout);
	pfd = (struct pollfd){ .fd = mark_fd, .events = POLLIN };
	if (poll(&pfd, 1, 120000) != 1) {
		fprintf(stderr, "no Set after the Sends\n");
		return 1;
	}
	/* The fabric moves messages in order: every Send has come or gone. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	while (read(fd, buf, SERVER_BUF) > 0)
		n++;
	printf("sink: %u messages unread\n", n);
	return 0;
}

static int flood(const char *ca, uint16_t lid, unsigned count, size_t bytes)
{
	int fd, agent = open_agent(ca, &fd, 0);
	uint8_t *buf, *mark;
	unsigned i;

	if (agent < 0)
		return 1;
	buf = make(bytes, agent, lid, 0x03, 0x100, 1);	/* Send: no answer */
	((struct ib_user_mad *)buf)->timeout_ms = 0;
	for (i = 0; i < count; i++)
		if (send_all(fd, buf, bytes, 0))
			return 1;
	mark = make(umad_size() + HDR_LEN + 1, agent, lid, 0x02, 0x200, 1);
	if (send_all(fd, mark, umad_size() + HDR_LEN + 1, 0))
		return 1;
	printf("flood: sent %u of %zu bytes\n", count, bytes);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "server"))
		return serve(argv[2]);
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "client") &&
	    strtoull(argv[4], NULL, 0) >= (unsigned long long)umad_size() + HDR_LEN + 1)
		return client(argv[2], (uint16_t)atoi(argv[3]), strtoull(argv[4], NULL, 0),
			      argc == 6 && !strcmp(argv[5], "writev"));
	if (argc == 3 && !strcmp(argv[1], "sink"))
		return sink(argv[2]);
	if (argc == 6 && !strcmp(argv[1], "flood") &&
	    strtoull(argv[5], NULL, 0) >= (unsigned long long)umad_size() + HDR_LEN + 1)
		return flood(argv[2], (uint16_t)atoi(argv[3]), (unsigned)atoi(argv[4]),
			     strtoull(argv[5], NULL, 0));
	fprintf(stderr, "usage: %s server CA | client CA LID BYTES [writev] | sink CA | flood CA LID COUNT BYTES\n",
		argv[0]);
	return 2;
}
