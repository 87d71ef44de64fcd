/* SPDX-License-Identifier: MIT */
/*
 * The provider in front of a library's own calls into libc, where
 * ibemu's files are not what that library expects (a character device,
 * an ioctl the kernel answers): librdmacm's (interpose_rdmacm.c) and
 * libibverbs' (import.c). Only the GOT entries of the library whose path
 * contains @lib are changed, once it is loaded; the rest of the process
 * calls libc as before.
 */
#ifndef IBEMU_VERBS_GOT_H
#define IBEMU_VERBS_GOT_H

#include <stddef.h>

struct ibemu_got_hook {
	const char *name;	/* the libc symbol the library imports */
	void *fn;		/* what it calls instead */
};

void ibemu_got_patch(const char *lib, const struct ibemu_got_hook *hooks, size_t n);

#endif
