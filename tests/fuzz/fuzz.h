/* SPDX-License-Identifier: MIT */
/*
 * Shared by the fuzz targets: GLib's log messages go nowhere (millions of
 * "did not enable P_Key index support" lines would cost more than the
 * code under test, and fill the disk). Criticals abort: a finding.
 */
#ifndef IBEMU_TESTS_FUZZ_H
#define IBEMU_TESTS_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* An input read in pieces: zeros past its end. */
struct fuzz_input {
	const uint8_t *p;
	size_t left;
};

static inline void fuzz_take(struct fuzz_input *in, void *buf, size_t n)
{
	size_t k = MIN(n, in->left);

	memset(buf, 0, n);
	memcpy(buf, in->p, k);
	in->p += k;
	in->left -= k;
}

static inline unsigned fuzz_take16(struct fuzz_input *in)
{
	uint8_t b[2];

	fuzz_take(in, b, 2);
	return (unsigned)b[0] | (unsigned)b[1] << 8;
}

/* The clock of a timerq the target drives: *ctx microseconds. */
static inline uint64_t fuzz_clock(void *ctx)
{
	return *(uint64_t *)ctx;
}

#endif
