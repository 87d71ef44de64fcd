/* SPDX-License-Identifier: MIT */
/*
 * Multicast groups at the SA (IBA 15.2.5.17 MCMemberRecord, 15.4.2): a
 * SubnAdmSet joins a port (making the group, with an MLID, when it is the
 * first full member), a SubnAdmDelete leaves (the group goes with its
 * last member), Get and GetTable list them. Each change programs the
 * switches' MulticastForwardingTables as opensm does: one tree over the
 * switches for the group, every port on it that leads to a member.
 */
#include "config.h"

#include <endian.h>
#include <string.h>

#include <infiniband/umad_sa.h>

#include "fabric/mcast.h"
#include "fabric/port.h"
#include "kernel/sa_priv.h"
#include "lib/log.h"

#define MLID_FIRST	FABRIC_MLID_FIRST
/* JoinState bits (IBA Table 210): FullMember is the one that makes a group. */
#define JOIN_FULL	0x1
/* A group the SA names itself (MGID 0 asked): opensm's signature, a01b. */
#define MGID_SIGNATURE	0xa01b
#define SCOPE_LINK_LOCAL	0x2
#define MCR_CREATE	(MCR_MGID | MCR_PORT_GID | MCR_JOIN_STATE | MCR_QKEY | MCR_TCLASS | \
			 MCR_PKEY | MCR_FLOW_LABEL | MCR_SL)
/* The MTUs IBA names: 256 (1) to 4096 (5). */
#define MTU_MIN		1
#define MTU_MAX		5

struct sa_member {
	struct port *port;	/* first: fabric_mcast_program reads it */
	uint8_t gid[16];
	uint8_t join_state;
	bool proxy;
};

struct sa_group {
	uint8_t rec[MCR_SIZE];	/* the group's fields; PortGID and JoinState 0 */
	uint16_t mlid;
	GArray *members;	/* struct sa_member */
};

/* The fields that are the group's, compared by a query (PortGID,
 * JoinState and ProxyJoin are a member's). */
static const struct sa_comp group_comps[] = {
	{ 0, IB_NO_FIELD, 0, 16, false },
	{ 2, IB_SA_MCM_QKEY_F, 0, 0, false },
	{ 3, IB_SA_MCM_MLID_F, 0, 0, false },
	{ 6, IB_SA_MCM_TCLASS_F, 0, 0, false },
	{ 7, IB_SA_MCM_PKEY_F, 0, 0, false },
	{ 12, IB_SA_MCM_SL_F, 0, 0, false },
	{ 13, IB_SA_MCM_FLOW_LABEL_F, 0, 0, false },
};

static void group_free(struct sa_group *g)
{
	g_array_free(g->members, TRUE);
	g_free(g);
}

void sa_mcast_free(struct sa *sa)
{
	g_ptr_array_set_free_func(sa->groups, (GDestroyNotify)group_free);
	g_ptr_array_free(sa->groups, TRUE);
}

static struct sa_group *group_by_mgid(struct sa *sa, const uint8_t *mgid)
{
	unsigned i;

	for (i = 0; i < sa->groups->len; i++) {
		struct sa_group *g = g_ptr_array_index(sa->groups, i);

		if (!memcmp(g->rec, mgid, 16))
			return g;
	}
	return NULL;
}

static struct sa_member *member_of(struct sa_group *g, const uint8_t *gid, unsigned *at)
{
	unsigned i;

	for (i = 0; i < g->members->len; i++) {
		struct sa_member *m = &g_array_index(g->members, struct sa_member, i);

		if (!memcmp(m->gid + 8, gid + 8, 8)) {
			if (at)
				*at = i;
			return m;
		}
	}
	return NULL;
}

/* How many MLIDs every switch can forward (the smallest MFT). */
static unsigned mlid_cap(struct sa *sa)
{
	unsigned i, cap = 1024;

	for (i = 0; i < sa->f->nodes->len; i++) {
		struct node *n = g_ptr_array_index(sa->f->nodes, i);

		if (node_is_switch(n))
			cap = MIN(cap, n->sw->mft_cap);
	}
	return cap;
}

