/* SPDX-License-Identifier: MIT */
/* What remote.c shares with remote_file.c (many hosts, the attaching side). */
#ifndef IBEMU_SOCKET_REMOTE_PRIV_H
#define IBEMU_SOCKET_REMOTE_PRIV_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "kernel/kfile.h"
#include "socket/remote.h"

/* An emulator that does not answer within this is taken as gone. */
#define REMOTE_ANSWER_TIMEOUT_MS	10000

/* One request on channel @ch (with @fd passed beside, unless -1), its
 * answer left to the caller: 0, or -EIO (the emulator is gone). */
int remote_send(int ch, uint32_t op, uint32_t flags, uint64_t arg, const void *payload,
		size_t n, int fd);
/*
 * One request on channel @ch (with @fd passed beside, unless -1) and its
 * answer: ret (or -EIO, -ETIMEDOUT of the transport), its out bytes in
 * *@out (g_free; all of them, then a NUL) if @out, an fd passed back in
 * *@fd_out (else closed).
 */
int64_t remote_ask(int ch, uint32_t op, uint32_t flags, uint64_t arg, const void *payload,
		   size_t n, int fd, char **out, size_t *out_len, int *fd_out, int timeout_ms);
/* A channel to the attached host's files (FAST_ADOPT); -errno. */
int remote_adopted_channel(struct remote *r);

/*
 * remote_file.c: a device file of the mirror's that another emulator
 * serves, any kind: what its vnode names with remote_fops (kernel/kfile.h).
 * @name is what FAST_OPEN names there: a device ("umad0", "issm0"), or a
 * file's path in the emulator's sysfs.
 */
struct remote_dev {
	struct kfile_node node;	/* { remote_fops, itself }: a command file's lower half */
	struct remote *r;
	char *name;
	GQueue files;		/* struct remote_file *, open or being opened */
};

/* The forwarding table: remote_fops is a verbs context's, below
 * uverbs_cmd_fops (&d->node); remote_fops_of(@kind) the same for a file
 * of @kind (kernel/kfile.h), with its name, mode and character device and
 * no POLLOUT where it has no write, made on first need and kept in
 * @forwarders (kind -> table: g_free them with it). */
extern const struct kfile_ops remote_fops;
const struct kfile_ops *remote_fops_of(GHashTable *forwarders, const struct kfile_ops *kind);

struct remote_dev *remote_dev_new(struct remote *r, const char *name);
void remote_dev_free(void *d);
/* Its open files see the emulator gone now (remote_gone()). */
void remote_dev_gone(struct remote_dev *d);

#endif
