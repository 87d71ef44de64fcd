/* SPDX-License-Identifier: MIT */
/*
 * The control socket, client side (ctl_client.h; ctl/ctl.c has the
 * protocol): send a command, wait at most a timeout for the whole framed
 * answer.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "abi/fast_wire.h"
#include "ctl/ctl.h"
#include "ctl/ctl_client.h"
#include "lib/log.h"

static GString *request(int argc, char **argv, GError **err)
{
	GString *req = g_string_new(NULL);
	int i;

	for (i = 0; i < argc; i++) {
		if (strchr(argv[i], '\t') || strchr(argv[i], '\n')) {
			g_set_error(err, IBEMU_ERROR, EINVAL,
				    "arguments cannot contain tabs or newlines");
			g_string_free(req, TRUE);
			return NULL;
		}
		g_string_append_printf(req, "%s%s", i ? "\t" : "", argv[i]);
	}
	g_string_append_c(req, '\n');
	return req;
}

int ctl_connect(const char *path, int type, unsigned timeout_s, GError **err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = timeout_s };
	int fd;

	/* Cut short, it would name another socket: say so instead. */
	if (g_strlcpy(sa.sun_path, path, sizeof(sa.sun_path)) >= sizeof(sa.sun_path)) {
		g_set_error(err, IBEMU_ERROR, ENAMETOOLONG,
			    "cannot reach the emulator at %s: %s (a socket path has at most %zu bytes)",
			    path, g_strerror(ENAMETOOLONG), sizeof(sa.sun_path) - 1);
		return -1;
	}
	fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		g_set_error(err, IBEMU_ERROR, errno, "cannot reach the emulator at %s: %s",
			    path, g_strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* A connection to the socket at @path, of its type: stream (a control
 * socket), else SEQPACKET (*@seqpacket: a fast or hand-over socket, where
 * a stream connect fails EPROTOTYPE); -1 with @err. */
static int connect_either(const char *path, unsigned timeout_s, bool *seqpacket, GError **err)
{
	GError *e = NULL;
	int fd = ctl_connect(path, SOCK_STREAM, timeout_s, &e);

	*seqpacket = fd < 0 && g_error_matches(e, IBEMU_ERROR, EPROTOTYPE);
	if (!*seqpacket) {
		if (e)
			g_propagate_error(err, e);
		return fd;
	}
	g_error_free(e);
	return ctl_connect(path, SOCK_SEQPACKET, timeout_s, err);
}

/*
 * A control connection to @path: a control socket, or a fast socket (in
 * `ibemu run --remote`, IBEMU_CTL names the one its programs' library
 * uses; a container may see only that one), where FAST_CTL makes a
 * channel a control connection of the emulator behind it (abi/fast_wire.h).
 */
static int ctl_open(const char *path, unsigned timeout_s, GError **err)
{
	struct fast_req rq = { .version = FAST_VERSION, .op = FAST_CTL };
	struct fast_reply rep;
	const char *why = NULL;
	bool seqpacket;
	int fd = connect_either(path, timeout_s, &seqpacket, err);

	if (fd < 0 || !seqpacket)
		return fd;
	if (send(fd, &rq, sizeof(rq), MSG_NOSIGNAL) != sizeof(rq) ||
	    recv(fd, &rep, sizeof(rep), 0) != sizeof(rep)) {
		g_set_error(err, IBEMU_ERROR, EIO, "no answer from the emulator at %s%s", path,
			    errno == EAGAIN ? " (timed out)" : "");
		close(fd);
		return -1;
	}
	if (rep.ret == -EACCES)
		why = "to those who may only attach hosts (its owner and root may steer it)";
	else if (rep.ret == -EOPNOTSUPP)
		why = "there: no control socket behind it";
	else if (rep.ret < 0)
		why = g_strerror((int)-rep.ret);
	if (why) {
		g_set_error(err, IBEMU_ERROR, (int)-rep.ret, "the emulator at %s refuses control %s",
			    path, why);
		close(fd);
		return -1;
	}
	return fd;
}

pid_t ctl_listener_pid(const char *path, bool *handover, GError **err)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	bool seqpacket;
	int fd = connect_either(path, 1, &seqpacket, err);

	if (fd < 0)
		return -1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.pid <= 0) {
		g_set_error(err, IBEMU_ERROR, ESRCH, "the emulator at %s is in another PID namespace",
			    path);
		close(fd);
		return -1;
	}
	close(fd);
	if (handover)
		*handover = seqpacket;
	return cred.pid;
}

