/* SPDX-License-Identifier: MIT */
/*
 * Control commands that only look: status, info, nodes, port, dump, pid,
 * seed, events, wait (ctl_cmd.h).
 */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ctl/ctl_cmd.h"
#include "fabric/port.h"
#include "kernel/ipoib_link.h"
#include "kernel/ucma.h"
#include "kernel/umad.h"
#include "kernel/uverbs.h"
#include "lib/fds.h"
#include "topologies/topo.h"

/* The value of @field ("VmHWM") in the text of a /proc/PID/status, or NULL. */
static const char *status_value(const char *text, const char *field)
{
	size_t n = strlen(field);
	const char *p = text;

	while (p) {
		if (!strncmp(p, field, n) && p[n] == ':')
			return p + n + 1 + strspn(p + n + 1, " \t");
		if ((p = strchr(p, '\n')))
			p++;
	}
	return NULL;
}

/*
 * A field of our /proc/self/status in kB (VmHWM, VmRSS), 0 if unknown.
 * Inside a run the daemon's /proc entry is out of sight (ns/nsinit.h):
 * status says these for tests and benchmarks.
 */
static unsigned long status_kb(const char *field)
{
	char *text = NULL;
	const char *v;
	unsigned long kb = 0;

	if (g_file_get_contents("/proc/self/status", &text, NULL, NULL) &&
	    (v = status_value(text, field)))
		kb = strtoul(v, NULL, 10);
	g_free(text);
	return kb;
}

/* The peak RSS in kB: from getrusage, which needs no fd (at the fd limit
 * /proc/self/status cannot be opened). */
static unsigned long peak_rss_kb(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) == 0 ? (unsigned long)ru.ru_maxrss : 0;
}

/* @pid's process (a thread id from FUSE names its thread group) and its
 * command, as this emulator's /proc shows them. */
static int client_of(int pid, char *comm, size_t size)
{
	char path[64], *text = NULL;
	const char *v;
	int tgid = pid;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	snprintf(comm, size, "?");
	if (pid <= 0 || !g_file_get_contents(path, &text, NULL, NULL))
		return pid;
	if ((v = status_value(text, "Name")))
		snprintf(comm, size, "%.*s", (int)strcspn(v, "\n"), v);
	if ((v = status_value(text, "Tgid")))
		tgid = atoi(v);
	g_free(text);
	return tgid;
}

/* One open umad file: which process holds it, through which path. */
static void status_file(void *ctx, unsigned dev_index, int pid, const char *path)
{
	struct ctl_call *c = ctx;
	char comm[32];

	pid = client_of(pid, comm, sizeof(comm));
	if (!c->json) {
		g_string_append_printf(c->out, "umad%u: pid %d (%s) through %s\n", dev_index, pid,
				       comm, path);
		return;
	}
	json_builder_begin_object(c->json);
	ctl_json_uint(c->json, "umad", dev_index);
	ctl_json_uint(c->json, "pid", (uint64_t)pid);
	ctl_json_str(c->json, "command", comm);
	ctl_json_str(c->json, "path", path);
	json_builder_end_object(c->json);
}

/* A listening rdma_cm id (docs/rdmacm.md). */
static void status_listener(void *ctx, const char *addr, unsigned port, const char *ps)
{
	struct ctl_call *c = ctx;

	if (!c->json) {
		g_string_append_printf(c->out, "rdma_cm: listening on %s:%u (%s)\n", addr, port, ps);
		return;
	}
	json_builder_begin_object(c->json);
	ctl_json_str(c->json, "addr", addr);
	ctl_json_uint(c->json, "port", port);
	ctl_json_str(c->json, "port_space", ps);
	json_builder_end_object(c->json);
}

/* A remote host's open file, under its host's line. */
static void status_remote_file(void *ctx, unsigned dev_index, int pid, const char *path)
{
	struct ctl_call *c = ctx;

	g_string_append(c->out, "  ");
	status_file(c, dev_index, pid, path);
}

/* A remote host's listening id, under its host's line. */
static void status_remote_listener(void *ctx, const char *addr, unsigned port, const char *ps)
{
	struct ctl_call *c = ctx;

	g_string_append(c->out, "  ");
	status_listener(c, addr, port, ps);
}

