/* SPDX-License-Identifier: MIT */
/*
 * The ibemu libibverbs provider (docs/verbs.md): every emulated CA is a
 * device whose attributes and async events come from the ibemu daemon's
 * files in the device's sysfs directory (lib/verbs_wire.h).
 */
#ifndef IBEMU_VERBS_PROVIDER_H
#define IBEMU_VERBS_PROVIDER_H

#include "verbs/abi.h"

struct ibemu_device {
	struct verbs_device vdev;	/* first: libibverbs frees through it */
};

struct ibemu_context {
	struct verbs_context vctx;	/* first: see alloc_context */
	uint32_t next_pd_handle;
};

/* The ibv_context libibverbs hands us is the last member of vctx. */
static inline struct ibemu_context *to_ctx(struct ibv_context *c)
{
	return (struct ibemu_context *)((char *)c - offsetof(struct ibemu_context, vctx.context));
}

/* Read the daemon file @name of @c's device into @buf (NUL-terminated):
 * 0, or an errno (ENOENT when it does not exist). */
int ibemu_read_file(struct ibv_context *c, const char *name, char *buf, size_t len);

/* query.c */
int ibemu_query_device_ex(struct ibv_context *context,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size);
int ibemu_query_port(struct ibv_context *context, uint8_t port_num,
		     struct ibv_port_attr *port_attr);

/* pd.c */
struct ibv_pd *ibemu_alloc_pd(struct ibv_context *context);
int ibemu_dealloc_pd(struct ibv_pd *pd);

#endif
