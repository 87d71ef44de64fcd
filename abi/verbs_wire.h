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
 *                      over its command fd (dup3): one open is one verbs
 *                      context's way to the fabric (below); uverbs
 *                      commands other than CREATE_COMP_CHANNEL fail there
 *                      with EOPNOTSUPP in both modes
 *
 * The names in the text files are those of libibverbs' struct
 * ibv_device_attr and struct ibv_port_attr fields, with the same encodings
 * (IBA PortInfo values where verbs uses them as they are).
 */
#ifndef IBEMU_ABI_VERBS_WIRE_H
#define IBEMU_ABI_VERBS_WIRE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>

#define VERBS_WIRE_DEVICE	"ibemu_device"

/*
 * The driver id the RDMA netlink family gives ibemu's devices
 * (RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID in GET_CHARDEV's answer, preload/
 * nldev.c), none of the kernel's enum rdma_driver_id. libibverbs matches
 * providers by driver id before names (init.c try_drivers): a device
 * renamed `rxe0` (`rdma link add`) stays ours, not rdma-core's rxe
 * provider's, which takes names starting "rxe".
 */
#define IBEMU_VERBS_DRIVER_ID	0x49424d55u	/* "IBMU" */

/*
 * The device's limits: what ibemu_device says (kernel/uverbs.c) and what
 * is kept. QPs are counted by the daemon per device (max_qp, as an HCA
 * driver); PDs, MRs, CQs, AHs and SRQs by the provider per open context
 * (the kernel counts per device: a process that opens the device twice
 * gets twice as many; docs/verbs.md "Limits"). Past one: ENOMEM.
 */
#define VERBS_MAX_QP		1024
#define VERBS_MAX_QP_WR		4096
#define VERBS_MAX_SGE		16
#define VERBS_MAX_CQ		1024
#define VERBS_MAX_CQE		65535
#define VERBS_MAX_MR		4096
#define VERBS_MAX_PD		1024
#define VERBS_MAX_RD_ATOM	16
#define VERBS_MAX_AH		4096
#define VERBS_MAX_SRQ		1024
#define VERBS_MAX_SRQ_WR	4096
#define VERBS_MAX_SRQ_SGE	16
#define VERBS_MAX_MW		4096
/* Multicast (kept by the daemon, per device): groups with a QP attached,
 * QPs attached to one group, attachments in all. */
#define VERBS_MAX_MCAST_GRP	1024
#define VERBS_MAX_MCAST_QP_ATTACH	256
#define VERBS_MAX_MCAST_ATTACH	4096
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

/* ---- the data path (docs/verbs.md "Data path") ------------------------
 *
 * The provider is the HCA's transport layer (QPs, RC reliability, memory);
 * the daemon is the wire: it routes each packet by the switches' LFTs,
 * drops it on a port that is not Active, checks P_Key and Q_Key, applies
 * the fault rules, counts it in the PMA counters and hands it to the
 * context that owns the destination QP.
 *
 * On an open ibemu_cmd:
 *   ioctl  VERBS_IOC_SEND: one or more whole packet records (struct
 *          verbs_wire_rec first, VERBS_REC_PKT). An ioctl, not a write:
 *          FUSE holds the file's lock for a write until it is answered,
 *          and the CREATE_COMP_CHANNEL write is answered only once the
 *          provider's reader thread, which sends ACKs, has run the upcall
 *   write  the same records are taken by write() too; a write that starts
 *          with a uverbs command header is a uverbs command (command <
 *          2^16 or with the EXTENDED flag; ours have the magic high bits)
 *   read   as many whole queued records as fit (at least one; EINVAL for
 *          a buffer smaller than the next); blocks while none is queued
 *   ioctl  VERBS_IOC_*: QP numbers, the end of an upcall, a wake-up
 */
