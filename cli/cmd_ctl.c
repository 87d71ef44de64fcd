/* SPDX-License-Identifier: MIT */
/*
 * Talking to a running emulator from the command line:
 *
 *   ibemu ctl [--name NAME | --socket PATH] [--timeout S] COMMAND...
 *   ibemu list
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/emulator.h"
#include "ctl/ctl.h"
#include "ctl/ctl_client.h"

/* ibemu list: the emulators of this user that answer. */
int cmd_list(int argc, char **argv)
{
	char *info_argv[] = { (char *)"info", NULL };
	GPtrArray *live;
	unsigned i;

	if (argc > 1) {
		printf("Usage: ibemu list\n"
		       "The running emulators of this user: name, pid, mode, topology, attached nodes.\n");
		return cli_wants_help(argc, argv) ? 0 : 2;
	}
	live = emu_list();
	printf("%-20s %-8s %-10s %-30s %s\n", "NAME", "PID", "MODE", "TOPOLOGY", "ATTACHED");
	for (i = 0; i < live->len; i++) {
		const char *path = g_ptr_array_index(live, i);
		char *ans = ctl_ask(path, 1, info_argv, NULL);
		char **f = ans ? g_strsplit(g_strchomp(ans), "\t", 5) : NULL;
		bool handover = false;
		pid_t pid;

		if (!f || g_strv_length(f) != 5)
			goto next;
		pid = ctl_listener_pid(path, &handover, NULL);
		if (handover) {
			/* An attached host (`start --remote`): its own name
			 * and daemon, the fabric of the emulator it is a
			 * host of (whose answer that was). */
			char *base = emu_name_of(path), *topo;

			topo = g_strdup_printf("%s's: %s", f[0], f[3]);
			printf("%-20s %-8d %-10s %-30s %s\n", base, pid, "remote", topo,
			       "(ibemu ctl status)");
			g_free(topo);
			g_free(base);
		} else {
			printf("%-20s %-8s %-10s %-30s %s\n", f[0], f[1], f[2], f[3], f[4]);
		}
next:
		g_strfreev(f);
		g_free(ans);
	}
	g_ptr_array_free(live, TRUE);
	return 0;
}

int cmd_ctl(int argc, char **argv)
{
	const char *socket_path = NULL, *name = NULL;
	unsigned timeout_s = CTL_TIMEOUT_S;
	char *path, *end;
	int i = 1, ret;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("Usage: ibemu ctl [--name NAME | --socket PATH] [--timeout S] COMMAND [ARG...] [--json]\n"
		       "Steer a running emulator; `ibemu ctl help` lists its commands.\n"
		       "Inside ibemu run/exec/shell no --name is needed ($IBEMU_CTL).\n"
		       "An answer that does not come within S seconds (default %u) is an error.\n",
		       CTL_TIMEOUT_S);
		return 0;
	}
	while (i + 1 < argc && (!strcmp(argv[i], "--name") || !strcmp(argv[i], "--socket") ||
				!strcmp(argv[i], "--timeout"))) {
		if (!strcmp(argv[i], "--name")) {
			name = argv[i + 1];
		} else if (!strcmp(argv[i], "--socket")) {
			socket_path = argv[i + 1];
		} else {
			unsigned long t = strtoul(argv[i + 1], &end, 10);

			if (*end || !*argv[i + 1] || t < 1 || t > 86400) {
				fprintf(stderr, "ibemu ctl: --timeout takes seconds, 1 to 86400\n");
				return 2;
			}
			timeout_s = (unsigned)t;
		}
		i += 2;
	}
	if (i >= argc) {
		fprintf(stderr, "Usage: ibemu ctl [--name NAME | --socket PATH] [--timeout S] COMMAND... (ibemu ctl help)\n");
		return 2;
	}
	/* Help comes from the same table the emulator runs: no emulator needed. */
	if (!strcmp(argv[i], "help")) {
		GString *out = g_string_new(NULL);

		ctl_help(argv + i + 1, out);
		fputs(out->str, stdout);
		g_string_free(out, TRUE);
		return 0;
	}
	/* The emulator opens a capture or scenario file from its own working
	 * directory: a relative name is the caller's. */
	if (!strcmp(argv[i], "capture") && i + 2 < argc && !strcmp(argv[i + 1], "start") &&
	    argv[i + 2][0] != '-')
		argv[i + 2] = g_canonicalize_filename(argv[i + 2], NULL);
	if (!strcmp(argv[i], "scenario") && i + 1 < argc && argv[i + 1][0] != '-')
		argv[i + 1] = g_canonicalize_filename(argv[i + 1], NULL);
	path = emu_find_ctl(socket_path, name);
	if (!path)
		return 1;
	if (!strcmp(argv[i], "wait"))
		ret = ctl_client_wait(path, argc - i, argv + i, timeout_s);
	else
		ret = ctl_client(path, argc - i, argv + i, timeout_s);
	g_free(path);
	return ret;
}

/*
 * Join the namespaces of process @pid that are not ours: its user namespace
 * (namespace mode without root), its mount namespace, and its PID namespace
 * (for our children: the run's init ends them with the run, nsinit.h).
 */
