/* SPDX-License-Identifier: MIT */
/*
 * The program's subcommands, one file each (cmd_*.c), dispatched by the
 * table in main.c, which also writes `ibemu --help` from it.
 */
#ifndef IBEMU_CLI_CLI_H
#define IBEMU_CLI_CLI_H

#include <stdbool.h>

/* Each gets argv from its own name on and returns the exit status. */
int cmd_run(int argc, char **argv);	/* cmd_run.c: namespace mode */
int cmd_start(int argc, char **argv);	/* cmd_start.c: CUSE mode */
int cmd_stop(int argc, char **argv);
int cmd_ctl(int argc, char **argv);	/* cmd_ctl.c */
int cmd_list(int argc, char **argv);
int cmd_exec(int argc, char **argv);	/* cmd_exec.c */
int cmd_shell(int argc, char **argv);
int cmd_topo(int argc, char **argv);	/* cmd_topo.c */
int cmd_bridge(int argc, char **argv);	/* cmd_bridge.c: ssh runs it */
int cmd_ssh(int argc, char **argv);	/* cmd_ssh.c: run --hosts' ssh */

/* $IBEMU names the running binary and its directory goes first on PATH,
 * for everything a run or exec starts (`ibemu ctl` inside works as written;
 * main.c). */
void cli_export_self(void);
/* Our PATH becomes @envp's: execvpe() looks for the command in the
 * caller's PATH, not in the environment it gives it (main.c). */
void cli_path_of(char **envp);

/* Is there a --help or -h before any "--"? */
bool cli_wants_help(int argc, char **argv);

#endif
