/* SPDX-License-Identifier: MIT */
/* The attaching side of many hosts; see remote.h. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib-unix.h>

#include "abi/fast_wire.h"
#include "abi/fd_pass.h"
#include "ctl/ctl.h"
#include "ctl/ctl_client.h"
#include "ctl/sockname.h"
#include "dev/sysfs.h"
#include "lib/listener.h"
#include "lib/log.h"
#include "socket/remote.h"
#include "socket/remote_priv.h"
#include "socket/remote_ssh.h"

/* An answer's room: the largest out (a sysfs listing) and its header. */
#define ANSWER_MAX	(sizeof(struct fast_reply) + FAST_INLINE_MAX)
/* The first answer over ssh waits for its connection and login too. */
#define ANSWER_TIMEOUT_MS	REMOTE_ANSWER_TIMEOUT_MS
#define SSH_ATTACH_TIMEOUT_MS	60000
/* How often the round trip to the emulator is measured (FAST_PING). */
#define PING_INTERVAL_S		5

struct remote {
	int host_ch;		/* FAST_HOST's channel: the attachment's life */
	int sysfs_ch;		/* a channel to the attachment: sysfs reads */
	int listen;		/* at listen_path: programs' connections */
	char *listen_path;
	struct listener listener;
	struct vfs *vfs;
	GPtrArray *paths;	/* the attributes' paths, by vnode arg */
	GPtrArray *devs;	/* struct remote_dev *, the mirror's device files */
	GHashTable *forwarders;	/* their tables: remote_fops_of's */
	struct remote_ssh *ssh;	/* ssh:// only: ssh and the carrier */
	uint64_t rtt_ns;	/* the last FAST_PING's round trip */
	guint ping;
};

/* Send one request tagged @tag. */
static int send_tagged(int ch, uint32_t op, uint32_t flags, uint64_t arg, const void *payload,
		       size_t n, int fd, uint32_t tag)
{
	struct fast_req rq = { .version = FAST_VERSION, .op = op, .flags = flags, .tag = tag,
			       .arg = arg };
	struct iovec iov[2] = { { &rq, sizeof(rq) }, { (void *)payload, n } };
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };
	union fd_cmsg u;

	fd_pass_put(&msg, &u, fd);
	return sendmsg(ch, &msg, MSG_NOSIGNAL) < 0 ? -EIO : 0;
}

int remote_send(int ch, uint32_t op, uint32_t flags, uint64_t arg, const void *payload,
		size_t n, int fd)
{
	return send_tagged(ch, op, flags, arg, payload, n, fd, 0);
}

/*
 * The answer tagged @tag on @ch, waiting at most until @deadline_us
 * (monotonic): its length in @buf and *@passed, or -ETIMEDOUT, -EIO. An
 * answer with another tag is one a request before gave up on: dropped,
 * with its fd, so requests and answers stay in step.
 */
static ssize_t recv_tagged(int ch, uint32_t tag, char *buf, int64_t deadline_us, int *passed)
{
	for (;;) {
		struct pollfd p = { .fd = ch, .events = POLLIN };
		int64_t left_ms = (deadline_us - g_get_monotonic_time() + 999) / 1000;
		struct iovec riov = { buf, ANSWER_MAX };
		struct msghdr rmsg = { .msg_iov = &riov, .msg_iovlen = 1 };
		union fd_cmsg ru;
		struct fast_reply r;
		ssize_t got;

		if (left_ms <= 0 || poll(&p, 1, (int)MIN(left_ms, G_MAXINT)) != 1)
			return -ETIMEDOUT;
		fd_pass_room(&rmsg, &ru);
		got = recvmsg(ch, &rmsg, MSG_CMSG_CLOEXEC);
		*passed = got >= 0 ? fd_pass_take(&rmsg) : -1;
		if (got < (ssize_t)sizeof(r)) {
			if (*passed >= 0)
				close(*passed);
			return -EIO;
		}
		memcpy(&r, buf, sizeof(r));
		if (r.tag == tag)
			return got;
		g_message("remote: an answer that came after its request gave up: dropped");
		if (*passed >= 0)
			close(*passed);
	}
}

