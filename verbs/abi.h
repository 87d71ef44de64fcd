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

enum { VERBS_MATCH_SENTINEL = 0, VERBS_MATCH_MODALIAS = 2, VERBS_MATCH_DRIVER_ID = 3 };

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
struct verbs_mr;
struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
			 struct ibv_sge *sg_list, uint32_t num_sges);
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context, struct ibv_alloc_dm_attr *attr);
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	verbs_op alloc_null_mr;
	struct ibv_pd *(*alloc_parent_domain)(struct ibv_context *context,
					      struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context, struct ibv_td_init_attr *init_attr);
	verbs_op async_event, attach_counters_point_flow;
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	verbs_op cq_event;
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
	verbs_op create_counters;
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel, int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *attr);
	verbs_op create_flow, create_flow_action_esp;
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *attr);
	verbs_op create_rwq_ind_table;
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *attr);
	verbs_op create_wq;
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	verbs_op destroy_counters;
	int (*destroy_cq)(struct ibv_cq *cq);
	verbs_op destroy_flow, destroy_flow_action;
	int (*destroy_qp)(struct ibv_qp *qp);
	verbs_op destroy_rwq_ind_table;
	int (*destroy_srq)(struct ibv_srq *srq);
	verbs_op destroy_wq;
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	verbs_op import_dm;
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context, uint32_t pd_handle);
	verbs_op modify_cq, modify_flow_action_esp;
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
	verbs_op modify_qp_rate_limit;
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask);
	verbs_op modify_wq, open_qp;
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
	verbs_op post_srq_ops;
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad);
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr, size_t attr_size);
	verbs_op query_ece;
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
			struct ibv_qp_init_attr *init_attr);
	verbs_op query_qp_data_in_order;
	int (*query_rt_values)(struct ibv_context *context, struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr);
	verbs_op read_counters;
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t dm_offset,
				    size_t length, unsigned int access);
	verbs_op reg_dmabuf_mr;
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
				 int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr,
			size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	verbs_op set_ece, unimport_dm;
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

/* libibverbs' struct verbs_mr: what ibv_dereg_mr reads beside ibv_mr. */
enum { IBEMU_MR_TYPE_MR = 0 };	/* enum ibv_mr_type IBV_MR_TYPE_MR */
struct verbs_mr {
	struct ibv_mr ibv_mr;
	uint32_t mr_type;
	int access;
};

/* libibverbs' struct verbs_qp: ibv_qp_to_qp_ex() gives &qp_ex when
 * comp_mask has VERBS_QP_EX (a QP made with send_ops_flags). */
enum { IBEMU_VERBS_QP_EX = 1 << 1 };	/* enum verbs_qp_mask VERBS_QP_EX */
/* libibverbs' struct verbs_xrcd (driver.h): what ibv_open_xrcd gives. */
struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};
struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

/* libibverbs' struct verbs_cq: a CQ is an ibv_cq_ex too. */
struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
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
_Static_assert(offsetof(struct verbs_context_ops, create_cq) == 120, "create_cq");
_Static_assert(offsetof(struct verbs_context_ops, create_qp) == 152, "create_qp");
_Static_assert(offsetof(struct verbs_context_ops, create_cq_ex) == 128, "create_cq_ex");
_Static_assert(offsetof(struct verbs_context_ops, create_qp_ex) == 160, "create_qp_ex");
_Static_assert(offsetof(struct verbs_context_ops, modify_qp) == 376, "modify_qp");
_Static_assert(offsetof(struct verbs_context_ops, poll_cq) == 424, "poll_cq");
_Static_assert(offsetof(struct verbs_context_ops, post_recv) == 432, "post_recv");
_Static_assert(offsetof(struct verbs_context_ops, reg_mr) == 544, "reg_mr");
_Static_assert(offsetof(struct verbs_context_ops, req_notify_cq) == 552, "req_notify_cq");
_Static_assert(offsetof(struct verbs_context_ops, rereg_mr) == 560, "rereg_mr");
_Static_assert(offsetof(struct verbs_context_ops, resize_cq) == 568, "resize_cq");
_Static_assert(offsetof(struct verbs_context_ops, unimport_pd) == 600, "unimport_pd");
_Static_assert(sizeof(struct verbs_mr) == 56, "verbs_mr");
/* verbs_qp's comp_mask follows ibv_qp_ex, whose size is the installed
 * verbs.h's (v44 added wr_atomic_write): built against the headers of the
 * libibverbs it loads into, as every provider is. */
_Static_assert(offsetof(struct verbs_qp, comp_mask) == sizeof(struct ibv_qp_ex), "verbs_qp");
#else
#error "the provider's ABI declarations are checked for x86_64 and aarch64 only"
#endif

#endif
