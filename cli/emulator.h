/* SPDX-License-Identifier: MIT */
/*
 * What `ibemu run` (namespace mode) and `ibemu start` (CUSE mode) set up
 * alike: the fabric from its topology, the seed, the attached nodes, the
 * umad host and its verbs devices, the control socket and the scenario.
 */
#ifndef IBEMU_CLI_EMULATOR_H
#define IBEMU_CLI_EMULATOR_H

#include <glib.h>

#include "ctl/ctl.h"
#include "ctl/scenario.h"
#include "ctl/sockname.h"
#include "kernel/ipoib_link.h"
#include "kernel/sa.h"
#include "kernel/ucma.h"
#include "kernel/umad.h"
#include "kernel/uverbs.h"
#include "lib/timerq.h"

struct emu_opts {
	gchar *topology, **attach, *name, *scenario_file, *seed_str, *log_path, *capture_path;
	gboolean configured, verbose, strict;
	gboolean roce;		/* every CA port a RoCE port (docs/roce.md) */
	/* The machine's network, not one of the run's own (run
	 * --host-network, start): the ports' addresses are loopback ones
	 * (struct fabric's loopback_addrs). */
	gboolean host_network;
};

struct emu {
	struct fabric *f;
	struct timerq *tq;
	struct host *hw;	/* the attached CAs' ports (kernel/host.h) */
	struct umad_host *host;	/* their MAD layer */
	struct uverbs *uverbs;	/* the CAs as libibverbs devices */
	struct sa *sa;		/* --configured: the SM's SA; else NULL */
	struct ucma *ucma;	/* their connection manager (rdma_cm) */
	struct ipoib_links *ipoib;	/* their ibN interfaces on the wire (run --hosts) */
	struct ctl_env env;
	struct ctl_server *ctl;
	char *ctl_sock;
	struct scenario *sc;
};

/* The options both commands take, for g_option_context_add_main_entries;
 * g_free the array. */
GOptionEntry *emu_option_entries(struct emu_opts *o);
void emu_opts_clear(struct emu_opts *o);
/* None of the options that make a fabric is set: --remote's fabric is
 * another emulator's (run and start say which options they take then). */
bool emu_remote_opts_ok(const struct emu_opts *o);

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
