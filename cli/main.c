/* SPDX-License-Identifier: MIT */
/*
 * ibemu: the command line. One table names every subcommand, its
 * arguments and what it does; `ibemu --help` is written from it, and each
 * subcommand's file (cmd_*.c) has its own --help.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "lib/log.h"

static const struct cli_cmd {
	const char *name, *args, *summary;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "run", "[OPTION...] [--] [CMD [ARG...]]",
	  "run CMD ($SHELL) on an emulated fabric", cmd_run },
	{ "start", "[OPTION...]",
	  "CUSE mode: devices for the whole host (root)",
	  cmd_start },
	{ "stop", "[--name N]", "stop what ibemu start started", cmd_stop },
	{ "ctl", "[--name N] COMMAND...", "steer a running emulator (ibemu ctl help)", cmd_ctl },
	{ "list", "", "the running emulators", cmd_list },
	{ "exec", "[--name N] [--] CMD...", "run CMD in a running emulator's namespace", cmd_exec },
	{ "shell", "[--name N]", "a shell in a running emulator's namespace", cmd_shell },
	{ "topo", "check|dot|gen ...", "check, draw or generate topologies",
	  cmd_topo },
};

static int usage(FILE *out)
{
	unsigned i;

	fprintf(out, "Usage: ibemu COMMAND [OPTION...]\n\n"
		"An InfiniBand fabric and umad device emulator.\n\nCommands:\n");
	for (i = 0; i < G_N_ELEMENTS(commands); i++) {
		char *left = g_strdup_printf("%s %s", commands[i].name, commands[i].args);

		fprintf(out, "  %-36s %s\n", left, commands[i].summary);
		g_free(left);
	}
	fprintf(out, "  %-36s %s\n\n", "--version", "print the version");
	fprintf(out, "`ibemu COMMAND --help` gives the options of each command (man ibemu).\n");
	return out == stderr ? 2 : 0;
}

bool cli_wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return false;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return true;
	}
	return false;
}

int main(int argc, char **argv)
{
	unsigned i;

	log_init(0);
	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "--version")) {
		printf("ibemu %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return usage(stdout);
	for (i = 0; i < G_N_ELEMENTS(commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "ibemu: unknown command \"%s\"\n", argv[1]);
	return usage(stderr);
}
