/* SPDX-License-Identifier: MIT */
/*
 * Fault rules from the control plane: fault add, fault list, fault del
 * (ctl_cmd.h; what a rule does is fabric/fault.h's).
 */
#include "config.h"

#include <string.h>

#include "ctl/ctl_cmd.h"
#include "lib/timerq.h"

/* Names for classes, methods and attributes in fault rules. */
static const struct ctl_name class_names[] = {
	{ "smp", 0x01 }, { "lid", 0x01 }, { "dr", 0x81 }, { "sa", 0x03 },
	{ "perf", 0x04 }, { "pma", 0x04 }, { "cm", 0x07 },
	{ "data", FAULT_CLASS_DATA },	/* data packets (verbs), not MADs */
	{ NULL, 0 },
}, method_names[] = {
	{ "get", 0x01 }, { "set", 0x02 }, { "send", 0x03 }, { "trap", 0x05 },
	{ "report", 0x06 }, { "trap_repress", 0x07 }, { "gettable", 0x12 },
	{ "getmulti", 0x14 }, { "delete", 0x15 }, { "getresp", 0x81 },
	{ "gettableresp", 0x92 }, { NULL, 0 },
}, attr_names[] = {
	{ "NodeDescription", 0x10 }, { "NodeDesc", 0x10 }, { "NodeInfo", 0x11 },
	{ "SwitchInfo", 0x12 }, { "GUIDInfo", 0x14 }, { "PortInfo", 0x15 },
	{ "P_KeyTable", 0x16 }, { "PKeyTable", 0x16 }, { "SLtoVLMappingTable", 0x17 },
	{ "VLArbitrationTable", 0x18 }, { "LinearForwardingTable", 0x19 },
	{ "LFT", 0x19 }, { "MulticastForwardingTable", 0x1b }, { "MFT", 0x1b },
	{ "SMInfo", 0x20 }, { "LedInfo", 0x31 }, { "Notice", 0x02 },
	{ "ClassPortInfo", 0x01 }, { "PortCounters", 0x12 },
	{ "PortCountersExtended", 0x1d }, { "NodeRecord", 0x11 },
	{ "PathRecord", 0x35 }, { "MCMemberRecord", 0x38 }, { NULL, 0 },
}, dir_names[] = {
	{ "req", 0 }, { "resp", 1 }, { NULL, 0 },
};

/* A day, in milliseconds: the longest delay or window a rule takes. */
#define MS_MAX	86400000u

enum {
	O_NODE, O_PORT, O_CLASS, O_METHOD, O_ATTR, O_MOD, O_DR, O_LID, O_DIR, O_SLID,
	O_DLID, O_TID, O_AFTER, O_BEFORE, O_PROB, O_COUNT, O_NTH, O_JITTER,
};
const struct ctl_optdef ctl_fault_opts[] = {
	[O_NODE] = { "--node", OPT_NODE, "NODE", 0, NULL },
	[O_PORT] = { "--port", OPT_UINT, "P", 254, NULL },
	[O_CLASS] = { "--class", OPT_NAME, "C", 0xff, class_names },
	[O_METHOD] = { "--method", OPT_NAME, "M", 0xff, method_names },
	[O_ATTR] = { "--attr", OPT_NAME, "A", 0xffff, attr_names },
	[O_MOD] = { "--mod", OPT_UINT, "X", 0xffffffff, NULL },
	[O_DR] = { "--dr", OPT_FLAG, NULL, 0, NULL },
	[O_LID] = { "--lid", OPT_FLAG, NULL, 0, NULL },
	[O_DIR] = { "--dir", OPT_CHOICE, "req|resp", 0, dir_names },
	[O_SLID] = { "--slid", OPT_UINT, "L", 0xffff, NULL },
	[O_DLID] = { "--dlid", OPT_UINT, "L", 0xffff, NULL },
	[O_TID] = { "--tid", OPT_UINT, "T", 0xffffffff, NULL },
	[O_AFTER] = { "--after", OPT_UINT, "MS", MS_MAX, NULL },
	[O_BEFORE] = { "--before", OPT_UINT, "MS", MS_MAX, NULL },
	[O_PROB] = { "--prob", OPT_PROB, "P", 0, NULL },
	[O_COUNT] = { "--count", OPT_UINT, "N", G_MAXUINT32, NULL },
	[O_NTH] = { "--nth", OPT_UINT, "N", G_MAXUINT32, NULL },
	[O_JITTER] = { "--jitter", OPT_UINT, "MS", MS_MAX, NULL },
	{ NULL },
};
G_STATIC_ASSERT(G_N_ELEMENTS(ctl_fault_opts) <= CTL_MAX_OPTS);

