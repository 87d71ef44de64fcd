/* SPDX-License-Identifier: MIT */
/*
 * The device files of both front-ends: namespace mode's FUSE files
 * (fusefs.c) and CUSE mode's character devices (cusedev.c). Each call
 * takes the libfuse request and a VN_FILE vnode and answers it over the
 * vnode's table (kernel/kfile.h), now or later: blocking reads and opens
 * the table holds (an issm's) are parked until something comes, a close
 * or a FUSE_INTERRUPT (docs/fuse-cuse.md). Any kind, any device: this
 * emulator's, or another's forwarded (socket/remote_file.c).
 */
#ifndef IBEMU_DEV_DEVFILE_H
#define IBEMU_DEV_DEVFILE_H

#include <fuse_lowlevel.h>

#include "dev/vfs.h"

/* The requests parked across all devices of one front-end. */
struct devfiles;

struct devfiles *devfiles_new(void);
void devfiles_free(struct devfiles *df);

/*
 * Answer the opens of device files with @fn instead of fuse_reply_open
 * (namespace mode adds FOPEN_STREAM, which libfuse cannot set: fusefs.c),
 * @unique the request's id as devfile_open was given it (0: unknown).
 */
typedef void (*devfile_reply_open_fn)(void *data, fuse_req_t req,
				      const struct fuse_file_info *fi, uint64_t unique);
void devfiles_set_reply_open(struct devfiles *df, devfile_reply_open_fn fn, void *data);

/* @unique: the request's id, for an answer written later (0: unknown). */
void devfile_open(struct devfiles *df, fuse_req_t req, struct vnode *v,
		  struct fuse_file_info *fi, uint64_t unique);
void devfile_read(struct devfiles *df, fuse_req_t req, struct vnode *v,
		  size_t size, off_t off, struct fuse_file_info *fi);
void devfile_write(fuse_req_t req, struct vnode *v, const char *buf, size_t size,
		   off_t off, struct fuse_file_info *fi);
/* Restricted ioctls: the kernel sized in_buf and out_bufsz from @cmd. */
void devfile_ioctl(fuse_req_t req, struct vnode *v, unsigned int cmd,
		   struct fuse_file_info *fi, const void *in_buf, size_t in_bufsz,
		   size_t out_bufsz);
void devfile_poll(fuse_req_t req, struct vnode *v, struct fuse_file_info *fi,
		  struct fuse_pollhandle *ph);
void devfile_release(struct devfiles *df, fuse_req_t req, struct vnode *v,
		     struct fuse_file_info *fi);

#endif
