/* SPDX-License-Identifier: MIT */
/*
 * The set-up shared by `ibemu run` and `ibemu start` (emulator.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/emulator.h"
#include "ctl/capture.h"
#include "fabric/configure.h"
#include "fabric/port.h"
#include "lib/log.h"
#include "topologies/topo.h"

GOptionEntry *emu_option_entries(struct emu_opts *o)
{
	GOptionEntry entries[] = {
		{ "topology", 't', 0, G_OPTION_ARG_FILENAME, &o->topology,
		  "Topology file (ibnetdiscover or ibsim net format)", "FILE" },
		{ "attach", 'a', 0, G_OPTION_ARG_FILENAME_ARRAY, &o->attach,
		  "Node (id or GUID) whose ports are this host's; repeatable (default: the first CA)", "NODE" },
		{ "configured", 'c', 0, G_OPTION_ARG_NONE, &o->configured,
		  "Start as if a subnet manager had run: LIDs, routes, ports Active", NULL },
		{ "roce", 0, 0, G_OPTION_ARG_NONE, &o->roce,
		  "Every CA port is a RoCE port: Ethernet, GIDs from its address, no SM needed", NULL },
		{ "strict", 0, 0, G_OPTION_ARG_NONE, &o->strict,
		  "Refuse a topology line that is not topology (default: skip it, warning)", NULL },
		{ "seed", 0, 0, G_OPTION_ARG_STRING, &o->seed_str,
		  "Seed of every random choice (default: a new one; see ibemu ctl seed)", "N" },
		{ "name", 'n', 0, G_OPTION_ARG_FILENAME, &o->name,
		  "Name of this emulator for ibemu ctl --name", "NAME" },
		{ "scenario", 's', 0, G_OPTION_ARG_FILENAME, &o->scenario_file,
		  "Run the timed steps of a scenario file from the start", "FILE" },
		{ "capture", 0, 0, G_OPTION_ARG_FILENAME, &o->capture_path,
		  "Write every packet on the fabric's cables to a pcap file (Wireshark)", "FILE" },
		{ "log", 0, 0, G_OPTION_ARG_FILENAME, &o->log_path,
		  "Write the log to FILE instead of standard error", "FILE" },
		{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &o->verbose,
		  "Log more (repeat -v via IBEMU_DEBUG=1 for a trace of every MAD)", NULL },
		{ NULL }
	};

	return g_memdup2(entries, sizeof(entries));
}

bool emu_remote_opts_ok(const struct emu_opts *o)
{
	return !o->topology && !o->configured && !o->roce && !o->seed_str && !o->scenario_file &&
	       !o->capture_path && !o->strict;
}

void emu_opts_clear(struct emu_opts *o)
{
	g_free(o->topology);
	g_strfreev(o->attach);
	g_free(o->name);
	g_free(o->scenario_file);
	g_free(o->seed_str);
	g_free(o->log_path);
	g_free(o->capture_path);
	memset(o, 0, sizeof(*o));
}


/* Root's socket of @name (or any, for NULL) in /run/ibemu, which a
 * normal user can see but not use: CUSE mode serves the host as root. */
static bool roots_emulator(const char *name)
{
	char *path;
	bool there;

	if (getuid() == 0)
		return false;
	if (!name)
		return g_file_test("/run/ibemu", G_FILE_TEST_IS_DIR) &&
		       access("/run/ibemu", R_OK | X_OK) < 0;
	path = g_strdup_printf("/run/ibemu/%s.sock", name);
	there = g_file_test(path, G_FILE_TEST_EXISTS);
	g_free(path);
	return there;
}

/* What is true of the emulator @name whose socket is @path, when it
 * cannot be used: said on stderr; @path freed. NULL. */
