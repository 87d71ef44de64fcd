/* SPDX-License-Identifier: MIT */
/*
 * PathRecords (IBA 15.2.5.16): the way the switches' forwarding tables
 * give from one CA port to another, as opensm's SA answers them
 * (osm_sa_path_record.c: the MTU and rate of the narrowest link, the
 * subnet timeout as the packet lifetime), for the SA of a configured
 * fabric and the rdma_cm's own route when no SA answers.
 */
#include "config.h"

#include <endian.h>
#include <string.h>

#include <infiniband/umad_sa.h>

#include "fabric/port.h"
#include "kernel/sa_priv.h"

/* opensm's default subnet timeout, 4.096 us x 2^18, when the port has none. */
#define PACKET_LIFE_DEFAULT	18
/* The longest way fabric_data_path() walks. */
#define PATH_MAX_HOPS		64

/* IB rate codes (IBA Table 205) by rate in tenths of Gb/s, ascending. */
static const struct {
	unsigned deci;
	uint8_t code;
} rates[] = {
	{ 25, 2 }, { 50, 5 }, { 100, 3 }, { 140, 11 }, { 200, 6 }, { 250, 15 }, { 300, 4 },
	{ 400, 7 }, { 500, 21 }, { 560, 12 }, { 600, 8 }, { 800, 9 }, { 1000, 16 },
	{ 1120, 13 }, { 1200, 10 }, { 1680, 14 }, { 2000, 17 }, { 3000, 18 }, { 4000, 22 },
	{ 6000, 23 },
};

uint8_t sa_rate_step(uint8_t code, int dir)
{
	unsigned i;

	for (i = 0; i < G_N_ELEMENTS(rates); i++)
		if (rates[i].code == code)
			break;
	if (i == G_N_ELEMENTS(rates) || (dir < 0 && i == 0) ||
	    (dir > 0 && i + 1 == G_N_ELEMENTS(rates)))
		return 0;
	return rates[(int)i + dir].code;
}

uint8_t sa_rate_code(const struct port *p)
{
	unsigned d = port_rate_deci_gbps(p), i;
	uint8_t code = rates[0].code;

	for (i = 0; i < G_N_ELEMENTS(rates) && rates[i].deci <= d; i++)
		code = rates[i].code;
	return code;
}

unsigned sa_rate_deci(uint8_t code)
{
	unsigned i;

	for (i = 0; i < G_N_ELEMENTS(rates); i++)
		if (rates[i].code == code)
			return rates[i].deci;
	return 0;
}

/* Can a packet leave by @p onto its cable (route.c's rule for data)? */
static bool leaves(const struct port *p)
{
	const struct port *r = p->remote;

	return r && !r->node->off && p->phys_state == PHYS_LINKUP && r->phys_state == PHYS_LINKUP &&
	       p->state == PORT_ACTIVE && r->state >= PORT_ARMED;
}

/*
 * The way from end port @s to end port @d where one is a switch's port 0
 * (a data packet's, CA to CA, is fabric_data_path()'s): the switches'
 * LFTs from @s (a switch starts at its own table), the ports left by in
 * @out. False if it does not reach @d.
 */
static bool switch_walk(struct port *s, struct port *d, struct port **out, unsigned *n)
{
	struct node *at = s->node;
	uint16_t dlid = port_mgmt(d)->lid;
	struct port *p = node_is_switch(at) ? NULL : s;

	*n = 0;
	while (*n < PATH_MAX_HOPS) {
		if (!p) {
			unsigned o;

			if (port_owns_lid(&at->ports[0], dlid))
				return &at->ports[0] == d;
			o = dlid < at->sw->lft_len ? at->sw->lft[dlid] : 0xff;
			if (!o || o > at->nports)
				return false;
			p = &at->ports[o];
		}
		if (!leaves(p))
			return false;
		out[(*n)++] = p;
		at = p->remote->node;
		if (!node_is_switch(at))
			return p->remote == d;
		p = NULL;
	}
	return false;
}

