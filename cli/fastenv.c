/* SPDX-License-Identifier: MIT */
/* The fast path's environment; see fastenv.h. */
#include "config.h"

#include <string.h>

#include "cli/fastenv.h"
#include "lib/shipped.h"

#define LIBRARY	"libibemu-fast.so"

const char *fastenv_library(void)
{
	static char *lib;
	static gboolean looked;

	if (!looked)
		lib = shipped_find("preload/" LIBRARY, IBEMU_PRELOAD_DIR "/" LIBRARY);
	looked = TRUE;
	return lib;
}

/* Is the fast path turned off in this environment (IBEMU_FAST_PATH=0)? */
static gboolean fastenv_disabled(void)
{
	return !g_strcmp0(g_getenv("IBEMU_FAST_PATH"), "0");
}

/* @list (separated by any of @seps) has the item @item? */
static gboolean has_item(const char *list, const char *item, const char *seps)
{
	char **items = g_strsplit_set(list ? list : "", seps, -1);
	gboolean found = g_strv_contains((const char *const *)items, item);

	g_strfreev(items);
	return found;
}

char **fastenv_apply(char **envp, const char *fast_sock, gboolean preload)
{
	const char *lib = fastenv_library();
	const char *old, *asan;

	envp = g_environ_setenv(envp, "IBEMU_FAST", fast_sock, TRUE);
	/* Off: and off for a program that has the library preloaded already. */
	if (!preload || fastenv_disabled())
		return g_environ_setenv(envp, "IBEMU_FAST_PATH", "0", TRUE);
	if (!lib) {
		g_warning("no " LIBRARY " beside this ibemu or in %s: programs use the FUSE files only",
			  IBEMU_PRELOAD_DIR);
		return envp;
	}
	old = g_environ_getenv(envp, "LD_PRELOAD");
	if (!has_item(old, lib, " :")) {
		char *both = old && *old ? g_strconcat(old, ":", lib, NULL) : g_strdup(lib);

		envp = g_environ_setenv(envp, "LD_PRELOAD", both, TRUE);
		g_free(both);
	}
	asan = g_environ_getenv(envp, "ASAN_OPTIONS");
	if (!asan || !strstr(asan, "verify_asan_link_order")) {
		char *opts = asan && *asan ? g_strconcat(asan, ":verify_asan_link_order=0", NULL)
					   : g_strdup("verify_asan_link_order=0");

		envp = g_environ_setenv(envp, "ASAN_OPTIONS", opts, TRUE);
		g_free(opts);
	}
	return envp;
}
