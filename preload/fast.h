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
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Which file an fd is: its st_dev and st_ino (obj.c). */
struct fast_ident {
	dev_t dev;
	ino_t ino;
};

/*
 * An open umad file as this process holds it: shared by the fds dup'ed
 * from one open, as the kernel shares one struct file. A forked child
 * inherits it with the parent's channel, which it must not use (the
 * answers would go to whichever process reads first): it makes its own
 * with FAST_ATTACH, told by the fork generation.
 */
struct fast_obj {
	int refs;		/* fds naming it, and calls in progress (obj.c) */
	struct fast_ident data_id;	/* the data socket */
	int chan;		/* the request channel, or -1 (made when needed) */
	struct fast_ident chan_id;
	unsigned gen;		/* the fork generation the channel belongs to */
	int flags;		/* the open's flags (access mode) */
	char dev[32];		/* "umad0" */
	pthread_mutex_t chan_lock;	/* one request at a time on the channel */
	struct fast_slot *slot;	/* the channel's slot (slot.c), or NULL */
	uint32_t slot_seq;	/* the last request put there */
	int slot_refused;	/* asked, not given: the channel serves all */
	pthread_mutex_t read_lock;	/* a peek and its take are one step */
	struct fast_obj *next;	/* every object in use, for fork; or spare */
};

/* ---- fdtab.c: which fds are ours --------------------------------------- */

/* A slot holds the object of a data fd, or (tagged) of a channel fd. */
struct fast_obj *fdtab_data(int fd);
struct fast_obj *fdtab_chan(int fd);
void fdtab_set_data(int fd, struct fast_obj *o);
void fdtab_set_chan(int fd, struct fast_obj *o);
void fdtab_clear(int fd);
/* Empty @fd's slot in one step, saying what it held. */
void fdtab_take(int fd, struct fast_obj **data, struct fast_obj **chan);
/* Make @fd name @o (a data fd) in one step: what it held before. */
struct fast_obj *fdtab_replace_data(int fd, struct fast_obj *o, struct fast_obj **chan);
/* Empty @fd's slot if it still holds data object @o (or, with
 * fdtab_clear_chan_if, channel @o); whether it did. */
bool fdtab_clear_if(int fd, struct fast_obj *o);
bool fdtab_clear_chan_if(int fd, struct fast_obj *o);
/* Call @fn for every fd in [first, last] the table names. */
void fdtab_foreach(unsigned first, unsigned last, void (*fn)(int fd));

/* ---- obj.c: files and references ---------------------------------------- */

int fast_ident_of(int fd, struct fast_ident *id);
/* @fd is open and is the file @id names. */
int fast_ident_is(int fd, const struct fast_ident *id);
/* A new object holding one reference (its first fd's), for the data
 * socket @data_fd; NULL if none could be made. */
struct fast_obj *obj_new(int flags, const char *dev, int data_fd);
void obj_free(struct fast_obj *o);
/* Every object, to reset its locks in a forked child. */
void obj_foreach(void (*fn)(struct fast_obj *o));
/* The object @fd names, with a reference for the call, or NULL when
 * @fd is not ours (any more). */
struct fast_obj *obj_get(int fd);
/* Let a reference go; the last one releases the file (fast_last_close). */
void obj_put(struct fast_obj *o);

/* ---- channel.c: requests ------------------------------------------------ */

extern unsigned fast_gen;	/* bumped in each forked child */

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
/* One request on a channel of its own, which has no file (FAST_RDMA_LINK):
 * its result or -errno; EOPNOTSUPP with no emulator to ask. */
long fast_ask(uint32_t op, uint64_t arg, const void *in, size_t in_len);
/* The last reference to @o went: let the emulator release the file
 * before close returns, then forget @o. */
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
/* fast_request()'s exchange, in the slot (@seq: the object's counter);
 * -ESTALE when it had to ring and @chan is not @chan_id any more. */
long slot_call(struct fast_slot *sl, uint32_t *seq, int chan, const struct fast_ident *chan_id,
	       uint32_t op, uint64_t arg, const void *in, size_t in_len, void *out,
	       size_t out_max);

/* ---- io.c: the file operations ----------------------------------------- */

ssize_t fast_read(struct fast_obj *o, int fd, void *buf, size_t count);
ssize_t fast_write(struct fast_obj *o, int fd, const void *buf, size_t count);
int fast_ioctl(struct fast_obj *o, int fd, unsigned long cmd, void *arg);

/* ---- wrap.c: the real calls -------------------------------------------- */

int real_close(int fd);
int real_ioctl(int fd, unsigned long cmd, void *arg);
int real_fstat(int fd, struct stat *st);
/* fcntl(@fd, F_DUPFD_CLOEXEC, 0) and F_GETFL, past the table. */
int real_dup_cloexec(int fd);
int real_getfl(int fd);
int real_setfl(int fd, int flags);
/* libc's @name, looked up once into @slot (a constructor may run after
 * other libraries' constructors have called us already). */
void *fast_resolve(void **slot, const char *name);
/* In a run, with the fast path on ($IBEMU_FAST, IBEMU_FAST_PATH not 0). */
int fast_is_enabled(void);

/* ---- netlink.c: NETLINK_RDMA sockets (netlink.h) ------------------------ */

/* Any NETLINK_RDMA socket of ours open; @fd is being closed (close's
 * wrapper, not in a vfork child: the table is the parent's). */
bool nl_any(void);
void nl_closed(int fd);

#endif
