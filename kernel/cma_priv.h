/* SPDX-License-Identifier: MIT */
/*
 * What kernel/ucma.c (the device's files, commands and events) and
 * kernel/cma.c (addresses, routes and the CM protocol) share: the ids.
 */
#ifndef IBEMU_KERNEL_CMA_PRIV_H
#define IBEMU_KERNEL_CMA_PRIV_H

#include <netinet/in.h>
#include <infiniband/ib.h>
#include <infiniband/sa.h>
#include <rdma/rdma_user_cm.h>
#include <sys/socket.h>

#include "fabric/fabric.h"
#include "kernel/host.h"
#include "kernel/ucma.h"
#include "lib/timerq.h"

/* enum rdma_cm_event_type (the kernel's include/rdma/rdma_cm.h, which no
 * uAPI header carries; librdmacm's rdma_cma.h has the same numbers). */
enum ucma_event {
	UCMA_EV_ADDR_RESOLVED,
	UCMA_EV_ADDR_ERROR,
	UCMA_EV_ROUTE_RESOLVED,
	UCMA_EV_ROUTE_ERROR,
	UCMA_EV_CONNECT_REQUEST,
	UCMA_EV_CONNECT_RESPONSE,
	UCMA_EV_CONNECT_ERROR,
	UCMA_EV_UNREACHABLE,
	UCMA_EV_REJECTED,
	UCMA_EV_ESTABLISHED,
	UCMA_EV_DISCONNECTED,
	UCMA_EV_DEVICE_REMOVAL,
	UCMA_EV_MULTICAST_JOIN,
	UCMA_EV_MULTICAST_ERROR,
	UCMA_EV_ADDR_CHANGE,
	UCMA_EV_TIMEWAIT_EXIT,
};

/* The states of cma.c's enum rdma_cm_state that a process can tell
 * apart, and ib_cm's that matter while a connection is made. */
enum cma_state {
	CMA_IDLE,
	CMA_BOUND,		/* an address, and with it a port */
	CMA_ADDR_RESOLVED,
	CMA_ROUTE_RESOLVED,
	CMA_LISTEN,
	CMA_REQ_SENT,		/* active: REQ (or SIDR_REQ) out, waiting */
	CMA_REP_RCVD,		/* active: CONNECT_RESPONSE given, RTU not yet */
	CMA_REQ_RCVD,		/* passive: CONNECT_REQUEST given */
	CMA_REP_SENT,		/* passive: REP out, waiting for the RTU */
	CMA_ESTABLISHED,
	CMA_DREQ_SENT,
	CMA_DISCONNECTED,
};

/* A path as a PathRecord gives it (IBA 15.2.5.16). */
struct cma_path {
	uint16_t slid, dlid, pkey;
	uint8_t sgid[16], dgid[16];
	uint8_t sl, mtu, rate, packet_life;
};

struct cma_id;
struct cma_mc;

/*
 * What the connection manager tells the user of an id (kernel/ucma.c),
 * set when the id is made, as the kernel's rdma_create_user_id(
 * ucma_event_handler, ...): cma*.c never name their user.
 */
struct cma_handler {
	/* Queue @event for @id (of its join @mc, unless NULL): false when
	 * its user cannot take it (a request is then refused). */
	bool (*event)(struct cma_id *id, struct cma_mc *mc, uint32_t event, int status,
		      const struct rdma_ucm_event_resp *param);
	/* A new id for a connection request to @listener; NULL past the
	 * user's bound. */
	struct cma_id *(*new_conn_id)(struct cma_id *listener);
	/* Destroy an id the user never saw (its request could not be given). */
	void (*drop_id)(struct cma_id *id);
	/* Every multicast join of @id goes (left at the SA, events dropped). */
	void (*free_mcs)(struct cma_id *id);
};

struct cma_id {
	const struct cma_handler *handler;
	struct ucma_file *file;
	struct ucma *u;
	uint32_t id;		/* the handle librdmacm names it by */
	uint64_t uid;		/* librdmacm's pointer, echoed in events */
	uint16_t ps;		/* enum rdma_ucm_port_space */
	uint8_t qp_type;	/* IBV_QPT_RC or IBV_QPT_UD */
	enum cma_state state;
	struct sockaddr_storage src, dst;
	struct port *port;	/* bound or resolved: the local CA port */
	struct port *remote;	/* resolved: the port that has dst */
	struct cma_path path;
	bool has_path;
	unsigned backlog, pending;	/* a listener's; pending: unaccepted */
	struct cma_id *listener;	/* passive, until accepted */
	unsigned events_reported;
	uint8_t tos, ack_timeout;	/* SET_OPTION; ack_timeout 0: the path's */
	bool reuseaddr, afonly;