/* Split "S<len>\n<text>" in place; false when it is not all there. */
static bool unframe(GString *ans, bool *ok, size_t *want)
{
	char *nl = memchr(ans->str, '\n', ans->len), *end;

	if (!nl || (ans->str[0] != '0' && ans->str[0] != '1'))
		return false;
	*ok = ans->str[0] == '0';
	*want = strtoull(ans->str + 1, &end, 10);
	if (end != nl)
		return false;
	g_string_erase(ans, 0, (gssize)(nl + 1 - ans->str));
	return ans->len == *want;
}

int ctl_exchange(const char *path, int argc, char **argv, unsigned timeout_s,
		 char **answer, GError **err)
{
	GString *req = request(argc, argv, err), *ans;
	char buf[65536];
	size_t want = 0;
	ssize_t n;
	bool ok = false;
	int fd;

	*answer = NULL;
	if (!req)
		return -1;
	if ((fd = ctl_open(path, timeout_s, err)) < 0) {
		g_string_free(req, TRUE);
		return -1;
	}
	ans = g_string_new(NULL);
	/* A refusal (too many clients) is written before our request is
	 * read and the socket closed: no SIGPIPE, read the refusal instead. */
	if (send(fd, req->str, req->len, MSG_NOSIGNAL) != (ssize_t)req->len &&
	    errno != EPIPE && errno != ECONNRESET) {
		g_set_error(err, IBEMU_ERROR, errno, "cannot send to the emulator at %s: %s",
			    path, errno == EAGAIN ? "timed out" : g_strerror(errno));
		goto fail;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		g_string_append_len(ans, buf, n);
	if (n < 0 && errno == EAGAIN) {
		g_set_error(err, IBEMU_ERROR, ETIMEDOUT,
			    "no answer from the emulator at %s within %u s (stopped? --timeout)",
			    path, timeout_s);
		goto fail;
	}
	if (!unframe(ans, &ok, &want)) {
		g_set_error(err, IBEMU_ERROR, EIO,
			    ans->len || n < 0 ? "the answer of the emulator at %s was cut short (%zu of %zu bytes)" :
			    "no answer from the emulator at %s", path, ans->len, want);
		goto fail;
	}
	close(fd);
	g_string_free(req, TRUE);
	*answer = g_string_free(ans, FALSE);
	return ok ? 0 : 1;
fail:
	close(fd);
	g_string_free(req, TRUE);
	g_string_free(ans, TRUE);
	return -1;
}

int ctl_client(const char *path, int argc, char **argv, unsigned timeout_s)
{
	GError *err = NULL;
	char *ans;
	int ret = ctl_exchange(path, argc, argv, timeout_s, &ans, &err);

	if (ret < 0) {
		fprintf(stderr, "ibemu ctl: %s\n", err->message);
		g_error_free(err);
		return 1;
	}
	fputs(ans, ret ? stderr : stdout);
	g_free(ans);
	return ret;
}

char *ctl_ask(const char *path, int argc, char **argv, GError **err)
{
	char *ans;
	int ret = ctl_exchange(path, argc, argv, CTL_TIMEOUT_S, &ans, err);

	if (ret == 1) {
		g_set_error(err, IBEMU_ERROR, EINVAL, "%s", g_strchomp(ans));
		g_free(ans);
		return NULL;
	}
	return ret ? NULL : ans;
}

/* How often `wait` asks again: cheap for the emulator (one walk of the
 * ports), and well under the time a sweep takes. */
#define CTL_WAIT_POLL_US	(50 * 1000)

int ctl_client_wait(const char *path, int argc, char **argv, unsigned timeout_s)
{
	unsigned long wait_s = 60;
	int64_t deadline;
	int i, ret;

	/* The emulator checks the option's range at the first ask. */
	for (i = 0; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--timeout"))
			wait_s = strtoul(argv[i + 1], NULL, 0);
	deadline = g_get_monotonic_time() + (int64_t)wait_s * G_USEC_PER_SEC;
	for (;;) {
		GError *err = NULL;
		char *ans;

		ret = ctl_exchange(path, argc, argv, timeout_s, &ans, &err);
		if (ret < 0) {
			fprintf(stderr, "ibemu ctl: %s\n", err->message);
			g_error_free(err);
			return 1;
		}
		if (ret == 0 || !g_str_has_prefix(ans, "error: not yet: ")) {
			fputs(ans, ret ? stderr : stdout);
			g_free(ans);
			return ret;
		}
		if (g_get_monotonic_time() >= deadline) {
			fprintf(stderr, "ibemu ctl: %s %s: not within %lu s (%s)\n", argv[0],
				argc > 1 ? argv[1] : "", wait_s, g_strchomp(ans + 16));
			g_free(ans);
			return 1;
		}
		g_free(ans);
		g_usleep(CTL_WAIT_POLL_US);
	}
}
