/* SPDX-License-Identifier: MIT */
/*
 * The fast path's server, shared by its files (fastpath.h says what it
 * serves): the channel server and its request table (fastpath.c), any
 * device file over its table and data socket (fastpath_file.c), a verbs
 * context's ring (fastpath_verbs.c), the slots (fastpath_slots.c), and
 * what it serves hosts: attachments, their sysfs and control connections
 * (fastpath_host.c).
 */
#ifndef IBEMU_SOCKET_FASTPATH_PRIV_H
#define IBEMU_SOCKET_FASTPATH_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>

#include "abi/fast_wire.h"
#include "kernel/kfile.h"
#include "lib/listener.h"
#include "socket/fastpath.h"
#include "socket/fastpath_verbs.h"
#include "socket/fastslot.h"

/*
 * How far ahead of its reader a file's packets may go into the data
 * socket. The socket's own buffer bounds the datagrams, not the memfds
 * that long messages travel in (64 KiB to UMAD_MAX_WRITE each): past this
 * many bytes sent since the socket was last seen empty, a FAST_F_HELD
 * mark goes in and nothing more until the reader, having read up to the
 * mark, asks with FAST_PUSH; what waits stays in the umad queue. Both
 * count against its limit (kfile_ops.set_outside: a umad file holds at
 * most UMAD_RECV_BYTES_MAX unread bytes by either path, README "Limits").
 */
#define SOCK_AHEAD_BYTES	(16u << 20)

struct fastpath {
	struct umad_host *host;
	char *path;
	int fd;
	struct listener listener;
	GPtrArray *chans;	/* struct fast_chan *, connected */
	GPtrArray *files;	/* struct fast_file *, open or still named by a channel */
	struct vfs *vfs;	/* for FAST_SYSFS_*; NULL: not offered */
	fast_host_begin_fn host_begin;	/* for FAST_HOST; NULL: not offered */
	fast_host_end_fn host_end;
	fast_host_adopt_fn host_adopt;
	fast_host_rtt_fn host_rtt;
	void *host_ctx;
	struct ctl_server *ctl;	/* for FAST_CTL; NULL: not offered */
	bool ctl_refused;	/* a guest host's channels: EACCES */
	bool shared;		/* open to a group (--remote-group): its members are guests */
	unsigned rings;		/* verbs contexts' rings (fastpath_verbs.c) */
	bool pushing;		/* fp_push runs: others wait in deferred */
	GPtrArray *deferred;	/* struct fast_file *, or NULL */
	uint8_t buf[FAST_INLINE_MAX];	/* what fp_push takes, until sent */
};

/*
 * An open file: its table's open file and its data socket. Channels name
 * it (the opener's, and one per process that attached later: a forked
 * child's, an exec'd program's); it is released when the data socket's
 * last holder closes it (a file with nothing to read has none: when its
 * channel goes) and forgotten once no channel names it either.
 */
struct fast_file {
	struct fastpath *fp;
	const struct kfile_ops *ops;	/* its kind */
	void *dev;		/* its device */
	void *file;		/* the table's open file; NULL before and after */
	struct kfile_wait wait;	/* an open the table answers later */
	struct fast_chan *opening;	/* ... the channel waiting for it */
	uint32_t open_tag;	/* ... and its request's tag */
	int data;		/* our end of the data socket; -1: none (yet, or now) */
	ino_t data_ino;		/* the client's end, to know it when passed back */
	int flags;		/* the open's */
	char name[128];		/* "umad0", or a path in sysfs */
	int pid;		/* the opener's, for `ctl status` */
	unsigned chans;		/* channels naming it */
	struct fast_chan *writing;	/* the channel whose write is in the table */
	size_t write_count;
	guint data_watch, out_watch;
	/* What the data socket had no room for yet (then nothing else is
	 * taken from the file's queue, so the order holds): pend_off bytes
	 * of it went into a ring already. */
	struct fast_pkt pend;
	uint8_t *pend_bytes;	/* fp->buf while fp_push holds it */
	int pend_memfd;
	size_t pend_off;
	size_t sock_bytes;	/* sent since the socket was last seen empty */
	bool held;		/* the FAST_F_HELD mark is in the socket */
	struct fast_verbs *verbs;	/* a verbs context's ring and inbox, or NULL */
};

/* One connection: a client's request channel, for one file once opened
 * or attached. */
struct fast_chan {
	struct fastpath *fp;
	int fd;			/* -1 once handed to the control server */
	guint watch;
	int pid;		/* the connecting process, as we see it */
	unsigned uid;
	bool guest;		/* not ours or root's: may only attach a host */
	bool adopted;		/* from another host: no slot (not our memory) */
	struct fastslot *slot;	/* FAST_SLOT's, or NULL */
	bool in_slot;		/* the request being served came by the slot */
	struct fast_file *file;	/* FAST_OPEN's or FAST_ATTACH's */
	void *hosting;		/* FAST_HOST's attachment, while this lives */
	uint32_t tag;		/* the request being served's, for its answer */
};


/* ---- fastpath.c: the channel server ------------------------------------ */

/* Answer the request being served on @ch (in its slot if it came there),
 * with @fd passed beside unless -1. */
void fp_reply(struct fast_chan *ch, int64_t ret, const void *out, uint32_t out_len, int fd);
/* A channel serves one thing: a file (its slot too), or a host. */
bool fp_chan_taken(const struct fast_chan *ch);
/* One request: a struct fast_req, then its payload; @memfd passed beside. */
void fp_do_request(struct fast_chan *ch, const uint8_t *msg, size_t n, int memfd);

/* ---- fastpath_file.c: any device file, over data sockets --------------- */

void fp_file_release(struct fast_file *ff);
void fp_file_free(struct fast_file *ff);
void fp_file_maybe_free(struct fast_file *ff);
bool fp_data_closed(const struct fast_file *ff);
void fp_let_go(struct fast_file *ff);
void fp_push(struct fast_file *ff);
/* FAST_OPEN of @name (@len bytes): a device of the tree's dev/, or a
 * file by its path in the host's sysfs. */
void fp_do_open(struct fast_chan *ch, const char *name, size_t len, int flags);
void fp_do_attach(struct fast_chan *ch, int fd);
void fp_do_write(struct fast_chan *ch, const struct fast_req *rq, const uint8_t *payload,
		 size_t n, int memfd);
void fp_do_ioctl(struct fast_chan *ch, const struct fast_req *rq, const uint8_t *payload,
		 size_t n);

/* ---- fastpath_slots.c: requests in shared memory ------------------------ */

void fp_do_slot(struct fast_chan *ch);
/* Look at the slots a while after a request (its comment says how). */
void fp_spin_slots(struct fastpath *fp);

/* ---- fastpath_host.c: hosts, their sysfs, control ---------------------- */

void fp_do_sysfs(struct fast_chan *ch, uint32_t op, uint64_t arg, const char *payload,
		 size_t n);
void fp_do_host(struct fast_chan *ch, const char *payload, size_t n);
void fp_do_ctl(struct fast_chan *ch);

/* ---- fastpath_link.c: rdma link add/delete, device renames ------------- */

void fp_do_rdma_link(struct fast_chan *ch, uint64_t op, const char *payload, size_t n);

#endif
