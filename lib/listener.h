/* SPDX-License-Identifier: MIT */
/*
 * A listening socket on the main loop whose accepts back off when the
 * process is out of fds (EMFILE, ENFILE, ENOBUFS, ENOMEM): the socket
 * stays readable then, and a watch that only tried again would spin the
 * loop at full CPU and starve everything else it serves. Paused, it says
 * so in the log (once a minute at most) and tries again every
 * LISTENER_PAUSE_MS; the clients wait in the backlog meanwhile (README
 * "Limits").
 */
#ifndef IBEMU_LIB_LISTENER_H
#define IBEMU_LIB_LISTENER_H

#include <glib.h>
#include <stdbool.h>

#define LISTENER_PAUSE_MS	100
#define LISTENER_SAY_AGAIN_US	(60 * G_USEC_PER_SEC)	/* the log line, at most this often */

struct listener {
	int fd;
	guint watch;		/* while accepting */
	guint pause;		/* while paused */
	gint64 said_at;		/* when the pause was last logged, or 0 */
	const char *what;	/* for the log: "control socket", "fast socket" */
	void (*on_client)(void *data, int fd);
	void *data;
};

/* Watch @fd (listening) and hand each accepted client (SOCK_CLOEXEC and
 * SOCK_NONBLOCK) to @on_client, which owns it. */
void listener_start(struct listener *l, int fd, const char *what,
		    void (*on_client)(void *data, int fd), void *data);
/* Stop watching (the fd stays open: its owner closes it). */
void listener_stop(struct listener *l);

#endif
