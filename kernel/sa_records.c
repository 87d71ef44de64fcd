/* SPDX-License-Identifier: MIT */
/*
 * The SA's records of what an SM's sweep finds (IBA 15.2.5): NodeRecord,
 * PortInfoRecord, SwitchInfoRecord, LinkRecord, GUIDInfoRecord and
 * P_KeyTableRecord. Each embeds the attribute its node's SMA gives, so
 * the SA reads it from the SMA (a Get with the port's M_Key), as an SM
 * reads it on its sweep; nothing here lays out an SMP attribute again.
 */
#include "config.h"

#include <endian.h>
#include <string.h>

#include <infiniband/umad_sa.h>
#include <infiniband/umad_types.h>

#include "fabric/port.h"
#include "fabric/sma.h"
#include "kernel/sa_priv.h"

/* Record sizes and where their attribute starts (IBA 15.2.5.2-15.2.5.11). */
#define NR_SIZE		108
#define NR_INFO_OFF	4
#define NR_DESC_OFF	44
#define PIR_SIZE	68
#define PIR_INFO_OFF	4
#define SWIR_SIZE	24
#define SWIR_INFO_OFF	4
#define LR_SIZE		8
#define GIR_SIZE	72
#define GIR_INFO_OFF	8
#define PKR_SIZE	72
#define PKR_INFO_OFF	8

/* What node @n's SMA answers to Get(@attr, @mod) arriving at @in, into
 * @data (64 bytes); false if it has no such attribute. */
static bool sma_get(struct port *in, uint16_t attr, uint32_t mod, uint8_t *data)
{
	MAD_BUF(req);
	MAD_BUF(resp);

	memset(req, 0, MAD_SIZE);
	req[0] = 1;
	req[1] = UMAD_CLASS_SUBN_LID_ROUTED;
	req[2] = 1;
	req[3] = UMAD_METHOD_GET;
	mad_set_field(req, 0, IB_MAD_ATTRID_F, attr);
	mad_set_field(req, 0, IB_MAD_ATTRMOD_F, mod);
	mad_set_field64(req, 0, IB_MAD_MKEY_F, port_mgmt(in)->mkey);
	if (sma_process(in->node, in, req, resp) != SMA_REPLY || mad_status(resp))
		return false;
	memcpy(data, resp + IB_SMP_DATA_OFFS, IB_SMP_DATA_SIZE);
	return true;
}

/* The port an SMP for a node's attribute arrives at: port 0 of a switch. */
static struct port *sma_port(struct port *p)
{
	return node_is_switch(p->node) ? &p->node->ports[0] : p;
}

GPtrArray *sa_end_ports(struct fabric *f)
{
	GPtrArray *a = g_ptr_array_new();
	unsigned i, j;

	for (i = 0; i < f->nodes->len; i++) {
		struct node *n = g_ptr_array_index(f->nodes, i);

		/* A RoCE network is not the SM's subnet (docs/roce.md). */
		if (n->off || n->eth_net)
			continue;
		if (node_is_switch(n)) {
			if (n->ports[0].lid)
				g_ptr_array_add(a, &n->ports[0]);
			continue;
		}
		for (j = 1; j <= n->nports; j++)
			if (n->ports[j].lid)
				g_ptr_array_add(a, &n->ports[j]);
	}
	return a;
}

struct port *sa_port_by_lid(struct fabric *f, uint16_t lid)
{
	GPtrArray *all = sa_end_ports(f);
	struct port *p = NULL;
	unsigned i;

	for (i = 0; lid && i < all->len && !p; i++)
		if (port_owns_lid(g_ptr_array_index(all, i), lid))
			p = g_ptr_array_index(all, i);
	g_ptr_array_free(all, TRUE);
	return p;
}

struct port *sa_port_by_guid(struct fabric *f, uint64_t guid)
{
	unsigned i, j;

	for (i = 0; guid && i < f->nodes->len; i++) {
		struct node *n = g_ptr_array_index(f->nodes, i);

		for (j = node_is_switch(n) ? 0 : 1; j <= (node_is_switch(n) ? 0u : n->nports); j++)
			if (n->ports[j].guid == guid)
				return &n->ports[j];
	}
	return NULL;
}

