/* SPDX-License-Identifier: MIT */
/*
 * A verbs context over the fast path (docs/verbs.md "Data path"): its
 * ring (fastpath_verbs.c); the direct path's fds (kernel/uverbs_direct.c,
 * abi/verbs_inbox.h) are passed by fastpath.c. The context itself is served as any file is
 * (fastpath_file.c): FAST_OPEN names its command file by its sysfs path,
 * and the context below that file is what the channel serves.
 */
#ifndef IBEMU_SOCKET_FASTPATH_VERBS_H
#define IBEMU_SOCKET_FASTPATH_VERBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fast_file;
struct fast_verbs;

/* @ff as a verbs context (made on first need): NULL when it is not one
 * (its table is not uverbs_ctx_fops) or no longer open. */
struct fast_verbs *fast_verbs_of(struct fast_file *ff);
/* FAST_VRING: its ring, the memfd in *@memfd (the caller passes and
 * closes it); @direct: it takes the direct path's packets too. 0 or
 * -errno. */
int fast_verbs_ring(struct fast_verbs *fv, bool direct, int *memfd);
/* The records of @b (@len bytes) from *@off on into the ring, as many as
 * fit; *@off moves past them. False when one did not fit: the provider's
 * byte on the data socket brings the file back (fastpath_file.c). */
bool fast_verbs_put(struct fast_verbs *fv, const uint8_t *b, size_t len, size_t *off);
/* The file is released: its ring and direct paths go. */
void fast_verbs_free(struct fast_verbs *fv);
#endif
