/* SPDX-License-Identifier: MIT */
/* Fault rules; see fault.h. */
#include "config.h"

#include <stdarg.h>

#include "fabric/fabric.h"
#include "fabric/fault.h"

void fault_set_init(struct fault_set *fs, uint32_t seed)
{
	fs->rules = g_ptr_array_new_with_free_func(g_free);
	fs->next_id = 1;
	fs->seed = seed;
	fs->rand = g_rand_new_with_seed(seed);
	g_queue_init(&fs->log);
	fs->log_seq = 0;
}

void fault_set_clear(struct fault_set *fs)
{
	if (fs->rules)
		g_ptr_array_free(fs->rules, TRUE);
	g_queue_clear_full(&fs->log, g_free);
	if (fs->rand)
		g_rand_free(fs->rand);
	memset(fs, 0, sizeof(*fs));
}

void fault_rule_defaults(struct fault_rule *r)
{
	memset(r, 0, sizeof(*r));
	r->port = r->mgmt_class = r->method = r->attr = r->route = FAULT_ANY;
	r->slid = r->dlid = r->direction = FAULT_ANY;
	r->attr_mod = r->tid = FAULT_ANY;
	r->prob = 1.0;
}

unsigned fault_add(struct fault_set *fs, struct fault_rule *r)
{
	r->id = fs->next_id++;
	g_ptr_array_add(fs->rules, r);
	return r->id;
}

bool fault_del(struct fault_set *fs, unsigned id)
{
	unsigned i;

	for (i = 0; i < fs->rules->len; i++)
		if (((struct fault_rule *)g_ptr_array_index(fs->rules, i))->id == id) {
			g_ptr_array_remove_index(fs->rules, i);
			return true;
		}
	return false;
}

const char *fault_action_name(enum fault_action a)
{
	static const char *const names[] = {
		[FAULT_DROP] = "drop", [FAULT_DELAY] = "delay", [FAULT_DUPLICATE] = "duplicate",
		[FAULT_CORRUPT] = "corrupt", [FAULT_STATUS] = "status", [FAULT_REORDER] = "reorder",
	};
	G_STATIC_ASSERT(G_N_ELEMENTS(names) == FAULT_N_ACTIONS);

	return names[a];
}

unsigned fault_delay_ms(struct fault_set *fs, const struct fault_rule *r)
{
	if (!r->jitter)
		return r->arg;
	return r->arg + (unsigned)g_rand_int_range(fs->rand, 0, (gint32)r->jitter + 1);
}

void fault_log(struct fault_set *fs, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_queue_push_tail(&fs->log, g_strdup_printf("%u %s", ++fs->log_seq, msg));
	if (fs->log.length > FAULT_LOG_MAX)	/* a ring: the oldest goes */
		g_free(g_queue_pop_head(&fs->log));
	g_debug("event: %s", msg);
	g_free(msg);
}

static bool matches(const struct fault_rule *r, const struct port *in,
		    const struct mad_pkt *p)
{
	const uint8_t *m = p->mad;

	if ((r->node && r->node != in->node) || (r->port != FAULT_ANY && r->port != in->num) ||
	    (r->slid != FAULT_ANY && r->slid != p->slid) ||
	    (r->dlid != FAULT_ANY && r->dlid != p->dlid))
		return false;
	/* A data packet has no MAD fields: rules that name one are MAD rules;
	 * those that name none match both. */
	if (p->data)
		return (r->mgmt_class == FAULT_ANY || r->mgmt_class == FAULT_CLASS_DATA) &&
		       r->method == FAULT_ANY && r->attr == FAULT_ANY &&
		       r->attr_mod == FAULT_ANY && r->tid == FAULT_ANY && r->route != 1 &&
		       r->direction == FAULT_ANY;
	return (r->mgmt_class == FAULT_ANY || r->mgmt_class == mad_class(m)) &&
	       (r->method == FAULT_ANY || r->method == mad_method(m)) &&
	       (r->attr == FAULT_ANY || r->attr == mad_attr_id(m)) &&
	       (r->attr_mod == FAULT_ANY || r->attr_mod == mad_attr_mod(m)) &&
	       (r->route == FAULT_ANY ||
		r->route == (mad_class(m) == UMAD_CLASS_SUBN_DIRECTED_ROUTE)) &&
	       (r->direction == FAULT_ANY || r->direction == mad_is_response(m)) &&
	       (r->tid == FAULT_ANY || r->tid == (int64_t)(mad_tid(m) & 0xffffffff));
}

struct fault_rule *fault_check(struct fault_set *fs, struct port *in,
			       struct mad_pkt *p, bool local, uint64_t now_us)
{
	unsigned i;

	if (!fs->rules)
		return NULL;
	for (i = 0; i < fs->rules->len; i++) {
		struct fault_rule *r = g_ptr_array_index(fs->rules, i);

		if ((r->action == FAULT_STATUS) != local || !matches(r, in, p))
			continue;
		if (local && mad_is_response(p->mad))
			continue;	/* a status answers requests */
		if ((r->after_us && now_us < r->after_us) ||
		    (r->before_us && now_us >= r->before_us))
			continue;
		r->matches++;
		if (r->nth && r->matches != r->nth)
			continue;
		if (r->count && r->hits >= r->count)
			continue;
		/* Draw only for rules that need it, so others don't shift it. */
		if (r->prob < 1.0 && g_rand_double(fs->rand) >= r->prob)
			continue;
		r->hits++;
		if (p->data)
			fault_log(fs, "rule %u %s %u on match %u: data %u -> %u qp 0x%x at %s/%u",
				  r->id, fault_action_name(r->action), r->arg, r->matches,
				  p->slid, p->dlid, p->dqp, in->node->id, in->num);
		else	/* No TID: tools draw theirs at random; the log must replay. */
			fault_log(fs, "rule %u %s %u on match %u: class 0x%02x method 0x%02x attr 0x%04x mod 0x%x at %s/%u",
				  r->id, fault_action_name(r->action), r->arg, r->matches,
				  mad_class(p->mad), mad_method(p->mad), mad_attr_id(p->mad),
				  mad_attr_mod(p->mad), in->node->id, in->num);
		return r;
	}
	return NULL;
}
