/* SPDX-License-Identifier: MIT */
/*
 * What devfile.c (umad, issm) and devfile_verbs.c (the verbs files) share:
 * the table of one kind of file's operations and the parking of requests
 * that are answered later (blocking reads, issm opens).
 */
#ifndef IBEMU_DEV_DEVFILE_PRIV_H
#define IBEMU_DEV_DEVFILE_PRIV_H

#include "dev/devfile.h"

/* A request held for a later reply. */
struct parked {
	fuse_req_t req;
	size_t size;		/* parked read: the first piece's size */
	size_t count;		/* parked read: the call's (usercall.h) */
	GQueue *owner;		/* parked read: its open file's queue */
	struct umad_dev *dev;	/* parked issm open */
	struct issm_fwd *fwd;	/* parked forwarded issm open: its file */
	void *pending;		/* ... and its ask (umad_backend.h) */
	bool interrupted;
	struct devfiles *df;
};

struct devfiles {
	struct umad_host *host;	/* whose issm waits end here, or NULL */
	guint idle;		/* pending flush of interrupted requests */
	GQueue issm_waiters;	/* struct parked * */
	GQueue all_reads;	/* every parked read, for interrupts */
	devfile_reply_open_fn reply_open;	/* NULL: fuse_reply_open */
	void *reply_open_data;
};

/* Answer an open of a device file, through the front-end's hook if any. */
void devfile_reply_open(struct devfiles *df, fuse_req_t req, const struct fuse_file_info *fi);

/*
 * Hold @req for a later reply. NULL if it was interrupted already: then it
 * has been answered EINTR here, outside the interrupt callback.
 */
struct parked *devfile_park(fuse_req_t req, struct devfiles *df);
/* A parked read waits on @owner (its file's queue) until answered or
 * interrupted (then answered EINTR and freed for the caller). */
void devfile_park_read(struct parked *p, GQueue *owner);
/* Take a parked read off its queues before answering it. */
void devfile_unpark_read(struct parked *p);

/* Answer a poll with @revents; keep @ph in *@held (replacing the one held)
 * only when it is not readable yet, to be told by devfile_poll_notify(). */
void devfile_poll_reply(fuse_req_t req, struct fuse_pollhandle *ph,
			struct fuse_pollhandle **held, unsigned revents);
/* The file became readable: wake the poller *@held, if any, once. */
void devfile_poll_notify(struct fuse_pollhandle **held);
/*
 * Something was queued on a file (its wake-up callback): while
 * @readable(@file) holds, answer its parked reads in @reads in order with
 * @reply (EINTR for one interrupted meanwhile), then wake its poller.
 */
void devfile_wake_reads(GQueue *reads, struct fuse_pollhandle **held,
			bool (*readable)(void *file),
			void (*reply)(void *file, const struct parked *p), void *file);
/* A file with parked reads on @reads and poll handle @held is released:
 * answer the reads EINTR and drop the handle. */
void devfile_closing(GQueue *reads, struct fuse_pollhandle *held);

/* One kind of file, as a kernel struct file_operations. */
struct devfile_ops {
	void (*open)(struct devfiles *df, fuse_req_t req, struct vnode *v,
		     struct fuse_file_info *fi);
	void (*read)(struct devfiles *df, fuse_req_t req, struct vnode *v, size_t size,
		     off_t off, struct fuse_file_info *fi);
	void (*write)(fuse_req_t req, struct vnode *v, const char *buf, size_t size, off_t off,
		      struct fuse_file_info *fi);
	void (*ioctl)(fuse_req_t req, struct vnode *v, unsigned int cmd,
		      struct fuse_file_info *fi, const void *in_buf, size_t in_bufsz,
		      size_t out_bufsz);
	void (*poll)(fuse_req_t req, struct vnode *v, struct fuse_file_info *fi,
		     struct fuse_pollhandle *ph);
	void (*release)(struct devfiles *df, fuse_req_t req, struct vnode *v,
			struct fuse_file_info *fi);
};

/* The ops of a file that has none of that kind (devfile.c). */
void devfile_no_read(struct devfiles *df, fuse_req_t req, struct vnode *v, size_t size,
		     off_t off, struct fuse_file_info *fi);
void devfile_no_write(fuse_req_t req, struct vnode *v, const char *buf, size_t size,
		      off_t off, struct fuse_file_info *fi);
void devfile_no_ioctl(fuse_req_t req, struct vnode *v, unsigned int cmd,
		      struct fuse_file_info *fi, const void *in_buf, size_t in_bufsz,
		      size_t out_bufsz);
void devfile_no_poll(fuse_req_t req, struct vnode *v, struct fuse_file_info *fi,
		     struct fuse_pollhandle *ph);

/* devfile_verbs.c: the command file and the async event file. */
extern const struct devfile_ops devfile_vcmd_ops, devfile_vevents_ops;
/* devfile_ucma.c: the rdma_cm command file of namespace mode. */
extern const struct devfile_ops devfile_ucma_ops;

#endif