bool sa_path(struct port *s, struct port *d, uint16_t pkey, struct ibv_path_record *pr)
{
	struct port *out[PATH_MAX_HOPS], *dest = NULL, *sm = port_mgmt(s);
	unsigned n = 0, i;
	uint8_t mtu = s->neighbor_mtu, rate = sa_rate_code(s), gid[16];
	bool sw = node_is_switch(s->node) || node_is_switch(d->node);

	if (port_mgmt(s)->state != PORT_ACTIVE || port_mgmt(d)->state != PORT_ACTIVE ||
	    !port_mgmt(s)->lid || !port_mgmt(d)->lid)
		return false;
	if (sw ? !switch_walk(s, d, out, &n) :
		 fabric_data_path(s, d->lid, pkey, out, PATH_MAX_HOPS, &n, &dest) || dest != d)
		return false;
	/* A switch's own port 0 reaches itself over no cable. */
	if (!n && node_is_switch(s->node)) {
		mtu = s->mtu_cap;
		rate = sa_rate_code(s);
	} else if (n) {
		mtu = out[0]->neighbor_mtu;
		rate = sa_rate_code(out[0]);
	}
	for (i = 0; i < n; i++) {
		mtu = MIN(mtu, out[i]->neighbor_mtu);
		if (sa_rate_deci(sa_rate_code(out[i])) < sa_rate_deci(rate))
			rate = sa_rate_code(out[i]);
	}
	memset(pr, 0, sizeof(*pr));
	port_gid(d, 0, gid);
	memcpy(&pr->dgid, gid, 16);
	port_gid(s, 0, gid);
	memcpy(&pr->sgid, gid, 16);
	pr->dlid = htobe16(port_mgmt(d)->lid);
	pr->slid = htobe16(port_mgmt(s)->lid);
	pr->reversible_numpath = IBV_PATH_RECORD_REVERSIBLE;
	pr->pkey = htobe16(pkey);
	pr->mtu = (uint8_t)(SA_SEL_EXACTLY << 6 | mtu);
	pr->rate = (uint8_t)(SA_SEL_EXACTLY << 6 | rate);
	pr->packetlifetime = (uint8_t)(SA_SEL_EXACTLY << 6 |
				       (sm->subnet_timeout ? sm->subnet_timeout : PACKET_LIFE_DEFAULT));
	return true;
}

/* Does @have satisfy the query's @want under @sel (IBA 15.2.5.16)? */
static bool selected(unsigned have, unsigned want, unsigned sel)
{
	switch (sel) {
	case SA_SEL_GREATER:
		return have > want;
	case SA_SEL_LESS:
		return have < want;
	case SA_SEL_EXACTLY:
		return have == want;
	default:
		return true;	/* the largest available: what the path has */
	}
}

/* The query's MTU, rate and lifetime with their selectors (a value without
 * its selector bit means exactly). */
static bool selectors_match(uint64_t comp, const struct ibv_path_record *q,
			    const struct ibv_path_record *r)
{
	if ((comp & PR_COMP_MTU) &&
	    !selected(r->mtu & 0x3f, q->mtu & 0x3f,
		      comp & PR_COMP_MTU_SELECTOR ? q->mtu >> 6 : SA_SEL_EXACTLY))
		return false;
	if ((comp & PR_COMP_RATE) &&
	    !selected(sa_rate_deci(r->rate & 0x3f), sa_rate_deci(q->rate & 0x3f),
		      comp & PR_COMP_RATE_SELECTOR ? q->rate >> 6 : SA_SEL_EXACTLY))
		return false;
	if ((comp & PR_COMP_LIFE) &&
	    !selected(r->packetlifetime & 0x3f, q->packetlifetime & 0x3f,
		      comp & PR_COMP_LIFE_SELECTOR ? q->packetlifetime >> 6 : SA_SEL_EXACTLY))
		return false;
	return true;
}

/* The ports a query's GID or LID names, or every end port. */
static GPtrArray *ends(struct sa *sa, GPtrArray *all, uint64_t comp, uint64_t gid_bit,
		       uint64_t lid_bit, const union ibv_gid *gid, uint16_t lid)
{
	GPtrArray *some = g_ptr_array_new();
	struct port *p = NULL;

	if (comp & gid_bit)
		p = sa_port_by_guid(sa->f, be64toh(gid->global.interface_id));
	else if (comp & lid_bit)
		p = sa_port_by_lid(sa->f, lid);
	else
		g_ptr_array_extend(some, all, NULL, NULL);
	if (p && (!(comp & lid_bit) || port_owns_lid(port_mgmt(p), lid)))
		g_ptr_array_add(some, p);
	return some;
}

