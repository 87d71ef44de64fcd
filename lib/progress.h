/* SPDX-License-Identifier: MIT */
/*
 * Progress of long work (loading or generating a very large fabric) on
 * standard error, when that is a terminal and the work has already taken
 * a while: one line rewritten in place, at most ten times a second, and
 * wiped when done. Silent otherwise, so logs and pipes stay clean.
 * IBEMU_PROGRESS=always shows it after no delay (for tests); =never hides it.
 */
#ifndef IBEMU_LIB_PROGRESS_H
#define IBEMU_LIB_PROGRESS_H

#include <stdint.h>

struct progress;

/* @what: "reading ft.net"; @unit: "lines". NULL when it will never show. */
struct progress *progress_new(const char *what, const char *unit, uint64_t total);
void progress_update(struct progress *p, uint64_t done);
void progress_done(struct progress *p);

#endif
