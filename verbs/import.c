/* SPDX-License-Identifier: MIT */
/*
 * Sharing a context's objects (ibv_import_device, ibv_import_pd,
 * ibv_import_mr; docs/verbs.md "Importing objects"). The kernel lets a
 * second context be made on the command fd of a first, with the first's
 * PDs and MRs usable by handle. Here PDs and MRs are the provider's, in
 * the process that made them, so a context can be imported only in that
 * process (the fd duplicated, as rdma-core's tests do); from another
 * process it is EOPNOTSUPP.
 *
 * libibverbs checks the fd first: a character device whose number is
 * the device's (sysfs "dev"), then asks the kernel for the context's
 * async event fd (an RDMA_VERBS_IOCTL). Our command fd is the daemon's
 * file, so the provider answers both of libibverbs' own calls, in front
 * of them in its GOT (got.h): fstat of a command fd says what the
 * device's node says, and the async fd asked for is the one the context
 * has.
 *
 * The imported context is a context of its own (its command file,
 * threads and ring: its QPs and CQs are its own) that sees the first's
 * objects: its PDs stand for the first's (as a parent domain for its
 * PD), a region key it does not have is looked for in the first's list,
 * and keys and PD handles come from the first's counters, so that none
 * is taken twice. The first is the "root"; importing from an imported
 * context shares the same root.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "verbs/got.h"
#include "verbs/provider.h"

/* Every context of the process, for the hooks and for import (under
 * reg_lock; a context is in it from alloc_context to free_context). */
static struct ibemu_context *contexts;
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;

void ibemu_import_register(struct ibemu_context *ctx)
{
	struct stat st;

	ctx->cdev = ((struct verbs_device *)ctx->vctx.context.device)->sysfs->sysfs_cdev;
	if (fstat(ctx->vctx.context.cmd_fd, &st) == 0) {
		ctx->cmd_dev = st.st_dev;
		ctx->cmd_ino = st.st_ino;
	}
	pthread_mutex_lock(&reg_lock);
	ctx->reg_next = contexts;
	contexts = ctx;
	pthread_mutex_unlock(&reg_lock);
}

void ibemu_import_unregister(struct ibemu_context *ctx)
{
	struct ibemu_context **pp, *c;

	pthread_mutex_lock(&reg_lock);
	for (pp = &contexts; *pp && *pp != ctx; pp = &(*pp)->reg_next)
		;
	if (*pp)
		*pp = ctx->reg_next;
	/* Its importers see its objects no more (the kernel would keep them
	 * while an imported context holds the file: docs/verbs.md). */
	for (c = contexts; c; c = c->reg_next) {
		if (c->share != ctx)
			continue;
		pthread_mutex_lock(&c->lock);
		c->share = NULL;
		pthread_mutex_unlock(&c->lock);
	}
	pthread_mutex_unlock(&reg_lock);
}

/* The context whose command file @st is, or NULL. */
static struct ibemu_context *by_stat(const struct stat *st)
{
	struct ibemu_context *c;

	for (c = contexts; c; c = c->reg_next)
		if (c->cmd_ino == st->st_ino && c->cmd_dev == st->st_dev)
			return c;
	return NULL;
}

/* Do @a and @b name one open file (the same context's command fd)? */
static bool same_file(int a, int b)
{
	pid_t me = getpid();

	return syscall(SYS_kcmp, me, me, KCMP_FILE, a, b) == 0;
}

/* ---- libibverbs' fstat and ioctl ---------------------------------------- */

/* A command fd is the device's character device to libibverbs
 * (ibv_import_device's check). */
static void as_device(struct stat *st)
{
	struct ibemu_context *c;

	if (!S_ISREG(st->st_mode))
		return;
	pthread_mutex_lock(&reg_lock);
	c = by_stat(st);
	if (c) {
		st->st_mode = S_IFCHR | (st->st_mode & 07777);
		st->st_rdev = c->cdev;
	}
	pthread_mutex_unlock(&reg_lock);
}

static int hook_fstat(int fd, struct stat *st)
{
	int r = fstat(fd, st);

	if (r == 0)
		as_device(st);
	return r;
}

/* glibc before 2.33 had no fstat symbol: libraries called __fxstat. */
extern int __fxstat(int ver, int fd, struct stat *st);

