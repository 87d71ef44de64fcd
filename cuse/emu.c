/* SPDX-License-Identifier: MIT */
/*
 * The set-up shared by `ibemu run` and `ibemu start` (emu.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuse/emu.h"
#include "fabric/configure.h"
#include "lib/log.h"
#include "topologies/topo.h"

GOptionEntry *emu_option_entries(struct emu_opts *o)
{
	GOptionEntry entries[] = {
		{ "topology", 't', 0, G_OPTION_ARG_FILENAME, &o->topology,
		  "Topology file (ibnetdiscover or ibsim net format)", "FILE" },
		{ "attach", 'a', 0, G_OPTION_ARG_STRING_ARRAY, &o->attach,
		  "Node (id or GUID) whose ports are this host's; repeatable (default: the first CA)", "NODE" },
		{ "configured", 'c', 0, G_OPTION_ARG_NONE, &o->configured,
		  "Start as if a subnet manager had run: LIDs, routes, ports Active", NULL },
		{ "seed", 0, 0, G_OPTION_ARG_STRING, &o->seed_str,
		  "Seed of every random choice (default: a new one; see ibemu ctl seed)", "N" },
		{ "name", 'n', 0, G_OPTION_ARG_STRING, &o->name,
		  "Name of this emulator for ibemu ctl --name", "NAME" },
		{ "scenario", 's', 0, G_OPTION_ARG_FILENAME, &o->scenario_file,
		  "Run the timed steps of a scenario file from the start", "FILE" },
		{ "log", 0, 0, G_OPTION_ARG_FILENAME, &o->log_path,
		  "Write the log to FILE instead of standard error", "FILE" },
		{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &o->verbose,
		  "Log more (repeat -v via IBEMU_DEBUG=1 for a trace of every MAD)", NULL },
		{ NULL }
	};

	return g_memdup2(entries, sizeof(entries));
}

void emu_opts_clear(struct emu_opts *o)
{
	g_free(o->topology);
	g_strfreev(o->attach);
	g_free(o->name);
	g_free(o->scenario_file);
	g_free(o->seed_str);
	g_free(o->log_path);
	memset(o, 0, sizeof(*o));
}

char *emu_ctl_dir(void)
{
	return getuid() == 0 ? g_strdup("/run/ibemu") :
	       g_strdup_printf("/tmp/ibemu-%u", getuid());
}

char *emu_ctl_path(const char *name)
{
	char *dir = emu_ctl_dir(), *file = g_strdup_printf("%s.sock", name);
	char *path = g_build_filename(dir, file, NULL);

	g_free(dir);
	g_free(file);
	return path;
}

char *emu_find_ctl(const char *socket_path, const char *name)
{
	char *dir, *found = NULL;
	const char *e;
	GDir *d;
	unsigned n = 0;

	if (socket_path)
		return g_strdup(socket_path);
	if (name)
		return emu_ctl_path(name);
	if ((e = getenv("IBEMU_CTL")) && *e)
		return g_strdup(e);
	dir = emu_ctl_dir();
	d = g_dir_open(dir, 0, NULL);
	while (d && (e = g_dir_read_name(d)))
		if (g_str_has_suffix(e, ".sock") && ++n == 1)
			found = g_build_filename(dir, e, NULL);
	if (d)
		g_dir_close(d);
	g_free(dir);
	if (n == 1)
		return found;
	g_free(found);
	fprintf(stderr, n ? "ibemu: %u emulators are running; say which with --name\n" :
		"ibemu: no emulator is running (start one with ibemu run or ibemu start)\n", n);
	return NULL;
}

struct fabric *emu_load_fabric(const char *topology)
{
	GError *err = NULL;
	struct fabric *f;

	if (!topology)
		return topo_load_default();
	f = topo_load_file(topology, &err);
	if (!f) {
		fprintf(stderr, "ibemu: %s\n", err->message);
		g_error_free(err);
	}
	return f;
}

static int attach_nodes(struct fabric *f, struct umad_host *h, char **names)
{
	unsigned i;

	for (i = 0; names && names[i]; i++) {
		struct node *n = fabric_lookup(f, names[i]);

		if (!n) {
			fprintf(stderr, "ibemu: --attach %s: no such node in the topology\n", names[i]);
			return -1;
		}
		if (n->type == NODE_ROUTER) {
			fprintf(stderr, "ibemu: --attach %s: routers cannot be attached\n", names[i]);
			return -1;
		}
		umad_host_attach(h, n);
	}
	if (names && names[0])
		return 0;
	for (i = 0; i < f->nodes->len; i++) {
		struct node *n = g_ptr_array_index(f->nodes, i);

		if (n->type == NODE_CA) {
			umad_host_attach(h, n);
			return 0;
		}
	}
	fprintf(stderr, "ibemu: the topology has no CA to attach; use --attach\n");
	return -1;
}

int emu_setup(struct emu *e, const struct emu_opts *o, const char *default_name)
{
	GError *err = NULL;
	guint32 seed;

	memset(e, 0, sizeof(*e));
	log_init(getenv("IBEMU_DEBUG") ? 2 : o->verbose ? 1 : 0);
	if (o->log_path && log_to_file(o->log_path) < 0) {
		fprintf(stderr, "ibemu: cannot write the log to %s: %s\n", o->log_path, g_strerror(errno));
		return 1;
	}
	if (!(e->f = emu_load_fabric(o->topology)))
		return 1;
	if (o->seed_str) {
		char *end;

		seed = (guint32)g_ascii_strtoull(o->seed_str, &end, 0);
		if (*end) {
			fprintf(stderr, "ibemu: --seed wants a number\n");
			return 2;
		}
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
		fprintf(stderr, "ibemu: seed %u\n", seed);
	e->host = umad_host_new(e->f, e->tq);
	e->env.fabric = e->f;
	e->env.tq = e->tq;
	e->env.scenarios = g_ptr_array_new_with_free_func((GDestroyNotify)scenario_free);
	e->ctl_sock = emu_ctl_path(o->name ? o->name : default_name);
	if (!(e->ctl = ctl_server_new(&e->env, e->ctl_sock, &err))) {
		fprintf(stderr, "ibemu: %s\n", err->message);
		g_error_free(err);
		return 1;
	}
	if (attach_nodes(e->f, e->host, o->attach) < 0)
		return 1;
	if (o->configured) {
		unsigned need = fabric_lids_needed(e->f);

		if (need > FABRIC_MAX_UCAST_LID) {
			fprintf(stderr, "ibemu: --configured: this fabric has %u switches and cabled CA ports, "
				"more than the %u unicast LIDs (1..0x%x); start without --configured\n",
				need, FABRIC_MAX_UCAST_LID, FABRIC_MAX_UCAST_LID);
			return 1;
		}
		fabric_configure(e->f, umad_dev_port(umad_host_dev(e->host, 0)));
	}
	g_source_attach(timerq_source_new(e->tq), NULL);
	return 0;
}

void emu_start_scenario(struct emu *e)
{
	if (!e->sc)
		return;
	scenario_start(e->sc, &e->env);
	g_ptr_array_add(e->env.scenarios, e->sc);
	e->sc = NULL;
}

void emu_teardown(struct emu *e)
{
	ctl_server_free(e->ctl);
	if (e->env.scenarios)
		g_ptr_array_free(e->env.scenarios, TRUE);
	scenario_free(e->sc);
	umad_host_free(e->host);
	timerq_free(e->tq);
	fabric_free(e->f);
	g_free(e->ctl_sock);
	memset(e, 0, sizeof(*e));
}
