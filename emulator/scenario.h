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
#ifndef IBEMU_EMULATOR_SCENARIO_H
#define IBEMU_EMULATOR_SCENARIO_H

#include <glib.h>

/* How deep scenarios may start scenarios (one that loads itself at 0 ms
 * once grew the daemon without bound and starved its loop). */
#define SCENARIO_MAX_DEPTH	8

struct ctl_env;
struct scenario;

/* Errors read "file:line: what is wrong". */
struct scenario *scenario_load(const char *path, GError **err);
/* Arm its steps; once all have run, it is removed from env->scenarios
 * (and freed), so it must be added there after this call. */
void scenario_start(struct scenario *sc, struct ctl_env *env);
unsigned scenario_steps(const struct scenario *sc);
void scenario_free(struct scenario *sc);

#endif