static char *say_not_running(char *path, const char *name)
{
	switch (ctl_probe(path)) {
	case CTL_LIVE:
		return path;
	case CTL_STALE:
		fprintf(stderr, "ibemu: the emulator %s is not running: it ended without cleaning up (killed?) and left %s; ibemu list removes it, and a new emulator of that name may start\n",
			name, path);
		break;
	case CTL_NOT_OURS:
		fprintf(stderr, "ibemu: %s is not a control socket of this user's: not using it\n", path);
		break;
	case CTL_NONE:
		if (roots_emulator(name))
			fprintf(stderr, "ibemu: the emulator %s is root's (ibemu start): use sudo\n", name);
		else
			fprintf(stderr, "ibemu: no emulator named %s is running (ibemu list shows those that are)\n",
				name);
		break;
	}
	g_free(path);
	return NULL;
}

char *emu_find_ctl(const char *socket_path, const char *name)
{
	GError *err = NULL;
	GPtrArray *live;
	char *found = NULL;
	const char *e;
	GString *names;
	unsigned i;

	if (socket_path)
		return g_strdup(socket_path);
	if (name) {
		if (!(found = emu_ctl_path(name, &err))) {
			fprintf(stderr, "ibemu: %s\n", err->message);
			g_error_free(err);
			return NULL;
		}
		return say_not_running(found, name);
	}
	if ((e = getenv("IBEMU_CTL")) && *e)
		return g_strdup(e);
	live = emu_list();
	if (live->len == 1)
		found = g_strdup(g_ptr_array_index(live, 0));
	else if (!live->len && roots_emulator(NULL))
		fprintf(stderr, "ibemu: no emulator of yours is running; root's (ibemu start, for the whole host) are not visible to you: try sudo\n");
	else if (!live->len)
		fprintf(stderr, "ibemu: no emulator is running (start one with ibemu run or ibemu start)\n");
	else {
		names = g_string_new(NULL);
		for (i = 0; i < live->len; i++) {
			char *b = emu_name_of(g_ptr_array_index(live, i));

			g_string_append_printf(names, "%s%s", i ? ", " : "", b);
			g_free(b);
		}
		fprintf(stderr, "ibemu: %u emulators are running (%s); say which with --name\n",
			live->len, names->str);
		g_string_free(names, TRUE);
	}
	g_ptr_array_free(live, TRUE);
	return found;
}

struct fabric *emu_load_fabric(const char *topology, unsigned flags)
{
	GError *err = NULL;
	struct fabric *f;

	if (!topology)
		return topo_load_default(flags);
	f = topo_load_file(topology, flags, &err);
	if (!f) {
		fprintf(stderr, "ibemu: %s\n", err->message);
		g_error_free(err);
		return NULL;
	}
	/* RoCE ports (link_layer=Ethernet) on networks of their own. */
	if (!fabric_roce_networks(f, &err)) {
		fprintf(stderr, "ibemu: %s: %s\n", topology, err->message);
		g_error_free(err);
		fabric_free(f);
		return NULL;
	}
	return f;
}

static int attach_nodes(struct fabric *f, struct host *h, char **names)
{
	unsigned i;

	for (i = 0; names && names[i]; i++) {
		struct node *n = fabric_lookup(f, names[i]);

		if (!n) {
			fprintf(stderr, "ibemu: --attach %s: no such node in the topology\n", names[i]);
			return -1;
		}
		if (n->type == NODE_ROUTER) {
			/* ib_umad offers a device for any IB device's ports,
			 * but no Linux driver presents a router: no host has one. */
			fprintf(stderr, "ibemu: --attach %s: a router cannot be attached "
				"(no Linux driver presents one, so no host has its umad devices)\n",
				names[i]);
			return -1;
		}
		host_attach(h, n);
	}
	if (names && names[0])
		return 0;
	for (i = 0; i < f->nodes->len; i++) {
		struct node *n = g_ptr_array_index(f->nodes, i);

		if (n->type == NODE_CA) {
			host_attach(h, n);
			return 0;
		}
	}
	fprintf(stderr, "ibemu: the topology has no CA to attach; use --attach\n");
	return -1;
}