/*
 * The figures `ctl status` gives, as text and as JSON (the field's name
 * is the key): one table, so both say the same. A figure's text is
 * @pre, its value, @post; @line starts a new line of text, and a line
 * marked @quiet is left out of the text while all its figures are 0 (a
 * healthy run's status stays short; --json has them all).
 */
struct status_figs {
	uint64_t nodes, switches, cas, links, delivered, dropped, faults, seed;
	uint64_t peak_rss_kb, rss_kb, open_fds;
	uint64_t verbs_queued_bytes, verbs_held_back, verbs_dropped, verbs_direct_packets;
};

static const struct status_fig {
	const char *key;
	size_t off;
	bool line, quiet, mb;	/* mb: a kB figure, as MB in the text */
	const char *pre, *post;
} status_figs[] = {
#define FIG(k, ...) { #k, offsetof(struct status_figs, k), __VA_ARGS__ }
	FIG(nodes, true, false, false, "", " nodes"),
	FIG(switches, false, false, false, " (", " switches"),
	FIG(cas, false, false, false, ", ", " CAs)"),
	FIG(links, false, false, false, ", ", " links"),
	FIG(delivered, false, false, false, "; ", " MADs delivered"),
	FIG(dropped, false, false, false, ", ", " dropped"),
	FIG(faults, false, false, false, "; ", " fault rules"),
	FIG(seed, false, false, false, "; seed ", ""),
	FIG(peak_rss_kb, false, false, true, "; peak RSS ", " MB"),
	FIG(rss_kb, false, false, true, ", RSS ", " MB"),
	FIG(open_fds, false, false, false, "; ", " fds open"),
	FIG(verbs_queued_bytes, true, true, false, "verbs: ", " bytes queued for contexts to read"),
	FIG(verbs_held_back, false, true, false, ", ", " contexts held back by a full receiver"),
	FIG(verbs_dropped, false, true, false, ", ", " packets dropped for want of room"),
	FIG(verbs_direct_packets, true, true, false, "verbs direct path: ",
	    " packets past the daemon, counted on their ports"),
#undef FIG
};

static void status_figs_get(struct ctl_call *c, struct status_figs *v)
{
	struct fabric *f = c->env->fabric;
	struct fabric_counts n;

	fabric_count(f, &n);
	*v = (struct status_figs){
		.nodes = n.nodes, .switches = n.switches, .cas = n.cas, .links = n.links,
		.delivered = f->delivered, .dropped = f->dropped,
		.faults = f->faults.rules->len, .seed = f->faults.seed,
		.peak_rss_kb = peak_rss_kb(), .rss_kb = status_kb("VmRSS"),
		.open_fds = fds_open(),
		.verbs_queued_bytes = uverbs_rx_bytes_all(f), .verbs_held_back = uverbs_held_back(f),
		.verbs_dropped = uverbs_dropped_all(f), .verbs_direct_packets = f->direct_packets,
	};
}

static uint64_t fig_value(const struct status_figs *v, const struct status_fig *d)
{
	return *(const uint64_t *)((const char *)v + d->off);
}

/* The IPoIB interfaces' lines (kernel/ipoib_link.h), each after @indent. */
static void status_ipoib(struct ctl_call *c, const struct ipoib_links *l, const char *indent)
{
	char *text = l ? ipoib_links_status(l) : NULL;
	char **lines;
	unsigned i;

	if (!text)
		return;
	lines = g_strsplit(text, "\n", -1);
	for (i = 0; lines[i]; i++)
		if (*lines[i])
			g_string_append_printf(c->out, "%s%s\n", indent, lines[i]);
	g_strfreev(lines);
	g_free(text);
}