void sa_path_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a)
{
	struct ibv_path_record q, r;
	GPtrArray *all = sa_end_ports(sa->f), *src, *dst;
	unsigned i, j;

	memcpy(&q, req->rec, sizeof(q));
	a->recsz = sizeof(r);
	src = ends(sa, all, req->comp, PR_COMP_SGID, PR_COMP_SLID, &q.sgid, be16toh(q.slid));
	dst = ends(sa, all, req->comp, PR_COMP_DGID, PR_COMP_DLID, &q.dgid, be16toh(q.dlid));
	for (i = 0; i < src->len && !a->status; i++) {
		struct port *s = g_ptr_array_index(src, i);
		uint16_t pkey = req->comp & PR_COMP_PKEY ? be16toh(q.pkey) : port_first_pkey(s);

		if (port_pkey_find(port_mgmt(s), pkey) < 0)
			continue;
		for (j = 0; j < dst->len && !a->status; j++) {
			struct port *d = g_ptr_array_index(dst, j);
			uint8_t *rec;

			if (!sa_path(s, d, pkey, &r))
				continue;
			if ((req->comp & PR_COMP_SL) && (be16toh(q.qosclass_sl) & 0xf) != 0)
				continue;
			if (!selectors_match(req->comp, &q, &r))
				continue;
			if (req->comp & PR_COMP_SERVICE_ID)
				r.service_id = q.service_id;
			if ((rec = sa_add(a)))
				memcpy(rec, &r, sizeof(r));
		}
	}
	g_ptr_array_free(src, TRUE);
	g_ptr_array_free(dst, TRUE);
	g_ptr_array_free(all, TRUE);
}

/*
 * SubnAdmGetMulti(MultiPathRecord) (IBA 15.2.5.20): a PathRecord from
 * each source GID to each destination GID of the request that a packet
 * would reach, NumbPath of them at most when given. SGIDCount and
 * DGIDCount are needed (else ERR_INSUFFICIENT_COMPONENTS, as opensm); the
 * GIDs are read from the request's first MAD: as many as fit there (11).
 */
void sa_multipath_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a)
{
	unsigned ns = req->rec[MPR_SGID_COUNT_OFF], nd = req->rec[MPR_DGID_COUNT_OFF], i, j;
	unsigned limit = req->comp & MPR_COMP_NUMB_PATH ? req->rec[MPR_NUMB_PATH_OFF] & 0x7f : ~0u;
	struct ibv_path_record r;

	a->recsz = sizeof(r);
	if ((req->comp & (MPR_COMP_SGID_COUNT | MPR_COMP_DGID_COUNT)) !=
	    (MPR_COMP_SGID_COUNT | MPR_COMP_DGID_COUNT)) {
		a->status = UMAD_SA_STATUS_INSUF_COMPS;
		return;
	}
	if (MPR_GIDS_OFF + (ns + nd) * 16u > SA_REC_MAX) {
		a->status = UMAD_SA_STATUS_REQ_INVALID;
		return;
	}
	/* A GID no end port has: ERR_INVALID_GID; a multicast one (no
	 * multicast paths here): ERR_REQ_INVALID. */
	for (i = 0; i < ns + nd; i++) {
		const uint8_t *g = req->rec + MPR_GIDS_OFF + 16 * i;
		struct port *p = sa_port_by_guid(sa->f, get_be64(g, 8));

		if (g[0] == 0xff || !p) {
			g_debug("SA: MultiPathRecord: GID %u of %u+%u (0x%016" G_GINT64_MODIFIER
				"x:0x%016" G_GINT64_MODIFIER "x) is no CA port's", i, ns, nd,
				get_be64(g, 0), get_be64(g, 8));
			a->status = g[0] == 0xff ? UMAD_SA_STATUS_REQ_INVALID :
						   UMAD_SA_STATUS_INVALID_GID;
			return;
		}
	}
	for (i = 0; i < ns && !a->status; i++) {
		struct port *s = sa_port_by_guid(sa->f, get_be64(req->rec, MPR_GIDS_OFF + 16 * i + 8));
		uint16_t pkey;

		pkey = req->comp & MPR_COMP_PKEY ? get_be16(req->rec, MPR_PKEY_OFF) :
		       port_first_pkey(port_mgmt(s));
		for (j = 0; j < nd && a->n < limit && !a->status; j++) {
			struct port *d = sa_port_by_guid(sa->f, get_be64(req->rec, MPR_GIDS_OFF +
									   16 * (ns + j) + 8));
			uint8_t *out;

			if (sa_path(s, d, pkey, &r) && (out = sa_add(a)))
				memcpy(out, &r, sizeof(r));
		}
	}
}
