/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the fast socket, as a hostile local client sees it
 * (abi/fast_wire.h, socket/fastpath.c): request datagrams of any bytes on
 * channels it connects, with fds passed beside them (a memfd of the
 * record's bytes, two of them, a data socket it was given, an unrelated
 * socket), and writes into the shared slot of any bytes at any offset,
 * rung or not. The emulator serves host1 of a configured default fabric
 * with its sysfs and verbs files; its main loop runs between records.
 * Answers are read and their fds closed; what the emulator holds is freed
 * at the end: a leak of memory, or of an fd, is a finding.
 *
 * Record: a kind byte, a 16-bit length, that many bytes.
 *   kind & 7: 0 send on the current channel; 1 send with fd(s) (bits 3-4:
 *   a memfd, two memfds, the channel's data socket, a new socketpair's
 *   end); 2 connect a new channel (at most 8, then the oldest closes);
 *   3 switch to channel (bits 3-5); 4 write the slot (first 2 bytes: the
 *   offset), bump req_seq (bit 3) and ring (bit 4); 5 close the data
 *   socket; 6 close the current channel; 7 resize the slot's memfd (its
 *   new size from the first 2 bytes).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <glib.h>

#include "tests/fuzz/fuzz.h"

#include "abi/fast_wire.h"
#include "abi/fd_pass.h"
#include "dev/sysfs.h"
#include "dev/vfs.h"
#include "fabric/configure.h"
#include "kernel/umad.h"
#include "kernel/uverbs.h"
#include "lib/fds.h"
#include "lib/timerq.h"
#include "socket/fastpath.h"
#include "topologies/topo.h"

#define CHANS	8

struct client {
	int fd;			/* the channel, or -1 */
	int data;		/* a data socket it was given, or -1 */
	uint8_t *slot;		/* the slot it was given, mapped, or NULL */
	int slot_fd;		/* its memfd */
};

static char sock_path[64];

static int connect_fast(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	if (s >= 0 && connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(s);
		return -1;
	}
	return s;
}

static void client_close(struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	if (c->data >= 0)
		close(c->data);
	if (c->slot)
		munmap(c->slot, FAST_SLOT_BYTES);
	if (c->slot_fd >= 0)
		close(c->slot_fd);
	*c = (struct client){ .fd = -1, .data = -1, .slot_fd = -1 };
}