static uint16_t free_mlid(struct sa *sa)
{
	unsigned i, k, cap = mlid_cap(sa);

	for (i = 0; i < cap; i++) {
		for (k = 0; k < sa->groups->len; k++)
			if (((struct sa_group *)g_ptr_array_index(sa->groups, k))->mlid ==
			    MLID_FIRST + i)
				break;
		if (k == sa->groups->len)
			return (uint16_t)(MLID_FIRST + i);
	}
	return 0;
}

/* The group's forwarding: fabric/mcast.c's tree over the InfiniBand
 * networks' switches for its members. */
static void program(struct sa *sa, struct sa_group *g)
{
	fabric_mcast_program(sa->f, g->mlid, false, g->members);
}

/* The record a member sees: the group's with its PortGID and JoinState. */
static void member_rec(const struct sa_group *g, const struct sa_member *m, uint8_t *out)
{
	memcpy(out, g->rec, MCR_SIZE);
	if (!m)
		return;
	mad_set_array(out, 0, IB_SA_MCM_PORTGID_F, (void *)m->gid);
	out[MCR_SCOPE_JOIN_OFF] = (uint8_t)((out[MCR_SCOPE_JOIN_OFF] & 0xf0) | m->join_state);
	out[MCR_PROXY_OFF] = m->proxy ? 0x80 : 0;
}

/*
 * The MTU and rate a new group gets for the joining port @p, as opensm's
 * mgrp_request_is_realizable(): a value counts only with its selector;
 * none, or "largest", is the port's; "greater than" a value the port
 * cannot beat is not realizable (false), else the port's; "less than" is
 * one step below it, or the port's if that is lower; "exactly" is the
 * value. A result outside IBA's range is not realizable.
 */
static bool realizable(const struct sa_req *req, const struct port *p, uint8_t *mtu,
		       uint8_t *rate)
{
	uint8_t want, sel;

	*mtu = p->neighbor_mtu;
	sel = req->rec[MCR_MTU_OFF] >> 6;
	want = req->rec[MCR_MTU_OFF] & 0x3f;
	if ((req->comp & (MCR_MTU | MCR_MTU_SELECTOR)) == (MCR_MTU | MCR_MTU_SELECTOR) &&
	    sel != SA_SEL_LARGEST) {
		if (sel == SA_SEL_GREATER && want >= p->neighbor_mtu)
			return false;
		if (sel == SA_SEL_LESS)
			*mtu = want > p->neighbor_mtu ? p->neighbor_mtu : (uint8_t)(want - 1);
		else if (sel == SA_SEL_EXACTLY)
			*mtu = want;
		if (*mtu < MTU_MIN || *mtu > MTU_MAX)
			return false;
	}
	*rate = sa_rate_code(p);
	sel = req->rec[MCR_RATE_OFF] >> 6;
	want = req->rec[MCR_RATE_OFF] & 0x3f;
	if ((req->comp & (MCR_RATE | MCR_RATE_SELECTOR)) == (MCR_RATE | MCR_RATE_SELECTOR) &&
	    sel != SA_SEL_LARGEST) {
		if (sel == SA_SEL_GREATER && sa_rate_deci(want) >= sa_rate_deci(*rate))
			return false;
		if (sel == SA_SEL_LESS && sa_rate_deci(want) <= sa_rate_deci(*rate))
			*rate = sa_rate_step(want, -1);
		else if (sel == SA_SEL_EXACTLY)
			*rate = want;
		if (!sa_rate_deci(*rate))
			return false;
	}
	return true;
}

/* Whether a group may be made with the MGID @g asked (IBA 4.1.1 and
 * o15-0.2.x, as opensm's validate_requested_mgid): a multicast GID, and
 * but for IPoIB's (signatures 401b, 601b) no flag in the three upper
 * bits and no SA-style signature (a01b) in link-local scope. */
