/* SPDX-License-Identifier: MIT */
/*
 * The kernel's ib_umad + ib_mad as a process sees them (docs/umad.md §3, §4 and §7):
 * per-port devices (umadN/issmN), per-open files with up to 32 agents,
 * registration rules shared across processes on a port, TID rewriting,
 * response matching, send timeouts and retries ending in the ETIMEDOUT
 * packet, and the read/write/poll/ioctl semantics. The device files (dev/, socket/)
 * call these functions from their file operations.
 *
 * Lifetime: the host owns its devices; a device is alive for the whole run.
 * A file owns its agents, their outstanding sends and its receive queue;
 * umad_release() frees all of them at once (the kernel's close).
 */
#ifndef IBEMU_KERNEL_UMAD_H
#define IBEMU_KERNEL_UMAD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "fabric/fabric.h"
#include "kernel/host.h"
#include "lib/timerq.h"

#define UMAD_MAX_AGENTS		32	/* IB_UMAD_MAX_AGENTS */
#define UMAD_RECV_LIST_MAX	200000	/* MAX_UMAD_RECV_LIST_SIZE */
#define UMAD_HDR_SIZE		64	/* struct ib_user_mad_hdr */
#define UMAD_HDR_SIZE_OLD	56	/* struct ib_user_mad_hdr_old */
/*
 * Our limits where the kernel has only its memory: the largest write (an
 * RMPP message of 512 MiB, 16 times the 31.5 MB of all PathRecords of a
 * 648-HCA fat tree) and the bytes a file's receive queue may hold beside
 * MAX_UMAD_RECV_LIST_SIZE packets. Past them: ENOMEM, or the packet is
 * dropped as past the kernel's list limit (README "Limits").
 */
#define UMAD_MAX_WRITE		(512u << 20)
#define UMAD_RECV_BYTES_MAX	(1024u << 20)

struct umad_host;
struct umad_dev;
struct umad_file;

/* The MAD layer of host @hw: a umad device for each of its ports (each CA
 * port, or port 0 of a switch), attached before; a client of @hw for the
 * MADs that reach them (kernel/host.h). */
struct umad_host *umad_host_new(struct host *hw);
void umad_host_free(struct umad_host *h);
/* Other receive queue limits than UMAD_RECV_LIST_MAX/_BYTES_MAX (tests). */
void umad_host_set_recv_limits(struct umad_host *h, unsigned packets, size_t bytes);
unsigned umad_host_ndevs(const struct umad_host *h);
struct umad_dev *umad_host_dev(struct umad_host *h, unsigned index);
/* The host whose ports these are; its CAs by name: host_ca(). */
struct host *umad_host_hw(const struct umad_host *h);

unsigned umad_dev_index(const struct umad_dev *d);	/* N in umadN */
struct port *umad_dev_port(const struct umad_dev *d);
const char *umad_dev_ca_name(const struct umad_dev *d);

struct umad_file *umad_open(struct umad_dev *d);
void umad_release(struct umad_file *file);
/* Who opened @file (a pid as the emulator sees it) and through which
 * front-end (a static string: "fuse", "cuse", "fast"), for `ctl status`. */
void umad_set_client(struct umad_file *file, int pid, const char *path);
typedef void (*umad_file_fn)(void *ctx, unsigned dev_index, int pid, const char *path);
void umad_host_foreach_file(struct umad_host *h, umad_file_fn fn, void *ctx);
/* Called whenever a packet is queued on @file (to wake readers, poll). */
void umad_set_wakeup(struct umad_file *file, void (*fn)(void *), void *ctx);
/* Called in umad_write once the write is sure to succeed, before the
 * packet enters the fabric: a front-end can answer its caller there and
 * let the fabric's work overlap the caller's (the kernel's write returns
 * once the send is posted, not delivered). */
void umad_set_accepted(struct umad_file *file, void (*fn)(void *), void *ctx);

/*
 * ioctl: @arg holds the input and receives the output (as large as the
 * command's size). Returns 0 or -errno; *out_len is how many bytes of @arg
 * to copy back, which can be non-zero on failure (REGISTER_AGENT2 flags).
 */
int umad_ioctl(struct umad_file *file, unsigned cmd, void *arg, size_t *out_len);
ssize_t umad_write(struct umad_file *file, const void *buf, size_t count);
/* 0, or -ENOMEM (logged) for a write over UMAD_MAX_WRITE; umad_write checks
 * it too, a front-end before it gathers a long write. */
int umad_check_write_size(const struct umad_file *file, size_t count);
/*
 * -EAGAIN when empty, -EINVAL when @count is too small (packet kept), and
 * for a long RMPP message -ENOSPC with the header (its length field saying
 * what is needed) and the first 256 bytes written to @buf (docs/umad.md §4.8).
 */
ssize_t umad_read(struct umad_file *file, void *buf, size_t count);
bool umad_readable(const struct umad_file *file);
/* The count a read of the packet at the head needs (header included), or
 * 0 when none is queued. */
size_t umad_next_len(const struct umad_file *file);
/* Bytes a front-end has taken from the queue that its reader has not read
 * yet (the fast path's data socket): they count against the queue's byte
 * limit as if they were still in it. */
void umad_set_outside(struct umad_file *file, size_t bytes);
unsigned umad_hdr_size(const struct umad_file *file);

/* issm: one holder per port; 0 or -EAGAIN. Holding sets IsSM. */
int umad_issm_open(struct umad_dev *d);
void umad_issm_close(struct umad_dev *d);
bool umad_issm_held(const struct umad_dev *d);
/* A blocking open of @d's issm waits: @w is answered (0, @d) when the
 * holder lets go, first come first served, unless taken back first. */
struct kfile_wait;
void umad_issm_wait(struct umad_dev *d, struct kfile_wait *w);
void umad_issm_unwait(struct umad_dev *d, struct kfile_wait *w);

#endif
