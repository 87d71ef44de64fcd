/* SPDX-License-Identifier: MIT */
/*
 * What `ibemu run` (namespace mode) and `ibemu start` (CUSE mode) set up
 * alike: the fabric from its topology, the seed, the attached nodes, the
 * umad host and its verbs devices, the control socket and the scenario.
 */
#ifndef IBEMU_CLI_EMU_H
#define IBEMU_CLI_EMU_H

#include <glib.h>

#include "emulator/ctl.h"
#include "emulator/scenario.h"
#include "emulator/umad.h"
#include "emulator/uverbs.h"
#include "lib/timerq.h"

struct emu_opts {
	gchar *topology, **attach, *name, *scenario_file, *seed_str, *log_path, *capture_path;
	gboolean configured, verbose, strict;
};

struct emu {
	struct fabric *f;
	struct timerq *tq;
	struct umad_host *host;
	struct uverbs *uverbs;	/* the CAs as libibverbs devices */
	struct ctl_env env;
	struct ctl_server *ctl;
	char *ctl_sock;
	struct scenario *sc;
};

/* The options both commands take, for g_option_context_add_main_entries;
 * g_free the array. */
GOptionEntry *emu_option_entries(struct emu_opts *o);
void emu_opts_clear(struct emu_opts *o);

/* Where control sockets live: $IBEMU_CTL_DIR inside an `ibemu run` (the
 * run's own directory, so that a run inside it finds a directory of its
 * own user there), else $XDG_RUNTIME_DIR/ibemu when set, else /run/ibemu
 * for root, /tmp/ibemu-UID for others. */
char *emu_ctl_dir(void);
/* Create it (0700), or check that it is ours and private. */
int emu_ctl_dir_prepare(GError **err);
#define EMU_NAME_MAX	64
/* @name's socket; NULL with @err for a name outside [A-Za-z0-9._-]. */
char *emu_ctl_path(const char *name, GError **err);
/* The emulator's name in control socket @ctl_sock's ("NAME.sock"). */
char *emu_name_of(const char *ctl_sock);
/* The fast path's socket beside control socket @ctl_sock ("NAME.fast"). */
char *emu_fast_path(const char *ctl_sock);
/* The sockets of the emulators that answer, sorted (stale ones removed). */
GPtrArray *emu_list(void);
/* The socket to talk to: @socket_path, then @name's, then $IBEMU_CTL (set
 * inside `ibemu run`), then the only emulator running for this user;
 * NULL (said on stderr) if none or several. */
char *emu_find_ctl(const char *socket_path, const char *name);

/* The topology file's fabric, or the built-in default for NULL; errors
 * are printed. @flags: TOPO_STRICT refuses lines that are no topology. */
struct fabric *emu_load_fabric(const char *topology, unsigned flags);

/* The verbosity, the socket directory, and the log (--log): 0, or the
 * exit status to end with (said). The first step of emu_setup(). */
int emu_setup_log(const struct emu_opts *o);
/* Everything up to the front-end. Errors are printed; returns 0, or the
 * exit status to end with. */
int emu_setup(struct emu *e, const struct emu_opts *o, const char *default_name);
/* The scenario's clock starts now. */
void emu_start_scenario(struct emu *e);
void emu_teardown(struct emu *e);

#endif