static bool mgid_valid(const uint8_t *g)
{
	uint16_t sig = get_be16(g, 2);

	if (g[0] != 0xff)
		return false;
	if (sig == 0x401b || sig == 0x601b)
		return true;
	return !(g[1] & 0xe0) && !(sig == MGID_SIGNATURE && (g[1] & 0x0f) == SCOPE_LINK_LOCAL);
}

static struct sa_group *create(struct sa *sa, const struct sa_req *req, struct port *p,
			       struct sa_answer *a)
{
	struct sa_group *g;
	uint8_t *r, mgid[16];
	uint16_t mlid, pkey = (uint16_t)mad_get_field((void *)req->rec, 0, IB_SA_MCM_PKEY_F);
	uint8_t mtu, rate;

	mad_get_array((void *)req->rec, 0, IB_SA_MCM_MGID_F, mgid);
	if ((memcmp(mgid, (uint8_t[16]){ 0 }, 16) && !mgid_valid(mgid)) ||
	    !realizable(req, p, &mtu, &rate)) {
		a->status = UMAD_SA_STATUS_REQ_INVALID;	/* o15-0.1.8, o15-0.2.4 */
		return NULL;
	}
	if (!(mlid = free_mlid(sa))) {
		g_warning("SA: every one of the %u MLIDs is in use: NO_RESOURCES", mlid_cap(sa));
		a->status = UMAD_SA_STATUS_NO_RESOURCES;
		return NULL;
	}
	g = g_new0(struct sa_group, 1);
	g->members = g_array_new(FALSE, TRUE, sizeof(struct sa_member));
	g->mlid = mlid;
	r = g->rec;
	memcpy(r, req->rec, MCR_SIZE);
	if (!memcmp(mgid, (uint8_t[16]){ 0 }, 16)) {
		/* ff1<scope>:a01b:<P_Key>::<MLID>, unique while the group lives */
		memset(mgid, 0, 16);
		mgid[0] = 0xff;
		mgid[1] = 0x12;
		put_be16(mgid, 2, MGID_SIGNATURE);
		put_be16(mgid, 4, pkey);
		put_be16(mgid, 14, mlid);
	}
	mad_set_array(r, 0, IB_SA_MCM_MGID_F, mgid);
	memset(r + 16, 0, 16);	/* PortGID: a member's */
	mad_set_field(r, 0, IB_SA_MCM_MLID_F, mlid);
	r[MCR_MTU_OFF] = (uint8_t)(SA_SEL_EXACTLY << 6 | mtu);
	r[MCR_RATE_OFF] = (uint8_t)(SA_SEL_EXACTLY << 6 | rate);
	if (!(req->comp & MCR_LIFE))
		r[MCR_LIFE_OFF] = (uint8_t)(SA_SEL_EXACTLY << 6 |
					    (port_mgmt(p)->subnet_timeout & 0x3f));
	if (!(req->comp & MCR_TCLASS))
		mad_set_field(r, 0, IB_SA_MCM_TCLASS_F, 0);
	if (!(req->comp & MCR_SL))
		mad_set_field(r, 0, IB_SA_MCM_SL_F, 0);
	if (!(req->comp & MCR_FLOW_LABEL))
		mad_set_field(r, 0, IB_SA_MCM_FLOW_LABEL_F, 0);
	if (!(req->comp & MCR_HOP_LIMIT))
		r[MCR_HOP_LIMIT_OFF] = 0;
	/* Scope is the MGID's (IBA 4.1.1), JoinState and ProxyJoin a member's. */
	r[MCR_SCOPE_JOIN_OFF] = (uint8_t)((mgid[1] & 0x0f) << 4);
	r[MCR_PROXY_OFF] = 0;
	g_ptr_array_add(sa->groups, g);
	g_debug("SA: group %04x:%04x:...:%04x MLID 0x%04x made", get_be16(mgid, 0),
		get_be16(mgid, 2), get_be16(mgid, 14), mlid);
	return g;
}

