/* SPDX-License-Identifier: MIT */
/*
 * The control commands' table, their one parser and their help
 * (ctl_cmd.h says how a command is described).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl_cmd.h"

/* Entries with a second word come before the one-word entry of the same
 * name: the first entry that matches runs (`port disable` vs `port`). */
static const struct ctl_cmd commands[] = {
	{ "status", NULL, "", 0, 0, NULL, false,
	  "counts, MADs delivered and dropped, fault rules, seed, memory", ctl_status },
	{ "info", NULL, "", 0, 0, NULL, false,
	  "name, pid, mode, topology and attached nodes (ibemu list)", ctl_info },
	{ "nodes", NULL, "", 0, 0, NULL, false, "every node: type, id, GUID, ports", ctl_nodes },
	{ "dump", NULL, "", 0, 0, ctl_dump_opts, true,
	  "the fabric as a topology file, or a Graphviz graph (--dot)", ctl_dump },
	{ "seed", NULL, "", 0, 0, NULL, false, "the seed of every random choice", ctl_seed },
	{ "pid", NULL, "[init]", 0, 1, NULL, false,
	  "the emulator's pid, or its run's init (ibemu exec joins it)", ctl_pid },
	{ "hosts", NULL, "[NAME]", 0, 1, NULL, false,
	  "the hosts of run --hosts: name, pids, fast path socket, nodes", ctl_hosts },
	{ "events", NULL, "", 0, 0, NULL, false, "the event log: changes and fault hits", ctl_events },
	{ "wait", "sm-up", "", 0, 0, ctl_wait_opts, false,
	  "wait until an SM has brought the subnet up (default --timeout 60)", ctl_wait },
	{ "wait", "active", "", 0, 0, ctl_wait_opts, false,
	  "wait until every linked port is Active (an SM, or --configured)", ctl_wait },
	{ "link", "down", "NODE/PORT", 1, 1, NULL, false, "pull the cable of a port", ctl_link },
	{ "link", "up", "NODE/PORT", 1, 1, NULL, false, "plug it back", ctl_link },
	{ "port", "disable", "NODE/PORT", 1, 1, NULL, false,
	  "as PortInfo:PortPhysicalState Disabled", ctl_port_phys },
	{ "port", "enable", "NODE/PORT", 1, 1, NULL, false,
	  "as PortInfo:PortPhysicalState Polling", ctl_port_phys },
	{ "port", NULL, "NODE/PORT", 1, 1, NULL, false, "a port's state, LID, SM LID, peer",
	  ctl_port },
	{ "guid", NULL, "NODE[/PORT] GUID", 2, 2, NULL, false,
	  "change a node's GUID, or a CA port's", ctl_guid },
	{ "lid", NULL, "NODE/PORT LID [LMC]", 2, 3, NULL, false,
	  "set a port's LID and LMC as an SM would", ctl_lid },
	{ "addr", NULL, "NODE/PORT A.B.C.D", 2, 2, NULL, false,
	  "set a CA port's IPv4 address (rdma_cm)", ctl_addr },
	{ "node", "off", "NODE", 1, 1, NULL, false, "power a node off: its links go down",
	  ctl_node },
	{ "node", "on", "NODE", 1, 1, NULL, false, "power it on again", ctl_node },
	{ "counters", NULL, "NODE/PORT [set|bump FIELD N]", 1, 4, NULL, false,
	  "a port's PMA counters; set or add to one", ctl_counters },
	{ "fault", "add", "ACTION [VALUE]", 1, 2, ctl_fault_opts, false,
	  "add a fault rule: drop, delay MS, duplicate, reorder [MS], corrupt [BYTE], "
	  "status CODE", ctl_fault_add },
	{ "fault", "list", "", 0, 0, NULL, false, "the fault rules and their hits",
	  ctl_fault_list },
	{ "fault", "del", "ID", 1, 1, NULL, false, "delete a fault rule", ctl_fault_del },
	{ "capture", "start", "FILE", 1, 1, ctl_capture_opts, false,
	  "write the packets on every cable (or --node's, --port's) to a pcap file",
	  ctl_capture_start },
	{ "capture", "stop", "", 0, 0, NULL, false, "end the capture: the file is complete",
	  ctl_capture_stop },
	{ "capture", NULL, "", 0, 0, NULL, false, "the capture's file, packets and bytes so far",
	  ctl_capture_show },
	{ "scenario", NULL, "FILE", 1, 1, NULL, false,
	  "run a scenario file's steps on the emulator's clock", ctl_scenario },
};