static const struct sa_comp nr_comps[] = {
	{ 0, IB_SA_NR_LID_F, 0, 0, false },
	{ 2, IB_NODE_BASE_VERS_F, NR_INFO_OFF, 0, false },
	{ 3, IB_NODE_CLASS_VERS_F, NR_INFO_OFF, 0, false },
	{ 4, IB_NODE_TYPE_F, NR_INFO_OFF, 0, false },
	{ 5, IB_NODE_NPORTS_F, NR_INFO_OFF, 0, false },
	{ 6, IB_NODE_SYSTEM_GUID_F, NR_INFO_OFF, 0, false },
	{ 7, IB_NODE_GUID_F, NR_INFO_OFF, 0, false },
	{ 8, IB_NODE_PORT_GUID_F, NR_INFO_OFF, 0, false },
	{ 9, IB_NODE_PARTITION_CAP_F, NR_INFO_OFF, 0, false },
	{ 10, IB_NODE_DEVID_F, NR_INFO_OFF, 0, false },
	{ 11, IB_NODE_REVISION_F, NR_INFO_OFF, 0, false },
	{ 12, IB_NODE_LOCAL_PORT_F, NR_INFO_OFF, 0, false },
	{ 13, IB_NODE_VENDORID_F, NR_INFO_OFF, 0, false },
	{ 14, IB_NO_FIELD, NR_DESC_OFF, 64, false },
};

/* One NodeRecord for each end port: a CA's for each of its ports with a
 * LID (LocalPortNum and PortGUID differ), a switch's for port 0. */
void sa_node_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a)
{
	GPtrArray *all = sa_end_ports(sa->f);
	uint8_t rec[SA_REC_MAX];
	unsigned i;

	a->recsz = NR_SIZE;
	for (i = 0; i < all->len && !a->status; i++) {
		struct port *p = g_ptr_array_index(all, i);

		memset(rec, 0, sizeof(rec));
		mad_set_field(rec, 0, IB_SA_NR_LID_F, port_mgmt(p)->lid);
		if (sma_get(p, IB_ATTR_NODE_INFO, 0, rec + NR_INFO_OFF) &&
		    sma_get(p, IB_ATTR_NODE_DESC, 0, rec + NR_DESC_OFF))
			sa_add_matching(a, req, nr_comps, G_N_ELEMENTS(nr_comps), rec);
	}
	g_ptr_array_free(all, TRUE);
}

#define PI(bit, f)	{ bit, f, PIR_INFO_OFF, 0, false }
static const struct sa_comp pir_comps[] = {
	{ 0, IB_SA_NR_LID_F, 0, 0, false },	/* EndportLID: the first 16 bits, as NodeRecord's LID */
	{ 1, IB_NO_FIELD, 2, 1, false },
	PI(3, IB_PORT_MKEY_F), PI(4, IB_PORT_GID_PREFIX_F), PI(5, IB_PORT_LID_F),
	PI(6, IB_PORT_SMLID_F), { 7, IB_PORT_CAPMASK_F, PIR_INFO_OFF, 0, true },
	PI(8, IB_PORT_DIAG_F), PI(9, IB_PORT_MKEY_LEASE_F), PI(10, IB_PORT_LOCAL_PORT_F),
	PI(11, IB_PORT_LINK_WIDTH_ENABLED_F), PI(12, IB_PORT_LINK_WIDTH_SUPPORTED_F),
	PI(13, IB_PORT_LINK_WIDTH_ACTIVE_F), PI(14, IB_PORT_LINK_SPEED_SUPPORTED_F),
	PI(15, IB_PORT_STATE_F), PI(16, IB_PORT_PHYS_STATE_F), PI(17, IB_PORT_LINK_DOWN_DEF_F),
	PI(18, IB_PORT_MKEY_PROT_BITS_F), PI(20, IB_PORT_LMC_F),
	PI(21, IB_PORT_LINK_SPEED_ACTIVE_F), PI(22, IB_PORT_LINK_SPEED_ENABLED_F),
	PI(23, IB_PORT_NEIGHBOR_MTU_F), PI(24, IB_PORT_SMSL_F), PI(25, IB_PORT_VL_CAP_F),
	PI(31, IB_PORT_MTU_CAP_F), PI(33, IB_PORT_HOQ_LIFE_F), PI(34, IB_PORT_OPER_VLS_F),
	PI(45, IB_PORT_SUBN_TIMEOUT_F), PI(47, IB_PORT_RESP_TIME_VAL_F),
	PI(53, IB_PORT_CAPMASK2_F), PI(54, IB_PORT_LINK_SPEED_EXT_ACTIVE_F),
	PI(55, IB_PORT_LINK_SPEED_EXT_SUPPORTED_F), PI(57, IB_PORT_LINK_SPEED_EXT_ENABLED_F),
};
#undef PI

