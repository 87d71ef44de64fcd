/* SPDX-License-Identifier: MIT */
/*
 * Fault rules, consulted for every packet as it arrives at a node: match on
 * node, port, class, method, attribute, modifier, DR or LID-routed; act by
 * drop, delay, duplicate, corrupt or answering with a MAD status; limited
 * by probability, count and "the Nth match". Every random choice comes from
 * one seeded generator, and every fault applied is written to the event
 * log, so a run can be replayed exactly.
 */
#ifndef IBEMU_FABRIC_FAULT_H
#define IBEMU_FABRIC_FAULT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "fabric/packet.h"

struct fabric;
struct node;
struct port;

enum fault_action {
	FAULT_DROP,
	FAULT_DELAY,
	FAULT_DUPLICATE,
	FAULT_CORRUPT,
	FAULT_STATUS,
	FAULT_REORDER,	/* held until the next packet reaches the node */
};
#define FAULT_N_ACTIONS	(FAULT_REORDER + 1)

#define FAULT_ANY (-1)
/* mgmt_class of a rule for data packets (`--class data`), not MADs. */
#define FAULT_CLASS_DATA 0x100

struct fault_rule {
	unsigned id;
	enum fault_action action;
	unsigned arg;		/* delay ms, status code, corrupt byte offset,
				 * reorder: longest hold in ms */
	unsigned jitter;	/* delay: plus 0..jitter ms, drawn */
	int direction;		/* 0 requests only, 1 responses only, FAULT_ANY */
	struct node *node;	/* where the packet arrives; NULL = any */
	int port;		/* arrival port number, or FAULT_ANY */
	int mgmt_class, method, attr;	/* or FAULT_ANY */
	int64_t attr_mod;	/* or FAULT_ANY */
	int route;		/* 0 LID-routed only, 1 DR only, FAULT_ANY */
	int slid, dlid;		/* LRH source/destination LID, or FAULT_ANY */
	int64_t tid;		/* low 32 TID bits, or FAULT_ANY */
	uint64_t after_us, before_us;	/* window on the clock; 0 = open */
	double prob;		/* 1.0 = always */
	unsigned count;		/* act this many times at most; 0 = unlimited */
	unsigned nth;		/* act on the Nth match only; 0 = every */
	unsigned matches, hits;	/* statistics */
};

struct fault_set {
	GPtrArray *rules;	/* struct fault_rule * */
	unsigned next_id;
	GRand *rand;
	uint32_t seed;
	GQueue log;		/* char *: the event log, the last FAULT_LOG_MAX */
	unsigned log_seq;	/* lines ever logged: each line's number */
};

/* The event log keeps this many lines, the newest (README "Limits"): a
 * rule that hits every packet would otherwise grow it ~120 bytes a hit. */
#define FAULT_LOG_MAX	10000
/* Rules at once: every packet is checked against each (README "Limits"). */
#define FAULT_RULES_MAX	256

void fault_set_init(struct fault_set *fs, uint32_t seed);
void fault_set_clear(struct fault_set *fs);
/* Takes @r (its id is assigned); returns the id. */
unsigned fault_add(struct fault_set *fs, struct fault_rule *r);
bool fault_del(struct fault_set *fs, unsigned id);
void fault_rule_defaults(struct fault_rule *r);
/* "drop", "delay", ...: the names `ibemu ctl fault add` takes too. */
const char *fault_action_name(enum fault_action a);
/* The delay a rule gives now (draws the jitter). */
unsigned fault_delay_ms(struct fault_set *fs, const struct fault_rule *r);
/* Append a line to the event log (link and node events use it too). */
void fault_log(struct fault_set *fs, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/*
 * @now_us: the fabric's clock (0 when it has none), for time windows.
 * What to do with @p arriving at @in: the first rule that acts decides.
 * @local: the packet is addressed to this node; only then do "status"
 * rules apply (the node answers with that status), and only otherwise the
 * others. Returns the rule, or NULL to deliver normally.
 */
struct fault_rule *fault_check(struct fault_set *fs, struct port *in,
			       struct mad_pkt *p, bool local, uint64_t now_us);

#endif