int ctl_fail(struct ctl_call *c, const char *fmt, ...)
{
	va_list ap;

	g_string_assign(c->out, "error: ");
	va_start(ap, fmt);
	g_string_append_vprintf(c->out, fmt, ap);
	va_end(ap);
	g_string_append_c(c->out, '\n');
	return -1;
}

static void append_usage(GString *s, const struct ctl_cmd *cmd)
{
	const struct ctl_optdef *o;

	g_string_append(s, cmd->name);
	if (cmd->sub)
		g_string_append_printf(s, " %s", cmd->sub);
	if (*cmd->args)
		g_string_append_printf(s, " %s", cmd->args);
	for (o = cmd->opts; o && o->name; o++)
		g_string_append_printf(s, " [%s%s%s]", o->name, o->metavar ? " " : "",
				       o->metavar ? o->metavar : "");
}

int ctl_usage(struct ctl_call *c)
{
	g_string_assign(c->out, "usage: ");
	append_usage(c->out, c->cmd);
	g_string_append_c(c->out, '\n');
	return -1;
}

bool ctl_parse_uint(const char *s, uint64_t max, uint64_t *v)
{
	char *end;

	/* strtoull takes "-1" and leading blanks; we do not. */
	if (!g_ascii_isdigit(*s))
		return false;
	errno = 0;
	*v = g_ascii_strtoull(s, &end, 0);
	return !errno && !*end && *v <= max;
}

struct port *ctl_arg_port(struct ctl_call *c, unsigned i)
{
	const char *s = c->arg[i], *slash = strrchr(s, '/');
	struct node *n;
	uint64_t num;
	char *name;

	if (!slash) {
		ctl_fail(c, "\"%s\" is not NODE/PORT", s);
		return NULL;
	}
	name = g_strndup(s, (gsize)(slash - s));
	n = fabric_lookup(c->env->fabric, name);
	g_free(name);
	if (!n || !ctl_parse_uint(slash + 1, n->nports, &num)) {
		ctl_fail(c, "no port \"%s\" in the fabric", s);
		return NULL;
	}
	/* Port 0 is a switch's management port; a CA has none (IBA 14.2.5). */
	if (!num && !node_is_switch(n)) {
		ctl_fail(c, "no port \"%s\": %s is a CA, whose ports are 1..%u", s, n->id,
			 n->nports);
		return NULL;
	}
	return &n->ports[num];
}

struct node *ctl_arg_node(struct ctl_call *c, unsigned i)
{
	struct node *n = fabric_lookup(c->env->fabric, c->arg[i]);

	if (!n)
		ctl_fail(c, "no node \"%s\" in the fabric", c->arg[i]);
	return n;
}

bool ctl_arg_uint(struct ctl_call *c, unsigned i, uint64_t max, const char *what, uint64_t *v)
{
	if (ctl_parse_uint(c->arg[i], max, v))
		return true;
	ctl_fail(c, "\"%s\" is not %s (0 to %" G_GUINT64_FORMAT ")", c->arg[i], what, max);
	return false;
}

int ctl_answer_uint(struct ctl_call *c, const char *key, uint64_t v, const char *fmt, ...)
{
	va_list ap;

	if (c->json) {
		json_builder_begin_object(c->json);
		ctl_json_uint(c->json, key, v);
		json_builder_end_object(c->json);
		return 0;
	}
	va_start(ap, fmt);
	g_string_append_vprintf(c->out, fmt, ap);
	va_end(ap);
	g_string_append_c(c->out, '\n');
	return 0;
}

void ctl_json_uint(JsonBuilder *b, const char *name, uint64_t v)
{
	json_builder_set_member_name(b, name);
	json_builder_add_int_value(b, (gint64)v);
}

