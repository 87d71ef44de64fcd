/* SPDX-License-Identifier: MIT */
/*
 * One kind of device file, as the kernel's struct file_operations: the
 * module that owns the kind defines its table (kernel/umad_fops.c's
 * umad_fops and issm_fops as user_mad.c's umad_fops and umad_sm_fops,
 * kernel/uverbs_fops.c's as ib_uverbs', kernel/ucma.c's ucma_fops), and
 * every transport serves any table the same way: dev/devfile.c as FUSE
 * and CUSE files, socket/ over its sockets, socket/remote_file.c forwards them.
 * A device file is a pair { ops, dev } (struct kfile_node); an open is
 * the opaque pointer @open gives back. docs/architecture.md "Device
 * files" says how a kind is added.
 *
 * Every call runs on the emulator's event loop. Where the kernel would
 * sleep (an issm open while another holds it, a command the provider must
 * finish in its own process) the call says KFILE_LATER and answers through
 * the struct kfile_wait the transport passed, from the event loop, unless
 * the transport cancels it first (an interrupted open).
 */
#ifndef IBEMU_KERNEL_KFILE_H
#define IBEMU_KERNEL_KFILE_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* open() or write(): the answer comes later, through the wait. No call
 * returns it otherwise: it is the kernel's -EIOCBQUEUED, no errno. */
#define KFILE_LATER	(-529)

/* The longest write any table takes (ib_umad's, an RMPP message): what a
 * transport that gathers a write before it knows the table's mind may
 * gather. */
#define KFILE_WRITE_MAX	(512u << 20)

/* The largest ioctl argument a table may take: _IOC_SIZE's 14 bits. */
#define KFILE_IOCTL_MAX	16383

struct kfile_wait {
	/* The call's answer: an open's 0 and its file (or -errno, file
	 * NULL); a write's byte count or -errno. */
	void (*done)(struct kfile_wait *w, int64_t ret, void *file);
	void *layer;	/* a stacked table's own, while it waits below */
};

/* Who opens, for `ctl status` and the kernel's checks. */
struct kfile_opener {
	int pid;
	int flags;		/* open(2)'s: O_NONBLOCK matters */
	const char *via;	/* the transport: "fuse", "cuse", "fast" */
};

struct kfile_ops {
	const char *name;	/* the kind, as `ctl status` says it */
	/* Its letter in an attached host's listing (FAST_SYSFS_LIST, with
	 * kfile_kinds[]); 0: a table only ever below another. */
	char code;
	/* Its calls go to another emulator (socket/remote_file.c): its files
	 * are not this one's to list to others. */
	bool forwards;
	bool chardev;		/* a /dev node of its own in CUSE mode */
	bool everyone;		/* mode 0666 (rdma-core's udev rules), else 0600 */
	/*
	 * The device is a struct kfile_node: a layer over another file, what
	 * only the host of the opening process can do (uverbs_cmd_fops). A
	 * transport that carries calls from another host serves the file
	 * below; that host keeps the layer.
	 */
	bool stacked;
	/*
	 * A program's next call mostly follows the answer to its last within
	 * microseconds (umad: write, then the next write): a transport may
	 * look for it a while before it sleeps. Not a verbs context's, whose
	 * next call waits for the peer that a look would take the CPU from.
	 */
	bool quick_calls;
	/* 0 with *@file set, -errno, or KFILE_LATER (then @w answers). */
	int (*open)(void *dev, const struct kfile_opener *who, struct kfile_wait *w,
		    void **file);
	/* An open answered later was interrupted: @w is not answered. */
	void (*cancel)(void *dev, struct kfile_wait *w);
	/* The last close; writes waiting are answered (EIO) first. */
	void (*release)(void *file);
	/*
	 * NULL: EINVAL. Else bytes, -EAGAIN when nothing is queued (the
	 * transport blocks the reader), or -errno; *@filled says how much of
	 * @buf the caller sees even on an error (ib_umad's ENOSPC leaves the
	 * header and first segment there).
	 */
	ssize_t (*read)(void *file, void *buf, size_t count, size_t *filled);
	/* The most the next read writes in @buf (NULL: its count). */
	size_t (*read_len)(const void *file);
	/* NULL: EINVAL. Else bytes, -errno, or KFILE_LATER (@w answers);
	 * @w is NULL when the caller cannot wait. */
	ssize_t (*write)(void *file, const void *buf, size_t count, struct kfile_wait *w);
	/* A write answered later was interrupted (its process is dying, or
	 * a signal came): @w is not answered. NULL: the FUSE and CUSE
	 * transports let no write of the kind wait. */
	void (*cancel_write)(void *file, struct kfile_wait *w);
	/* Whether a write of @count bytes could be taken: 0 or -errno, before
	 * a transport gathers a long one (NULL: any). */
	int (*check_write_size)(void *file, size_t count);
	/* NULL: ENOTTY. @arg holds the argument's _IOC_SIZE bytes (at most
	 * KFILE_IOCTL_MAX); *@out_len says how many go back, even with an
	 * error (REGISTER_AGENT2's flags). */
	int (*ioctl)(void *file, unsigned cmd, void *arg, size_t *out_len);
	/* NULL: POLLIN | POLLOUT, the VFS's default. Else the mask now. */
	unsigned (*poll)(const void *file);
	/* Call @fn(@ctx) whenever something is queued to read (NULL: never). */
	void (*set_wakeup)(void *file, void (*fn)(void *), void *ctx);

	/* For transports that take what is queued ahead of the reader and
	 * answer writes early (socket/fastpath_file.c); all may be NULL. */
	/* Who holds the file now, and by what way (`ctl status`). */
	void (*set_client)(void *file, int pid, const char *via);
	/* Call @fn(@ctx) once a write in progress is sure to succeed, before
	 * it is carried (the writer may go on meanwhile). */
	void (*set_accepted)(void *file, void (*fn)(void *), void *ctx);
	/* Bytes taken from the queue but not read yet, counted against the
	 * file's limit on what it holds unread. */
	void (*set_outside)(void *file, size_t bytes);
	/* A read too short for the head item but not for this many header
	 * bytes and 256 more gets those and ENOSPC (ib_umad's long reads,
	 * abi/fast_wire.h fast_pkt_read); NULL or 0: such a read is EINVAL. */
	unsigned (*split_hdr)(const void *file);
};

/* A device file: its kind's table and its device. */
struct kfile_node {
	const struct kfile_ops *ops;
	void *dev;
};

/* Whether @file has something to read (poll says POLLIN). */
static inline bool kfile_readable(const struct kfile_ops *ops, const void *file)
{
	return ops->poll && (ops->poll(file) & POLLIN);
}

/* The tables of this emulator's modules. */
extern const struct kfile_ops umad_fops, issm_fops;	/* dev: struct umad_dev * */
extern const struct kfile_ops uverbs_ctx_fops;		/* dev: struct uverbs_dev * */
extern const struct kfile_ops uverbs_events_fops;	/* dev: struct uverbs_dev * */
extern const struct kfile_ops uverbs_cmd_fops;		/* dev: struct kfile_node * */
extern const struct kfile_ops ucma_fops;		/* dev: struct ucma * */

/* Every kind a device file of the tree may be (kernel/kfile.c), the one
 * list a transport looks in when it names a kind by its code: the
 * tables above but uverbs_ctx_fops (only ever below uverbs_cmd_fops).
 * NULL-terminated. */
extern const struct kfile_ops *const kfile_kinds[];
/* The kind whose code is @code, or NULL. */
const struct kfile_ops *kfile_kind(char code);

#endif