static int hook_fxstat(int ver, int fd, struct stat *st)
{
	int r = __fxstat(ver, fd, st);

	if (r == 0)
		as_device(st);
	return r;
}

/*
 * UVERBS_METHOD_ASYNC_EVENT_ALLOC on a command fd (libibverbs'
 * ibv_cmd_alloc_async_fd, after import_context): the context's own async
 * fd, as the attribute's data, where the kernel puts the new fd. 1 if it
 * was that, 0 if the call is another's.
 */
static int async_alloc(int fd, struct ib_uverbs_ioctl_hdr *hdr, int *ret)
{
	struct ibemu_context *c;
	int async = -1;
	unsigned i;

	if (hdr->object_id != UVERBS_OBJECT_ASYNC_EVENT ||
	    hdr->method_id != UVERBS_METHOD_ASYNC_EVENT_ALLOC)
		return 0;
	pthread_mutex_lock(&reg_lock);
	for (c = contexts; c && async < 0; c = c->reg_next)
		if (same_file(c->vctx.context.cmd_fd, fd))
			async = c->vctx.context.async_fd;
	pthread_mutex_unlock(&reg_lock);
	if (async < 0)
		return 0;
	*ret = 0;
	for (i = 0; i < hdr->num_attrs; i++)
		if (hdr->attrs[i].attr_id == UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE)
			hdr->attrs[i].data = (uint64_t)async;
	return 1;
}

static int hook_ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	void *arg;
	int ret;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (request == RDMA_VERBS_IOCTL && arg && async_alloc(fd, arg, &ret))
		return ret;
	return ioctl(fd, request, arg);
}

static const struct ibemu_got_hook hooks[] = {
	{ "fstat", (void *)hook_fstat },
	{ "fstat64", (void *)hook_fstat },
	{ "__fxstat", (void *)hook_fxstat },
	{ "__fxstat64", (void *)hook_fxstat },
	{ "ioctl", (void *)hook_ioctl },
};

void ibemu_import_hook(void)
{
	ibemu_got_patch("/libibverbs.so", hooks, sizeof(hooks) / sizeof(hooks[0]));
}

/* ---- import_context ----------------------------------------------------- */

struct verbs_context *ibemu_import_context(struct ibv_device *ibdev, int cmd_fd)
{
	struct ibemu_context *c, *root = NULL;
	struct verbs_context *v;

	(void)ibdev;
	pthread_mutex_lock(&reg_lock);
	for (c = contexts; c && !root; c = c->reg_next)
		if (same_file(c->vctx.context.cmd_fd, cmd_fd))
			root = ibemu_root(c);
	pthread_mutex_unlock(&reg_lock);
	if (!root) {
		ibemu_err("ibv_import_device: fd %d is no context of this process's "
			  "(importing another process's context is not supported)", cmd_fd);
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* A context of the root's device (libibverbs took the first device
	 * with the number fstat gave, which they may share), on the fd. */
	v = ibemu_context_new(root->vctx.context.device, cmd_fd);
	if (!v)
		return NULL;
	pthread_mutex_lock(&reg_lock);
	/* The root may have gone meanwhile: then nothing is shared. */
	for (c = contexts; c && c != root; c = c->reg_next)
		;
	pthread_mutex_lock(&to_ctx(&v->context)->lock);
	to_ctx(&v->context)->share = c;
	pthread_mutex_unlock(&to_ctx(&v->context)->lock);
	pthread_mutex_unlock(&reg_lock);
	return v;
}

struct ibemu_context *ibemu_root(struct ibemu_context *ctx)
{
	return ctx->share ? ctx->share : ctx;
}

struct ibemu_context *ibemu_root_lock(struct ibemu_context *ctx)
{
	struct ibemu_context *root;

	pthread_mutex_lock(&ctx->lock);
	root = ibemu_root(ctx);
	if (root != ctx)
		pthread_mutex_lock(&root->lock);	/* a root locks no other */
	return root;
}

void ibemu_root_unlock(struct ibemu_context *ctx, struct ibemu_context *root)
{
	if (root != ctx)
		pthread_mutex_unlock(&root->lock);
	pthread_mutex_unlock(&ctx->lock);
}
