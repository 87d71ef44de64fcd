/* SPDX-License-Identifier: MIT */
/*
 * Registration with libibverbs, devices and contexts (provider.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi/verbs_wire.h"
#include "verbs/provider.h"

void ibemu_err(const char *fmt, ...)
{
	const char *on = getenv("IBEMU_VERBS_LOG");
	char line[512];
	va_list ap;

	if (on && !strcmp(on, "0"))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One write: lines of two threads do not mix. */
	fprintf(stderr, "libibemu: %s\n", line);
}

/* Our event numbers are libibverbs' (abi/verbs_wire.h). */
_Static_assert((int)VERBS_EV_PORT_ACTIVE == (int)IBV_EVENT_PORT_ACTIVE, "PORT_ACTIVE");
_Static_assert((int)VERBS_EV_PORT_ERR == (int)IBV_EVENT_PORT_ERR, "PORT_ERR");
_Static_assert((int)VERBS_EV_LID_CHANGE == (int)IBV_EVENT_LID_CHANGE, "LID_CHANGE");
_Static_assert((int)VERBS_EV_PKEY_CHANGE == (int)IBV_EVENT_PKEY_CHANGE, "PKEY_CHANGE");
_Static_assert((int)VERBS_EV_SM_CHANGE == (int)IBV_EVENT_SM_CHANGE, "SM_CHANGE");
_Static_assert((int)VERBS_EV_CLIENT_REREGISTER == (int)IBV_EVENT_CLIENT_REREGISTER, "CLIENT_REREGISTER");
_Static_assert((int)VERBS_EV_GID_CHANGE == (int)IBV_EVENT_GID_CHANGE, "GID_CHANGE");
_Static_assert(sizeof(struct verbs_wire_event) == 16, "ib_uverbs_async_event_desc");

/* The daemon's per-device driver ABI (uverbsN/abi_version). */
#define IBEMU_DRIVER_ABI	1

/* Open the daemon file @name of @dev with @flags. */
static int open_at_dev(struct ibv_device *dev, const char *name, int flags)
{
	char path[IBV_SYSFS_PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dev->dev_path, name);
	return open(path, flags | O_CLOEXEC);
}

int ibemu_read_file(struct ibv_context *c, const char *name, char *buf, size_t len)
{
	ssize_t n;
	int fd, e;

	fd = open_at_dev(c->device, name, O_RDONLY);
	if (fd < 0)
		return errno;
	/* One read: the daemon makes the text whole for each read at 0. */
	n = pread(fd, buf, len - 1, 0);
	e = errno;
	close(fd);
	if (n < 0)
		return e;
	buf[n] = 0;
	return 0;
}

/* ---- contexts ---------------------------------------------------------- */

static void ibemu_free_context(struct ibv_context *ibctx)
{
	struct ibemu_context *ctx = to_ctx(ibctx);

	ibemu_import_unregister(ctx);
	ibemu_threads_stop(ctx);
	ibemu_fast_close(ctx);
	ibemu_chans_free(ctx);
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

static const struct verbs_context_ops ibemu_ops = {
	.advise_mr = ibemu_advise_mr,
	.alloc_dm = ibemu_alloc_dm,
	.alloc_mw = ibemu_alloc_mw,
	.alloc_parent_domain = ibemu_limited_alloc_parent_domain,
	.alloc_pd = ibemu_limited_alloc_pd,
	.alloc_td = ibemu_alloc_td,
	.attach_mcast = ibemu_attach_mcast,
	.bind_mw = ibemu_bind_mw,
	.close_xrcd = ibemu_close_xrcd,
	.create_ah = ibemu_limited_create_ah,
	.create_cq = ibemu_limited_create_cq,
	.create_cq_ex = ibemu_limited_create_cq_ex,
	.create_qp = ibemu_create_qp,
	.create_qp_ex = ibemu_create_qp_ex,
	.create_srq = ibemu_limited_create_srq,
	.create_srq_ex = ibemu_create_srq_ex,
	.dealloc_mw = ibemu_dealloc_mw,
	.dealloc_pd = ibemu_limited_dealloc_pd,
	.dealloc_td = ibemu_dealloc_td,
	.dereg_mr = ibemu_limited_dereg_mr,
	.destroy_ah = ibemu_limited_destroy_ah,
	.destroy_cq = ibemu_limited_destroy_cq,
	.destroy_qp = ibemu_destroy_qp,
	.destroy_srq = ibemu_limited_destroy_srq,
	.detach_mcast = ibemu_detach_mcast,
	.free_context = ibemu_free_context,
	.free_dm = ibemu_free_dm,
	.get_srq_num = ibemu_get_srq_num,
	.import_mr = ibemu_import_mr,
	.import_pd = ibemu_import_pd,
	.modify_qp = ibemu_modify_qp,
	.modify_srq = ibemu_modify_srq,
	.open_xrcd = ibemu_open_xrcd,
	.poll_cq = ibemu_poll_cq,
	.post_recv = ibemu_post_recv,
	.post_send = ibemu_post_send,
	.post_srq_recv = ibemu_post_srq_recv,
	.query_device_ex = ibemu_query_device_ex,
	.query_port = ibemu_query_port,
	.query_rt_values = ibemu_query_rt_values,
	.query_qp = ibemu_query_qp,
	.query_srq = ibemu_query_srq,
	.reg_dm_mr = ibemu_limited_reg_dm_mr,
	.reg_mr = ibemu_limited_reg_mr,
	.req_notify_cq = ibemu_req_notify_cq,
	.rereg_mr = ibemu_rereg_mr,
	.resize_cq = ibemu_resize_cq,
	.unimport_mr = ibemu_unimport_mr,
	.unimport_pd = ibemu_unimport_pd,
};

static struct verbs_context *ibemu_alloc_context(struct ibv_device *ibdev, int cmd_fd,
						 void *private_data)
{
	(void)private_data;
	return ibemu_context_new(ibdev, cmd_fd);
}

struct verbs_context *ibemu_context_new(struct ibv_device *ibdev, int cmd_fd)
{
	struct ibemu_context *ctx;
	int fd;

	/* vctx is the first member: its offset, as the pointer, is 0. */
	ctx = _verbs_init_and_alloc_context(ibdev, cmd_fd, sizeof(*ctx), NULL, 0);
	if (!ctx)
		return NULL;
	pthread_mutex_init(&ctx->lock, NULL);
	pthread_mutex_init(&ctx->chan_lock, NULL);
	ctx->fast_chan = ctx->fast_data = -1;
	/*
	 * The command fd is the host's /dev/full in namespace mode: put the
	 * daemon's command file over it, in both modes, so that what
	 * libibverbs writes there itself (ibv_create_comp_channel) reaches
	 * the daemon, and our packets go the same way (thread.c).
	 */
	fd = open_at_dev(ibdev, VERBS_WIRE_CMD, O_RDWR);
	if (fd < 0 || dup3(fd, ctx->vctx.context.cmd_fd, O_CLOEXEC) < 0)
		goto fail;
	close(fd);
	/* Async events come from the daemon's event file; libibverbs reads
	 * async_fd itself (ibv_get_async_event). */
	ctx->vctx.context.async_fd = open_at_dev(ibdev, VERBS_WIRE_EVENTS, O_RDONLY);
	if (ctx->vctx.context.async_fd < 0)
		goto fail_errno;
	/* Packets over the fast socket where there is one (fastchan.c). */
	ibemu_fast_open(ctx, ibdev->dev_path);
	/* Completion vectors are the data path's; one, as the smallest HCA. */
	ctx->vctx.context.num_comp_vectors = 1;
	errno = ibemu_threads_start(ctx);
	if (errno)
		goto fail_errno;
	verbs_set_ops(&ctx->vctx, &ibemu_ops);
	ibemu_import_register(ctx);
	return &ctx->vctx;

fail:
	if (fd >= 0)
		close(fd);
fail_errno:
	ibemu_err("%s: cannot open the ibemu daemon's files in %s: %s", ibdev->name,
		  ibdev->dev_path, strerror(errno));
	ibemu_free_context(&ctx->vctx.context);
	errno = EIO;
	return NULL;
}

/* ---- devices ----------------------------------------------------------- */

static struct verbs_device *ibemu_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct ibemu_device *dev = calloc(1, sizeof(*dev));

	(void)sysfs_dev;
	return dev ? &dev->vdev : NULL;
}

