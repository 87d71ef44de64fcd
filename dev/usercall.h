/* SPDX-License-Identifier: MIT */
/*
 * What a FUSE read or write request does not say: the read(2), readv(2),
 * write(2) or writev(2) the client thread is blocked in, as
 * /proc/TID/syscall shows it, and its buffers.
 *
 * The kernel's ib_umad moves one message per call whatever its size, but
 * FUSE and CUSE hand a call larger than one request to the server in
 * pieces (fs/fuse/file.c fuse_direct_io(): at most max_write bytes or
 * max_pages pages a request, at offsets 0, n1, n1+n2, ... of the call),
 * and an error reply carries no data. Knowing the whole call lets the
 * device core move one message per call and write the ENOSPC header
 * (docs/design-notes.md "Long reads and writes").
 *
 * Needs ptrace rights over the client (process_vm_readv/writev): namespace
 * mode's clients are our descendants, CUSE mode's daemon is root.
 */
#ifndef IBEMU_DEV_USERCALL_H
#define IBEMU_DEV_USERCALL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

struct user_call {
	size_t count;		/* bytes the call moves at most */
	unsigned niov;
	struct iovec *iov;	/* the caller's buffers, its addresses */
};

/*
 * Fill @c with the call thread @tid is blocked in, which must be a read
 * (@write false) or a write. 0, or -errno: -ENOENT for no such thread,
 * -EBUSY when it is not (yet) asleep in such a call, -EPERM.
 */
int user_call_get(pid_t tid, bool write, struct user_call *c);
void user_call_clear(struct user_call *c);

/* Copy the first @len bytes of the caller's buffers into @dst, or @src
 * into them. 0 or -errno (-EFAULT for a short copy). */
int user_call_read(pid_t tid, const struct user_call *c, void *dst, size_t len);
int user_call_write(pid_t tid, const struct user_call *c, const void *src, size_t len);

#endif
