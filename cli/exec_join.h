/* SPDX-License-Identifier: MIT */
/*
 * Running a command in a running emulator's namespaces, or on one host
 * of a run of hosts: what `ibemu exec` and the run's ssh do (cmd_exec.c).
 */
#ifndef IBEMU_CLI_EXEC_JOIN_H
#define IBEMU_CLI_EXEC_JOIN_H

#include <stdbool.h>

struct exec_join {
	const char *name;	/* the emulator's name; NULL: $IBEMU_CTL or the only one */
	const char *host;	/* a host of the run; NULL: the first, if it has hosts */
	char **cmd;		/* searched in PATH */
	char **envp;		/* NULL: ours */
	const char *cwd;	/* where CMD starts; NULL: / */
	bool no_fast;		/* no fast path (cli/fastenv.h) */
	bool null_stdin;	/* CMD's stdin is /dev/null */
	bool as_ssh;		/* an unknown host said as ssh says it */
	int fail_status;	/* what we exit with when we cannot run CMD */
};

/* Run @j's command there and wait: its exit status (128 + N for signal
 * N), or @j->fail_status having said why not. */
int exec_join(const struct exec_join *j);

#endif