	/* The connection (ib_cm's cm_id). */
	uint32_t local_comm_id, remote_comm_id;
	uint64_t remote_guid;
	uint32_t local_qpn, remote_qpn, remote_qkey;
	uint32_t sq_psn, rq_psn;
	uint8_t resp_res, init_depth, retry_count, rnr_retry, srq;
	MAD_BUF(msg);		/* what is retransmitted until answered */
	struct timer timer;
	uint8_t wait;		/* what the timer is for (enum cma_wait) */
	uint32_t sa_tid;	/* the PathRecord query out (PENDING_SA) */
	unsigned resends;
	struct timer timewait;
	GList *mcs;		/* struct cma_mc *: its multicast joins */
};

/* A multicast join of an id (the kernel's struct ucma_multicast and
 * cma_multicast; kernel/cma_mcast.c). */
struct cma_mc {
	struct cma_id *id;
	uint32_t handle;	/* LEAVE_MCAST names it by this */
	uint64_t uid;		/* librdmacm's pointer, echoed in its events */
	struct sockaddr_storage addr;
	uint8_t join_state;	/* MCMemberRecord JoinState: 1 full, 8 send-only */
	uint8_t mgid[16];
	struct port *port;
	bool joined;		/* the SA said yes */
	uint32_t sa_tid;	/* the join out, 0 when none */
	struct timer timer;	/* waits for the SA's answer */
	unsigned events_reported;
};

struct ucma {
	struct host *hw;
	GHashTable *by_comm_id;	/* local comm id -> struct cma_id * */
	GList *listeners;	/* struct cma_id * */
	uint32_t next_comm_id;
	uint32_t psn_seed;
	/* Id handles are unique across the files (MIGRATE_ID keeps them, as
	 * the kernel's global ctx table does). */
	uint32_t next_id;
	GHashTable *files;	/* token (ucma.c's new_token) -> struct ucma_file * */
	GHashTable *sa_queries;	/* TID's low 32 bits -> struct cma_id * */
	uint32_t next_sa_tid;
	uint16_t next_port;	/* the next ephemeral port */
	GHashTable *mcs;	/* handle -> struct cma_mc * (multicast joins) */
	GHashTable *mc_queries;	/* SA TID's low 32 bits -> struct cma_mc * */
	uint32_t next_mc_tid;
};

/* Tell @id's user of @event (struct cma_handler). */
static inline bool cma_event(struct cma_id *id, uint32_t event, int status,
			     const struct rdma_ucm_event_resp *param)
{
	return id->handler->event(id, NULL, event, status, param);
}

/* ... of its multicast join @mc's: its uid and handle, counted as its. */
static inline bool cma_mc_event(struct cma_mc *mc, uint32_t event, int status,
				const struct rdma_ucm_event_resp *param)
{
	return mc->id->handler->event(mc->id, mc, event, status, param);
}

/* What an id's timer waits for. */
enum cma_wait { PENDING_NONE, PENDING_ADDR_ERROR, PENDING_SA, PENDING_MAD };

#define QP1_QKEY	0x80010000u
/* The Q_Key of UD ids, RDMA_UDP_QKEY (the kernel's cma.c). */
#define UDP_QKEY	0x01234567u

static inline struct fabric *cma_fabric(const struct ucma *u)
{
	return host_fabric(u->hw);
}

static inline struct timerq *cma_tq(const struct ucma *u)
{
	return host_tq(u->hw);
}

/* The LID a CA port answers at. */
static inline uint16_t cma_port_lid(const struct port *p)
{
	return port_mgmt((struct port *)p)->lid;
}

/* The port of an AF_INET, AF_INET6 or AF_IB address (host order). */
static inline uint16_t sa_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return be16toh(((const struct sockaddr_in *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return be16toh(((const struct sockaddr_in6 *)ss)->sin6_port);
	if (ss->ss_family == AF_IB)
		return (uint16_t)be64toh(((const struct sockaddr_ib *)ss)->sib_sid);
	return 0;
}

static inline void sa_set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htobe16(port);
	else if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htobe16(port);
}

static inline bool sa_is_any(const struct sockaddr_storage *ss)
{
	static const struct in6_addr any6 = IN6ADDR_ANY_INIT;

	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_addr.s_addr == 0;
	if (ss->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)ss)->sin6_addr, &any6, 16);
	return true;
}

