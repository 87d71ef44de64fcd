/* SPDX-License-Identifier: MIT */
/* What remote.c shares with remote_umad.c (many hosts, the attaching side). */
#ifndef IBEMU_FAST_REMOTE_PRIV_H
#define IBEMU_FAST_REMOTE_PRIV_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "dev/umad_backend.h"
#include "fast/remote.h"

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

/* Open @name (a device, or a verbs file's path) at the emulator, on a
 * channel of its own, into @f, listed in @files, its datagrams taken by
 * @take: 0, or -ENODEV (none there), -EIO (the emulator is gone). */
int remote_file_open(struct remote *r, GQueue *files, struct remote_file *f, const char *name,
		     int flags, remote_take_fn take);
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
/* Every file of @files sees the emulator gone now (remote_gone()). */
void remote_files_gone(GQueue *files);
/* Their device is freed: they name no list any more. */
void remote_files_orphan(GQueue *files);

/* remote_umad.c: the backend of the mirror's umad files (VN_UMAD_FWD),
 * named @name ("umad0") at the emulator; freed by remote_umad_dev_free. */
struct umad_fwd *remote_umad_dev_new(struct remote *r, const char *name);
void remote_umad_dev_free(void *fwd);
/* Its open files see the emulator gone now (remote_gone()). */
void remote_umad_dev_gone(struct umad_fwd *fwd);
/* remote_issm.c: the same for its issm files (VN_ISSM_FWD), "issm0". */
struct issm_fwd *remote_issm_dev_new(struct remote *r, const char *name);
void remote_issm_dev_free(void *fwd);
/* remote_verbs.c: the same for a verbs command or event file (VN_VCMD_FWD,
 * VN_VEVENTS_FWD), at @path in the emulator's sysfs. */
struct verbs_fwd;
struct verbs_fwd *remote_verbs_dev_new(struct remote *r, const char *path);
void remote_verbs_dev_free(void *fwd);
void remote_verbs_dev_gone(struct verbs_fwd *fwd);
/* remote_ucma.c: the same for the rdma_cm file (VN_UCMA_FWD), at @path. */
struct ucma_fwd;
struct ucma_fwd *remote_ucma_dev_new(struct remote *r, const char *path);
void remote_ucma_dev_free(void *fwd);
void remote_ucma_dev_gone(struct ucma_fwd *fwd);

#endif
