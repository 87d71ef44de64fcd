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

uint8_t sa_rate_code(const struct port *p)
{
	unsigned d = port_rate_deci_gbps(p), i;
	uint8_t code = rates[0].code;

	for (i = 0; i < G_N_ELEMENTS(rates) && rates[i].deci <= d; i++)
		code = rates[i].code;
	return code;
}

static unsigned rate_deci(uint8_t code)
{
	unsigned i;

	for (i = 0; i < G_N_ELEMENTS(rates); i++)
		if (rates[i].code == code)
			return rates[i].deci;
	return 0;
}

bool sa_path(struct port *s, struct port *d, uint16_t pkey, struct ibv_path_record *pr)
{
	struct port *out[PATH_MAX_HOPS], *dest = NULL, *sm = port_mgmt(s);
	unsigned n = 0, i;
	uint8_t mtu = s->neighbor_mtu, rate = sa_rate_code(s), gid[16];

	if (s->state != PORT_ACTIVE || d->state != PORT_ACTIVE || !s->lid || !d->lid ||
	    fabric_data_path(s, d->lid, pkey, out, PATH_MAX_HOPS, &n, &dest) || dest != d)
		return false;
	for (i = 0; i < n; i++) {
		mtu = MIN(mtu, out[i]->neighbor_mtu);
		if (rate_deci(sa_rate_code(out[i])) < rate_deci(rate))
			rate = sa_rate_code(out[i]);
	}
	memset(pr, 0, sizeof(*pr));
	port_gid(d, 0, gid);
	memcpy(&pr->dgid, gid, 16);
	port_gid(s, 0, gid);
	memcpy(&pr->sgid, gid, 16);
	pr->dlid = htobe16(d->lid);
	pr->slid = htobe16(s->lid);
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
	    !selected(rate_deci(r->rate & 0x3f), rate_deci(q->rate & 0x3f),
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
	if (p && !node_is_switch(p->node) &&
	    (!(comp & lid_bit) || port_owns_lid(p, lid)))
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
		uint16_t pkey = req->comp & PR_COMP_PKEY ? be16toh(q.pkey) :
			       s->pkeys[0] ? s->pkeys[0] : PKEY_DEFAULT;

		if (node_is_switch(s->node) || port_pkey_find(s, pkey) < 0)
			continue;
		for (j = 0; j < dst->len && !a->status; j++) {
			struct port *d = g_ptr_array_index(dst, j);
			uint8_t *rec;

			if (node_is_switch(d->node) || !sa_path(s, d, pkey, &r))
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
