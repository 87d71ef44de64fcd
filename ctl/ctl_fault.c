/* SPDX-License-Identifier: MIT */
/*
 * Fault rules from the control plane: fault add, fault list, fault del
 * (ctl_cmd.h; what a rule does is fabric/fault.h's).
 */
#include "config.h"

#include <string.h>
#include <arpa/inet.h>

#include <infiniband/mad.h>
#include <infiniband/umad_str.h>

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
}, dir_names[] = {
	{ "req", 0 }, { "resp", 1 }, { NULL, 0 },
};

/*
 * Attribute names for --attr. libibumad names those of the SM, SA and CM
 * classes (umad_attribute_str, the names saquery and ibdump print); this
 * table adds what it lacks: the PMA's (IBA 16.1.3, ids from libibmad) and
 * short names users type for SM attributes.
 */
static const struct {
	const char *name;
	uint8_t mgmt_class;	/* UMAD_CLASS_SUBN_LID_ROUTED stands for both SM classes */
	uint16_t id;
} attr_extra[] = {
	{ "NodeDesc", UMAD_CLASS_SUBN_LID_ROUTED, IB_ATTR_NODE_DESC },
	{ "PKeyTable", UMAD_CLASS_SUBN_LID_ROUTED, IB_ATTR_PKEY_TBL },
	{ "LFT", UMAD_CLASS_SUBN_LID_ROUTED, IB_ATTR_LINEARFORWTBL },
	{ "MFT", UMAD_CLASS_SUBN_LID_ROUTED, IB_ATTR_MULTICASTFORWTBL },
	{ "PortSamplesControl", UMAD_CLASS_PERF_MGMT, IB_GSI_PORT_SAMPLES_CONTROL },
	{ "PortSamplesResult", UMAD_CLASS_PERF_MGMT, IB_GSI_PORT_SAMPLES_RESULT },
	{ "PortCounters", UMAD_CLASS_PERF_MGMT, IB_GSI_PORT_COUNTERS },
	{ "PortCountersExtended", UMAD_CLASS_PERF_MGMT, IB_GSI_PORT_COUNTERS_EXT },
	{ "PortXmitDataSL", UMAD_CLASS_PERF_MGMT, IB_GSI_PORT_XMIT_DATA_SL },
	{ "PortRcvDataSL", UMAD_CLASS_PERF_MGMT, IB_GSI_PORT_RCV_DATA_SL },
};

/* The classes a name is looked up in when the rule gives none. */
static const uint8_t attr_classes[] = {
	UMAD_CLASS_SUBN_LID_ROUTED, UMAD_CLASS_SUBN_ADM, UMAD_CLASS_PERF_MGMT, UMAD_CLASS_CM,
};

/* What umad_attribute_str() says of an id it has no name for. */
#define UMAD_UNKNOWN "<unknown>"

/* libibumad's "Class Port Info" is ClassPortInfo typed: blanks do not count. */
static bool same_name(const char *typed, const char *name)
{
	for (;; typed++, name++) {
		while (*typed == ' ')
			typed++;
		while (*name == ' ')
			name++;
		if (g_ascii_tolower(*typed) != g_ascii_tolower(*name))
			return false;
		if (!*typed)
			return true;
	}
}

static bool attr_in_class(const char *s, uint8_t cls, uint16_t *id)
{
	uint8_t sm = cls == UMAD_CLASS_SUBN_DIRECTED_ROUTE ? UMAD_CLASS_SUBN_LID_ROUTED : cls;
	unsigned i;

	for (i = 0; i < G_N_ELEMENTS(attr_extra); i++)
		if (attr_extra[i].mgmt_class == sm && same_name(s, attr_extra[i].name)) {
			*id = attr_extra[i].id;
			return true;
		}
	/* Every id, so that names libibumad learns later work too: 64 Ki
	 * lookups in a switch, well under a millisecond, once per rule. */
	for (i = 0; i <= 0xffff && !same_name(s, UMAD_UNKNOWN); i++)
		if (same_name(s, umad_attribute_str(cls, htons((uint16_t)i)))) {
			*id = (uint16_t)i;
			return true;
		}
	return false;
}

/* A name of the class to show in an error: its first past the common ones. */
static const char *attr_example(uint8_t cls)
{
	unsigned i;

	for (i = 0; i < G_N_ELEMENTS(attr_extra); i++)
		if (attr_extra[i].mgmt_class == cls)
			return attr_extra[i].name;
	for (i = 0x10; i <= 0xffff; i++)
		if (strcmp(umad_attribute_str(cls, htons((uint16_t)i)), UMAD_UNKNOWN))
			return umad_attribute_str(cls, htons((uint16_t)i));
	return "ClassPortInfo";
}

/* --attr: a number, or a name of the rule's class (of any, with no --class). */
static int attr_value(struct ctl_call *c, const struct ctl_val *attr, const struct ctl_val *cls,
		      int *out)
{
	uint64_t v;
	uint16_t id;
	unsigned i;
	bool found = false;

	if (ctl_parse_uint(attr->s, 0xffff, &v)) {
		*out = (int)v;
		return 0;
	}
	if (cls->set)
		found = attr_in_class(attr->s, (uint8_t)cls->u, &id);
	for (i = 0; !cls->set && !found && i < G_N_ELEMENTS(attr_classes); i++)
		found = attr_in_class(attr->s, attr_classes[i], &id);
	if (found) {
		*out = id;
		return 0;
	}
	if (cls->set)
		return ctl_fail(c, "--attr: no attribute \"%s\" in class %s (0x%02x); a name as "
				"libibumad spells it, such as %s, or a number 0 to 65535", attr->s,
				umad_class_str((uint8_t)cls->u), (unsigned)cls->u,
				attr_example((uint8_t)cls->u));
	return ctl_fail(c, "--attr: no attribute \"%s\" (SM, SA, PMA or CM names such as NodeInfo, "
			"PathRecord, PortCounters), nor a number 0 to 65535", attr->s);
}

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
	[O_ATTR] = { "--attr", OPT_WORD, "A", 0xffff, NULL,
		     "or a name: libibumad's for the class (NodeInfo, PathRecord, ...), "
		     "PortCounters, LFT, ..." },
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
	TAKE(O_MOD, attr_mod, int64_t);
	TAKE(O_DIR, direction, int);
	TAKE(O_SLID, slid, int);
	TAKE(O_DLID, dlid, int);
	TAKE(O_TID, tid, int64_t);
	TAKE(O_COUNT, count, unsigned);
	TAKE(O_NTH, nth, unsigned);
	TAKE(O_JITTER, jitter, unsigned);
#undef TAKE
	if (o[O_ATTR].set && r.mgmt_class != FAULT_CLASS_DATA &&
	    attr_value(c, &o[O_ATTR], &o[O_CLASS], &r.attr) < 0)
		return -1;
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