/* The port `--configured` makes the SM's: the host's first InfiniBand
 * one (a RoCE network has no SM). */
static struct port *sm_port(struct umad_host *h)
{
	unsigned i;

	for (i = 0; i < umad_host_ndevs(h); i++) {
		struct port *p = umad_dev_port(umad_host_dev(h, i));

		if (!port_is_roce(p))
			return p;
	}
	return NULL;
}

static char *attached_ids(const struct host *h)
{
	GString *s = g_string_new(NULL);
	unsigned k;

	for (k = 0; k < host_ncas(h); k++)
		g_string_append_printf(s, "%s%s", k ? " " : "", host_ca(h, k, NULL)->id);
	return g_string_free(s, FALSE);
}

int emu_setup_log(const struct emu_opts *o)
{
	GError *err = NULL;

	log_init(getenv("IBEMU_DEBUG") ? 2 : o->verbose ? 1 : 0);
	/* First: `ibemu start` logs into the socket directory. */
	if (emu_ctl_dir_prepare(&err) < 0) {
		fprintf(stderr, "ibemu: %s\n", err->message);
		g_error_free(err);
		return 1;
	}
	if (o->log_path && log_to_file(o->log_path) < 0) {
		fprintf(stderr, "ibemu: cannot write the log to %s: %s\n", o->log_path, g_strerror(errno));
		return 1;
	}
	return 0;
}

