/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "lib/log.h"

G_DEFINE_QUARK(ibemu-error, ibemu_error)

static int verbosity;
static FILE *log_file;	/* NULL: stderr */

static void handler(const gchar *domain, GLogLevelFlags level,
		    const gchar *msg, gpointer data)
{
	(void)data;
	if ((level & G_LOG_LEVEL_DEBUG) && verbosity < 2)
		return;
	if ((level & (G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO)) && verbosity < 1)
		return;
	/* A log file (a daemon's, --log) says when: lines of processes that
	 * talk to each other are read side by side. */
	if (log_file) {
		GDateTime *now = g_date_time_new_now_local();
		char *stamp = g_date_time_format(now, "%F %T.%f");

		fprintf(log_file, "%s ", stamp);
		g_free(stamp);
		g_date_time_unref(now);
	}
	fprintf(log_file ? log_file : stderr, "ibemu[%s]: %s%s\n", domain ? domain : "main",
		level & (G_LOG_LEVEL_WARNING | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_ERROR) ?
		"warning: " : "", msg);
}

void log_init(int v)
{
	verbosity = v;
	g_log_set_default_handler(handler, NULL);
}

bool log_tracing(void)
{
	return verbosity >= 2;
}

FILE *log_stream(void)
{
	return log_file ? log_file : stderr;
}

int log_to_file(const char *path)
{
	FILE *f = fopen(path, "ae");

	if (!f)
		return -errno;
	setvbuf(f, NULL, _IOLBF, 0);
	if (log_file)
		fclose(log_file);
	log_file = f;
	return 0;
}
