/* SPDX-License-Identifier: MIT */
/*
 * libibemu-fast.so, the fast path's client (docs/fast-path.md): preloaded
 * into the programs `ibemu run` and `ibemu exec` start, it opens the
 * emulated umad files over the emulator's socket ($IBEMU_FAST) instead of
 * FUSE. The program's fd is the file's data socket, so poll, select and
 * epoll work on it natively; reads take packets from it; writes and
 * ioctls go to the emulator on a hidden request channel, whose answer is
 * the errno the kernel would give. The emulator's umad core decides every
 * answer: this library only carries bytes.
 *
 * This header is the library's own: the fd table, the channel, the calls.
 */
#ifndef IBEMU_PRELOAD_FAST_H
#define IBEMU_PRELOAD_FAST_H

#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * An open umad file as this process holds it: shared by the fds dup'ed
 * from one open (refs), as the kernel shares one struct file. A forked
 * child inherits it with the parent's channel, which it must not use
 * (the answers would go to whichever process reads first): it makes its
 * own with FAST_ATTACH, told by the fork generation.
 */
struct fast_obj {
	int refs;		/* fds of this process naming it */
	int chan;		/* the request channel, or -1 (made when needed) */
	unsigned gen;		/* the fork generation the channel belongs to */
	int flags;		/* the open's flags (access mode) */
	char dev[32];		/* "umad0" */
	pthread_mutex_t chan_lock;	/* one request at a time on the channel */
	struct fast_slot *slot;	/* the channel's slot (slot.c), or NULL */
	uint32_t slot_seq;	/* the last request put there */
	int slot_refused;	/* asked, not given: the channel serves all */
	pthread_mutex_t read_lock;	/* a peek and its take are one step */
	struct fast_obj *next;	/* every object, for fork */
};

/* ---- fdtab.c: which fds are ours --------------------------------------- */

/* A slot holds the object of a data fd, or (tagged) of a channel fd. */
struct fast_obj *fdtab_data(int fd);
struct fast_obj *fdtab_chan(int fd);
void fdtab_set_data(int fd, struct fast_obj *o);
void fdtab_set_chan(int fd, struct fast_obj *o);
void fdtab_clear(int fd);
/* Call @fn for every fd in [first, last] the table names. */
void fdtab_foreach(unsigned first, unsigned last, void (*fn)(int fd));

/* ---- channel.c: requests ------------------------------------------------ */

extern unsigned fast_gen;	/* bumped in each forked child */

struct fast_obj *obj_new(int flags, const char *dev);
void obj_free(struct fast_obj *o);
/* Every object, to reset its locks in a forked child. */
void obj_foreach(void (*fn)(struct fast_obj *o));

/* Open @dev over the fast path: the data socket's fd, or -1 when the
 * fast path cannot serve it (then the caller opens the FUSE file). */
int fast_open(const char *dev, int flags);
/* Adopt @fd if it is an emulator's data socket (after exec): 0 if so. */
int fast_adopt(int fd);
/*
 * One request on @o's channel (made, or attached with @data_fd, first if
 * need be): its result (>= 0) or -errno; EIO when the emulator is gone.
 * @in travels inline or, past FAST_INLINE_MAX, in a memfd.
 */
long fast_request(struct fast_obj *o, int data_fd, uint32_t op, uint64_t arg, const void *in,
		  size_t in_len, void *out, size_t out_max);
/* The last fd of @o was closed: let the emulator release the file before
 * close returns, then forget @o. */
void fast_last_close(struct fast_obj *o);

/* ---- wait.c: how the library waits ----------------------------------- */

/*
 * Look this long for an answer on the channel before sleeping, when there
 * is more than one CPU and the last look did not come back empty-handed.
 */
#define FAST_SPIN_NS	20000
/* Look this long for an answer in the slot, giving the CPU away between
 * looks (wait.c says why no back-off is needed then). */
#define FAST_SLOT_SPIN_NS	100000
/* Look this long in poll on a data socket before sleeping, the same way. */
#define FAST_POLL_SPIN_NS	50000
long long fast_now_ns(void);
/* More than one CPU online: looking can pay. */
int fast_many_cpus(void);
int fast_may_spin(void);
void fast_spin_missed(void);
/* poll(2) when @fds names a data socket and there is time to look;
 * otherwise -2: the caller polls as usual. */
int fast_poll(struct pollfd *fds, nfds_t n, int timeout);

/* ---- slot.c: requests in shared memory --------------------------------- */

struct fast_slot;
/* Map the slot FAST_SLOT passed (the caller closes @memfd); NULL if not. */
struct fast_slot *slot_map(int memfd);
void slot_unmap(struct fast_slot *sl);
/* fast_request()'s exchange, in the slot (@seq: the object's counter). */
long slot_call(struct fast_slot *sl, uint32_t *seq, int chan, uint32_t op, uint64_t arg,
	       const void *in, size_t in_len, void *out, size_t out_max);

/* ---- io.c: the file operations ----------------------------------------- */

ssize_t fast_read(struct fast_obj *o, int fd, void *buf, size_t count);
ssize_t fast_write(struct fast_obj *o, int fd, const void *buf, size_t count);
int fast_ioctl(struct fast_obj *o, int fd, unsigned long cmd, void *arg);

/* ---- wrap.c: the real calls -------------------------------------------- */

int real_close(int fd);
int real_ioctl(int fd, unsigned long cmd, void *arg);

#endif