int64_t remote_ask(int ch, uint32_t op, uint32_t flags, uint64_t arg, const void *payload,
		   size_t n, int fd, char **out, size_t *out_len, int *fd_out, int timeout_ms)
{
	static uint32_t last_tag;
	uint32_t tag = ++last_tag ? last_tag : ++last_tag;	/* never 0 */
	struct fast_reply r;
	char *buf;
	ssize_t got;
	int passed;

	if (send_tagged(ch, op, flags, arg, payload, n, fd, tag) < 0)
		return -EIO;
	buf = g_malloc(ANSWER_MAX);
	got = recv_tagged(ch, tag, buf, g_get_monotonic_time() + (int64_t)timeout_ms * 1000,
			  &passed);
	if (got < 0) {
		g_free(buf);
		return got;
	}
	if (passed >= 0) {
		if (fd_out && *fd_out < 0)
			*fd_out = passed;
		else
			close(passed);
	}
	memcpy(&r, buf, sizeof(r));
	if (r.out_len > (size_t)got - sizeof(r))
		r.out_len = (uint32_t)(got - sizeof(r));
	if (out) {
		/* Bytes (an ioctl's struct) or text (a listing): all of them,
		 * and a NUL after for text (g_strndup would stop at a NUL). */
		*out = g_malloc(r.out_len + 1);
		memcpy(*out, buf + sizeof(r), r.out_len);
		(*out)[r.out_len] = '\0';
		if (out_len)
			*out_len = r.out_len;
	}
	g_free(buf);
	return r.ret;
}

/* One request (with @fd passed beside, unless -1) and its answer. */
static int64_t ask_fd(int ch, uint32_t op, uint64_t arg, const void *payload, size_t n, int fd,
		      char **out, size_t *out_len, int timeout_ms)
{
	return remote_ask(ch, op, 0, arg, payload, n, fd, out, out_len, NULL, timeout_ms);
}

static int64_t ask(int ch, uint32_t op, const void *payload, size_t n, char **out,
		   size_t *out_len)
{
	return ask_fd(ch, op, 0, payload, n, -1, out, out_len, ANSWER_TIMEOUT_MS);
}

/* A channel to the attached host's files: one end of a pair, the other
 * adopted by the emulator; -errno. */
int remote_adopted_channel(struct remote *r)
{
	int sv[2];
	int64_t ret;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	ret = ask_fd(r->host_ch, FAST_ADOPT, 0, NULL, 0, sv[1], NULL, NULL, ANSWER_TIMEOUT_MS);
	close(sv[1]);
	if (ret < 0) {
		close(sv[0]);
		return (int)ret;
	}
	return sv[0];
}

/* A program of this host connected to our socket: hand its connection
 * to the emulator, which serves it from then on. */
static void on_client(void *data, int c)
{
	struct remote *r = data;
	int64_t ret;

	if ((ret = ask_fd(r->host_ch, FAST_ADOPT, 0, NULL, 0, c, NULL, NULL, ANSWER_TIMEOUT_MS)) < 0)
		g_warning("a client's connection not handed over: %s", g_strerror((int)-ret));
	close(c);	/* the program's open fails over to FUSE: ENODEV */
}

/* The round trip to the emulator, measured with one FAST_PING that
 * reports the last one (the emulator's `ctl status` shows it). */
static void ping(struct remote *r)
{
	gint64 t0 = g_get_monotonic_time();

	if (ask_fd(r->host_ch, FAST_PING, r->rtt_ns, NULL, 0, -1, NULL, NULL, ANSWER_TIMEOUT_MS) == 0)
		r->rtt_ns = (uint64_t)MAX(g_get_monotonic_time() - t0, 1) * 1000;
}

static gboolean on_ping(gpointer data)
{
	ping(data);
	return G_SOURCE_CONTINUE;
}

/* An attribute of the mirror: read where it lives, now (sysfs is live). */
static char *show_remote(const struct vnode *v)
{
	struct remote *r = v->ctx;
	const char *path = g_ptr_array_index(r->paths, v->arg);
	char *text = NULL;

	if (ask(r->sysfs_ch, FAST_SYSFS_READ, path, strlen(path), &text, NULL) < 0) {
		g_free(text);
		return NULL;	/* the read fails, as a show's error */
	}
	return text;
}

/* A uverbs device's `dev`: what the file here is (sysfs_uverbs_devno), not
 * what it is at the emulator, for libibverbs compares them. */
static char *show_local_devno(const struct vnode *v)
{
	return sysfs_uverbs_devno(v->arg);
}

/* Is @path "infiniband_verbs/uverbsK/dev"? */
static bool is_uverbs_dev(const char *path, unsigned *k)
{
	int end = 0;

	return sscanf(path, "infiniband_verbs/uverbs%u/dev%n", k, &end) == 1 && end > 0 &&
	       !path[end];
}

/*
 * A device file of the mirror (FAST_SYSFS_LIST's letter @kind), each call
 * forwarded to the emulator by its path there (remote_file.c). A verbs
 * command file keeps its upcalls here: uverbs_cmd_fops over the
 * forwarded context.
 */
