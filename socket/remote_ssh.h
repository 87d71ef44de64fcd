/* SPDX-License-Identifier: MIT */
/*
 * `--remote ssh://[user@]host[:port]/NAME` (docs/many-hosts.md): the
 * system's OpenSSH client runs `ibemu bridge NAME` on that host, and a
 * child of ours carries the attachment's channels over ssh's standard
 * input and output (socket/mux.h). Authentication, encryption and host keys
 * are ssh's; $IBEMU_SSH replaces the `ssh` command (with options, as a
 * shell would split them).
 */
#ifndef IBEMU_SOCKET_REMOTE_SSH_H
#define IBEMU_SOCKET_REMOTE_SSH_H

#include <glib.h>

struct remote_ssh;

/* Start ssh and the carrier; *@host_ch: channel 0, as if connected to
 * the emulator's fast socket there. NULL with @err (a bad WHERE; no ssh). */
struct remote_ssh *remote_ssh_start(const char *where, int *host_ch, GError **err);
/* Once the first answer did not come: ssh's last line on stderr (it
 * said why: no key, no such host, no ibemu or emulator there), waiting
 * for ssh to end; g_free. */
char *remote_ssh_reason(struct remote_ssh *s);
/* From now on ssh's stderr goes to ours as it comes (the main loop). */
void remote_ssh_forward_stderr(struct remote_ssh *s);
/* After the channels are closed: the carrier and ssh end (killed if
 * they do not within a few seconds). */
void remote_ssh_end(struct remote_ssh *s);

#endif
