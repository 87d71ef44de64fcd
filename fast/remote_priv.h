/* SPDX-License-Identifier: MIT */
/* What remote.c shares with remote_umad.c (many hosts, the attaching side). */
#ifndef IBEMU_FAST_REMOTE_PRIV_H
#define IBEMU_FAST_REMOTE_PRIV_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "fast/remote.h"
#include "kernel/kfile.h"

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
 * remote_file.c: an open file of the mirror's that another emulator serves
 * (remote_umad.c, remote_verbs.c, remote_ucma.c embed it first): its channel there, the
 * data socket of what it queues, what was taken from that and not read
 * yet, and who to tell when something comes.
 */
struct remote_file;
/* Take one datagram off f->data into f->q (adding its bytes to
 * f->q_bytes): false when none is there, or at the end (f->gone set). */
typedef bool (*remote_take_fn)(struct remote_file *f);

struct remote_file {
	GList link;		/* in its device's open files */
	GQueue *files;		/* that list; NULL once the device is freed */
	int chan, data;
	guint watch;		/* on data, while what comes is taken */
	bool gone;		/* the emulator hung up: reads end in EIO */
	remote_take_fn take;
	GQueue q;		/* taken, not yet read: the file's own items */
	size_t q_bytes;		/* their bytes (take adds, remote_file_read_done
				 * takes off) */
	void (*wake)(void *);
	void *wake_ctx;
};

/* Open @d's file at the emulator, on a channel of its own, into @f,
 * listed in d->files, its datagrams taken by @take: 0, or -ENODEV (none
 * there), -EIO (the emulator is gone). */
struct remote_dev;
int remote_file_open(struct remote_dev *d, struct remote_file *f, int flags, remote_take_fn take);
/* Call @fn(@ctx) whenever something is taken (or the end comes), from now. */
void remote_file_set_wakeup(struct remote_file *f, void (*fn)(void *), void *ctx);
/* Something to read, or the end to say. */
bool remote_file_readable(const struct remote_file *f);
/* A read took @n bytes' worth off f->q: taking resumes below the bound. */
void remote_file_read_done(struct remote_file *f, size_t n);
/* Its last close: unlisted, the channel and data socket closed, what is
 * still queued freed with @free_item. */
void remote_file_close(struct remote_file *f, GDestroyNotify free_item);
/* A request on its channel and the answer (remote_ask); a channel that
 * fails or times out is the emulator gone, as the kernel fails calls on a
 * removed device: EIO. */
int64_t remote_file_ask(struct remote_file *f, uint32_t op, uint32_t flags, uint64_t arg,
			const void *in, size_t n, int fd, char **out, size_t *out_len);

/*
 * A device file of the mirror's that another emulator serves: what its
 * vnode names (kernel/kfile.h), with the table of its kind's forwarder
 * (remote_umad.c, remote_issm.c, remote_verbs.c, remote_ucma.c). @name is
 * what FAST_OPEN names there: a device ("umad0", "issm0"), or a file's
 * path in the emulator's sysfs (fast/fastpath_verbs.h).
 */
struct remote_dev {
	struct kfile_node node;	/* { its table, itself }: a command file's lower half */
	struct remote *r;
	char *name;
	GQueue files;		/* struct remote_file *, open */
	GQueue asks;		/* remote_issm.c's opens, asked or held */
	bool events;		/* remote_verbs.c: an async event file */
};

struct remote_dev *remote_dev_new(struct remote *r, const struct kfile_ops *ops,
				  const char *name);
void remote_dev_free(void *d);
/* Its open files see the emulator gone now (remote_gone()). */
void remote_dev_gone(struct remote_dev *d);
/* Its issm opens, still held by the front-end, outlive it (at exit). */
void remote_issm_orphan(struct remote_dev *d);

/* The forwarders: their device is a struct remote_dev. A verbs command
 * file is uverbs_cmd_fops over remote_verbs_fops (&d->node). */
extern const struct kfile_ops remote_umad_fops, remote_issm_fops, remote_verbs_fops,
	remote_ucma_fops;

#endif
