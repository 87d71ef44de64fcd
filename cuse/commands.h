/* SPDX-License-Identifier: MIT */
/* The subcommands main.c dispatches to that live in their own files. */
#ifndef IBEMU_CUSE_COMMANDS_H
#define IBEMU_CUSE_COMMANDS_H

int cmd_start(int argc, char **argv);	/* start.c: CUSE mode */
int cmd_stop(int argc, char **argv);

#endif
