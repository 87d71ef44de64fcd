/* SPDX-License-Identifier: MIT */
/*
 * The run's ssh (`ibemu run --hosts`, docs/virtual-cluster.md): first on
 * the hosts' PATH as /dev/.ibemu/bin/ssh, a link to this ibemu, so that
 * launchers that reach other nodes by ssh (Open MPI's plm rsh, MPICH's
 * hydra, pdsh, scripts) run their commands on the run's hosts:
 *
 *   ssh [OPTION...] [USER@]HOST [COMMAND [ARG...]]
 *
 * As OpenSSH does: the words of COMMAND are joined by spaces and run by
 * the user's shell (`$SHELL -c`), or a login shell without them, in the
 * home directory, with a login's environment (HOME, USER, LOGNAME, SHELL,
 * the locale) plus what the hosts share here as a cluster's nodes share
 * their software: PATH, LD_LIBRARY_PATH, the sanitizers' and ibemu's own
 * variables. The rest of the caller's environment stays behind, as it
 * does with ssh (Open MPI forwards what it needs on the command line).
 * The exit status is COMMAND's, or 255 when it cannot run, as ssh's.
 */
#include "config.h"

#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "cli/cli.h"
#include "cli/exec_join.h"

#define SSH_FAIL	255

/* OpenSSH's options that take an argument, and those it takes here
 * without effect (no terminal, X11, agent or compression to forward). */
static const char with_arg[] = "BbcDEeFIiJLlmOoPpQRSWw";
static const char flags[] = "1246AaCfGgKkMNnqsTtVvXxYy";
/* What makes sense only with a real connection. */
static const char unsupported[] = "DfGLMNRsWw";

/* The caller's variables a host's login keeps (see above). */
static bool kept(const char *var)
{
	static const char *const names[] = { "PATH", "LD_LIBRARY_PATH", "LANG", "LANGUAGE", "TZ",
					     "TMPDIR", "ASAN_OPTIONS", "UBSAN_OPTIONS",
					     "LSAN_OPTIONS", NULL };
	size_t n = strcspn(var, "=");
	unsigned i;

	for (i = 0; names[i]; i++)
		if (strlen(names[i]) == n && !strncmp(var, names[i], n))
			return true;
	/* The locale, and ibemu's own (exec_join sets IBEMU_FAST anew). */
	return !strncmp(var, "LC_", 3) || !strncmp(var, "IBEMU", 5);
}

static char **login_env(const struct passwd *pw)
{
	char **env = g_get_environ(), **out = NULL;
	unsigned i;

	for (i = 0; env[i]; i++)
		if (kept(env[i])) {
			char *eq = strchr(env[i], '=');
			char *name = g_strndup(env[i], (gsize)(eq - env[i]));

			out = g_environ_setenv(out, name, eq + 1, TRUE);
			g_free(name);
		}
	g_strfreev(env);
	if (pw) {
		out = g_environ_setenv(out, "HOME", pw->pw_dir, TRUE);
		out = g_environ_setenv(out, "USER", pw->pw_name, TRUE);
		out = g_environ_setenv(out, "LOGNAME", pw->pw_name, TRUE);
		out = g_environ_setenv(out, "SHELL", pw->pw_shell, TRUE);
	}
	return out ? out : g_new0(char *, 1);
}

int cmd_ssh(int argc, char **argv)
{
	const struct passwd *pw = getpwuid(getuid());
	const char *shell = pw && pw->pw_shell && *pw->pw_shell ? pw->pw_shell : "/bin/sh";
	struct exec_join j = { .fail_status = SSH_FAIL, .as_ssh = true };
	char *host = NULL, *line, *cmd[4] = { NULL };
	const char *at;
	int i = 1, ret;

	/* Options before and after the host, as OpenSSH takes them. */
	for (; i < argc; i++) {
		const char *a = argv[i];
		size_t k;

		if (!strcmp(a, "--")) {
			i++;
			if (!host && i < argc)
				host = argv[i++];
			break;
		}
		if (a[0] != '-' || !a[1]) {
			if (host)
				break;
			host = argv[i];
			continue;
		}
		for (k = 1; a[k]; k++) {
			if (strchr(unsupported, a[k])) {
				fprintf(stderr, "ssh: -%c: not with the hosts of an ibemu run\n", a[k]);
				return SSH_FAIL;
			}
			if (a[k] == 'V') {
				fprintf(stderr, "ibemu %s's ssh for the hosts of a run\n", PACKAGE_VERSION);
				return 0;
			}
			if (a[k] == 'n')
				j.null_stdin = true;
			if (strchr(with_arg, a[k])) {
				if (!a[k + 1] && ++i >= argc) {
					fprintf(stderr, "ssh: option requires an argument -- %c\n", a[k]);
					return SSH_FAIL;
				}
				break;	/* the rest of the word, or the next one */
			}
			if (!strchr(flags, a[k])) {
				fprintf(stderr, "ssh: unknown option -- %c\n", a[k]);
				return SSH_FAIL;
			}
		}
	}
	if (!host) {
		fprintf(stderr, "usage: ssh [OPTION...] [USER@]HOST [COMMAND [ARG...]]\n"
			"(ibemu's ssh: runs COMMAND on a host of this ibemu run --hosts)\n");
		return SSH_FAIL;
	}
	if ((at = strrchr(host, '@')))
		host = (char *)at + 1;
	j.host = host;
	j.envp = login_env(pw);
	j.cwd = pw ? pw->pw_dir : "/";
	cmd[0] = (char *)shell;
	if (i < argc) {
		line = g_strjoinv(" ", argv + i);
		cmd[1] = (char *)"-c";
		cmd[2] = line;
	} else {
		line = NULL;
		cmd[1] = (char *)"-l";
	}
	j.cmd = cmd;
	ret = exec_join(&j);
	g_free(line);
	g_strfreev(j.envp);
	return ret;
}