/* Does @have satisfy @want under the selector @sel (IBA 15.2.5.17)? */
static bool sel_ok(unsigned sel, unsigned have, unsigned want)
{
	return sel == SA_SEL_GREATER ? have > want :
	       sel == SA_SEL_LESS ? have < want :
	       sel == SA_SEL_EXACTLY ? have == want : true;
}

/*
 * May port @p join the existing group @g as @req asks (opensm's
 * validate_other_comp_fields, validate_more_comp_fields,
 * validate_port_caps and validate_modify)? The group's fields the
 * request names must be the group's, its MTU and rate selectors met;
 * the port must carry the group's MTU and rate; a member joined without
 * ProxyJoin changes only by its own port's requests.
 */
static bool joinable(const struct sa_group *g, const struct sa_req *req, const struct port *p)
{
	const struct sa_member *m = member_of((struct sa_group *)g, req->rec + 16, NULL);
	uint8_t mtu = g->rec[MCR_MTU_OFF] & 0x3f, rate = g->rec[MCR_RATE_OFF] & 0x3f;

	if (!sa_comp_match(group_comps, G_N_ELEMENTS(group_comps), req->comp, req->rec, g->rec))
		return false;
	if ((req->comp & MCR_MTU_SELECTOR) &&
	    !sel_ok(req->rec[MCR_MTU_OFF] >> 6, mtu, req->rec[MCR_MTU_OFF] & 0x3f))
		return false;
	if ((req->comp & MCR_RATE_SELECTOR) &&
	    !sel_ok(req->rec[MCR_RATE_OFF] >> 6, sa_rate_deci(rate),
		    sa_rate_deci(req->rec[MCR_RATE_OFF] & 0x3f)))
		return false;
	if (p->neighbor_mtu < mtu || sa_rate_deci(sa_rate_code(p)) < sa_rate_deci(rate))
		return false;
	return !m || m->proxy || !req->from || req->from == m->port;
}

/* SubnAdmSet(MCMemberRecord): join the port PortGID names. */
static void join(struct sa *sa, const struct sa_req *req, struct sa_answer *a)
{
	uint8_t gid[16], mgid[16], state = req->rec[MCR_SCOPE_JOIN_OFF] & 0x0f, *out;
	struct sa_group *g = NULL;
	struct sa_member *m, nm = { 0 };
	struct port *p;
	uint64_t guid;

	if (!(req->comp & MCR_PORT_GID) || !(req->comp & MCR_JOIN_STATE) || !state) {
		a->status = UMAD_SA_STATUS_INSUF_COMPS;
		return;
	}
	mad_get_array((void *)req->rec, 0, IB_SA_MCM_PORTGID_F, gid);
	memcpy(&guid, gid + 8, 8);
	p = sa_port_by_guid(sa->f, be64toh(guid));
	if (!p || node_is_switch(p->node) || !p->lid) {
		a->status = UMAD_SA_STATUS_INVALID_GID;
		return;
	}
	mad_get_array((void *)req->rec, 0, IB_SA_MCM_MGID_F, mgid);
	if ((req->comp & MCR_MGID) && memcmp(mgid, (uint8_t[16]){ 0 }, 16))
		g = group_by_mgid(sa, mgid);
	if (g && !joinable(g, req, p)) {
		a->status = UMAD_SA_STATUS_REQ_INVALID;
		return;
	}
	if (!g) {
		/* Making a group takes a full member and the fields opensm's
		 * REQUIRED_MC_CREATE_COMP_MASK names (IBA o15-0.1.3): MGID
		 * (0: the SA names it), Q_Key, TClass, P_Key, FlowLabel, SL. */
		if ((req->comp & MCR_CREATE) != MCR_CREATE) {
			a->status = UMAD_SA_STATUS_INSUF_COMPS;
			return;
		}
		if (!(state & JOIN_FULL)) {
			a->status = UMAD_SA_STATUS_REQ_INVALID;	/* o15-0.1.13 */
			return;
		}
		if (!(g = create(sa, req, p, a)))
			return;
	}
	m = member_of(g, gid, NULL);
	if (!m) {
		nm.port = p;
		memcpy(nm.gid, gid, 16);
		g_array_append_val(g->members, nm);
		m = &g_array_index(g->members, struct sa_member, g->members->len - 1);
	}
	m->join_state |= state;
	m->proxy = (req->comp & MCR_PROXY_JOIN) && (req->rec[MCR_PROXY_OFF] & 0x80);
	program(sa, g);
	a->recsz = MCR_SIZE;
	if ((out = sa_add(a)))
		member_rec(g, m, out);
}

