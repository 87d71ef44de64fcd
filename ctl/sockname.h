/* SPDX-License-Identifier: MIT */
/*
 * Where emulators' sockets live and what they are called: NAME.sock, the
 * control socket, and NAME.fast, the fast path's, in one directory per
 * user. Every side uses it: the emulator making them, `ibemu ctl` and
 * `ibemu list` finding them, an attaching host (`--remote NAME`).
 */
#ifndef IBEMU_CTL_SOCKNAME_H
#define IBEMU_CTL_SOCKNAME_H

#include <glib.h>
#include <stdbool.h>

/* Where control sockets live: $IBEMU_CTL_DIR inside an `ibemu run` (the
 * run's own directory, so that a run inside it finds a directory of its
 * own user there), else $XDG_RUNTIME_DIR/ibemu when set, else /run/ibemu
 * for root, /tmp/ibemu-UID for others. */
char *emu_ctl_dir(void);
/* Create it (0700), or check that it is ours and private. */
int emu_ctl_dir_prepare(GError **err);
#define EMU_NAME_MAX	64
/* An emulator's or a host's name: 1 to EMU_NAME_MAX of A-Z a-z 0-9 . _ -,
 * not starting with . or - (names become file names, and hosts' names
 * are shown beside them). */
bool emu_name_ok(const char *name);
/* @name's socket; NULL with @err for a name outside [A-Za-z0-9._-]. */
char *emu_ctl_path(const char *name, GError **err);
/* The emulator's name in control socket @ctl_sock's ("NAME.sock"). */
char *emu_name_of(const char *ctl_sock);
/* The fast path's socket beside control socket @ctl_sock ("NAME.fast"). */
char *emu_fast_path(const char *ctl_sock);
/* The sockets of the emulators that answer, sorted (stale ones removed). */
GPtrArray *emu_list(void);
#endif
