/* SPDX-License-Identifier: MIT */
/*
 * The owner's end of `ibemu run --remote ssh://HOST/NAME`
 * (docs/many-hosts.md), which ssh runs on HOST:
 *
 *   ibemu bridge NAME|unix:PATH
 *
 * It connects to that emulator's fast socket and carries the connection,
 * and every channel passed along it, over its standard input and output
 * (socket/mux.h), until either side closes. Why it could not connect is one
 * line on stderr, which ssh carries back to the attaching host.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>

#include "cli/cli.h"
#include "socket/mux.h"
#include "socket/remote.h"

int cmd_bridge(int argc, char **argv)
{
	GError *err = NULL;
	int fd;

	if (argc != 2 || cli_wants_help(argc, argv)) {
		printf("Usage: ibemu bridge NAME|unix:PATH\n"
		       "What `ibemu run --remote ssh://HOST/NAME` runs on HOST through ssh: carries\n"
		       "the emulator's fast socket over standard input and output.\n");
		return cli_wants_help(argc, argv) ? 0 : 2;
	}
	if ((fd = remote_connect(argv[1], &err)) < 0) {
		fprintf(stderr, "ibemu bridge on %s: %s\n", g_get_host_name(), err->message);
		g_error_free(err);
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	return mux_run(0, 1, fd, true) == 0 ? 0 : 1;
}
