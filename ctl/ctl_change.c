/* SPDX-License-Identifier: MIT */
/*
 * Control commands that change the fabric: link, port enable/disable,
 * guid, lid, addr, node, counters, scenario (ctl_cmd.h). Each change goes to the
 * event log, so a run's log says what was done to it and when.
 */
#include "config.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "ctl/ctl_cmd.h"
#include "ctl/scenario.h"
#include "fabric/pma.h"
#include "fabric/port.h"

/* A change's answer: its text line, or {"done": "<the same>"} in JSON. */
static int done(struct ctl_call *c, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static int done(struct ctl_call *c, const char *fmt, ...)
{
	va_list ap;
	char *text;

	va_start(ap, fmt);
	text = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	fault_log(&c->env->fabric->faults, "%s", text);
	if (c->json) {
		json_builder_begin_object(c->json);
		ctl_json_str(c->json, "done", text);
		json_builder_end_object(c->json);
	} else
		g_string_append_printf(c->out, "%s\n", text);
	g_free(text);
	return 0;
}

int ctl_link(struct ctl_call *c)
{
	bool up = !strcmp(c->cmd->sub, "up");
	struct port *p = ctl_arg_port(c, 0);

	if (!p)
		return -1;
	if (!p->remote)
		return ctl_fail(c, "%s has no cable", c->arg[0]);
	port_cable_set(p, up);
	return done(c, "link %s %s/%u", c->cmd->sub, p->node->id, p->num);
}

int ctl_port_phys(struct ctl_call *c)
{
	bool enable = !strcmp(c->cmd->sub, "enable");
	struct port *p = ctl_arg_port(c, 0);

	if (!p)
		return -1;
	if (p->num == 0)
		return ctl_fail(c, "port 0 cannot be disabled");
	/* As PortInfo:PortPhysicalState 3 (Disabled) / 2 (Polling) would. */
	port_set_phys(p, enable ? PHYS_POLLING : PHYS_DISABLED);
	return done(c, "port %s %s/%u", c->cmd->sub, p->node->id, p->num);
}

/* guid NODE 0x... (node GUID) or guid NODE/PORT 0x... (a CA port's GUID) */
int ctl_guid(struct ctl_call *c)
{
	uint64_t guid;

	if (!ctl_parse_uint(c->arg[1], G_MAXUINT64, &guid) || !guid)
		return ctl_fail(c, "a GUID is a number 1 to 0xffffffffffffffff, not \"%s\"",
				c->arg[1]);
	if (strchr(c->arg[0], '/')) {
		struct port *p = ctl_arg_port(c, 0);

		if (!p)
			return -1;
		if (node_is_switch(p->node))
			return ctl_fail(c, "switch ports carry the switch GUID; change the node's");
		port_set_guid(p, guid);
	} else {
		struct node *n = ctl_arg_node(c, 0);

		if (!n)
			return -1;
		fabric_set_node_guid(c->env->fabric, n, guid);
	}
	/* Duplicate GUIDs are allowed on purpose: SMs must cope with them. */
	return done(c, "guid %s 0x%016" G_GINT64_MODIFIER "x", c->arg[0], guid);
}

/* lid NODE/PORT LID [LMC]: as if an SM had set it (switches: port 0). */
int ctl_lid(struct ctl_call *c)
{
	uint64_t lid, lmc = 0;
	struct port *p = ctl_arg_port(c, 0);

	if (!p || !ctl_arg_uint(c, 1, 0xbfff, "a unicast LID", &lid) ||
	    (c->nargs == 3 && !ctl_arg_uint(c, 2, 7, "LMC", &lmc)))
		return -1;
	port_set_lid(p, (uint16_t)lid, (uint8_t)lmc);
	return done(c, "lid %s %" G_GUINT64_FORMAT " lmc %" G_GUINT64_FORMAT, c->arg[0], lid, lmc);
}

/* The address rdma_cm resolves to this port from now on (docs/rdmacm.md
 * "Addresses"); connections made already keep theirs. */
int ctl_addr(struct ctl_call *c)
{
	struct port *p = ctl_arg_port(c, 0), *o = NULL;
	struct in_addr a;
	int r;

	if (!p)
		return -1;
	if (inet_pton(AF_INET, c->arg[1], &a) != 1)
		return ctl_fail(c, "bad address \"%s\" (A.B.C.D)", c->arg[1]);
	if (node_is_switch(p->node))
		return ctl_fail(c, "%s is a switch port: only CA and router ports have addresses",
				c->arg[0]);
	r = port_set_ip4(p, be32toh(a.s_addr), &o);
	if (r == -EEXIST)
		return ctl_fail(c, "%s is %s/%u's already", c->arg[1], o->node->id, o->num);
	if (r < 0 && p->node->fabric->loopback_addrs)
		return ctl_fail(c, "%s: on this machine's network (--host-network, CUSE mode) a port's "
				"address is in 127.0.0.0/8, which never leaves it", c->arg[1]);
	if (r < 0)
		return ctl_fail(c, "%s: not an address a port may have (0, loopback, multicast, class E)",
				c->arg[1]);
	return done(c, "addr %s %s", c->arg[0], c->arg[1]);
}

int ctl_node(struct ctl_call *c)
{
	bool on = !strcmp(c->cmd->sub, "on");
	struct node *n = ctl_arg_node(c, 0);

	if (!n)
		return -1;
	node_power(n, on);
	return done(c, "node %s %s", c->cmd->sub, n->id);
}

int ctl_counters(struct ctl_call *c)
{
	const struct counter_field *f = NULL;
	struct port *p = ctl_arg_port(c, 0);
	unsigned i;

	if (!p)
		return -1;
	if (c->nargs != 1 && c->nargs != 4)
		return ctl_usage(c);
	if (c->nargs == 4) {
		bool set = !strcmp(c->arg[1], "set");
		uint64_t v;

		if (!set && strcmp(c->arg[1], "bump"))
			return ctl_usage(c);
		if (!(f = counter_field_find(c->arg[2])))
			return ctl_fail(c, "no counter \"%s\" (e.g. SymbolErrorCounter)", c->arg[2]);
		if (!ctl_arg_uint(c, 3, f->max, f->name, &v))
			return -1;
		counter_change(&p->counters, f, set, v);
		fault_log(&c->env->fabric->faults, "counters %s/%u %s %s %" G_GUINT64_FORMAT,
			  p->node->id, p->num, c->arg[1], f->name, v);
	}
	if (c->json)
		json_builder_begin_object(c->json);
	for (i = 0; i < counter_fields_n; i++) {
		uint64_t v = counter_get(&p->counters, &counter_fields[i]);

		if (c->json)
			ctl_json_uint(c->json, counter_fields[i].name, v);
		else
			g_string_append_printf(c->out, "%s %" G_GUINT64_FORMAT "\n",
					       counter_fields[i].name, v);
	}
	if (c->json)
		json_builder_end_object(c->json);
	return 0;
}

/* A scenario's step runs as `ibemu ctl` would run it, one level deeper. */
static int run_step(void *ctx, unsigned depth, char **argv, GString *out)
{
	struct ctl_env *env = ctx;
	unsigned saved = env->scenario_depth;
	int ret;

	env->scenario_steps--;
	env->scenario_depth = depth;
	ret = ctl_run(env, argv, out);
	env->scenario_depth = saved;
	return ret;
}

static void scenario_done(void *ctx, struct scenario *sc)
{
	struct ctl_env *env = ctx;

	/* A finished scenario is kept no longer (timerq allows the free). */
	g_ptr_array_remove(env->scenarios, sc);
}

void ctl_start_scenario(struct ctl_env *env, struct scenario *sc)
{
	static const struct scenario_hooks hooks = { .step = run_step, .done = scenario_done };

	scenario_start(sc, env->tq, &hooks, env, env->scenario_depth);
	env->scenario_steps += scenario_steps(sc);
	if (scenario_steps(sc))
		g_ptr_array_add(env->scenarios, sc);
	else
		scenario_free(sc);
}

int ctl_scenario(struct ctl_call *c)
{
	struct ctl_env *env = c->env;
	GError *e = NULL;
	struct scenario *sc;

	if (env->scenario_depth >= SCENARIO_MAX_DEPTH)
		return ctl_fail(c, "scenarios started by scenarios %u deep: not starting %s",
				SCENARIO_MAX_DEPTH, c->arg[0]);
	if (env->scenarios->len >= SCENARIO_MAX_RUNNING)
		return ctl_fail(c, "%u scenarios running, the limit: not starting %s",
				SCENARIO_MAX_RUNNING, c->arg[0]);
	if (!(sc = scenario_load(c->arg[0], &e))) {
		ctl_fail(c, "%s", e->message);
		g_error_free(e);
		return -1;
	}
	if (env->scenario_steps + scenario_steps(sc) > SCENARIO_MAX_PENDING) {
		ctl_fail(c, "%u scenario steps waiting, %u more past the limit of %u: not starting %s",
			 env->scenario_steps, scenario_steps(sc), SCENARIO_MAX_PENDING, c->arg[0]);
		scenario_free(sc);
		return -1;
	}
	fault_log(&env->fabric->faults, "scenario %s started (%u steps)", c->arg[0],
		  scenario_steps(sc));
	if (c->json) {
		json_builder_begin_object(c->json);
		ctl_json_str(c->json, "scenario", c->arg[0]);
		ctl_json_uint(c->json, "steps", scenario_steps(sc));
		json_builder_end_object(c->json);
	} else
		g_string_append_printf(c->out, "scenario %s started (%u steps)\n", c->arg[0],
				       scenario_steps(sc));
	ctl_start_scenario(env, sc);
	return 0;
}
