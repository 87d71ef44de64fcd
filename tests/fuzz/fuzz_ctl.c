/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the control plane's command parser and handlers.
 * Input: lines of words, each line one `ibemu ctl` command (the socket
 * carries the same argv), run in order on a fresh default fabric: fault
 * rules, link and node changes, counters, LIDs, GUIDs, dumps, waits (one
 * check each, as the emulator answers them). `scenario` and `capture start`
 * are left out: they read or write a file named by the input.
 */
#include <stdint.h>
#include <string.h>

#include <glib.h>

#include "tests/fuzz/fuzz.h"

#include "ctl/ctl.h"
#include "ctl/scenario.h"
#include "lib/timerq.h"
#include "topologies/topo.h"

static uint64_t clock_now(void *ctx)
{
	return *(uint64_t *)ctx;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = g_strndup((const char *)data, size);
	char **lines = g_strsplit(text, "\n", 64);
	uint64_t now = 1;
	struct ctl_env env = { 0 };
	unsigned i;

	env.fabric = topo_load_default(0);
	env.tq = timerq_new(clock_now, &now);
	env.fabric->tq = env.tq;
	env.scenarios = g_ptr_array_new_with_free_func((GDestroyNotify)scenario_free);
	for (i = 0; lines[i]; i++) {
		char **argv = g_strsplit_set(lines[i], " \t", 32);
		GString *out = g_string_new(NULL);

		if (argv[0] && strcmp(argv[0], "scenario") &&
		    !(!strcmp(argv[0], "capture") && argv[1] && !strcmp(argv[1], "start")))
			ctl_run(&env, argv, out);
		g_string_free(out, TRUE);
		g_strfreev(argv);
		timerq_run(env.tq);
	}
	g_ptr_array_free(env.scenarios, TRUE);
	timerq_free(env.tq);
	fabric_free(env.fabric);
	g_strfreev(lines);
	g_free(text);
	return 0;
}
