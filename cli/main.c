/* SPDX-License-Identifier: MIT */
/*
 * ibemu: the command line. One table names every subcommand, its
 * arguments and what it does; `ibemu --help` is written from it, and each
 * subcommand's file (cmd_*.c) has its own --help.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	{ "exec", "[--name N] [--host H] [--] CMD...", "run CMD in a running emulator's namespace",
	  cmd_exec },
	{ "shell", "[--name N] [--host H]", "a shell in a running emulator's namespace", cmd_shell },
	{ "topo", "check|dot|gen ...", "check, draw or generate topologies",
	  cmd_topo },
	{ "bridge", "NAME|unix:PATH", "what run --remote ssh://HOST/NAME runs on HOST",
	  cmd_bridge },
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
	fprintf(out, "  %-36s %s\n", "help [COMMAND]", "this text, or a command's options");
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

void cli_export_self(void)
{
	char *exe = g_file_read_link("/proc/self/exe", NULL);
	char *dir = exe ? g_path_get_dirname(exe) : NULL;
	const char *path = g_getenv("PATH");
	size_t n = dir ? strlen(dir) : 0;

	if (!exe)
		return;
	g_setenv("IBEMU", exe, TRUE);
	if (!path || !*path) {
		g_setenv("PATH", dir, TRUE);
	} else if (strncmp(path, dir, n) || (path[n] != ':' && path[n])) {
		char *both = g_strconcat(dir, ":", path, NULL);

		g_setenv("PATH", both, TRUE);
		g_free(both);
	}
	g_free(exe);
	g_free(dir);
}

void cli_path_of(char **envp)
{
	const char *path = g_environ_getenv(envp, "PATH");

	if (path)
		g_setenv("PATH", path, TRUE);
}

/* GLib writes --help through g_print, which converts to the locale's
 * charset: under LANG=C its "[OPTION" + U+2026 + "]" comes out as "[OPTION?]". Our
 * help is ASCII whatever the locale. */
static void print_ascii(const gchar *text)
{
	const char *p;

	for (p = text; *p; p++) {
		if (!strncmp(p, "\xe2\x80\xa6", 3)) {	/* the ellipsis, in UTF-8 */
			fputs("...", stdout);
			p += 2;
		} else {
			putchar(*p);
		}
	}
}

int main(int argc, char **argv)
{
	unsigned i;

	log_init(0);
	g_set_print_handler(print_ascii);
	/* The run's ssh (cmd_ssh.c) is this binary under that name. */
	if (argc > 0 && !strcmp(strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0], "ssh"))
		return cmd_ssh(argc, argv);
	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "--version")) {
		printf("ibemu %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return usage(stdout);
	/* `ibemu help [COMMAND]`: as `ibemu [COMMAND] --help`. */
	if (!strcmp(argv[1], "help")) {
		char *help_argv[] = { argv[2], "--help", NULL };

		for (i = 0; argc > 2 && i < G_N_ELEMENTS(commands); i++)
			if (!strcmp(argv[2], commands[i].name))
				return commands[i].fn(2, help_argv);
		if (argc > 2) {
			fprintf(stderr, "ibemu help: unknown command \"%s\"\n", argv[2]);
			return usage(stderr);
		}
		return usage(stdout);
	}
	for (i = 0; i < G_N_ELEMENTS(commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "ibemu: unknown command \"%s\"\n", argv[1]);
	return usage(stderr);
}