/* The value after the action: what it is and how large it may be. */
static const struct {
	bool needed;
	const char *what;
	uint64_t max, dflt;
} action_value[] = {
	[FAULT_DROP] = { false, NULL, 0, 0 },
	[FAULT_DUPLICATE] = { false, NULL, 0, 0 },
	[FAULT_DELAY] = { true, "a delay in milliseconds", MS_MAX, 0 },
	[FAULT_STATUS] = { true, "a MAD status such as 0x1c", 0xffff, 0 },
	[FAULT_CORRUPT] = { false, "a byte offset in the MAD", MAD_SIZE - 1, 64 },	/* attribute data */
	[FAULT_REORDER] = { false, "the longest hold in milliseconds", MS_MAX, 100 },
};

int ctl_fault_add(struct ctl_call *c)
{
	const struct ctl_val *o = c->opt;
	struct fault_rule r;
	uint64_t action = 0, now_us;
	unsigned id;

	/* The names are fault.c's, as the event log writes them. */
	for (action = 0; action < FAULT_N_ACTIONS && strcmp(fault_action_name(action), c->arg[0]);
	     action++)
		;
	if (action == FAULT_N_ACTIONS)
		return ctl_fail(c, "no fault action \"%s\" (drop, delay, duplicate, reorder, corrupt, "
				"status)", c->arg[0]);
	fault_rule_defaults(&r);
	r.action = (enum fault_action)action;
	if (c->nargs == 2) {
		uint64_t v;

		if (!action_value[action].what)
			return ctl_fail(c, "%s takes no value", c->arg[0]);
		if (!ctl_arg_uint(c, 1, action_value[action].max, action_value[action].what, &v))
			return -1;
		r.arg = (unsigned)v;
	} else if (action_value[action].needed)
		return ctl_fail(c, "%s needs a value (%s)", c->arg[0], action_value[action].what);
	else
		r.arg = (unsigned)action_value[action].dflt;
	if (o[O_DR].set && o[O_LID].set)
		return ctl_fail(c, "--dr and --lid exclude each other");
	if (o[O_DR].set || o[O_LID].set)
		r.route = o[O_DR].set;
	if (o[O_JITTER].set && r.action != FAULT_DELAY)
		return ctl_fail(c, "--jitter is for delay rules");
	r.node = o[O_NODE].node;
#define TAKE(opt, field, type) if (o[opt].set) r.field = (type)o[opt].u
	TAKE(O_PORT, port, int);
	TAKE(O_CLASS, mgmt_class, int);
	TAKE(O_METHOD, method, int);
	TAKE(O_ATTR, attr, int);
	TAKE(O_MOD, attr_mod, int64_t);
	TAKE(O_DIR, direction, int);
	TAKE(O_SLID, slid, int);
	TAKE(O_DLID, dlid, int);
	TAKE(O_TID, tid, int64_t);
	TAKE(O_COUNT, count, unsigned);
	TAKE(O_NTH, nth, unsigned);
	TAKE(O_JITTER, jitter, unsigned);
#undef TAKE
	if (r.mgmt_class == FAULT_CLASS_DATA &&
	    (r.action == FAULT_STATUS || o[O_METHOD].set || o[O_ATTR].set || o[O_MOD].set ||
	     o[O_TID].set || o[O_DR].set || o[O_DIR].set))
		return ctl_fail(c, "--class data takes no MAD fields (status, --method, --attr, --mod, --tid, --dr, --dir)");
	if (o[O_PROB].set)
		r.prob = o[O_PROB].d;
	/* --after and --before count from now, on the emulator's clock. */
	now_us = c->env->tq ? timerq_now(c->env->tq) : 0;
	if (o[O_AFTER].set)
		r.after_us = now_us + o[O_AFTER].u * 1000;
	if (o[O_BEFORE].set)
		r.before_us = now_us + o[O_BEFORE].u * 1000;
	if (c->env->fabric->faults.rules->len >= FAULT_RULES_MAX)
		return ctl_fail(c, "%u fault rules, the limit: delete one first (fault del ID)",
				FAULT_RULES_MAX);
	id = fault_add(&c->env->fabric->faults, g_memdup2(&r, sizeof(r)));
	fault_log(&c->env->fabric->faults, "fault add %u %s", id, fault_action_name(r.action));
	return ctl_answer_uint(c, "id", id, "fault %u added", id);
}

/* The fields a rule matches on beyond the usual six, as `fault list`
 * prints them: only those set; the window from @now_us, in ms (negative:
 * passed). */
