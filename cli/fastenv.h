/* SPDX-License-Identifier: MIT */
/*
 * The environment that puts a program on the fast path (docs/fast-path.md):
 * $IBEMU_FAST names the emulator's fast socket, and LD_PRELOAD loads
 * libibemu-fast.so, which opens the umad files through it. `ibemu run`
 * and `ibemu exec` give it to what they start unless told not to
 * (--no-fast-path, or IBEMU_FAST_PATH=0 in their environment).
 */
#ifndef IBEMU_CLI_FASTENV_H
#define IBEMU_CLI_FASTENV_H

#include <glib.h>

/* The library beside this ibemu (a build tree) or where `make install`
 * put it, or NULL. Looked up once: call it first while /proc/self/exe
 * still reads right (before entering namespaces). */
const char *fastenv_library(void);
/*
 * @envp with $IBEMU_FAST set to @fast_sock and, if @preload (and not
 * IBEMU_FAST_PATH=0 here), the library
 * added to LD_PRELOAD (once) and ASan told to accept a preload before its
 * runtime (verify_asan_link_order=0: ASan refuses to start otherwise);
 * if not, IBEMU_FAST_PATH=0, which turns the library off where it is
 * preloaded already (`ibemu exec --no-fast-path` inside a run). Takes
 * @envp; returns the new array.
 */
char **fastenv_apply(char **envp, const char *fast_sock, gboolean preload);

#endif
