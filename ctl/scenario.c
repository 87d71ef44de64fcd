/* SPDX-License-Identifier: MIT */
/* Scenario files; see scenario.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <string.h>

#include "ctl/scenario.h"
#include "lib/log.h"
#include "lib/timerq.h"

struct step {
	struct timer timer;
	uint64_t at_ms;
	char **argv;
	char *where;		/* "file:line" */
	struct scenario *sc;
};

struct scenario {
	GPtrArray *steps;	/* struct step * */
	struct timerq *tq;	/* NULL until started */
	const struct scenario_hooks *hooks;
	void *ctx;
	unsigned depth;		/* started by a step of a scenario this deep */
	unsigned pending;	/* steps not yet run */
};

static void step_free(gpointer p)
{
	struct step *st = p;

	if (st->sc && st->sc->tq && timer_armed(&st->timer))
		timerq_cancel(st->sc->tq, &st->timer);
	g_strfreev(st->argv);
	g_free(st->where);
	g_free(st);
}

/* "2s", "2500ms", "1.5s"; -1 when it is not a time. */
static int64_t parse_time(const char *s)
{
	char *end;
	double v = g_ascii_strtod(s, &end);

	if (end == s || v < 0)
		return -1;
	if (!strcmp(end, "ms"))
		return (int64_t)v;
	if (!strcmp(end, "s"))
		return (int64_t)(v * 1000);
	return -1;
}

/* The file's text, if it is a regular file of a sensible size. Opened
 * without blocking, then checked: a FIFO's open would wait for a writer. */
static char *read_file(const char *path, GError **err)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	char *text = NULL;
	ssize_t n = -1;

	if (fd < 0 || fstat(fd, &st) < 0) {
		g_set_error(err, IBEMU_ERROR, 1, "%s: %s", path, g_strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		g_set_error(err, IBEMU_ERROR, 1, "%s: not a regular file", path);
	} else if (st.st_size > SCENARIO_MAX_BYTES) {
		g_set_error(err, IBEMU_ERROR, 1, "%s: %lld bytes, past the limit of %u for a scenario",
			    path, (long long)st.st_size, SCENARIO_MAX_BYTES);
	} else {
		text = g_malloc((size_t)st.st_size + 1);
		n = read(fd, text, (size_t)st.st_size);
		if (n < 0)
			g_set_error(err, IBEMU_ERROR, 1, "%s: %s", path, g_strerror(errno));
		else
			text[n] = 0;
	}
	if (fd >= 0)
		close(fd);
	if (n < 0)
		g_clear_pointer(&text, g_free);
	return text;
}

struct scenario *scenario_load(const char *path, GError **err)
{
	struct scenario *sc;
	char *text, **lines;
	unsigned i;

	if (!(text = read_file(path, err)))
		return NULL;
	sc = g_new0(struct scenario, 1);
	sc->steps = g_ptr_array_new_with_free_func(step_free);
	lines = g_strsplit(text, "\n", -1);
	g_free(text);
	for (i = 0; lines[i]; i++) {
		char *l = g_strstrip(lines[i]), **argv = NULL;
		struct step *st;
		int64_t ms;
		gint argc;

		if (!*l || *l == '#')
			continue;
		if (sc->steps->len >= SCENARIO_MAX_PENDING) {
			g_set_error(err, IBEMU_ERROR, 1, "%s:%u: more than %u steps in one scenario",
				    path, i + 1, SCENARIO_MAX_PENDING);
			g_strfreev(lines);
			scenario_free(sc);
			return NULL;
		}
		if (!g_shell_parse_argv(l, &argc, &argv, NULL) || argc < 3 ||
		    strcmp(argv[0], "at") || (ms = parse_time(argv[1])) < 0) {
			g_set_error(err, IBEMU_ERROR, 1,
				    "%s:%u: want \"at TIME COMMAND...\" with TIME like 2s or 500ms", path, i + 1);
			g_strfreev(argv);
			g_strfreev(lines);
			scenario_free(sc);
			return NULL;
		}
		st = g_new0(struct step, 1);
		st->at_ms = (uint64_t)ms;
		st->argv = g_strdupv(argv + 2);
		st->where = g_strdup_printf("%s:%u", path, i + 1);
		st->sc = sc;
		g_ptr_array_add(sc->steps, st);
		g_strfreev(argv);
	}
	g_strfreev(lines);
	return sc;
}

static void run_step(struct timer *t, void *ctx)
{
	struct step *st = ctx;
	struct scenario *sc = st->sc;
	GString *out = g_string_new(NULL);
	char *cmd = g_strjoinv(" ", st->argv);

	(void)t;
	/* A scenario this step starts is one deeper (ctl `scenario`). */
	if (sc->hooks->step(sc->ctx, sc->depth + 1, st->argv, out) < 0)
		g_warning("scenario %s: %s: %s", st->where, cmd, g_strchomp(out->str));
	else
		g_message("scenario %s: %s", st->where, cmd);
	g_free(cmd);
	g_string_free(out, TRUE);
	if (!--sc->pending)
		sc->hooks->done(sc->ctx, sc);	/* timerq allows the free */
}

void scenario_start(struct scenario *sc, struct timerq *tq, const struct scenario_hooks *hooks,
		    void *ctx, unsigned depth)
{
	unsigned i;

	sc->tq = tq;
	sc->hooks = hooks;
	sc->ctx = ctx;
	sc->depth = depth;
	sc->pending = sc->steps->len;
	for (i = 0; i < sc->steps->len; i++) {
		struct step *st = g_ptr_array_index(sc->steps, i);

		timer_init(&st->timer, run_step, st);
		timerq_arm(tq, &st->timer, st->at_ms * 1000);
	}
}

unsigned scenario_steps(const struct scenario *sc)
{
	return sc->steps->len;
}

void scenario_free(struct scenario *sc)
{
	if (!sc)
		return;
	g_ptr_array_free(sc->steps, TRUE);
	g_free(sc);
}