void ctl_json_str(JsonBuilder *b, const char *name, const char *v)
{
	json_builder_set_member_name(b, name);
	json_builder_add_string_value(b, v);
}

void ctl_json_bool(JsonBuilder *b, const char *name, bool v)
{
	json_builder_set_member_name(b, name);
	json_builder_add_boolean_value(b, v);
}

static bool lookup_name(const struct ctl_name *t, const char *s, uint64_t *v)
{
	for (; t && t->name; t++)
		if (!g_ascii_strcasecmp(t->name, s)) {
			*v = t->value;
			return true;
		}
	return false;
}

/* One option and its value (argv[*i], argv[*i + 1]) into c->opt. */
static int parse_option(struct ctl_call *c, char **argv, unsigned *i)
{
	const struct ctl_optdef *o = c->cmd->opts;
	const char *v;
	struct ctl_val *val;
	char *end;

	for (; o && o->name && strcmp(o->name, argv[*i]); o++)
		;
	if (!o || !o->name)
		return ctl_fail(c, "%s%s%s takes no option %s (ibemu ctl help %s%s%s)",
				c->cmd->name, c->cmd->sub ? " " : "", c->cmd->sub ? c->cmd->sub : "",
				argv[*i], c->cmd->name, c->cmd->sub ? " " : "",
				c->cmd->sub ? c->cmd->sub : "");
	val = &c->opt[o - c->cmd->opts];
	if (val->set)
		return ctl_fail(c, "%s given twice", o->name);
	val->set = true;
	if (o->type == OPT_FLAG)
		return 0;
	if (!(v = argv[++*i]))
		return ctl_fail(c, "%s needs a value (%s)", o->name, o->metavar);
	switch (o->type) {
	case OPT_UINT:
		if (ctl_parse_uint(v, o->max, &val->u))
			return 0;
		return ctl_fail(c, "%s is 0 to %" G_GUINT64_FORMAT ", not \"%s\"", o->name, o->max, v);
	case OPT_NAME:
		if (lookup_name(o->names, v, &val->u) || ctl_parse_uint(v, o->max, &val->u))
			return 0;
		return ctl_fail(c, "%s takes a name (such as %s) or a number 0 to %" G_GUINT64_FORMAT
				", not \"%s\"", o->name, o->names[0].name, o->max, v);
	case OPT_CHOICE:
		if (lookup_name(o->names, v, &val->u))
			return 0;
		return ctl_fail(c, "%s is %s or %s, not \"%s\"", o->name, o->names[0].name,
				o->names[1].name, v);
	case OPT_NODE:
		if ((val->node = fabric_lookup(c->env->fabric, v)))
			return 0;
		return ctl_fail(c, "no node \"%s\" in the fabric", v);
	case OPT_PROB:
		val->d = g_ascii_strtod(v, &end);
		if (*v && !*end && val->d >= 0 && val->d <= 1)
			return 0;
		return ctl_fail(c, "%s is a probability 0 to 1, not \"%s\"", o->name, v);
	case OPT_WORD:
		val->s = v;
		return 0;
	case OPT_FLAG:
		break;
	}
	return 0;
}

/* Split argv (after the command's words) into options and positionals. */
static int parse_args(struct ctl_call *c, char **argv, GPtrArray *pos)
{
	unsigned i;

	for (i = 0; argv[i]; i++) {
		if (!strncmp(argv[i], "--", 2)) {
			if (parse_option(c, argv, &i) < 0)
				return -1;
		} else
			g_ptr_array_add(pos, argv[i]);
	}
	g_ptr_array_add(pos, NULL);
	c->arg = (char **)pos->pdata;
	c->nargs = pos->len - 1;
	if (c->nargs < c->cmd->min_args || c->nargs > c->cmd->max_args)
		return ctl_usage(c);
	return 0;
}