#define VERBS_REC_MAGIC		0x49420000u	/* "IB" in the high bits */
enum verbs_rec_type {
	VERBS_REC_PKT = VERBS_REC_MAGIC | 1,	/* a packet: struct verbs_wire_pkt */
	/* The daemon asks the provider to make a completion channel for a
	 * parked CREATE_COMP_CHANNEL write: struct verbs_wire_upcall. */
	VERBS_REC_UPCALL = VERBS_REC_MAGIC | 2,
	VERBS_REC_WAKE = VERBS_REC_MAGIC | 3,	/* answer to VERBS_IOC_WAKE */
	/* The receiver a refused VERBS_IOC_SEND (EAGAIN) waited for has
	 * room again: send (kernel/uverbs_data.c, flow control). */
	VERBS_REC_CREDIT = VERBS_REC_MAGIC | 4,
	/* (5 is a ring's PAD, abi/verbs_ring.h.) Senders have been given
	 * this context's inbox (abi/verbs_inbox.h): map it (FAST_VINBOX). */
	VERBS_REC_INBOX = VERBS_REC_MAGIC | 6,
};

struct verbs_wire_rec {
	uint32_t type;		/* enum verbs_rec_type */
	uint32_t len;		/* of the whole record, this header included */
};

/* Packet flags. */
enum {
	VERBS_PKT_SE = 1,	/* BTH SolicitedEvent */
	VERBS_PKT_ACKREQ = 2,	/* BTH AckReq */
	VERBS_PKT_GRH = 4,	/* a GRH travels (LRH LNH 3): the grh_ fields */
	/* Set by the daemon only: a RoCE v2 packet (its SGID index a RoCE v2
	 * GID), whose GRH travels as an IPv4 or IPv6 header and UDP
	 * (IBA Annex A17; docs/roce.md). */
	VERBS_PKT_ROCE_V2 = 8,
};

/* Multicast LIDs (IBA 4.1.1): 0xc000 to 0xfffe; 0xffff is permissive.
 * A packet to one names this QP in its BTH. */
#define VERBS_LID_MCAST_FIRST	0xc000u
#define VERBS_QPN_MCAST		0xffffffu

static inline bool verbs_lid_is_mcast(unsigned lid)
{
	return lid >= VERBS_LID_MCAST_FIRST && lid < 0xffffu;
}

/*
 * A packet: the fields of its LRH, BTH and the extended transport headers
 * its opcode has (IBA 9.2-9.4), in host order, then @len payload bytes.
 * The sender fills all but slid (it gives the source path bits there) and
 * pkey (it gives pkey_index); the daemon sets them from the port, and on
 * delivery sets port and pkey_index to where it arrived and matched.
 */
struct verbs_wire_pkt {
	struct verbs_wire_rec rec;	/* VERBS_REC_PKT, len = sizeof + payload */
	uint8_t port;		/* the HCA port it leaves by / arrived at */
	uint8_t sl;
	uint8_t opcode;		/* BTH OpCode, enum verbs_opcode */
	uint8_t flags;		/* VERBS_PKT_* */
	uint16_t slid, dlid;
	uint16_t pkey_index, pkey;
	uint32_t sqpn, dqpn;	/* DETH source QP (UD); the sender's QP (RC) */
	uint32_t psn;		/* 24 bits */
	uint32_t qkey;		/* DETH */
	uint32_t imm;		/* ImmDt, as the verbs give it (network order);
				 * or IETH's R_Key (SEND with Invalidate) */
	uint32_t aeth;		/* AETH: syndrome << 24 | MSN */
	uint32_t rkey, dma_len;	/* RETH; AtomicETH's R_Key */
	uint64_t va;		/* RETH; AtomicETH's VA */
	uint64_t swap_add;	/* AtomicETH Swap (or Add) Data; AtomicAckETH
				 * Original Remote Data */
	uint64_t compare;	/* AtomicETH Compare Data */
	/* GRH (IBA 8.3), with VERBS_PKT_GRH. The sender gives the index of
	 * its GID in sgid_index; the daemon sets sgid from the port's table. */
	uint32_t grh_flow;	/* FlowLabel, 20 bits */
	uint8_t grh_tclass, grh_hop_limit, sgid_index, reserved1;
	uint8_t sgid[16], dgid[16];
	uint32_t xrc_srqn;	/* XRCETH: the SRQ of the XRC target's domain */
	uint32_t len;		/* payload bytes that follow */
};

