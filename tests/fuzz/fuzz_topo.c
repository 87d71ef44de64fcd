/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the topology parser (both formats, directives, link
 * options, comment speeds). Input: the text of a topology file. Every
 * input either loads or gives a file:line error; neither may crash, leak
 * or read out of bounds. Inputs with "include" are skipped: an include of
 * /dev/zero would read forever, which is the user's own choice, not a bug.
 */
#include <stdint.h>
#include <string.h>

#include <glib.h>

#include "tests/fuzz/fuzz.h"

#include "topologies/topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = g_strndup((const char *)data, size);
	GError *err = NULL;
	struct fabric *f;

	if (!strstr(text, "include")) {
		/* Odd sizes strict, even ones skipping: both paths. */
		f = topo_load_string(text, "fuzz.net", size & 1 ? TOPO_STRICT : 0, &err);
		if (f)
			fabric_free(f);
		else
			g_clear_error(&err);
	}
	g_free(text);
	return 0;
}
