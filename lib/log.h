/* SPDX-License-Identifier: MIT */
/*
 * Logging: GLib's log functions with one G_LOG_DOMAIN per folder (set by
 * Makefile.am), written to stderr as "ibemu[domain]: text". Verbosity 0
 * shows warnings, 1 adds messages, 2 adds the per-MAD debug trace.
 */
#ifndef IBEMU_LIB_LOG_H
#define IBEMU_LIB_LOG_H

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

#define IBEMU_ERROR (ibemu_error_quark())
GQuark ibemu_error_quark(void);

void log_init(int verbosity);
/* Is the per-MAD trace on? Hot paths ask before formatting a line. */
bool log_tracing(void);
/* Log to @path instead of stderr; -errno if it cannot be opened. */
int log_to_file(const char *path);
/* Where the log goes: @path's file, or stderr. */
FILE *log_stream(void);

#endif
