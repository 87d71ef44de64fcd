/* SPDX-License-Identifier: MIT */
/*
 * The control plane: a table of commands, one small handler each, run on
 * the event loop from the control socket (`ibemu ctl ...`) or from a
 * scenario file. Commands never take the emulator down: bad input gets an
 * error line and changes nothing.
 *
 * The commands are the table in ctl_cmds.c (`ibemu ctl help` lists them);
 * ctl_cmd.h says how one is described and where to add one.
 */
#ifndef IBEMU_CTL_CTL_H
#define IBEMU_CTL_CTL_H

#include <stdbool.h>
#include <sys/types.h>

#include <glib.h>

#include "fabric/fabric.h"

struct umad_host;

/* What `pid init` says while the run's init makes its namespaces: `ibemu
 * exec` asks again (its namespaces are not the run's yet). */
#define CTL_INIT_STARTING	"the run's init is still making its namespaces"
/* ... and `ibemu start`'s answer: no init, no namespaces to join. */
#define CTL_NO_COMMAND		"this emulator runs no command (ibemu start)"
/* What `hosts` says of an emulator without (run --hosts), and of a name
 * that is none of them: `ibemu exec` and the run's ssh tell them apart. */
#define CTL_NO_HOSTS		"this emulator has no hosts (ibemu run --hosts)"
#define CTL_NO_SUCH_HOST	"no such host in this run"

struct ctl_env {
	struct fabric *fabric;
	struct timerq *tq;
	struct umad_host *host;	/* its open files, for status; may be NULL */
	struct ucma *ucma;	/* its rdma_cm listeners, for status; may be NULL */
	struct ipoib_links *ipoib;	/* its IPoIB interfaces, for status; may be NULL */
	GPtrArray *scenarios;	/* struct scenario *, owned */
	int init_pid;		/* namespace mode: the run's init (nsinit.h) once
				 * it has made its namespaces, -1 until then;
				 * 0: no init (ibemu start) */
	unsigned scenario_depth; /* while a scenario step runs: its depth + 1 */
	unsigned scenario_steps; /* steps of running scenarios not run yet */
	/* For `info` (ibemu list): set by whoever starts the emulator. */
	const char *name, *mode, *topology;
	char *attached;		/* node ids, space-separated, owned */
	struct pkt_capture *capture;	/* `capture start` or --capture; NULL: none */
	GPtrArray *remotes;	/* struct ctl_remote *: hosts attached from
				 * elsewhere (docs/many-hosts.md), kept by
				 * socket/attach.c; NULL when none can attach */
	GPtrArray *hosts;	/* struct ctl_host *: run --hosts; NULL: none */
};

/* A host attached to this emulator from elsewhere, for `status`. */
struct ctl_remote {
	char *label;		/* the host's name for itself */
	unsigned uid;		/* who attached it, as our socket saw */
	int pid;
	char *nodes;		/* node ids, space-separated */
	struct umad_host *host;	/* its umad devices and open files */
	struct ucma *ucma;	/* its rdma_cm listeners */
	struct ipoib_links *ipoib;	/* its interfaces on the wire; may be NULL */
	uint64_t rtt_ns;	/* the round trip it measured to us; 0: none yet */
	bool local;		/* a host of this run (run --hosts), not remote */
};

/* A host of `ibemu run --hosts` (docs/virtual-cluster.md), for `hosts`
 * and `ibemu exec --host`. */
struct ctl_host {
	char *name;
	char *nodes;		/* node ids, space-separated */
	char *fast;		/* its programs' fast path socket */
	int pid;		/* its keeper (namespaces to join); 0: not yet */
	int ns_pid;		/* the same, in the run's PID namespace */
};

/* Run one command; its output (or error text) goes to @out. 0 or -1. */
int ctl_run(struct ctl_env *env, char **argv, GString *out);
/* The commands and what they do, from the table (no emulator needed);
 * with @argv naming a command, its usage and options. */
void ctl_help(char **argv, GString *out);

/* Start @sc's steps (scenario.h) as control commands; @env keeps it
 * until its last step has run (a scenario without steps is freed). */
struct scenario;
void ctl_start_scenario(struct ctl_env *env, struct scenario *sc);

/* The socket server. @path is created (0600); connections from other
 * users are refused by their peer credentials. */
struct ctl_server;
struct ctl_server *ctl_server_new(struct ctl_env *env, const char *path, GError **err);
/* Serve @fd (ours now), a connection whose peer the caller has let in:
 * a fast path channel after FAST_CTL (abi/fast_wire.h). */
void ctl_server_adopt(struct ctl_server *s, int fd);
/* Removes the socket file, if it is still the one it made. */
void ctl_server_free(struct ctl_server *s);

/* Is there an emulator behind the socket file @path? */
enum ctl_probe { CTL_LIVE, CTL_STALE, CTL_NOT_OURS, CTL_NONE };
enum ctl_probe ctl_probe(const char *path);
/* Remove @path if it is a socket file of ours (never anything else). */
void ctl_unlink_if_ours(const char *path);
/* A non-blocking Unix socket of @type listening at @path (made 0600), or
 * -1 with @err ("cannot listen on PATH: ..."); @path must fit sun_path. */
int ctl_listen(const char *path, int type, int backlog, GError **err);
/* A peer of uid @uid may steer us: ours, root, or root outside our user
 * namespace, on a socket only we may open (ctl.c); on one a group may
 * open (@shared: --remote-group), a peer from outside our user namespace
 * is a guest whoever it is, as the namespace hides who. */
bool ctl_peer_trusted(uid_t uid, bool shared);

#endif
