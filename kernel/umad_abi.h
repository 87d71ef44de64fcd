/* SPDX-License-Identifier: MIT */
/*
 * The ib_umad ABI (docs/umad.md §3). <rdma/ib_user_mad.h> cannot be included
 * beside libibumad's <infiniband/umad.h> (both define struct ib_user_mad),
 * and libibumad keeps the reg_req structs private, so the layouts are
 * declared here once and pinned by size and ioctl number: a wrong layout
 * (a packed struct, say) gives a different ioctl number (docs/umad.md §3.1).
 */
#ifndef IBEMU_KERNEL_UMAD_ABI_H
#define IBEMU_KERNEL_UMAD_ABI_H

#include <stdint.h>
#include <sys/ioctl.h>

/* struct ib_user_mad_hdr: 64 bytes; the old ABI stops before pkey_index. */
struct umad_abi_hdr {
	uint32_t id;
	uint32_t status;
	uint32_t timeout_ms;
	uint32_t retries;
	uint32_t length;
	uint32_t qpn;		/* big-endian */
	uint32_t qkey;		/* big-endian */
	uint16_t lid;		/* big-endian */
	uint8_t sl;
	uint8_t path_bits;
	uint8_t grh_present;
	uint8_t gid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t gid[16];
	uint32_t flow_label;	/* big-endian */
	uint16_t pkey_index;
	uint8_t reserved[6];
};

/* struct ib_user_mad_reg_req: 28 bytes, 4-byte aligned. */
struct umad_abi_reg_req {
	uint32_t id;
	uint32_t method_mask[4];
	uint8_t qpn;
	uint8_t mgmt_class;
	uint8_t mgmt_class_version;
	uint8_t oui[3];		/* oui[0] is the most significant byte */
	uint8_t rmpp_version;
};

/* struct ib_user_mad_reg_req2: 40 bytes, 8-byte aligned. */
struct umad_abi_reg_req2 {
	uint32_t id;
	uint32_t qpn;
	uint8_t mgmt_class;
	uint8_t mgmt_class_version;
	uint16_t res;
	uint32_t flags;
	uint64_t method_mask[2];
	uint32_t oui;
	uint8_t rmpp_version;
	uint8_t reserved[3];
};

#define UMAD_IOC_REGISTER_AGENT	_IOWR(0x1b, 1, struct umad_abi_reg_req)
#define UMAD_IOC_UNREGISTER_AGENT _IOW(0x1b, 2, uint32_t)
#define UMAD_IOC_ENABLE_PKEY	_IO(0x1b, 3)
#define UMAD_IOC_REGISTER_AGENT2 _IOWR(0x1b, 4, struct umad_abi_reg_req2)

#define UMAD_REG_USER_RMPP	1u	/* IB_USER_MAD_USER_RMPP */
#define UMAD_REG_FLAGS_CAP	UMAD_REG_USER_RMPP

_Static_assert(sizeof(struct umad_abi_hdr) == 64, "ib_user_mad_hdr");
_Static_assert(sizeof(struct umad_abi_reg_req) == 28, "ib_user_mad_reg_req");
_Static_assert(sizeof(struct umad_abi_reg_req2) == 40, "ib_user_mad_reg_req2");
_Static_assert(UMAD_IOC_REGISTER_AGENT == 0xc01c1b01, "REGISTER_AGENT");
_Static_assert(UMAD_IOC_UNREGISTER_AGENT == 0x40041b02, "UNREGISTER_AGENT");
_Static_assert(UMAD_IOC_ENABLE_PKEY == 0x1b03, "ENABLE_PKEY");
_Static_assert(UMAD_IOC_REGISTER_AGENT2 == 0xc0281b04, "REGISTER_AGENT2");

#endif
