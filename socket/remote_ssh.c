/* SPDX-License-Identifier: MIT */
/* --remote ssh://; see remote_ssh.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib-unix.h>

#include "ctl/sockname.h"
#include "lib/log.h"
#include "socket/mux.h"
#include "socket/remote_ssh.h"

#define END_GRACE_MS	5000	/* for the carrier and ssh to end by themselves */

struct remote_ssh {
	pid_t ssh, carrier;
	int err;		/* ssh's stderr, read here */
	guint err_watch;
	GString *err_text;	/* what it said, before forwarding began */
};

/*
 * ssh://[user@]host[:port]/NAME into ssh's arguments: $IBEMU_SSH (or
 * ssh), then ours, then `ibemu bridge NAME` to run there. NAME becomes a
 * word of a shell command there: only an emulator's name (emulator.c) goes.
 */
static char **ssh_argv(const char *where, GError **err)
{
	const char *auth = where + strlen("ssh://"), *slash = strchr(auth, '/');
	const char *ssh = g_getenv("IBEMU_SSH");
	char *host = NULL, *user = NULL, *port = NULL, *at, *colon, *ctl = NULL;
	char **base = NULL;
	GPtrArray *av = NULL;
	const char *name;
	unsigned i;

	if (!slash || slash == auth || !slash[1]) {
		g_set_error(err, IBEMU_ERROR, EINVAL,
			    "--remote %s: expected ssh://[user@]host[:port]/NAME", where);
		return NULL;
	}
	name = slash + 1;
	if (!(ctl = emu_ctl_path(name, err)))	/* checks the name */
		return NULL;
	g_free(ctl);
	host = g_strndup(auth, (gsize)(slash - auth));
	if ((at = strrchr(host, '@'))) {
		*at = '\0';
		user = g_strdup(host);
		memmove(host, at + 1, strlen(at + 1) + 1);
	}
	/* [v6addr]:port, or host:port */
	if (host[0] == '[' && (colon = strchr(host, ']'))) {
		if (colon[1] == ':')
			port = g_strdup(colon + 2);
		else if (colon[1])
			goto bad;
		*colon = '\0';
		memmove(host, host + 1, strlen(host));
	} else if ((colon = strchr(host, ':'))) {
		port = g_strdup(colon + 1);
		*colon = '\0';
	}
	if (!*host || (user && !*user) ||
	    (port && (!*port || strspn(port, "0123456789") != strlen(port) || atoi(port) < 1 ||
		      atoi(port) > 65535)))
		goto bad;
	if (!g_shell_parse_argv(ssh && *ssh ? ssh : "ssh", NULL, &base, NULL)) {
		g_set_error(err, IBEMU_ERROR, EINVAL, "IBEMU_SSH=%s: not a command", ssh);
		goto out;
	}
	av = g_ptr_array_new();
	for (i = 0; base[i]; i++)
		g_ptr_array_add(av, g_strdup(base[i]));
	/* No terminal to ask on (our stdin is the stream): keys or agent
	 * only; a host that stops answering is noticed (three 5 s probes). */
	for (const char *const *o = (const char *const[]){ "-T", "-o", "BatchMode=yes", "-o",
			"ServerAliveInterval=5", "-o", "ServerAliveCountMax=3", NULL }; *o; o++)
		g_ptr_array_add(av, g_strdup(*o));
	if (port) {
		g_ptr_array_add(av, g_strdup("-p"));
		g_ptr_array_add(av, g_strdup(port));
	}
	if (user) {
		g_ptr_array_add(av, g_strdup("-l"));
		g_ptr_array_add(av, g_strdup(user));
	}
	g_ptr_array_add(av, g_strdup("--"));
	g_ptr_array_add(av, g_strdup(host));
	g_ptr_array_add(av, g_strdup_printf("ibemu bridge %s", name));
	g_ptr_array_add(av, NULL);
	goto out;
bad:
	g_set_error(err, IBEMU_ERROR, EINVAL, "--remote %s: expected ssh://[user@]host[:port]/NAME",
		    where);
out:
	g_strfreev(base);
	g_free(host);
	g_free(user);
	g_free(port);
	return av ? (char **)g_ptr_array_free(av, FALSE) : NULL;
}

struct remote_ssh *remote_ssh_start(const char *where, int *host_ch, GError **err)
{
	char **av = ssh_argv(where, err);
	int stream[2] = { -1, -1 }, errp[2] = { -1, -1 }, ch[2] = { -1, -1 };
	struct remote_ssh *s = NULL;

