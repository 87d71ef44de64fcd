/* SPDX-License-Identifier: MIT */
/*
 * Scenario files: control commands on the emulator's clock.
 *
 *   # comment
 *   at 2s link down leaf1/7
 *   at 2500ms fault add drop --node leaf2 --attr NodeInfo --count 3
 *   at 5s link up leaf1/7
 *
 * Times count from when the scenario starts (ibemu run --scenario, or
 * `ibemu ctl scenario FILE`). Each step runs as `ibemu ctl` would run it;
 * its result goes to the log, and the step to the event log.
 */
#ifndef IBEMU_CTL_SCENARIO_H
#define IBEMU_CTL_SCENARIO_H

#include <glib.h>

/* How deep scenarios may start scenarios (one that loads itself at 0 ms
 * once grew the daemon without bound and starved its loop). */
#define SCENARIO_MAX_DEPTH	8
/* How many may be running at once in one emulator, and how many of their
 * steps may wait: a file of eight lines that each start it again would
 * otherwise make 8^8 starts (README "Limits"). */
#define SCENARIO_MAX_RUNNING	64
#define SCENARIO_MAX_PENDING	10000
/* The largest scenario file read (a regular file only: a FIFO would stop
 * the emulator's loop, /dev/zero fill its memory). */
#define SCENARIO_MAX_BYTES	(1u << 20)

struct scenario;
struct timerq;

/*
 * What runs a scenario's steps: the control plane (ctl_start_scenario in
 * ctl/ctl.h) passes these, so scenarios know nothing of commands.
 * @step runs @argv with a scenario @depth deeper than the one that
 * started this scenario; @done is called once its last step has run (the
 * scenario may be freed there).
 */
struct scenario_hooks {
	int (*step)(void *ctx, unsigned depth, char **argv, GString *out);
	void (*done)(void *ctx, struct scenario *sc);
};

/* Errors read "file:line: what is wrong". */
struct scenario *scenario_load(const char *path, GError **err);
/* Arm its steps on @tq; @depth: how deep the scenario that started this
 * one was (0 for one started from outside). */
void scenario_start(struct scenario *sc, struct timerq *tq, const struct scenario_hooks *hooks,
		    void *ctx, unsigned depth);
unsigned scenario_steps(const struct scenario *sc);
void scenario_free(struct scenario *sc);

#endif