/* BTH opcodes (IBA Table 33): RC 0x00-0x17, UC 0x20-0x2b (RC's SENDs and
 * WRITEs, 0x20 up), UD 0x64-0x65, XRC 0xa0-0xb4 (RC's, 0xa0 up). */
enum verbs_opcode {
	OP_RC_SEND_FIRST = 0x00,
	OP_RC_SEND_MIDDLE = 0x01,
	OP_RC_SEND_LAST = 0x02,
	OP_RC_SEND_LAST_IMM = 0x03,
	OP_RC_SEND_ONLY = 0x04,
	OP_RC_SEND_ONLY_IMM = 0x05,
	OP_RC_WRITE_FIRST = 0x06,
	OP_RC_WRITE_MIDDLE = 0x07,
	OP_RC_WRITE_LAST = 0x08,
	OP_RC_WRITE_LAST_IMM = 0x09,
	OP_RC_WRITE_ONLY = 0x0a,
	OP_RC_WRITE_ONLY_IMM = 0x0b,
	OP_RC_READ_REQUEST = 0x0c,
	OP_RC_READ_RESPONSE_FIRST = 0x0d,
	OP_RC_READ_RESPONSE_MIDDLE = 0x0e,
	OP_RC_READ_RESPONSE_LAST = 0x0f,
	OP_RC_READ_RESPONSE_ONLY = 0x10,
	OP_RC_ACK = 0x11,
	OP_RC_ATOMIC_ACK = 0x12,
	OP_RC_CMP_SWAP = 0x13,
	OP_RC_FETCH_ADD = 0x14,
	OP_RC_SEND_LAST_INV = 0x16,	/* with an IETH: the R_Key to invalidate */
	OP_RC_SEND_ONLY_INV = 0x17,
	OP_UC_FIRST = 0x20,	/* SEND FIRST; RC's opcode + 0x20 up to */
	OP_UC_LAST = 0x2b,	/* RDMA WRITE Only with Immediate */
	OP_UD_SEND_ONLY = 0x64,
	OP_UD_SEND_ONLY_IMM = 0x65,
	OP_XRC_FIRST = 0xa0,	/* XRC: RC's opcodes + 0xa0, up to */
	OP_XRC_LAST = 0xb7,	/* SEND Only with Invalidate */
};

static inline bool verbs_op_is_xrc(unsigned op)
{
	return op >= OP_XRC_FIRST && op <= OP_XRC_LAST;
}

/* A UC or XRC opcode as the RC one of the same packet (its headers are
 * the same but XRC's XRCETH); others as they are. */
static inline unsigned verbs_op_rc(unsigned op)
{
	return op >= OP_UC_FIRST && op <= OP_UC_LAST ? op - OP_UC_FIRST :
	       verbs_op_is_xrc(op) ? op - OP_XRC_FIRST : op;
}