/* A device file of @kind: forwarded, or a layer of @kind (a verbs command
 * file) over a forwarded file, so that what it keeps on the process's
 * host stays here. */
static void add_file(struct remote *r, struct vnode *parent, const char *base,
		     const struct kfile_ops *kind, const char *path)
{
	struct remote_dev *d = remote_dev_new(r, path);

	g_ptr_array_add(r->devs, d);
	if (kind->stacked)
		vfs_file(r->vfs, parent, base, kind, &d->node);
	else
		vfs_file(r->vfs, parent, base, remote_fops_of(r->forwarders, kind), d);
}

/* Build the mirror from FAST_SYSFS_LIST's lines ("d a/b", "f a/b/c", ...);
 * parents come before their children. */
static int build_mirror(struct remote *r, const char *listing)
{
	char **lines = g_strsplit(listing, "\n", -1);
	unsigned i, k;
	int ret = 0;

	for (i = 0; lines[i] && ret == 0; i++) {
		const char *l = lines[i];
		char *dir, *base;
		struct vnode *parent;

		if (!*l)
			continue;
		if (strlen(l) < 3 || l[1] != ' ') {
			ret = -EPROTO;
			break;
		}
		dir = g_path_get_dirname(l + 2);
		base = g_path_get_basename(l + 2);
		parent = strcmp(dir, ".") ? vfs_path(r->vfs->root, dir) : r->vfs->root;
		if (!parent || parent->kind != VN_DIR || vfs_child(parent, base)) {
			ret = -EPROTO;
		} else if (l[0] == 'd') {
			vfs_dir(r->vfs, parent, base);
		} else if (l[0] == 'f' && is_uverbs_dev(l + 2, &k)) {
			vfs_attr(r->vfs, parent, base, show_local_devno, NULL, k);
		} else if (l[0] == 'f') {
			g_ptr_array_add(r->paths, g_strdup(l + 2));
			vfs_attr(r->vfs, parent, base, show_remote, r, r->paths->len - 1);
		} else if (kfile_kind(l[0])) {
			add_file(r, parent, base, kfile_kind(l[0]), l + 2);
		} else {
			ret = -EPROTO;
		}
		g_free(dir);
		g_free(base);
	}
	g_strfreev(lines);
	return ret;
}

/* Our name for the emulator's `ctl status`: the host name, its bytes
 * outside what it takes (ctl/sockname.h emu_name_ok) made '_' (a VM
 * without one calls itself "(none)"). */
static char *host_label(void)
{
	char *label = g_strndup(g_get_host_name(), 64), *p;

	for (p = label; *p; p++)
		if (!g_ascii_isalnum(*p) && !strchr("._-", *p))
			*p = '_';
	if (*label == '.' || *label == '-')	/* emu_name_ok's rule */
		*label = '_';
	if (!*label) {
		g_free(label);
		label = g_strdup("unnamed");
	}
	return label;
}

/* WHERE (a name or unix:PATH) to the emulator's fast socket. */
static char *fast_socket_of(const char *where, GError **err)
{
	char *ctl, *fast;

	if (g_str_has_prefix(where, "unix:"))
		return g_strdup(where + 5);
	if (!(ctl = emu_ctl_path(where, err)))
		return NULL;
	fast = emu_fast_path(ctl);
	g_free(ctl);
	return fast;
}

int remote_connect(const char *where, GError **err)
{
	char *sock = fast_socket_of(where, err);
	int fd = sock ? ctl_connect(sock, SOCK_SEQPACKET, 0, err) : -1;

	g_free(sock);
	return fd;
}

struct remote *remote_attach(const char *where, char **nodes, GError **err)
{
	struct remote *r = g_new0(struct remote, 1);
	GString *req = g_string_new(NULL);
	char *out = NULL, *label;
	GError *e = NULL;
	int64_t ret;
	unsigned i;

