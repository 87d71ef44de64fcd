/* SPDX-License-Identifier: MIT */
/*
 * Terminal progress lines (progress.h).
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "lib/progress.h"

#define DELAY_US 500000		/* quick work shows nothing */
#define EVERY_US 100000

struct progress {
	char *what, *unit;
	uint64_t total;
	int64_t show_after, next;
	bool shown;
};

struct progress *progress_new(const char *what, const char *unit, uint64_t total)
{
	const char *mode = getenv("IBEMU_PROGRESS");
	bool always = mode && !strcmp(mode, "always");
	struct progress *p;

	if ((mode && !strcmp(mode, "never")) || !isatty(STDERR_FILENO))
		return NULL;
	p = g_new0(struct progress, 1);
	p->what = g_strdup(what);
	p->unit = g_strdup(unit);
	p->total = total;
	p->show_after = g_get_monotonic_time() + (always ? 0 : DELAY_US);
	p->next = p->show_after;
	return p;
}

void progress_update(struct progress *p, uint64_t done)
{
	int64_t now;

	if (!p || (now = g_get_monotonic_time()) < p->next)
		return;
	p->next = now + EVERY_US;
	p->shown = true;
	fprintf(stderr, "\r%s: %" PRIu64 " of %" PRIu64 " %s (%u%%)\033[K", p->what, done,
		p->total, p->unit, p->total ? (unsigned)(done * 100 / p->total) : 100);
	fflush(stderr);
}

void progress_done(struct progress *p)
{
	if (!p)
		return;
	if (p->shown)
		fputs("\r\033[K", stderr);	/* leave the terminal as it was */
	g_free(p->what);
	g_free(p->unit);
	g_free(p);
}