/* The ports of @n that have a PortInfoRecord: every port of a switch
 * with a LID, a CA's ports with a LID. */
static bool pir_port(const struct port *p)
{
	return node_is_switch(p->node) ? p->node->ports[0].lid != 0 : p->lid != 0;
}

void sa_portinfo_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a)
{
	uint8_t rec[SA_REC_MAX];
	unsigned i, j;

	a->recsz = PIR_SIZE;
	for (i = 0; i < sa->f->nodes->len && !a->status; i++) {
		struct node *n = g_ptr_array_index(sa->f->nodes, i);

		for (j = node_is_switch(n) ? 0 : 1; j <= n->nports && !a->status; j++) {
			struct port *p = &n->ports[j];

			if (n->off || !pir_port(p))
				continue;
			memset(rec, 0, sizeof(rec));
			mad_set_field(rec, 0, IB_SA_NR_LID_F, port_mgmt(p)->lid);
			rec[2] = (uint8_t)j;
			if (!sma_get(sma_port(p), IB_ATTR_PORT_INFO, j, rec + PIR_INFO_OFF))
				continue;
			/* opensm shows the M_Key only to a trusted requester. */
			if (!req->trusted)
				mad_set_field64(rec, PIR_INFO_OFF, IB_PORT_MKEY_F, 0);
			sa_add_matching(a, req, pir_comps, G_N_ELEMENTS(pir_comps), rec);
		}
	}
}

static const struct sa_comp swir_comps[] = {
	{ 0, IB_SA_NR_LID_F, 0, 0, false },
};

void sa_switchinfo_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a)
{
	uint8_t rec[SA_REC_MAX];
	unsigned i;

	a->recsz = SWIR_SIZE;
	for (i = 0; i < sa->f->nodes->len && !a->status; i++) {
		struct node *n = g_ptr_array_index(sa->f->nodes, i);
		uint8_t data[IB_SMP_DATA_SIZE];

		if (n->off || !node_is_switch(n) || !n->ports[0].lid)
			continue;
		memset(rec, 0, sizeof(rec));
		mad_set_field(rec, 0, IB_SA_NR_LID_F, n->ports[0].lid);
		if (!sma_get(&n->ports[0], IB_ATTR_SWITCH_INFO, 0, data))
			continue;
		memcpy(rec + SWIR_INFO_OFF, data, SWIR_SIZE - SWIR_INFO_OFF);
		sa_add_matching(a, req, swir_comps, G_N_ELEMENTS(swir_comps), rec);
	}
}

static const struct sa_comp lr_comps[] = {
	{ 0, IB_NO_FIELD, 0, 2, false },
	{ 1, IB_NO_FIELD, 2, 1, false },
	{ 2, IB_NO_FIELD, 3, 1, false },
	{ 3, IB_NO_FIELD, 4, 2, false },
};

/* A LinkRecord for each cable end whose node has a LID, from it to the
 * far end (IBA 15.2.5.13): both directions of every Active link. */
