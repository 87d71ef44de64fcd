/* SPDX-License-Identifier: MIT */
/*
 * Shared by the fuzz targets: GLib's log messages go nowhere (millions of
 * "did not enable P_Key index support" lines would cost more than the
 * code under test, and fill the disk). Criticals abort: a finding.
 */
#ifndef IBEMU_TESTS_FUZZ_H
#define IBEMU_TESTS_FUZZ_H

#include <stdio.h>
#include <stdlib.h>

#include <glib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);

static void fuzz_quiet(const gchar *domain, GLogLevelFlags level, const gchar *msg,
		       gpointer data)
{
	(void)domain;
	(void)data;
	if (level & (G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_ERROR)) {
		fprintf(stderr, "GLib critical: %s\n", msg);
		abort();
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	g_log_set_default_handler(fuzz_quiet, NULL);
	return 0;
}

#endif
