/* SPDX-License-Identifier: MIT */
/*
 * libibverbs' private provider interface, declared here because no Debian
 * or Ubuntu package installs rdma-core's libibverbs/driver.h. Only what
 * this provider uses is named; the layouts are rdma-core's from v36 to v56
 * (private ABI IBVERBS_PRIVATE_34, identical in all of them: docs/verbs.md
 * "Provider ABI"), pinned by the _Static_asserts at the end so that a
 * wrong declaration cannot build.
 */
#ifndef IBEMU_VERBS_ABI_H
#define IBEMU_VERBS_ABI_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <infiniband/verbs.h>

/* The range of libibverbs releases whose private ABI this is: 35 has the
 * same symbol version but one op fewer, 57 renames it. */
#define IBEMU_VERBS_MIN	36
#define IBEMU_VERBS_MAX	56

struct ccan_list_node {
	struct ccan_list_node *next, *prev;
};

enum { VERBS_MATCH_SENTINEL = 0, VERBS_MATCH_MODALIAS = 2 };

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

struct verbs_sysfs_dev {
	struct ccan_list_node entry;
	void *provider_data;
	const struct verbs_match_ent *match;
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX];
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX];
	char ibdev_path[IBV_SYSFS_PATH_MAX];
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver;
	struct timespec time_created;
};

struct verbs_device;

struct verbs_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);
	struct verbs_context *(*alloc_context)(struct ibv_device *device, int cmd_fd,
					       void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device, int cmd_fd);
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

struct verbs_device {
	struct ibv_device device;	/* first: libibverbs casts */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct ccan_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

/* Every op a provider may give, in rdma-core's order (sorted by name);
 * those this provider leaves NULL keep libibverbs' own, which fail with
 * EOPNOTSUPP (libibverbs/dummy_ops.c). */
typedef void (*verbs_op)(void);
struct verbs_context_ops {
	verbs_op advise_mr, alloc_dm, alloc_mw, alloc_null_mr, alloc_parent_domain;
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	verbs_op alloc_td, async_event, attach_counters_point_flow, attach_mcast, bind_mw,
		close_xrcd, cq_event, create_ah, create_counters, create_cq, create_cq_ex,
		create_flow, create_flow_action_esp, create_qp, create_qp_ex,
		create_rwq_ind_table, create_srq, create_srq_ex, create_wq, dealloc_mw;
	int (*dealloc_pd)(struct ibv_pd *pd);
	verbs_op dealloc_td, dereg_mr, destroy_ah, destroy_counters, destroy_cq, destroy_flow,
		destroy_flow_action, destroy_qp, destroy_rwq_ind_table, destroy_srq, destroy_wq,
		detach_mcast;
	void (*free_context)(struct ibv_context *context);
	verbs_op free_dm, get_srq_num, import_dm, import_mr, import_pd, modify_cq,
		modify_flow_action_esp, modify_qp, modify_qp_rate_limit, modify_srq, modify_wq,
		open_qp, open_xrcd, poll_cq, post_recv, post_send, post_srq_ops, post_srq_recv;
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr, size_t attr_size);
	verbs_op query_ece;
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	verbs_op query_qp, query_qp_data_in_order, query_rt_values, query_srq, read_counters,
		reg_dm_mr, reg_dmabuf_mr, reg_mr, req_notify_cq, rereg_mr, resize_cq, set_ece,
		unimport_dm, unimport_mr, unimport_pd;
};

/* What libibverbs exports to providers (symbol version IBVERBS_PRIVATE_34). */
void verbs_register_driver_34(const struct verbs_device_ops *ops);
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size, struct verbs_context *context_offset,
				    uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx, const struct verbs_context_ops *ops);

/* Sizes and offsets of rdma-core v36..v56 on LP64 (docs/verbs.md). */
#if defined(__x86_64__) || defined(__aarch64__)
_Static_assert(sizeof(struct verbs_match_ent) == 24, "verbs_match_ent");
_Static_assert(offsetof(struct verbs_match_ent, kind) == 20, "verbs_match_ent.kind");
_Static_assert(sizeof(struct verbs_sysfs_dev) == 992, "verbs_sysfs_dev");
_Static_assert(offsetof(struct verbs_sysfs_dev, sysfs_cdev) == 104, "sysfs_cdev");
_Static_assert(offsetof(struct verbs_sysfs_dev, ibdev_path) == 176, "ibdev_path");
_Static_assert(offsetof(struct verbs_sysfs_dev, node_guid) == 944, "node_guid");
_Static_assert(offsetof(struct verbs_sysfs_dev, abi_ver) == 968, "abi_ver");
_Static_assert(offsetof(struct verbs_sysfs_dev, time_created) == 976, "time_created");
_Static_assert(sizeof(struct verbs_device_ops) == 72, "verbs_device_ops");
_Static_assert(offsetof(struct verbs_device_ops, match_device) == 32, "match_device");
_Static_assert(offsetof(struct verbs_device_ops, alloc_context) == 40, "alloc_context");
_Static_assert(offsetof(struct verbs_device_ops, alloc_device) == 56, "alloc_device");
_Static_assert(offsetof(struct verbs_device_ops, uninit_device) == 64, "uninit_device");
_Static_assert(sizeof(struct verbs_device) == 712, "verbs_device");
_Static_assert(offsetof(struct verbs_device, ops) == 664, "verbs_device.ops");
_Static_assert(offsetof(struct verbs_device, sysfs) == 696, "verbs_device.sysfs");
_Static_assert(sizeof(struct verbs_context_ops) == 608, "verbs_context_ops: 76 ops");
_Static_assert(offsetof(struct verbs_context_ops, alloc_pd) == 40, "alloc_pd");
_Static_assert(offsetof(struct verbs_context_ops, create_ah) == 104, "create_ah");
_Static_assert(offsetof(struct verbs_context_ops, dealloc_pd) == 208, "dealloc_pd");
_Static_assert(offsetof(struct verbs_context_ops, free_context) == 312, "free_context");
_Static_assert(offsetof(struct verbs_context_ops, post_send) == 440, "post_send");
_Static_assert(offsetof(struct verbs_context_ops, query_device_ex) == 464, "query_device_ex");
_Static_assert(offsetof(struct verbs_context_ops, query_port) == 480, "query_port");
_Static_assert(offsetof(struct verbs_context_ops, unimport_pd) == 600, "unimport_pd");
#else
#error "the provider's ABI declarations are checked for x86_64 and aarch64 only"
#endif

#endif