	if (!av)
		return NULL;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, stream) < 0 ||
	    pipe2(errp, O_CLOEXEC) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ch) < 0) {
		g_set_error(err, IBEMU_ERROR, errno, "--remote %s: %s", where, g_strerror(errno));
		goto out;
	}
	s = g_new0(struct remote_ssh, 1);
	s->err = errp[0];
	s->err_text = g_string_new(NULL);
	fflush(NULL);
	/* Both children in process groups of their own: Ctrl-C is for the
	 * command, not for the connection; and they end when we do. */
	if ((s->ssh = fork()) == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		setpgid(0, 0);
		dup2(stream[1], 0);
		dup2(stream[1], 1);
		dup2(errp[1], 2);
		execvp(av[0], av);
		fprintf(stderr, "cannot run %s: %s\n", av[0], g_strerror(errno));
		_exit(127);
	}
	if (s->ssh > 0 && (s->carrier = fork()) == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		setpgid(0, 0);
		signal(SIGPIPE, SIG_IGN);
		close(ch[0]);		/* its hangup is our lifeline */
		close(stream[1]);	/* ssh's end: its exit is our EOF */
		close(errp[0]);
		close(errp[1]);
		_exit(mux_run(stream[0], stream[0], ch[1], false) == 0 ? 0 : 1);
	}
	if (s->ssh < 0 || s->carrier < 0) {
		g_set_error(err, IBEMU_ERROR, errno, "--remote %s: fork: %s", where, g_strerror(errno));
		remote_ssh_end(s);
		s = NULL;
		errp[0] = -1;	/* closed by remote_ssh_end */
		goto out;
	}
	*host_ch = ch[0];
	ch[0] = -1;
	errp[0] = -1;
	g_debug("--remote %s: ssh pid %d, carrier pid %d", where, s->ssh, s->carrier);
out:
	for (int *fd = (int[]){ stream[0], stream[1], errp[0], errp[1], ch[0], ch[1] },
	     *end = fd + 6; fd < end; fd++)
		if (*fd >= 0)
			close(*fd);
	g_strfreev(av);
	return s;
}

/* What ssh wrote: taken into err_text; false at its end. */
static bool take_err(struct remote_ssh *s)
{
	char buf[4096];
	ssize_t n = read(s->err, buf, sizeof(buf));

	if (n > 0)
		g_string_append_len(s->err_text, buf, n);
	return n > 0 || (n < 0 && (errno == EINTR || errno == EAGAIN));
}

/* *@pid ends within @ms, or gets @sig; reaped either way (then 0), its
 * wait status returned. */
static int end_child(pid_t *pid, int ms, int sig)
{
	int pfd, status = 0;

	if (*pid <= 0)
		return 0;
	pfd = (int)syscall(SYS_pidfd_open, *pid, 0);
	if (pfd >= 0) {
		struct pollfd p = { .fd = pfd, .events = POLLIN };

		if (poll(&p, 1, ms) != 1)
			kill(*pid, sig);
		close(pfd);
	} else {
		kill(*pid, sig);
	}
	while (waitpid(*pid, &status, 0) < 0 && errno == EINTR)
		;
	*pid = 0;
	return status;
}

char *remote_ssh_reason(struct remote_ssh *s)
{
	struct pollfd p = { .fd = s->err, .events = POLLIN };
	gint64 deadline = g_get_monotonic_time() + END_GRACE_MS * 1000;
	char **lines, *last = NULL;
	int i;

	/* Our channels are closed: the carrier ends, so does ssh, and its
	 * stderr with it. */
	while (g_get_monotonic_time() < deadline &&
	       poll(&p, 1, (int)((deadline - g_get_monotonic_time()) / 1000)) > 0 && take_err(s))
		;
	lines = g_strsplit(s->err_text->str, "\n", -1);
	for (i = (int)g_strv_length(lines) - 1; i >= 0 && !last; i--)
		if (*g_strstrip(lines[i]))
			last = g_strdup(lines[i]);
	g_strfreev(lines);
	if (!last) {
		/* Its stderr has ended: so has it, or does now. */
		int status = end_child(&s->ssh, END_GRACE_MS, SIGTERM);

		last = g_strdup_printf("the ssh command ended (%s %d) without saying why",
				       WIFEXITED(status) ? "exit status" : "signal",
				       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	}
	return last;
}

static gboolean on_err(gint fd, GIOCondition cond, gpointer data)
{
	struct remote_ssh *s = data;

	(void)fd;
	(void)cond;
	g_string_truncate(s->err_text, 0);
	if (!take_err(s)) {
		s->err_watch = 0;
		return G_SOURCE_REMOVE;
	}
	fputs(s->err_text->str, stderr);
	return G_SOURCE_CONTINUE;
}

void remote_ssh_forward_stderr(struct remote_ssh *s)
{
	if (s->err_text->len)
		fputs(s->err_text->str, stderr);	/* a warning, say, as it connected */
	g_string_truncate(s->err_text, 0);
	s->err_watch = g_unix_fd_add(s->err, G_IO_IN | G_IO_HUP | G_IO_ERR, on_err, s);
}

void remote_ssh_end(struct remote_ssh *s)
{
	if (!s)
		return;
	if (s->err_watch)
		g_source_remove(s->err_watch);
	/* The carrier says channel 0's close over the stream and ends; the
	 * bridge there ends with it, and ssh with the bridge. */
	end_child(&s->carrier, END_GRACE_MS, SIGKILL);
	end_child(&s->ssh, END_GRACE_MS, SIGTERM);
	if (s->err >= 0)
		close(s->err);
	g_string_free(s->err_text, TRUE);
	g_free(s);
}