static void list_more(GString *out, const struct fault_rule *r, uint64_t now_us)
{
	if (r->attr_mod != FAULT_ANY)
		g_string_append_printf(out, " mod 0x%" G_GINT64_MODIFIER "x", r->attr_mod);
	if (r->direction != FAULT_ANY)
		g_string_append_printf(out, " dir %s", r->direction ? "resp" : "req");
	if (r->route != FAULT_ANY)
		g_string_append_printf(out, " route %s", r->route ? "dr" : "lid");
	if (r->slid != FAULT_ANY)
		g_string_append_printf(out, " slid %d", r->slid);
	if (r->dlid != FAULT_ANY)
		g_string_append_printf(out, " dlid %d", r->dlid);
	if (r->tid != FAULT_ANY)
		g_string_append_printf(out, " tid 0x%" G_GINT64_MODIFIER "x", r->tid);
	if (r->jitter)
		g_string_append_printf(out, " jitter %u", r->jitter);
	if (r->after_us)
		g_string_append_printf(out, " after %+" G_GINT64_FORMAT " ms",
				       ((int64_t)r->after_us - (int64_t)now_us) / 1000);
	if (r->before_us)
		g_string_append_printf(out, " before %+" G_GINT64_FORMAT " ms",
				       ((int64_t)r->before_us - (int64_t)now_us) / 1000);
}

static void json_int(JsonBuilder *b, const char *name, int64_t v)
{
	json_builder_set_member_name(b, name);
	json_builder_add_int_value(b, v);
}

int ctl_fault_list(struct ctl_call *c)
{
	GPtrArray *rules = c->env->fabric->faults.rules;
	uint64_t now_us = c->env->tq ? timerq_now(c->env->tq) : 0;
	JsonBuilder *b = c->json;
	unsigned i;

	if (b)
		json_builder_begin_array(b);
	for (i = 0; i < rules->len; i++) {
		struct fault_rule *r = g_ptr_array_index(rules, i);
		bool data = r->mgmt_class == FAULT_CLASS_DATA;

		if (!b) {
			g_string_append_printf(c->out, "%u %s %u node %s port %d class ", r->id,
					       fault_action_name(r->action), r->arg,
					       r->node ? r->node->id : "*", r->port);
			if (data)
				g_string_append(c->out, "data");
			else
				g_string_append_printf(c->out, "%d", r->mgmt_class);
			g_string_append_printf(c->out, " method %d attr %d", r->method, r->attr);
			list_more(c->out, r, now_us);
			g_string_append_printf(c->out, " prob %g count %u nth %u: matches %u hits %u\n",
					       r->prob, r->count, r->nth, r->matches, r->hits);
			continue;
		}
		json_builder_begin_object(b);
		ctl_json_uint(b, "id", r->id);
		ctl_json_str(b, "action", fault_action_name(r->action));
		ctl_json_uint(b, "arg", r->arg);
		ctl_json_str(b, "node", r->node ? r->node->id : "*");
		json_int(b, "port", r->port);
		if (data)
			ctl_json_str(b, "class", "data");
		else
			json_int(b, "class", r->mgmt_class);
		json_int(b, "method", r->method);
		json_int(b, "attr", r->attr);
		json_int(b, "mod", r->attr_mod);
		json_int(b, "dir", r->direction);
		json_int(b, "route", r->route);
		json_int(b, "slid", r->slid);
		json_int(b, "dlid", r->dlid);
		json_int(b, "tid", r->tid);
		ctl_json_uint(b, "jitter", r->jitter);
		if (r->after_us)
			json_int(b, "after_ms", ((int64_t)r->after_us - (int64_t)now_us) / 1000);
		if (r->before_us)
			json_int(b, "before_ms", ((int64_t)r->before_us - (int64_t)now_us) / 1000);
		json_builder_set_member_name(b, "prob");
		json_builder_add_double_value(b, r->prob);
		ctl_json_uint(b, "count", r->count);
		ctl_json_uint(b, "nth", r->nth);
		ctl_json_uint(b, "matches", r->matches);
		ctl_json_uint(b, "hits", r->hits);
		json_builder_end_object(b);
	}
	if (b)
		json_builder_end_array(b);
	return 0;
}

int ctl_fault_del(struct ctl_call *c)
{
	uint64_t id;

	if (!ctl_parse_uint(c->arg[0], G_MAXUINT32, &id) ||
	    !fault_del(&c->env->fabric->faults, (unsigned)id))
		return ctl_fail(c, "no fault rule %s", c->arg[0]);
	fault_log(&c->env->fabric->faults, "fault del %" G_GUINT64_FORMAT, id);
	return ctl_answer_uint(c, "deleted", id, "fault %" G_GUINT64_FORMAT " deleted", id);
}