static void ibemu_uninit_device(struct verbs_device *vdev)
{
	free((struct ibemu_device *)vdev);
}

/* Devices netlink says are ibemu's, whatever their names (abi/verbs_wire.h);
 * where libibverbs reads sysfs instead, those named ibemu<k> (the ibdev
 * names ibemu gives its CAs). */
static const struct verbs_match_ent ibemu_match[] = {
	{ .u.driver_id = IBEMU_VERBS_DRIVER_ID, .kind = VERBS_MATCH_DRIVER_ID },
	{ .u.modalias = "rdma_device:Nibemu*", .kind = VERBS_MATCH_MODALIAS },
	{ .kind = VERBS_MATCH_SENTINEL },
};

static const struct verbs_device_ops ibemu_device_ops = {
	.name = "ibemu",
	.match_min_abi_version = IBEMU_DRIVER_ABI,
	.match_max_abi_version = IBEMU_DRIVER_ABI,
	.match_table = ibemu_match,
	.alloc_context = ibemu_alloc_context,
	.import_context = ibemu_import_context,
	.alloc_device = ibemu_alloc_device,
	.uninit_device = ibemu_uninit_device,
};

/* ---- registration ------------------------------------------------------ */

/* The release of the libibverbs in this process: "libibverbs.so.1.14.N.0"
 * names N. 0 when it cannot be told. */
static int find_release(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *base = strrchr(info->dlpi_name, '/');
	char real[PATH_MAX];
	const char *v;
	unsigned major, minor, rel;

	(void)size;
	base = base ? base + 1 : info->dlpi_name;
	if (strncmp(base, "libibverbs.so", 13) || !realpath(info->dlpi_name, real))
		return 0;
	v = strrchr(real, '/');
	v = v ? v + 1 : real;
	if (sscanf(v, "libibverbs.so.%u.%u.%u", &major, &minor, &rel) == 3)
		*(unsigned *)data = rel;
	return 1;
}

static __attribute__((constructor)) void ibemu_register(void)
{
	unsigned rel = 0;

	dl_iterate_phdr(find_release, &rel);
	/* Another release would call our ops through another table: refuse
	 * rather than call the wrong one (docs/verbs.md "Provider ABI"). */
	if (rel && (rel < IBEMU_VERBS_MIN || rel > IBEMU_VERBS_MAX)) {
		ibemu_err("libibverbs %u is outside the releases %u to %u this provider works with (built against %s): ibemu devices are left out",
			  rel, IBEMU_VERBS_MIN, IBEMU_VERBS_MAX, IBEMU_IBVERBS_BUILT);
		return;
	}
	verbs_register_driver_34(&ibemu_device_ops);
	ibemu_rdmacm_hook();
	ibemu_import_hook();
}