/* 127.0.0.0/8 or ::1: the address of lo, which no RDMA port is. */
static inline bool sa_is_loopback(const struct sockaddr_storage *ss)
{
	static const struct in6_addr lo6 = IN6ADDR_LOOPBACK_INIT;

	if (ss->ss_family == AF_INET)
		return (be32toh(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
	if (ss->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)ss)->sin6_addr, &lo6, 16);
	return false;
}

/* kernel/cma.c */
bool cma_host_has_port(const struct ucma *u, const struct port *p);
/* (Re)arm the id's timer (its wait set by the caller), or stop it. */
void cma_arm(struct cma_id *id, uint64_t us);
void cma_disarm(struct cma_id *id);
/* Send the MAD @m from @port's QP1 to @dlid's. */
void cma_send_mad(struct ucma *u, struct port *port, uint16_t dlid, const uint8_t *dgid,
		  uint16_t pkey, uint8_t sl, const uint8_t *m);
void cma_init(struct ucma *u);
void cma_fini(struct ucma *u);
int cma_bind(struct cma_id *id, const struct sockaddr *sa, size_t len);
int cma_resolve_addr(struct cma_id *id, const struct sockaddr *src, size_t src_len,
		     const struct sockaddr *dst, size_t dst_len, unsigned timeout_ms);
int cma_resolve_route(struct cma_id *id, unsigned timeout_ms);
int cma_listen(struct cma_id *id, unsigned backlog);
int cma_connect(struct cma_id *id, const struct rdma_ucm_conn_param *cp);
int cma_accept(struct cma_id *id, const struct rdma_ucm_conn_param *cp, bool user);
int cma_reject(struct cma_id *id, const uint8_t *priv, uint8_t len, uint8_t reason);
int cma_disconnect(struct cma_id *id);
int cma_init_qp_attr(struct cma_id *id, unsigned state, struct ib_uverbs_qp_attr *a);
/* The id goes: tell its peer as ib_cm's destroy does, forget it. */
void cma_destroy(struct cma_id *id);
/* Class 0x07 MADs that reach @port, and our SA queries' answers. */
enum upper_verdict cma_deliver(struct ucma *u, struct port *port, const struct mad_pkt *pkt);

/* kernel/cma_addr.c */
/* The id's ADDR_ERROR or SA query timed out. */
void cma_addr_timeout(struct cma_id *id);
/* An answer to one of our SA queries: taken (true), or not one (false). */
bool cma_sa_answer(struct ucma *u, const struct mad_pkt *pkt);
/* The id goes: its query with it. */
void cma_addr_destroy(struct cma_id *id);
/* RDMA_OPTION_IB_PATH: the route given (ibacm's), as rdma_set_ib_path. */
int cma_set_ib_path(struct cma_id *id, const struct ib_path_rec_data *p, size_t n);
/* The local port for a destination @dst (NULL: any) when the id has none. */
struct port *cma_pick_port(struct cma_id *id, struct port *dst);

/* kernel/cma_mcast.c */
/* Join the group of @mc->addr at the SA: the MULTICAST_JOIN (or _ERROR)
 * event follows. Errors as rdma_join_multicast's. */
int cma_mc_join(struct cma_mc *mc);
/* Leave it (a SubnAdmDelete when this port's last join of the group
 * goes) and forget it; the caller frees it. */
void cma_mc_leave(struct cma_mc *mc);
/* An answer to a join: taken (true), or not one of ours (false). */
bool cma_mc_sa_answer(struct ucma *u, const struct mad_pkt *pkt);
/* @port changed (enum port_change): the joins a group error ends. */
void cma_mc_port_changed(struct ucma *u, struct port *port, unsigned what);
/* Is @ss a multicast address (224/4, ff00::/8, an AF_IB MGID)? */
bool cma_addr_is_mcast(const struct sockaddr_storage *ss);
/* IB GID of @p (its subnet prefix and port GUID), as the GID table's 0. */
void cma_port_gid(const struct port *p, uint8_t gid[16]);
/* A RoCE id's address handle: its GRH, no LID (cma.c). */
#define ROCE_HOP_LIMIT	64
void cma_roce_grh(const struct cma_id *id, struct ib_uverbs_ah_attr *ah);
/* The P_Key table index of @pkey at @p (full or limited member), or -1. */
int cma_pkey_index(const struct port *p, uint16_t pkey);

#endif
