/* SPDX-License-Identifier: MIT */
/* Where the files ibemu ships beside its binary are (the verbs provider,
 * the preloaded library). */
#ifndef IBEMU_LIB_SHIPPED_H
#define IBEMU_LIB_SHIPPED_H

/* A file this ibemu ships: @rel beside the binary (a build tree), else
 * @installed (where `make install` put it); NULL if neither is there. */
char *shipped_find(const char *rel, const char *installed);

#endif