void sa_link_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a)
{
	uint8_t rec[LR_SIZE];
	unsigned i, j;

	a->recsz = LR_SIZE;
	for (i = 0; i < sa->f->nodes->len && !a->status; i++) {
		struct node *n = g_ptr_array_index(sa->f->nodes, i);

		for (j = 1; j <= n->nports && !a->status; j++) {
			struct port *p = &n->ports[j], *r = p->remote;
			uint16_t from = port_mgmt(p)->lid, to;

			if (n->off || !r || r->node->off || p->state < PORT_ARMED || !from ||
			    !(to = port_mgmt(r)->lid))
				continue;
			rec[0] = (uint8_t)(from >> 8);
			rec[1] = (uint8_t)from;
			rec[2] = p->num;
			rec[3] = r->num;
			rec[4] = (uint8_t)(to >> 8);
			rec[5] = (uint8_t)to;
			rec[6] = rec[7] = 0;
			sa_add_matching(a, req, lr_comps, G_N_ELEMENTS(lr_comps), rec);
		}
	}
}

static const struct sa_comp gir_comps[] = {
	{ 0, IB_SA_GIR_LID_F, 0, 0, false },
	{ 1, IB_SA_GIR_BLOCKNUM_F, 0, 0, false },
};

/* A GUIDInfoRecord for each CA port with a LID (block 0: its 8 GUIDs). */
void sa_guidinfo_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a)
{
	GPtrArray *all = sa_end_ports(sa->f);
	uint8_t rec[SA_REC_MAX];
	unsigned i;

	a->recsz = GIR_SIZE;
	for (i = 0; i < all->len && !a->status; i++) {
		struct port *p = g_ptr_array_index(all, i);

		if (node_is_switch(p->node))
			continue;
		memset(rec, 0, sizeof(rec));
		mad_set_field(rec, 0, IB_SA_GIR_LID_F, p->lid);
		if (sma_get(p, IB_ATTR_GUID_INFO, 0, rec + GIR_INFO_OFF))
			sa_add_matching(a, req, gir_comps, G_N_ELEMENTS(gir_comps), rec);
	}
	g_ptr_array_free(all, TRUE);
}

static const struct sa_comp pkr_comps[] = {
	{ 0, IB_NO_FIELD, 0, 2, false },
	{ 1, IB_NO_FIELD, 2, 2, false },
	{ 2, IB_NO_FIELD, 4, 1, false },
};

/* A P_KeyTableRecord for each block of each end port's table (a switch's
 * port 0; IBA 15.2.5.11). */
void sa_pkey_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a)
{
	GPtrArray *all = sa_end_ports(sa->f);
	uint8_t rec[SA_REC_MAX];
	unsigned i, b;

	a->recsz = PKR_SIZE;
	/* Only to a trusted requester (IBA p922; opensm: ERR_REQ_DENIED). */
	if (!req->trusted) {
		a->status = UMAD_SA_STATUS_REQ_DENIED;
		g_ptr_array_free(all, TRUE);
		return;
	}
	for (i = 0; i < all->len && !a->status; i++) {
		struct port *p = g_ptr_array_index(all, i);
		uint16_t lid = port_mgmt(p)->lid;

		for (b = 0; b * 32 < MAX(p->npkeys, 1u) && !a->status; b++) {
			memset(rec, 0, sizeof(rec));
			rec[0] = (uint8_t)(lid >> 8);
			rec[1] = (uint8_t)lid;
			rec[2] = (uint8_t)(b >> 8);
			rec[3] = (uint8_t)b;
			rec[4] = p->num;
			if (sma_get(p, IB_ATTR_PKEY_TBL, b, rec + PKR_INFO_OFF))
				sa_add_matching(a, req, pkr_comps, G_N_ELEMENTS(pkr_comps), rec);
		}
	}
	g_ptr_array_free(all, TRUE);
}

/* LinearForwardingTableRecord (IBA 15.2.5.6): LID, BlockNum, then the
 * block; MulticastForwardingTableRecord (15.2.5.8): LID, Position and
 * BlockNum in one word, then the block. */
