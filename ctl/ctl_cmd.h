/* SPDX-License-Identifier: MIT */
/*
 * How a control command is described and run (the commands are in
 * ctl_show.c, ctl_change.c and ctl_fault.c; the table in ctl_cmds.c).
 *
 * Each command is one `struct ctl_cmd`: its words, its positional
 * arguments, its options with their types and ranges, a help line and a
 * handler. One parser (ctl_cmds.c) checks the positionals' count and every
 * option against the table, so a handler sees options already converted
 * and in range; `ibemu ctl help` and the man page check are written from
 * the same table. A handler writes text to c->out, or JSON to c->json
 * when the caller asked --json, and fails through ctl_fail().
 */
#ifndef IBEMU_CTL_CTL_CMD_H
#define IBEMU_CTL_CTL_CMD_H

#include <json-glib/json-glib.h>

#include "ctl/ctl.h"

/* A word that stands for a number (--class sa, --attr NodeInfo). */
struct ctl_name {
	const char *name;
	unsigned value;
};

enum ctl_opt_type {
	OPT_FLAG,	/* no value */
	OPT_UINT,	/* a number 0..max (decimal or 0x...) */
	OPT_NAME,	/* a name of the table, or a number 0..max */
	OPT_CHOICE,	/* one of the table's names */
	OPT_NODE,	/* a node by id or GUID */
	OPT_PROB,	/* a probability 0..1 */
	OPT_WORD,	/* a word the command reads itself, knowing its other options */
};

struct ctl_optdef {
	const char *name;	/* "--node" */
	enum ctl_opt_type type;
	const char *metavar;	/* "N" (none for OPT_FLAG) */
	uint64_t max;		/* OPT_UINT, OPT_NAME, OPT_WORD (as a number) */
	const struct ctl_name *names;	/* OPT_NAME, OPT_CHOICE; ends with a NULL name */
	const char *help;	/* OPT_WORD: what else it takes, for ctl help */
};

/* An option's value as the parser left it. */
struct ctl_val {
	bool set;
	uint64_t u;		/* OPT_UINT, OPT_NAME, OPT_CHOICE (the value) */
	double d;		/* OPT_PROB */
	const char *s;		/* OPT_WORD */
	struct node *node;	/* OPT_NODE */
};

#define CTL_MAX_OPTS	24

struct ctl_cmd;

/* One command being run. */
struct ctl_call {
	struct ctl_env *env;
	const struct ctl_cmd *cmd;
	char **arg;		/* positionals after the command's words */
	unsigned nargs;
	struct ctl_val opt[CTL_MAX_OPTS];	/* as cmd->opts */
	JsonBuilder *json;	/* --json: the answer goes here; NULL: text */
	GString *out;		/* text answer */
};

struct ctl_cmd {
	const char *name, *sub;	/* sub NULL: a command of one word */
	const char *args;	/* the positionals, for help: "NODE/PORT LID [LMC]" */
	unsigned min_args, max_args;
	const struct ctl_optdef *opts;	/* ends with a NULL name; may be NULL */
	bool no_json;		/* --json is refused (dump writes a file format) */
	const char *help;
	int (*fn)(struct ctl_call *c);
};

/* Handlers, by the file that holds them (entries in ctl_cmds.c). */
int ctl_status(struct ctl_call *c);	/* ctl_show.c */
int ctl_info(struct ctl_call *c);
int ctl_nodes(struct ctl_call *c);
int ctl_port(struct ctl_call *c);
int ctl_dump(struct ctl_call *c);
int ctl_pid(struct ctl_call *c);
int ctl_hosts(struct ctl_call *c);
int ctl_seed(struct ctl_call *c);
int ctl_events(struct ctl_call *c);
int ctl_wait(struct ctl_call *c);
extern const struct ctl_optdef ctl_wait_opts[];
int ctl_link(struct ctl_call *c);	/* ctl_change.c */
int ctl_port_phys(struct ctl_call *c);
int ctl_guid(struct ctl_call *c);
int ctl_lid(struct ctl_call *c);
int ctl_addr(struct ctl_call *c);
int ctl_node(struct ctl_call *c);
int ctl_counters(struct ctl_call *c);
int ctl_scenario(struct ctl_call *c);
int ctl_fault_add(struct ctl_call *c);	/* ctl_fault.c */
int ctl_fault_list(struct ctl_call *c);
int ctl_fault_del(struct ctl_call *c);
int ctl_capture_start(struct ctl_call *c);	/* ctl_capture.c */
int ctl_capture_stop(struct ctl_call *c);
int ctl_capture_show(struct ctl_call *c);
extern const struct ctl_optdef ctl_fault_opts[];
extern const struct ctl_optdef ctl_capture_opts[];
extern const struct ctl_optdef ctl_dump_opts[];

/* The answer is this one error line (printf format); returns -1. */
int ctl_fail(struct ctl_call *c, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* "usage: " and the command's words and arguments; returns -1. */
int ctl_usage(struct ctl_call *c);

/* Positional i as NODE/PORT, NODE, or a number 0..max: NULL/false after
 * ctl_fail() saying what is wrong (@what names the argument). */
struct port *ctl_arg_port(struct ctl_call *c, unsigned i);
struct node *ctl_arg_node(struct ctl_call *c, unsigned i);
bool ctl_arg_uint(struct ctl_call *c, unsigned i, uint64_t max, const char *what, uint64_t *v);

/* A number 0..max written in decimal or 0x hex, the whole string. */
bool ctl_parse_uint(const char *s, uint64_t max, uint64_t *v);

/* An answer of one number: the text line (printf @fmt, no newline), or
 * {"@key": @v} under --json. Returns 0. */
int ctl_answer_uint(struct ctl_call *c, const char *key, uint64_t v, const char *fmt, ...)
	G_GNUC_PRINTF(4, 5);

/* A JSON member: "name": value. */
void ctl_json_uint(JsonBuilder *b, const char *name, uint64_t v);
void ctl_json_str(JsonBuilder *b, const char *name, const char *v);
void ctl_json_bool(JsonBuilder *b, const char *name, bool v);

#endif