/* The text: the figures of line @first on, up to the next line's. */
static void status_text_line(GString *out, const struct status_figs *v, unsigned first)
{
	bool any = false;
	unsigned i;

	for (i = first; i < G_N_ELEMENTS(status_figs) && (i == first || !status_figs[i].line); i++)
		any |= fig_value(v, &status_figs[i]) != 0;
	if (status_figs[first].quiet && !any)
		return;
	for (i = first; i < G_N_ELEMENTS(status_figs) && (i == first || !status_figs[i].line); i++) {
		const struct status_fig *d = &status_figs[i];

		if (d->mb)
			g_string_append_printf(out, "%s%.1f%s", d->pre, fig_value(v, d) / 1024.0,
					       d->post);
		else
			g_string_append_printf(out, "%s%" G_GUINT64_FORMAT "%s", d->pre,
					       fig_value(v, d), d->post);
	}
	g_string_append_c(out, '\n');
}

int ctl_status(struct ctl_call *c)
{
	struct status_figs v;
	JsonBuilder *b = c->json;
	unsigned i;

	status_figs_get(c, &v);
	if (!b) {
		for (i = 0; i < G_N_ELEMENTS(status_figs); i++)
			if (status_figs[i].line)
				status_text_line(c->out, &v, i);
		if (c->env->host)
			umad_host_foreach_file(c->env->host, status_file, c);
		if (c->env->ucma)
			ucma_foreach_listener(c->env->ucma, status_listener, c);
		status_ipoib(c, c->env->ipoib, "");
		for (i = 0; c->env->remotes && i < c->env->remotes->len; i++) {
			const struct ctl_remote *r = g_ptr_array_index(c->env->remotes, i);

			if (r->local)	/* a host of this run: its keeper */
				g_string_append_printf(c->out, "host %s: pid %d", r->label, r->pid);
			else
				g_string_append_printf(c->out, "remote %s: uid %u, pid %d", r->label,
						       r->uid, r->pid);
			if (r->rtt_ns)	/* what the link adds to each MAD's trip */
				g_string_append_printf(c->out, ", round trip %.3f ms",
						       (double)r->rtt_ns / 1e6);
			g_string_append_printf(c->out, ": %s\n", r->nodes);
			umad_host_foreach_file(r->host, status_remote_file, c);
			if (r->ucma)
				ucma_foreach_listener(r->ucma, status_remote_listener, c);
			status_ipoib(c, r->ipoib, "  ");
		}
		return 0;
	}
	json_builder_begin_object(b);
	for (i = 0; i < G_N_ELEMENTS(status_figs); i++)
		ctl_json_uint(b, status_figs[i].key, fig_value(&v, &status_figs[i]));
	json_builder_set_member_name(b, "files");
	json_builder_begin_array(b);
	if (c->env->host)
		umad_host_foreach_file(c->env->host, status_file, c);
	json_builder_end_array(b);
	json_builder_set_member_name(b, "listeners");
	json_builder_begin_array(b);
	if (c->env->ucma)
		ucma_foreach_listener(c->env->ucma, status_listener, c);
	json_builder_end_array(b);
	json_builder_set_member_name(b, "remotes");
	json_builder_begin_array(b);
	for (i = 0; c->env->remotes && i < c->env->remotes->len; i++) {
		const struct ctl_remote *r = g_ptr_array_index(c->env->remotes, i);

		json_builder_begin_object(b);
		ctl_json_str(b, "host", r->label);
		ctl_json_uint(b, "uid", r->uid);
		ctl_json_uint(b, "pid", (uint64_t)r->pid);
		ctl_json_str(b, "nodes", r->nodes);
		ctl_json_uint(b, "round_trip_ns", r->rtt_ns);
		ctl_json_bool(b, "local", r->local);
		json_builder_set_member_name(b, "files");
		json_builder_begin_array(b);
		umad_host_foreach_file(r->host, status_file, c);
		json_builder_end_array(b);
		json_builder_set_member_name(b, "listeners");
		json_builder_begin_array(b);
		if (r->ucma)
			ucma_foreach_listener(r->ucma, status_listener, c);
		json_builder_end_array(b);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
	json_builder_end_object(b);
	return 0;
}

/*
 * hosts [NAME]: the hosts of `run --hosts`, one line each, tab-separated:
 * name, keeper pid, its pid in the run's PID namespace, fast path socket,
 * nodes (what `ibemu exec --host` needs to join one). An error while
 * their keepers are being made, as `pid init`'s.
 */
int ctl_hosts(struct ctl_call *c)
{
	const struct ctl_env *e = c->env;
	bool found = !c->nargs;
	unsigned i;

	/* Starting first: a run's hosts are made after its control socket
	 * answers, and `ibemu exec` asks again while it is starting. */
	if (e->init_pid < 0)
		return ctl_fail(c, CTL_INIT_STARTING);
	if (!e->hosts || !e->hosts->len)
		return ctl_fail(c, CTL_NO_HOSTS);
	for (i = 0; !found && i < e->hosts->len; i++)
		found = !strcmp(c->arg[0], ((const struct ctl_host *)g_ptr_array_index(e->hosts, i))->name);
	if (!found)
		return ctl_fail(c, "%s: " CTL_NO_SUCH_HOST, c->arg[0]);
	if (c->json)
		json_builder_begin_array(c->json);
	for (i = 0; i < e->hosts->len; i++) {
		const struct ctl_host *h = g_ptr_array_index(e->hosts, i);

		if (c->nargs && strcmp(c->arg[0], h->name))
			continue;
		if (!c->json) {
			g_string_append_printf(c->out, "%s\t%d\t%d\t%s\t%s\n", h->name, h->pid,
					       h->ns_pid, h->fast, h->nodes);
			continue;
		}
		json_builder_begin_object(c->json);
		ctl_json_str(c->json, "name", h->name);
		ctl_json_uint(c->json, "pid", (uint64_t)h->pid);
		ctl_json_uint(c->json, "ns_pid", (uint64_t)h->ns_pid);
		ctl_json_str(c->json, "fast", h->fast);
		ctl_json_str(c->json, "nodes", h->nodes);
		json_builder_end_object(c->json);
	}
	if (c->json)
		json_builder_end_array(c->json);
	return 0;
}

/* Who this emulator is (ibemu list): name, pid, mode, topology, nodes. */
int ctl_info(struct ctl_call *c)
{
	const struct ctl_env *e = c->env;

	if (!c->json) {
		g_string_append_printf(c->out, "%s\t%d\t%s\t%s\t%s\n", e->name ? e->name : "-",
				       (int)getpid(), e->mode ? e->mode : "-",
				       e->topology ? e->topology : "-",
				       e->attached ? e->attached : "-");
		return 0;
	}
	json_builder_begin_object(c->json);
	ctl_json_str(c->json, "name", e->name ? e->name : "");
	ctl_json_uint(c->json, "pid", (uint64_t)getpid());
	ctl_json_str(c->json, "mode", e->mode ? e->mode : "");
	ctl_json_str(c->json, "topology", e->topology ? e->topology : "");
	ctl_json_str(c->json, "attached", e->attached ? e->attached : "");
	json_builder_end_object(c->json);
	return 0;
}

int ctl_nodes(struct ctl_call *c)
{
	GPtrArray *nodes = c->env->fabric->nodes;
	JsonBuilder *b = c->json;
	unsigned i;

	if (b)
		json_builder_begin_array(b);
	for (i = 0; i < nodes->len; i++) {
		struct node *n = g_ptr_array_index(nodes, i);
		char guid[19];

		g_snprintf(guid, sizeof(guid), "0x%016" G_GINT64_MODIFIER "x", n->guid);
		if (!b) {
			g_string_append_printf(c->out, "%-8s %-20s %s ports %u%s\n",
					       node_type_name(n->type), n->id, guid, n->nports,
					       n->off ? " (off)" : "");
			continue;
		}
		json_builder_begin_object(b);
		ctl_json_str(b, "id", n->id);
		ctl_json_str(b, "type", node_type_name(n->type));
		ctl_json_str(b, "guid", guid);
		ctl_json_uint(b, "ports", n->nports);
		ctl_json_uint(b, "lid", node_lid(n));
		ctl_json_bool(b, "on", !n->off);
		json_builder_end_object(b);
	}
	if (b)
		json_builder_end_array(b);
	return 0;
}

int ctl_port(struct ctl_call *c)
{
	struct port *p = ctl_arg_port(c, 0), *ip;
	JsonBuilder *b = c->json;
	char guid[19], name[80], remote[80] = "-", addr[16] = "";
	uint32_t a;

	if (!p)
		return -1;
	/* The address rdma_cm gives the port (CA and router ports). */
	a = port_ip4(p);
	g_snprintf(addr, sizeof(addr), IP4_FMT, IP4_PARTS(a));
	ip = port_mgmt(p);
	g_snprintf(guid, sizeof(guid), "0x%016" G_GINT64_MODIFIER "x", p->guid);
	g_snprintf(name, sizeof(name), "%s/%u", p->node->id, p->num);
	if (p->remote)
		g_snprintf(remote, sizeof(remote), "%s/%u", p->remote->node->id, p->remote->num);
	if (!b) {
		g_string_append_printf(c->out, "%s guid %s state %s phys %s lid %u lmc %u "
				       "sm_lid %u cap_mask 0x%08x remote %s\n",
				       name, guid, port_state_name(p->state),
				       phys_state_name(p->phys_state), ip->lid, ip->lmc, ip->sm_lid,
				       ip->cap_mask, remote);
		if (a)
			g_string_append_printf(c->out, "addr %s\n", addr);
		return 0;
	}
	json_builder_begin_object(b);
	ctl_json_str(b, "port", name);
	ctl_json_str(b, "guid", guid);
	ctl_json_str(b, "state", port_state_name(p->state));
	ctl_json_str(b, "phys_state", phys_state_name(p->phys_state));
	ctl_json_uint(b, "lid", ip->lid);
	ctl_json_uint(b, "lmc", ip->lmc);
	ctl_json_uint(b, "sm_lid", ip->sm_lid);
	ctl_json_uint(b, "cap_mask", ip->cap_mask);
	ctl_json_str(b, "remote", p->remote ? remote : "");
	ctl_json_str(b, "addr", a ? addr : "");
	json_builder_end_object(b);
	return 0;
}

const struct ctl_optdef ctl_dump_opts[] = {
	{ "--dot", OPT_FLAG, NULL, 0, NULL, NULL },
	{ NULL },
};

int ctl_dump(struct ctl_call *c)
{
	if (c->opt[0].set)
		topo_dot(c->env->fabric, c->out, true);
	else
		topo_dump(c->env->fabric, c->out);
	return 0;
}

/* pid: the emulator's; pid init: that of the run's init, whose PID
 * namespace `ibemu exec` joins. */
int ctl_pid(struct ctl_call *c)
{
	int pid = (int)getpid();

	if (c->nargs && strcmp(c->arg[0], "init"))
		return ctl_usage(c);
	if (c->nargs && c->env->init_pid < 0)
		return ctl_fail(c, CTL_INIT_STARTING);
	if (c->nargs && !(pid = c->env->init_pid))
		return ctl_fail(c, CTL_NO_COMMAND);
	return ctl_answer_uint(c, "pid", (uint64_t)pid, "%d", pid);
}

int ctl_seed(struct ctl_call *c)
{
	uint32_t seed = c->env->fabric->faults.seed;

	return ctl_answer_uint(c, "seed", seed, "%u", seed);
}

int ctl_events(struct ctl_call *c)
{
	const struct fault_set *fs = &c->env->fabric->faults;
	GList *l;

	if (c->json)
		json_builder_begin_array(c->json);
	else if (fs->log_seq > fs->log.length)	/* the numbers say which are gone */
		g_string_append_printf(c->out, "# events 1-%u not kept (the log keeps the last %u)\n",
				       fs->log_seq - fs->log.length, FAULT_LOG_MAX);
	for (l = fs->log.head; l; l = l->next) {
		if (c->json)
			json_builder_add_string_value(c->json, l->data);
		else
			g_string_append_printf(c->out, "%s\n", (char *)l->data);
	}
	if (c->json)
		json_builder_end_array(c->json);
	return 0;
}

/* An SM's sweep is over when it has set nothing for this long: opensm
 * programs the multicast tables after the ports go Active, then logs
 * SUBNET UP (osm_state_mgr.c, do_sweep). */
#define SM_QUIET_US	(200 * 1000)

const struct ctl_optdef ctl_wait_opts[] = {
	{ "--timeout", OPT_UINT, "S", 86400, NULL, NULL },	/* read by the client */
	{ NULL },
};

/* A port that has trained with its peer: the ones an SM must bring up. */
static bool port_linked(const struct port *p)
{
	return p->remote && !p->cable_cut && p->phys_state == PHYS_LINKUP;
}

/* The port whose LID is @lid and that says IsSM, or NULL. */
static struct port *sm_port(struct fabric *f, uint16_t lid)
{
	unsigned i, k;

	for (i = 0; lid && i < f->nodes->len; i++) {
		struct node *n = g_ptr_array_index(f->nodes, i);

		/* A switch's one LID and capability mask are on port 0. */
		for (k = node_is_switch(n) ? 0 : 1; k <= (node_is_switch(n) ? 0u : n->nports); k++) {
			struct port *m = &n->ports[k];

			if (port_owns_lid(m, lid) && (m->cap_mask & CAP_IS_SM))
				return &n->ports[k];
		}
	}
	return NULL;
}

/*
 * `wait sm-up` and `wait active`, checked once: the answer says the subnet
 * is up, or fails with "not yet: " and why; `ibemu ctl` asks again until
 * its --timeout (ctl/ctl_client.c). Up means every linked port Active; for
 * sm-up also every port's SM LID naming a port with IsSM (the same SM for
 * all; RoCE networks have none), and no SMP Set for SM_QUIET_US.
 */
int ctl_wait(struct ctl_call *c)
{
	struct fabric *f = c->env->fabric;
	bool sm = !strcmp(c->cmd->sub, "sm-up");
	struct port *smp = NULL;
	unsigned i, k, active = 0;
	uint64_t now = c->env->tq ? timerq_now(c->env->tq) : 0;

	for (i = 0; i < f->nodes->len; i++) {
		struct node *n = g_ptr_array_index(f->nodes, i);

		for (k = 1; k <= n->nports; k++) {
			struct port *p = &n->ports[k], *m = port_mgmt(p);

			if (!port_linked(p))
				continue;
			if (p->state != PORT_ACTIVE)
				return ctl_fail(c, "not yet: %s/%u is %s", n->id, k,
						port_state_name(p->state));
			active++;
			/* A RoCE network has no SM (docs/roce.md). */
			if (!sm || n->eth_net)
				continue;
			if (!m->sm_lid)
				return ctl_fail(c, "not yet: %s/%u has no SM LID", n->id, k);
			if (!smp && !(smp = sm_port(f, m->sm_lid)))
				return ctl_fail(c, "not yet: no port with LID %u says IsSM",
						m->sm_lid);
			if (!port_owns_lid(smp, m->sm_lid))
				return ctl_fail(c, "not yet: %s/%u names SM LID %u, others %u",
						n->id, k, m->sm_lid, port_mgmt(smp)->lid);
		}
	}
	if (sm && !smp)
		return ctl_fail(c, "not yet: no linked port");
	if (sm && f->last_smp_set_us && now - f->last_smp_set_us < SM_QUIET_US)
		return ctl_fail(c, "not yet: the SM set something %" G_GUINT64_FORMAT " ms ago",
				(now - f->last_smp_set_us) / 1000);
	if (c->json) {
		json_builder_begin_object(c->json);
		ctl_json_uint(c->json, "active_ports", active);
		if (smp) {
			ctl_json_uint(c->json, "sm_lid", port_mgmt(smp)->lid);
			ctl_json_str(c->json, "sm_node", smp->node->id);
			ctl_json_uint(c->json, "sm_port", smp->num);
		}
		json_builder_end_object(c->json);
	} else if (smp) {
		g_string_append_printf(c->out, "subnet up: SM LID %u (%s/%u), %u ports Active\n",
				       port_mgmt(smp)->lid, smp->node->id, smp->num, active);
	} else {
		g_string_append_printf(c->out, "%u ports Active\n", active);
	}
	return 0;
}