#define FTR_SIZE	72
#define FTR_INFO_OFF	8

static const struct sa_comp lftr_comps[] = {
	{ 0, IB_NO_FIELD, 0, 2, false },
	{ 1, IB_NO_FIELD, 2, 2, false },
};

/* Every switch's LFT blocks up to LinearFDBTop. */
void sa_lft_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a)
{
	uint8_t rec[SA_REC_MAX];
	unsigned i, b;

	a->recsz = FTR_SIZE;
	for (i = 0; i < sa->f->nodes->len && !a->status; i++) {
		struct node *n = g_ptr_array_index(sa->f->nodes, i);

		if (n->off || !node_is_switch(n) || !n->ports[0].lid)
			continue;
		for (b = 0; b <= n->sw->lft_top / 64u && !a->status; b++) {
			memset(rec, 0, sizeof(rec));
			put_be16(rec, 0, n->ports[0].lid);
			put_be16(rec, 2, (uint16_t)b);
			if (sma_get(&n->ports[0], IB_ATTR_LINEARFORWTBL, b, rec + FTR_INFO_OFF))
				sa_add_matching(a, req, lftr_comps, G_N_ELEMENTS(lftr_comps), rec);
		}
	}
}

static const struct sa_comp mftr_comps[] = {
	{ 0, IB_NO_FIELD, 0, 2, false },
};

/* Every switch's MFT blocks that hold an MLID up to MulticastFDBTop, at
 * each position (16 ports). Position and block are compared by hand: they
 * share a word (bits 1 and 3 of the mask; 2 is reserved). */
void sa_mft_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a)
{
	uint8_t rec[SA_REC_MAX];
	unsigned i, b, pos, qpos = req->rec[2] >> 4, qblock = get_be16(req->rec, 2) & 0x1ff;

	a->recsz = FTR_SIZE;
	for (i = 0; i < sa->f->nodes->len && !a->status; i++) {
		struct node *n = g_ptr_array_index(sa->f->nodes, i);

		if (n->off || !node_is_switch(n) || !n->ports[0].lid || n->sw->mft_top < 0xc000)
			continue;
		for (b = 0; b <= (n->sw->mft_top - 0xc000u) / 32 && !a->status; b++)
			for (pos = 0; pos <= n->nports / 16u && !a->status; pos++) {
				memset(rec, 0, sizeof(rec));
				put_be16(rec, 0, n->ports[0].lid);
				put_be16(rec, 2, (uint16_t)(pos << 12 | b));
				if ((!(req->comp & 2) || pos == qpos) && (!(req->comp & 8) || b == qblock) &&
				    sma_get(&n->ports[0], IB_ATTR_MULTICASTFORWTBL, pos << 28 | b,
					    rec + FTR_INFO_OFF))
					sa_add_matching(a, req, mftr_comps, G_N_ELEMENTS(mftr_comps), rec);
			}
	}
}

/* SMInfoRecord (IBA 15.2.5.5): LID, then SMInfo. The SM a configured
 * fabric stands for is the one at the SA's port: master, priority 0. */
#define SMIR_SIZE	28
#define SMIR_INFO_OFF	4
#define SM_STATE_MASTER	3

static const struct sa_comp smir_comps[] = {
	{ 0, IB_NO_FIELD, 0, 2, false },
	{ 2, IB_SMINFO_GUID_F, SMIR_INFO_OFF, 0, false },
	{ 3, IB_SMINFO_KEY_F, SMIR_INFO_OFF, 0, false },
	{ 4, IB_SMINFO_ACT_F, SMIR_INFO_OFF, 0, false },
	{ 5, IB_SMINFO_PRIO_F, SMIR_INFO_OFF, 0, false },
	{ 6, IB_SMINFO_STATE_F, SMIR_INFO_OFF, 0, false },
};

