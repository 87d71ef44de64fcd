/* SPDX-License-Identifier: MIT */
/*
 * Memory the emulator shares with a client (a fast-path slot, a verbs
 * ring, the direct path's inboxes and sub-rings).
 */
#ifndef IBEMU_LIB_SHM_H
#define IBEMU_LIB_SHM_H

#include <stddef.h>

/* @size bytes of memory a client maps too: a memfd sealed at that size,
 * so that a client cannot shrink it under our next look (SIGBUS), mapped
 * here. The map, with the memfd in *@memfd (ours to close once passed);
 * NULL with errno. */
void *shm_sealed_map(const char *name, size_t size, int *memfd);

#endif