	r->host_ch = r->sysfs_ch = r->listen = -1;
	r->paths = g_ptr_array_new_with_free_func(g_free);
	r->devs = g_ptr_array_new_with_free_func(remote_dev_free);
	r->forwarders = g_hash_table_new_full(NULL, NULL, NULL, g_free);
	if (!nodes || !nodes[0]) {
		g_set_error(err, IBEMU_ERROR, EINVAL, "--remote needs --attach NODE: which HCAs are this host's");
		goto fail;
	}
	if (g_str_has_prefix(where, "ssh://")) {
		if (!(r->ssh = remote_ssh_start(where, &r->host_ch, err)))
			goto fail;
	} else if ((r->host_ch = remote_connect(where, &e)) < 0) {
		g_set_error(err, IBEMU_ERROR, e->code, "--remote %s: %s", where, e->message);
		g_error_free(e);
		goto fail;
	}
	/* Our name, then the nodes, each NUL-terminated (abi/fast_wire.h). */
	label = host_label();
	g_string_append(req, label);
	g_string_append_c(req, '\0');
	g_free(label);
	for (i = 0; nodes[i]; i++) {
		g_string_append(req, nodes[i]);
		g_string_append_c(req, '\0');
	}
	ret = ask_fd(r->host_ch, FAST_HOST, 0, req->str, req->len, -1, &out, NULL,
		     r->ssh ? SSH_ATTACH_TIMEOUT_MS : ANSWER_TIMEOUT_MS);
	if (ret < 0) {
		char *why = NULL;

		/* No answer over ssh: ssh, or the bridge there, said why. */
		if (r->ssh && (ret == -EIO || ret == -ETIMEDOUT)) {
			close(r->host_ch);
			r->host_ch = -1;
			why = remote_ssh_reason(r->ssh);
		}
		g_set_error(err, IBEMU_ERROR, (int)-ret, "--remote %s: %s", where,
			    why ? why : out && *out ? out : g_strerror((int)-ret));
		g_free(why);
		goto fail;
	}
	g_clear_pointer(&out, g_free);
	if ((r->sysfs_ch = remote_adopted_channel(r)) < 0) {
		g_set_error(err, IBEMU_ERROR, -r->sysfs_ch, "--remote %s: no channel to the attachment: %s",
			    where, g_strerror(-r->sysfs_ch));
		goto fail;
	}
	r->vfs = vfs_new();
	ret = ask_fd(r->sysfs_ch, FAST_SYSFS_LIST, FAST_LIST_VERBS | FAST_LIST_UCMA, NULL, 0, -1, &out, NULL,
		     ANSWER_TIMEOUT_MS);
	if (ret < 0 || (ret = build_mirror(r, out)) < 0) {
		g_set_error(err, IBEMU_ERROR, (int)-ret, "--remote %s: no sysfs from the emulator: %s",
			    where, g_strerror((int)-ret));
		goto fail;
	}
	/* An emulator without verbs devices: an empty class, as a host
	 * whose HCAs have no verbs driver loaded. */
	if (!vfs_child(r->vfs->root, "infiniband_verbs"))
		vfs_dir(r->vfs, r->vfs->root, "infiniband_verbs");
	if (r->ssh)
		remote_ssh_forward_stderr(r->ssh);
	ping(r);	/* measured, */
	ping(r);	/* and told, before any program runs */
	g_free(out);
	g_string_free(req, TRUE);
	return r;
fail:
	g_free(out);
	g_string_free(req, TRUE);
	remote_free(r);
	return NULL;
}

int remote_listen(struct remote *r, const char *path, GError **err)
{
	if ((r->listen = ctl_listen(path, SOCK_SEQPACKET, 64, err)) < 0)
		return -1;
	r->listen_path = g_strdup(path);
	listener_start(&r->listener, r->listen, "the host's fast socket", on_client, r);
	r->ping = g_timeout_add_seconds(PING_INTERVAL_S, on_ping, r);
	return 0;
}

struct vfs *remote_vfs(struct remote *r)
{
	return r->vfs;
}

int remote_lifeline(const struct remote *r)
{
	return r->host_ch;
}

char *remote_gone_why(int fd, GIOCondition cond)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (cond & G_IO_NVAL)
		return g_strdup_printf("its channel, fd %d, was closed here", fd);
	if ((cond & G_IO_ERR) && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err)
		return g_strdup_printf("its channel failed: %s", g_strerror(err));
	return g_strdup("it closed its channel");
}

void remote_gone(struct remote *r)
{
	unsigned i;

	for (i = 0; i < r->devs->len; i++)
		remote_dev_gone(g_ptr_array_index(r->devs, i));
}

void remote_free(struct remote *r)
{
	if (!r)
		return;
	listener_stop(&r->listener);
	if (r->ping)
		g_source_remove(r->ping);
	if (r->listen >= 0) {
		close(r->listen);
		unlink(r->listen_path);
	}
	g_free(r->listen_path);
	if (r->sysfs_ch >= 0)
		close(r->sysfs_ch);
	if (r->host_ch >= 0)
		close(r->host_ch);
	remote_ssh_end(r->ssh);	/* once its channels are closed */
	vfs_free(r->vfs);
	g_ptr_array_free(r->paths, TRUE);
	g_ptr_array_free(r->devs, TRUE);
	g_hash_table_destroy(r->forwarders);	/* after the vnodes that name them */
	g_free(r);
}