int emu_setup(struct emu *e, const struct emu_opts *o, const char *default_name)
{
	GError *err = NULL;
	guint32 seed;
	int ret;

	memset(e, 0, sizeof(*e));
	if ((ret = emu_setup_log(o)) != 0)
		return ret;
	if (!(e->f = emu_load_fabric(o->topology, (o->strict ? TOPO_STRICT : 0) |
						    (o->host_network ? TOPO_LOOPBACK_ADDRS : 0))))
		return 1;
	if (o->seed_str) {
		char *end;
		guint64 v;

		errno = 0;
		v = g_ascii_strtoull(o->seed_str, &end, 0);
		/* No sign: "-1" would wrap to 4294967295. */
		if (!g_ascii_isdigit(o->seed_str[0]) || *end || errno || v > G_MAXUINT32) {
			fprintf(stderr, "ibemu: --seed wants a number 0..4294967295, not \"%s\"\n",
				o->seed_str);
			return 2;
		}
		seed = (guint32)v;
	} else {
		seed = g_random_int();
	}
	if (o->scenario_file && !(e->sc = scenario_load(o->scenario_file, &err))) {
		fprintf(stderr, "ibemu: %s\n", err->message);
		g_error_free(err);
		return 1;
	}
	e->tq = timerq_new(timerq_monotonic_clock, NULL);
	e->f->tq = e->tq;
	fault_set_clear(&e->f->faults);
	fault_set_init(&e->f->faults, seed);
	if (o->verbose || e->sc)
		fprintf(log_stream(), "ibemu: seed %u\n", seed);	/* --log's file too */
	e->hw = host_new(e->f, e->tq);
	e->env.fabric = e->f;
	e->env.tq = e->tq;
	e->env.scenarios = g_ptr_array_new_with_free_func((GDestroyNotify)scenario_free);
	if (!(e->ctl_sock = emu_ctl_path(o->name ? o->name : default_name, &err)) ||
	    !(e->ctl = ctl_server_new(&e->env, e->ctl_sock, &err))) {
		fprintf(stderr, "ibemu: %s\n", err->message);
		g_error_free(err);
		return 1;
	}
	/* The host: its ports, then the kernel's clients of them (the MAD
	 * layer, the verbs devices), as ib_core's. */
	if (attach_nodes(e->f, e->hw, o->attach) < 0)
		return 1;
	/* IPoIB first: the CM MADs of its connections (its service IDs, its
	 * communication IDs) are its, before the rdma_cm's CM refuses what
	 * it does not know, as ib_cm hands each to its user; its SA answers
	 * before the MAD layer, as ib_sa's agent takes them. */
	e->ipoib = ipoib_links_new(e->hw);
	e->env.ipoib = e->ipoib;
	e->ucma = ucma_new(e->hw);	/* ib_cm's agents are the kernel's */
	e->env.ucma = e->ucma;
	e->host = umad_host_new(e->hw);
	e->env.host = e->host;
	e->uverbs = uverbs_new(e->hw);
	ipoib_links_set_verbs(e->ipoib, e->uverbs);
	if (o->capture_path) {
		/* Absolute: `ibemu start` leaves the working directory. */
		char *path = g_canonicalize_filename(o->capture_path, NULL);
		struct capture_opts all = { 0 };

		e->env.capture = pkt_capture_start(e->f, path, &all, &err);
		g_free(path);
		if (!e->env.capture) {
			fprintf(stderr, "ibemu: --capture: %s\n", err->message);
			g_error_free(err);
			return 1;
		}
	}
	e->env.name = o->name ? o->name : default_name;
	e->env.topology = o->topology ? o->topology : "(built-in default)";
	e->env.attached = attached_ids(e->hw);
	if (o->roce && o->configured) {
		fprintf(stderr, "ibemu: --roce: RoCE ports have no SM to stand for: not with --configured\n");
		return 2;
	}
	/* Every CA port RoCE: every network a RoCE one (a topology's own
	 * RoCE ports were marked as it loaded, emu_load_fabric), so this
	 * cannot find both kinds on one. */
	if (o->roce) {
		fabric_set_roce(e->f);
		fabric_roce_networks(e->f, NULL);
	}
	if (o->configured || fabric_has_roce(e->f)) {
		unsigned need = fabric_lids_needed(e->f);

		if (need > FABRIC_MAX_UCAST_LID) {
			fprintf(stderr, "ibemu: --configured: this fabric has %u switches and cabled CA ports, "
				"more than the %u unicast LIDs (1..0x%x); start without --configured\n",
				need, FABRIC_MAX_UCAST_LID, FABRIC_MAX_UCAST_LID);
			return 1;
		}
		/* Ethernet ports, Active once cabled: the routes are the
		 * fabric's own (its switches forward as Ethernet switches
		 * do), the LIDs never shown, no SM LID. */
		fabric_configure_roce(e->f);
	}
	if (o->configured) {
		struct port *sm = sm_port(e->host);

		if (!sm) {
			fprintf(stderr, "ibemu: --configured: no attached InfiniBand port to stand for "
				"the SM's (every one is RoCE)\n");
			return 2;
		}
		fabric_configure(e->f, sm);
		/* The SM's SA too, last of the host's clients: an opensm
		 * started later takes its requests first. */
		e->sa = sa_new(e->hw);
	}
	g_source_attach(timerq_source_new(e->tq), NULL);
	return 0;
}

void emu_start_scenario(struct emu *e)
{
	if (!e->sc)
		return;
	ctl_start_scenario(&e->env, e->sc);
	e->sc = NULL;
}

void emu_teardown(struct emu *e)
{
	ctl_server_free(e->ctl);
	pkt_capture_stop(e->env.capture);
	g_free(e->env.attached);
	if (e->env.scenarios)
		g_ptr_array_free(e->env.scenarios, TRUE);
	scenario_free(e->sc);
	sa_free(e->sa);
	ipoib_links_free(e->ipoib);	/* its QPs are contexts of the devices */
	uverbs_free(e->uverbs);
	ucma_free(e->ucma);
	umad_host_free(e->host);
	host_free(e->hw);
	timerq_free(e->tq);
	fabric_free(e->f);
	g_free(e->ctl_sock);
	memset(e, 0, sizeof(*e));
}
