/* SPDX-License-Identifier: MIT */
/*
 * What the daemon and the verbs provider say to each other for rdma_cm
 * (docs/rdmacm.md "Namespace mode"). In namespace mode there is no
 * character device behind /dev/infiniband/rdma_cm, and librdmacm writes
 * its commands to that fd itself; the provider, which librdmacm loads
 * before it opens the device, puts itself in front of librdmacm's open,
 * fstat, write and close, and carries each command over the file
 *
 *   <sysfs>/class/infiniband_ucma/ibemu_cmd
 *
 * one open of which is one open of the rdma_cm device (the kernel's
 * struct ucma_file):
 *
 *   ioctl  UCMA_IOC_CMD: one command as librdmacm wrote it (struct
 *          rdma_ucm_cmd_hdr and its body, and for SET_OPTION the value
 *          at its optval pointer after it); the answer says what the
 *          kernel would have written into the caller's memory, where, and
 *          what write() returns
 *   read   one struct rdma_ucm_event_resp (GET_EVENT's answer); blocks
 *          while none is queued, EAGAIN with O_NONBLOCK
 *   ioctl  UCMA_IOC_TOKEN: a number naming this open, which MIGRATE_ID
 *          takes in place of the fd the caller wrote
 *   poll   POLLIN while an event is queued, as the kernel's ucma_poll
 *
 * The file is absent in CUSE mode, where /dev/infiniband/rdma_cm is a
 * character device of ours: the provider then stays out of the way.
 */
#ifndef IBEMU_ABI_UCMA_WIRE_H
#define IBEMU_ABI_UCMA_WIRE_H

#include <stdint.h>
#include <sys/ioctl.h>

#define UCMA_WIRE_DIR		"class/infiniband_ucma"
#define UCMA_WIRE_CMD		"ibemu_cmd"
#define UCMA_DEV_PATH		"/dev/infiniband/rdma_cm"

/* The longest command (a CONNECT or ACCEPT with 256 bytes of private data
 * is 312) and the longest answer (a QUERY_PATH of six paths is 392). */
#define UCMA_WIRE_MAX		1008

struct ucma_wire_cmd {
	/* in */
	uint32_t len;		/* bytes of buf[] the caller wrote */
	/* SET_OPTION's value, which the kernel reads from the caller's
	 * memory: the provider puts it in buf[] after the command. */
	uint32_t optlen;
	/* MIGRATE_ID names the file it takes an id from by an fd of the
	 * caller's: the provider gives that file's token here. */
	uint64_t from_token;
	/* out */
	int32_t ret;		/* what write() returns: len, or -errno */
	uint64_t resp_addr;	/* where the answer goes in the caller */
	uint32_t resp_len;	/* bytes of buf[] to put there (0: none) */
	uint32_t reserved;
	uint8_t buf[UCMA_WIRE_MAX];	/* in: the command; out: the answer */
};

#define UCMA_IOC_MAGIC		0xec
#define UCMA_IOC_CMD		_IOWR(UCMA_IOC_MAGIC, 1, struct ucma_wire_cmd)
/* The open file's token (for MIGRATE_ID, above). */
#define UCMA_IOC_TOKEN		_IOR(UCMA_IOC_MAGIC, 2, uint64_t)

#endif