/* Which extended transport headers an opcode carries (IBA 9.2, Table 34). */
static inline bool verbs_op_has_deth(unsigned op)
{
	return op == OP_UD_SEND_ONLY || op == OP_UD_SEND_ONLY_IMM;
}
static inline bool verbs_op_has_reth(unsigned op)
{
	op = verbs_op_rc(op);
	return op == OP_RC_WRITE_FIRST || op == OP_RC_WRITE_ONLY ||
	       op == OP_RC_WRITE_ONLY_IMM || op == OP_RC_READ_REQUEST;
}
static inline bool verbs_op_has_aeth(unsigned op)
{
	op = verbs_op_rc(op);
	return op == OP_RC_READ_RESPONSE_FIRST || op == OP_RC_READ_RESPONSE_LAST ||
	       op == OP_RC_READ_RESPONSE_ONLY || op == OP_RC_ACK || op == OP_RC_ATOMIC_ACK;
}
/* AtomicETH: VA 8, R_Key 4, Swap/Add 8, Compare 8 (IBA 9.3.6.3). */
static inline bool verbs_op_has_atomiceth(unsigned op)
{
	op = verbs_op_rc(op);
	return op == OP_RC_CMP_SWAP || op == OP_RC_FETCH_ADD;
}
/* AtomicAckETH: the original remote data, 8 (IBA 9.3.6.4). */
static inline bool verbs_op_has_atomicacketh(unsigned op)
{
	return verbs_op_rc(op) == OP_RC_ATOMIC_ACK;
}
/* A responder's packet: READ responses and acknowledgements. */
static inline bool verbs_op_is_response(unsigned op)
{
	op = verbs_op_rc(op);
	return (op >= OP_RC_READ_RESPONSE_FIRST && op <= OP_RC_ACK) || op == OP_RC_ATOMIC_ACK;
}
/* XRCETH: the SRQ number, 4: an XRC request's; responses have none. */
static inline bool verbs_op_has_xrceth(unsigned op)
{
	return verbs_op_is_xrc(op) && !verbs_op_is_response(op);
}
/* IETH: the R_Key a SEND with Invalidate invalidates, 4. */
static inline bool verbs_op_has_ieth(unsigned op)
{
	op = verbs_op_rc(op);
	return op == OP_RC_SEND_LAST_INV || op == OP_RC_SEND_ONLY_INV;
}
static inline bool verbs_op_has_imm(unsigned op)
{
	op = verbs_op_rc(op);
	return op == OP_RC_SEND_LAST_IMM || op == OP_RC_SEND_ONLY_IMM ||
	       op == OP_RC_WRITE_LAST_IMM || op == OP_RC_WRITE_ONLY_IMM ||
	       op == OP_UD_SEND_ONLY_IMM;
}

/*
 * The bytes the packet takes on the wire (IBA 7.7, 8.3, 9.2-9.4): LRH 8,
 * GRH 40 if it has one, BTH 12, the extended headers of its opcode, the payload padded to 4, ICRC
 * 4, VCRC 2. What the PMA counts in PortXmitData (in words).
 */
static inline unsigned verbs_pkt_wire_bytes(const struct verbs_wire_pkt *p)
{
	unsigned op = p->opcode;
	unsigned ext = (verbs_op_has_deth(op) ? 8 : 0) + (verbs_op_has_reth(op) ? 16 : 0) +
		       (verbs_op_has_aeth(op) ? 4 : 0) + (verbs_op_has_imm(op) ? 4 : 0) +
		       (verbs_op_has_ieth(op) ? 4 : 0) +
		       (verbs_op_has_atomiceth(op) ? 28 : 0) +
		       (verbs_op_has_atomicacketh(op) ? 8 : 0) + (verbs_op_has_xrceth(op) ? 4 : 0);

	return 8 + ((p->flags & VERBS_PKT_GRH) ? 40 : 0) + 12 + ext + ((p->len + 3) & ~3u) +
	       4 + 2;
}

/* A completion channel to make, for the parked write @id. */
struct verbs_wire_upcall {
	struct verbs_wire_rec rec;	/* VERBS_REC_UPCALL */
	uint32_t id;
	uint32_t command;	/* the uverbs command: CREATE_COMP_CHANNEL */
	uint64_t response;	/* where in the writer's memory the answer goes */
};

/* The uverbs command the daemon turns into an upcall (rdma/ib_user_verbs.h). */
#define VERBS_CMD_CREATE_COMP_CHANNEL	17

#define VERBS_IOC_MAGIC		0xeb

/* A QP number on this device for this context: the daemon delivers
 * packets for it here until it is destroyed or the file is closed. */
struct verbs_ioc_qp {
	uint32_t qpn;		/* out of CREATE; in for the others */
	uint32_t type;		/* CREATE: IBV_QPT_RC (2), _UC (3), _UD (4),
				 * _XRC_SEND (9) or _XRC_RECV (10); with
				 * VERBS_QP_* flags in the high 16 bits */
	uint32_t qkey;		/* SET: the Q_Key a UD QP checks */
	uint32_t port;		/* SET: its port; 0 while it has none */
};