static const struct ctl_cmd *find(char **argv)
{
	unsigned i;

	for (i = 0; argv[0] && i < G_N_ELEMENTS(commands); i++) {
		const struct ctl_cmd *c = &commands[i];

		if (!strcmp(c->name, argv[0]) && (!c->sub || (argv[1] && !strcmp(c->sub, argv[1]))))
			return c;
	}
	return NULL;
}

void ctl_help(char **argv, GString *out)
{
	const struct ctl_cmd *cmd = argv && argv[0] ? find(argv) : NULL;
	unsigned i;

	if (cmd) {
		const struct ctl_optdef *o;

		g_string_append(out, "usage: ");
		append_usage(out, cmd);
		g_string_append_printf(out, "\n%s%s\n", cmd->help,
				       cmd->no_json ? "" : "; --json for JSON");
		for (o = cmd->opts; o && o->name; o++) {
			const struct ctl_name *nm;

			g_string_append_printf(out, "  %s%s%s", o->name, o->metavar ? " " : "",
					       o->metavar ? o->metavar : "");
			if (o->type == OPT_UINT || o->type == OPT_NAME || o->type == OPT_WORD)
				g_string_append_printf(out, "  0..%" G_GUINT64_FORMAT, o->max);
			for (nm = o->names; nm && nm->name; nm++)
				g_string_append_printf(out, "%s%s", nm == o->names ? "  " : " ", nm->name);
			if (o->help)
				g_string_append_printf(out, "  %s", o->help);
			g_string_append_c(out, '\n');
		}
		return;
	}
	for (i = 0; i < G_N_ELEMENTS(commands); i++) {
		GString *u = g_string_new(commands[i].name);

		if (commands[i].sub)
			g_string_append_printf(u, " %s", commands[i].sub);
		if (*commands[i].args)
			g_string_append_printf(u, " %s", commands[i].args);
		if (commands[i].opts)
			g_string_append(u, " [OPTION...]");
		g_string_append_printf(out, "%-36s %s\n", u->str, commands[i].help);
		g_string_free(u, TRUE);
	}
	g_string_append(out, "Every command but dump takes --json; "
			"`ibemu ctl help COMMAND` shows a command's options.\n");
}

int ctl_run(struct ctl_env *env, char **argv, GString *out)
{
	GPtrArray *args = g_ptr_array_new(), *pos = g_ptr_array_new();
	struct ctl_call c = { .env = env, .out = out };
	bool json = false;
	unsigned i;
	int ret = -1;

	for (i = 0; argv[i]; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else
			g_ptr_array_add(args, argv[i]);
	}
	g_ptr_array_add(args, NULL);
	argv = (char **)args->pdata;
	if (argv[0] && !strcmp(argv[0], "help")) {
		ctl_help(argv + 1, out);
		ret = 0;
		goto out;
	}
	if (!(c.cmd = find(argv))) {
		g_string_append_printf(out, "error: unknown command \"%s%s%s\" (try: ibemu ctl help)\n",
				       argv[0] ? argv[0] : "", argv[0] && argv[1] ? " " : "",
				       argv[0] && argv[1] ? argv[1] : "");
		goto out;
	}
	if (parse_args(&c, argv + (c.cmd->sub ? 2 : 1), pos) < 0)
		goto out;
	if (json && c.cmd->no_json) {
		ctl_fail(&c, "%s writes a file format; --json is not available", c.cmd->name);
		goto out;
	}
	if (json)
		c.json = json_builder_new();
	/* Packets past the packet engine (the direct path, fabric.h) stop before
	 * a command changes what they rely on, and counters show them. */
	if (env->fabric)
		fabric_changed(env->fabric);
	ret = c.cmd->fn(&c);
	if (ret == 0 && c.json) {
		JsonGenerator *gen = json_generator_new();
		JsonNode *root = json_builder_get_root(c.json);
		char *text;

		json_generator_set_root(gen, root);
		text = json_generator_to_data(gen, NULL);
		g_string_append_printf(out, "%s\n", text);
		g_free(text);
		json_node_unref(root);
		g_object_unref(gen);
	}
out:
	if (c.json)
		g_object_unref(c.json);
	g_ptr_array_free(pos, TRUE);
	g_ptr_array_free(args, TRUE);
	return ret;
}
