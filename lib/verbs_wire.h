/* SPDX-License-Identifier: MIT */
/*
 * What the daemon and the libibverbs provider (verbs/) say to each other
 * (docs/verbs.md "Daemon files"). Each emulated CA k is uverbs<k> in
 * <sysfs>/class/infiniband_verbs; beside the kernel's files that directory
 * holds three of ours:
 *
 *   ibemu_device       text, "name value" lines: the device attributes
 *   ibemu_port<N>      text, "name value" lines: port N as the SMA holds it
 *   ibemu_events       one open = one async event queue of the device; a
 *                      read gives one struct verbs_wire_event, blocks when
 *                      none is queued (EAGAIN with O_NONBLOCK), poll works
 *   ibemu_cmd          the uverbs command file, which the provider puts
 *                      over its command fd (dup3): commands not served
 *                      fail there with EOPNOTSUPP in both modes
 *
 * The names in the text files are those of libibverbs' struct
 * ibv_device_attr and struct ibv_port_attr fields, with the same encodings
 * (IBA PortInfo values where verbs uses them as they are).
 */
#ifndef IBEMU_LIB_VERBS_WIRE_H
#define IBEMU_LIB_VERBS_WIRE_H

#include <stdint.h>

#define VERBS_WIRE_DEVICE	"ibemu_device"
#define VERBS_WIRE_PORT		"ibemu_port"	/* + the port number */
#define VERBS_WIRE_EVENTS	"ibemu_events"
#define VERBS_WIRE_CMD		"ibemu_cmd"

/* The kernel's struct ib_uverbs_async_event_desc (rdma/ib_user_verbs.h),
 * which is what libibverbs' ibv_get_async_event() reads from async_fd. */
struct verbs_wire_event {
	uint64_t element;	/* the port number for port events */
	uint32_t event_type;	/* enum verbs_wire_event_type */
	uint32_t reserved;
};

/* The port events of enum ib_event_type (kernel include/rdma/ib_verbs.h),
 * numbered as libibverbs' enum ibv_event_type (verbs/ asserts it). */
enum verbs_wire_event_type {
	VERBS_EV_PORT_ACTIVE = 9,
	VERBS_EV_PORT_ERR = 10,
	VERBS_EV_LID_CHANGE = 11,
	VERBS_EV_PKEY_CHANGE = 12,
	VERBS_EV_SM_CHANGE = 13,
	VERBS_EV_CLIENT_REREGISTER = 17,
	VERBS_EV_GID_CHANGE = 18,
};

#endif