void sa_sminfo_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a)
{
	uint8_t rec[SA_REC_MAX];

	(void)sa;
	a->recsz = SMIR_SIZE;
	memset(rec, 0, sizeof(rec));
	put_be16(rec, 0, port_mgmt(req->sm)->lid);
	mad_set_field64(rec, SMIR_INFO_OFF, IB_SMINFO_GUID_F, req->sm->guid);
	mad_set_field(rec, SMIR_INFO_OFF, IB_SMINFO_STATE_F, SM_STATE_MASTER);
	sa_add_matching(a, req, smir_comps, G_N_ELEMENTS(smir_comps), rec);
}

/* SLtoVLMappingTableRecord (IBA 15.2.5.4): LID, input and output port,
 * the table; VLArbitrationTableRecord (15.2.5.9): LID, output port,
 * block, the table. A switch's every (input, output) pair and every
 * output port's four blocks, a CA port's own; as the SMA answers them. */
#define SLVL_SIZE	16
#define VLA_SIZE	72
#define TBL_INFO_OFF	8
#define VLA_BLOCKS	4

static const struct sa_comp slvl_comps[] = {
	{ 0, IB_NO_FIELD, 0, 2, false },
	{ 1, IB_NO_FIELD, 2, 1, false },
	{ 2, IB_NO_FIELD, 3, 1, false },
};

static void slvl_one(struct sa_answer *a, const struct sa_req *req, struct port *at,
		     uint16_t lid, unsigned in, unsigned out_port)
{
	uint8_t rec[SA_REC_MAX], data[IB_SMP_DATA_SIZE];
	bool sw = node_is_switch(at->node);

	memset(rec, 0, sizeof(rec));
	put_be16(rec, 0, lid);
	rec[2] = (uint8_t)in;
	rec[3] = (uint8_t)out_port;
	if (!sma_get(at, IB_ATTR_SLVL_TABLE, sw ? in << 8 | out_port : 0, data))
		return;
	memcpy(rec + TBL_INFO_OFF, data, SLVL_SIZE - TBL_INFO_OFF);
	sa_add_matching(a, req, slvl_comps, G_N_ELEMENTS(slvl_comps), rec);
}

void sa_slvl_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a)
{
	GPtrArray *all = sa_end_ports(sa->f);
	unsigned i, in, o;

	a->recsz = SLVL_SIZE;
	for (i = 0; i < all->len && !a->status; i++) {
		struct port *p = g_ptr_array_index(all, i);
		struct node *n = p->node;

		if (!node_is_switch(n)) {
			slvl_one(a, req, p, p->lid, 0, p->num);
			continue;
		}
		for (in = 0; in <= n->nports && !a->status; in++)
			for (o = 1; o <= n->nports && !a->status; o++)
				if (in != o)
					slvl_one(a, req, &n->ports[0], n->ports[0].lid, in, o);
	}
	g_ptr_array_free(all, TRUE);
}

static const struct sa_comp vla_comps[] = {
	{ 0, IB_NO_FIELD, 0, 2, false },
	{ 1, IB_NO_FIELD, 2, 1, false },
	{ 2, IB_NO_FIELD, 3, 1, false },
};

void sa_vlarb_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a)
{
	GPtrArray *all = sa_end_ports(sa->f);
	uint8_t rec[SA_REC_MAX];
	unsigned i, o, b;

	a->recsz = VLA_SIZE;
	for (i = 0; i < all->len && !a->status; i++) {
		struct port *p = g_ptr_array_index(all, i);
		struct node *n = p->node;
		bool sw = node_is_switch(n);

		for (o = sw ? 1 : p->num; o <= (sw ? n->nports : p->num) && !a->status; o++)
			for (b = 1; b <= VLA_BLOCKS && !a->status; b++) {
				memset(rec, 0, sizeof(rec));
				put_be16(rec, 0, port_mgmt(p)->lid);
				rec[2] = (uint8_t)o;
				rec[3] = (uint8_t)b;
				if (sma_get(p, IB_ATTR_VL_ARBITRATION, b << 16 | (sw ? o : 0),
					    rec + TBL_INFO_OFF))
					sa_add_matching(a, req, vla_comps, G_N_ELEMENTS(vla_comps), rec);
			}
	}
	g_ptr_array_free(all, TRUE);
}