/* Let the emulator serve what came, then take every answer. */
static void pump(struct client *cl)
{
	unsigned i, k;

	for (k = 0; k < 64 && g_main_context_iteration(NULL, FALSE); k++)
		;
	for (i = 0; i < CHANS; i++) {
		uint8_t buf[FAST_INLINE_MAX + 64];

		while (cl[i].fd >= 0) {
			struct iovec iov = { buf, sizeof(buf) };
			struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
			union fd_cmsg u;
			ssize_t n;
			int fd;

			fd_pass_room(&m, &u);
			n = recvmsg(cl[i].fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
			if (n <= 0)
				break;
			fd = fd_pass_take(&m);
			if (fd < 0)
				continue;
			/* A data socket or a slot: keep the first of each. */
			if (cl[i].data < 0 && fcntl(fd, F_GETFL) >= 0 &&
			    lseek(fd, 0, SEEK_END) < 0) {
				cl[i].data = fd;
				continue;
			}
			if (!cl[i].slot) {
				void *m2 = mmap(NULL, FAST_SLOT_BYTES, PROT_READ | PROT_WRITE,
						MAP_SHARED, fd, 0);

				if (m2 != MAP_FAILED) {
					cl[i].slot = m2;
					cl[i].slot_fd = fd;
					continue;
				}
			}
			close(fd);
		}
	}
}

static void send_req(struct client *c, const uint8_t *p, size_t n, int how)
{
	struct iovec iov = { (void *)p, n };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	char cbuf[CMSG_SPACE(2 * sizeof(int))];
	struct cmsghdr *cm;
	int fds[2] = { -1, -1 }, nfds = 0, sv[2] = { -1, -1 };

	if (c->fd < 0)
		return;
	if (how >= 0) {
		switch (how) {
		case 0:
		case 1:
			fds[0] = fd_pass_memfd("fuzz", p, n, close);
			fds[1] = how ? fd_pass_memfd("fuzz", p, n, close) : -1;
			nfds = how ? 2 : 1;
			break;
		case 2:
			fds[0] = c->data >= 0 ? dup(c->data) : -1;
			nfds = 1;
			break;
		default:
			if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0)
				fds[0] = sv[1];
			nfds = 1;
			break;
		}
		if (fds[0] >= 0 && (nfds == 1 || fds[1] >= 0)) {
			memset(cbuf, 0, sizeof(cbuf));
			m.msg_control = cbuf;
			m.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
			cm = CMSG_FIRSTHDR(&m);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
			memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
		}
	}
	if (sendmsg(c->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno != EAGAIN) {
		/* the emulator closed it */
	}
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	if (sv[0] >= 0)
		close(sv[0]);
}

static void slot_write(struct client *c, const uint8_t *p, size_t n, uint8_t kind)
{
	struct fast_req ring = { .version = FAST_VERSION, .op = FAST_RING };
	size_t off;

	if (!c->slot || n < 2)
		return;
	off = ((size_t)p[0] | (size_t)p[1] << 8) % FAST_SLOT_BYTES;
	p += 2;
	n = MIN(n - 2, FAST_SLOT_BYTES - off);
	memcpy(c->slot + off, p, n);
	if (kind & 8)
		__atomic_add_fetch((uint32_t *)c->slot, 1, __ATOMIC_RELEASE);	/* req_seq */
	if ((kind & 16) && c->fd >= 0)
		send(c->fd, &ring, sizeof(ring), MSG_DONTWAIT | MSG_NOSIGNAL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool warm;
	unsigned fds_before = fds_open();
	uint64_t now = 1;
	struct fabric *f = topo_load_default(0);
	struct timerq *tq = timerq_new(fuzz_clock, &now);
	struct host *hw = host_new(f, tq);
	struct umad_host *h;
	struct uverbs *uv;
	struct vfs *vfs = vfs_new();
	struct fastpath *fp;
	struct client cl[CHANS];
	unsigned cur = 0, next = 0, i, records = 0;
	size_t at = 0;

	snprintf(sock_path, sizeof(sock_path), "/tmp/ibemu-fuzz-fast-%d.sock", (int)getpid());
	f->tq = tq;
	host_attach(hw, fabric_find(f, "host1"));
	h = umad_host_new(hw);
	fabric_configure(f, umad_dev_port(umad_host_dev(h, 0)));
	uv = uverbs_new(hw);
	sysfs_build_host(vfs, h, uv, NULL, true);
	unlink(sock_path);
	fp = fastpath_new(h, sock_path, NULL);
	if (!fp)
		abort();
	fastpath_set_vfs(fp, vfs);
	for (i = 0; i < CHANS; i++)
		cl[i] = (struct client){ .fd = -1, .data = -1, .slot_fd = -1 };
	cl[0].fd = connect_fast();
	while (at + 3 <= size && records++ < 128) {
		uint8_t kind = data[at];
		size_t n = MIN((size_t)(data[at + 1] | data[at + 2] << 8), size - at - 3);
		const uint8_t *p = data + at + 3;
		struct client *c = &cl[cur];

		at += 3 + n;
		switch (kind & 7) {
		case 0:
			send_req(c, p, n, -1);
			break;
		case 1:
			send_req(c, p, n, (kind >> 3) & 3);
			break;
		case 2:
			client_close(&cl[next]);
			cl[next].fd = connect_fast();
			cur = next;
			next = (next + 1) % CHANS;
			break;
		case 3:
			cur = (kind >> 3) % CHANS;
			break;
		case 4:
			slot_write(c, p, n, kind);
			break;
		case 5:
			if (c->data >= 0)
				close(c->data);
			c->data = -1;
			break;
		case 6:
			client_close(c);
			break;
		default:	/* what once turned the emulator's next look into SIGBUS */
			if (c->slot_fd >= 0 && n >= 2 &&
			    ftruncate(c->slot_fd, (off_t)(p[0] | p[1] << 8)) == 0) {
				/* shrunk or grown: the emulator must not care */
			}
			break;
		}
		pump(cl);
		now += 1000;
		timerq_run(tq);
		pump(cl);
	}
	for (i = 0; i < CHANS; i++)
		client_close(&cl[i]);
	pump(cl);
	fastpath_free(fp);
	vfs_free(vfs);
	uverbs_free(uv);
	umad_host_free(h);
	host_free(hw);
	timerq_free(tq);
	fabric_free(f);
	/* GLib opens its wakeup fd once, in the first input's loop. */
	if (warm && fds_open() != fds_before) {
		fprintf(stderr, "fuzz_fast: %u fds open before, %u after: a leak\n", fds_before,
			fds_open());
		abort();
	}
	warm = true;
	return 0;
}