/* A UD QP whose multicast sends are not looped back to it on its own
 * port (IBV_QP_CREATE_BLOCK_SELF_MCAST_LB; IPoIB's QP asks it). */
#define VERBS_QP_BLOCK_SELF_MCAST	(1u << 16)
#define VERBS_QP_TYPE(t)		((t) & 0xffffu)

struct verbs_ioc_upcall_done {
	uint32_t id;
	int32_t error;		/* 0, or the errno the write fails with */
};

#define VERBS_IOC_QP_CREATE	_IOWR(VERBS_IOC_MAGIC, 1, struct verbs_ioc_qp)
#define VERBS_IOC_QP_SET	_IOW(VERBS_IOC_MAGIC, 2, struct verbs_ioc_qp)
#define VERBS_IOC_QP_DESTROY	_IOW(VERBS_IOC_MAGIC, 3, struct verbs_ioc_qp)
#define VERBS_IOC_UPCALL_DONE	_IOW(VERBS_IOC_MAGIC, 4, struct verbs_ioc_upcall_done)
/* Queue a VERBS_REC_WAKE record (a reader thread's way out). */
#define VERBS_IOC_WAKE		_IO(VERBS_IOC_MAGIC, 5)

/* A UD QP's attachment to a multicast group (ibv_attach_mcast): the
 * daemon gives it a copy of every packet to @mlid (whose GRH, if any,
 * names @gid) that reaches its port. Errors as the kernel's
 * ib_uverbs_attach_mcast/detach_mcast: EINVAL for a QP not UD, a GID not
 * multicast, an MLID not one, or (detach) an attachment that is not
 * there; attaching twice is no error; ENOMEM past VERBS_MAX_MCAST_*. A QP
 * with attachments is not destroyed: EBUSY (closing the file detaches). */
struct verbs_ioc_mcast {
	uint32_t qpn;
	uint16_t mlid;
	uint16_t reserved;
	uint8_t gid[16];
};
#define VERBS_IOC_MCAST_ATTACH	_IOW(VERBS_IOC_MAGIC, 7, struct verbs_ioc_mcast)
#define VERBS_IOC_MCAST_DETACH	_IOW(VERBS_IOC_MAGIC, 8, struct verbs_ioc_mcast)

/* The ioctls on a QP that every front-end passes to the daemon as they
 * are (_IOC_SIZE bytes in, the same back), and the largest of them. */
static inline bool verbs_ioc_is_qp(unsigned cmd)
{
	return cmd == VERBS_IOC_QP_CREATE || cmd == VERBS_IOC_QP_SET ||
	       cmd == VERBS_IOC_QP_DESTROY || cmd == VERBS_IOC_MCAST_ATTACH ||
	       cmd == VERBS_IOC_MCAST_DETACH;
}
#define VERBS_IOC_QP_ARG_MAX	24
_Static_assert(sizeof(struct verbs_ioc_mcast) <= VERBS_IOC_QP_ARG_MAX &&
	       sizeof(struct verbs_ioc_qp) <= VERBS_IOC_QP_ARG_MAX, "the QP ioctls' structs fit");

/* Packets to send: @len bytes of whole records in @data. The size is the
 * largest an ioctl number can encode (14 bits), so at least three
 * MTU-sized packets fit. */
#define VERBS_IOC_SEND_MAX	16368
struct verbs_ioc_send {
	uint32_t len;
	uint32_t reserved;
	char data[VERBS_IOC_SEND_MAX];
};
#define VERBS_IOC_SEND		_IOW(VERBS_IOC_MAGIC, 6, struct verbs_ioc_send)

/* Records a context holds unread before senders are held back: the
 * write that put one past it succeeds, the sender's next is EAGAIN until
 * a VERBS_REC_CREDIT comes (kernel/uverbs_data.c, flow control); past
 * twice as many, or what all contexts may hold together, or for a
 * context that reads nothing, packets are dropped, as an HCA drops what
 * it has no buffer for, and the daemon says so now and then. */
#define VERBS_RX_MAX		8192
/* The largest packet payload: the largest IB MTU. */
#define VERBS_PKT_MAX_PAYLOAD	4096

#endif