/* SubnAdmDelete(MCMemberRecord): the port leaves with the JoinState bits
 * given; the group goes with its last member. */
static void leave(struct sa *sa, const struct sa_req *req, struct sa_answer *a)
{
	uint8_t gid[16], mgid[16], state = req->rec[MCR_SCOPE_JOIN_OFF] & 0x0f, *out;
	struct sa_group *g;
	struct sa_member *m;
	unsigned at = 0;

	mad_get_array((void *)req->rec, 0, IB_SA_MCM_MGID_F, mgid);
	mad_get_array((void *)req->rec, 0, IB_SA_MCM_PORTGID_F, gid);
	if (!(req->comp & MCR_MGID) || !(req->comp & MCR_PORT_GID) ||
	    !(g = group_by_mgid(sa, mgid)) || !(m = member_of(g, gid, &at))) {
		a->status = UMAD_SA_STATUS_REQ_INVALID;
		return;
	}
	/* The bits to leave must be some of the member's, none other
	 * (o15-0.1.14; opensm's validate_delete). */
	if (!(req->comp & MCR_JOIN_STATE))
		state = m->join_state;
	if (!(state & m->join_state) || (state & ~m->join_state)) {
		a->status = UMAD_SA_STATUS_REQ_INVALID;
		return;
	}
	/* The answer: the member as it is after (opensm's
	 * osm_mgrp_remove_port). */
	m->join_state &= (uint8_t)~state;
	a->recsz = MCR_SIZE;
	if ((out = sa_add(a)))
		member_rec(g, m, out);
	if (!m->join_state)
		g_array_remove_index(g->members, at);
	program(sa, g);
	if (!g->members->len) {
		g_debug("SA: group MLID 0x%04x gone with its last member", g->mlid);
		g_ptr_array_remove(sa->groups, g);
		group_free(g);
	}
}

/* Get and GetTable: a record for each member of each matching group to a
 * trusted requester that names no port; otherwise one a group (the
 * port's, if it names one), as opensm. */
static void query(struct sa *sa, const struct sa_req *req, struct sa_answer *a)
{
	uint8_t gid[16], *out;
	unsigned i, k;

	a->recsz = MCR_SIZE;
	mad_get_array((void *)req->rec, 0, IB_SA_MCM_PORTGID_F, gid);
	for (i = 0; i < sa->groups->len && !a->status; i++) {
		struct sa_group *g = g_ptr_array_index(sa->groups, i);
		struct sa_member *m = NULL;

		if (!sa_comp_match(group_comps, G_N_ELEMENTS(group_comps), req->comp, req->rec,
				   g->rec))
			continue;
		if (req->comp & MCR_PORT_GID) {
			if (!(m = member_of(g, gid, NULL)))
				continue;
		} else if (req->trusted) {
			for (k = 0; k < g->members->len && !a->status; k++)
				if ((out = sa_add(a)))
					member_rec(g, &g_array_index(g->members, struct sa_member,
								     k), out);
			continue;
		}
		if ((out = sa_add(a)))
			member_rec(g, m, out);
	}
}

void sa_mcmember(struct sa *sa, const struct sa_req *req, struct sa_answer *a)
{
	a->recsz = MCR_SIZE;
	if (req->method == UMAD_METHOD_SET)
		join(sa, req, a);
	else if (req->method == UMAD_SA_METHOD_DELETE)
		leave(sa, req, a);
	else
		query(sa, req, a);
}
