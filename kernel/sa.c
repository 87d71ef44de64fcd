/* SPDX-License-Identifier: MIT */
/*
 * The SA of a configured fabric (sa.h): a client of the host that takes
 * the SA requests reaching the SM's port which no program took, answers
 * them from one table of attributes and methods, as opensm's SA does
 * (IBA 15.4: Get answers one record or ERR_NO_RECORDS/TOO_MANY_RECORDS,
 * GetTable every match in one RMPP transfer, Set and Delete change what
 * the SA keeps), and sends the answer back from that port.
 */
#include "config.h"

#include <endian.h>
#include <string.h>

#include <infiniband/umad_sa.h>
#include <infiniband/umad_types.h>

#include "fabric/port.h"
#include "kernel/rmpp.h"
#include "kernel/sa_priv.h"
#include "lib/log.h"

/* The SA header ends at 56 (IBA 15.2.1.1): SM_Key at 36, AttributeOffset
 * at 44, ComponentMask at 48. */
#define SA_SMKEY_OFF		36
#define SA_ATTR_OFFSET_OFF	44
#define SA_COMP_OFF		48
/* The SM_Key that makes a request trusted: opensm's default sa_key. */
#define SA_KEY			1
/* ClassPortInfo's RespTimeValue: opensm's default, 4.096 us x 2^18. */
#define SA_RESP_TIME		18

/* Which methods an attribute takes. */
enum {
	M_GET = 1 << 0,
	M_GET_TABLE = 1 << 1,
	M_SET = 1 << 2,
	M_DELETE = 1 << 3,
	M_GET_MULTI = 1 << 4,
};

typedef void (*sa_fn)(struct sa *sa, const struct sa_req *req, struct sa_answer *a);

static void class_port_info(struct sa *sa, const struct sa_req *req, struct sa_answer *a);

static const struct sa_attr {
	uint16_t id;
	unsigned methods;
	sa_fn fn;
} attrs[] = {
	{ UMAD_ATTR_CLASS_PORT_INFO, M_GET, class_port_info },
	{ UMAD_SA_ATTR_NODE_REC, M_GET | M_GET_TABLE, sa_node_records },
	{ UMAD_SA_ATTR_PORT_INFO_REC, M_GET | M_GET_TABLE, sa_portinfo_records },
	{ UMAD_SA_ATTR_SWITCH_INFO_REC, M_GET | M_GET_TABLE, sa_switchinfo_records },
	{ UMAD_SA_ATTR_LINK_REC, M_GET | M_GET_TABLE, sa_link_records },
	{ UMAD_SA_ATTR_GUID_INFO_REC, M_GET | M_GET_TABLE, sa_guidinfo_records },
	{ UMAD_SA_ATTR_PKEY_TABLE_REC, M_GET | M_GET_TABLE, sa_pkey_records },
	{ UMAD_SA_ATTR_SM_INFO_REC, M_GET | M_GET_TABLE, sa_sminfo_records },
	{ UMAD_SA_ATTR_SLVL_REC, M_GET | M_GET_TABLE, sa_slvl_records },
	{ UMAD_SA_ATTR_VL_ARB_REC, M_GET | M_GET_TABLE, sa_vlarb_records },
	{ UMAD_SA_ATTR_LINEAR_FT_REC, M_GET | M_GET_TABLE, sa_lft_records },
	{ UMAD_SA_ATTR_MCAST_FT_REC, M_GET | M_GET_TABLE, sa_mft_records },
	{ UMAD_SA_ATTR_PATH_REC, M_GET | M_GET_TABLE, sa_path_records },
	{ UMAD_SA_ATTR_MULTI_PATH_REC, M_GET_MULTI, sa_multipath_records },
	{ UMAD_SA_ATTR_MCMEMBER_REC, M_GET | M_GET_TABLE | M_SET | M_DELETE, sa_mcmember },
	{ UMAD_SA_ATTR_SERVICE_REC, M_GET | M_GET_TABLE | M_SET | M_DELETE, sa_service },
	{ UMAD_ATTR_INFORM_INFO, M_SET, sa_inform_info },
	{ UMAD_SA_ATTR_INFORM_INFO_REC, M_GET | M_GET_TABLE, sa_inform_records },
};

/* The methods the SA takes: the bit an attribute's table gives it, its
 * response (Get and Set have GetResp, IBA 13.4.5), and whether the
 * response is every record in one RMPP transfer (GetTable, GetMulti). */
static const struct sa_method {
	uint8_t method, resp;
	unsigned bit;
	bool table;
} methods[] = {
	{ UMAD_METHOD_GET, UMAD_METHOD_GET_RESP, M_GET, false },
	{ UMAD_SA_METHOD_GET_TABLE, UMAD_SA_METHOD_GET_TABLE_RESP, M_GET_TABLE, true },
	{ UMAD_METHOD_SET, UMAD_METHOD_GET_RESP, M_SET, false },
	{ UMAD_SA_METHOD_DELETE, UMAD_SA_METHOD_DELETE_RESP, M_DELETE, false },
	{ UMAD_SA_METHOD_GET_MULTI, UMAD_SA_METHOD_GET_MULTI_RESP, M_GET_MULTI, true },
};

static const struct sa_method *method_of(uint8_t method)
{
	unsigned i;

	for (i = 0; i < G_N_ELEMENTS(methods); i++)
		if (methods[i].method == method)
			return &methods[i];
	return NULL;
}

uint8_t *sa_add(struct sa_answer *a)
{
	size_t stride = (a->recsz + 7) & ~(size_t)7;	/* records start on 8 bytes */
	size_t at = a->recs->len;

	if (a->n >= SA_MAX_RECORDS) {
		if (!a->status)
			g_warning("SA: an answer of more than %u records: NO_RESOURCES",
				  SA_MAX_RECORDS);
		a->status = UMAD_SA_STATUS_NO_RESOURCES;
		return NULL;
	}
	g_byte_array_set_size(a->recs, (guint)(at + stride));
	memset(a->recs->data + at, 0, stride);
	a->n++;
	return a->recs->data + at;
}

bool sa_comp_match(const struct sa_comp *t, size_t n, uint64_t comp, const uint8_t *q,
		   const uint8_t *rec)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint8_t want[64] = { 0 }, have[64] = { 0 };

		if (!(comp >> t[i].bit & 1))
			continue;
		if (t[i].field == IB_NO_FIELD) {
			if (memcmp(q + t[i].off, rec + t[i].off, t[i].len))
				return false;
			continue;
		}
		mad_decode_field((uint8_t *)q + t[i].off, t[i].field, want);
		mad_decode_field((uint8_t *)rec + t[i].off, t[i].field, have);
		if (t[i].all_bits) {
			uint32_t w, h;

			memcpy(&w, want, 4);
			memcpy(&h, have, 4);
			if ((h & w) != w)
				return false;
		} else if (memcmp(want, have, sizeof(want))) {
			return false;
		}
	}
	return true;
}

void sa_add_matching(struct sa_answer *a, const struct sa_req *req, const struct sa_comp *t,
		     size_t n, const uint8_t *rec)
{
	uint8_t *out;

	if (sa_comp_match(t, n, req->comp, req->rec, rec) && (out = sa_add(a)))
		memcpy(out, rec, a->recsz);
}

/* ClassPortInfo (IBA 13.4.8.1, 15.2.5): what opensm says of its SA. */
static void class_port_info(struct sa *sa, const struct sa_req *req, struct sa_answer *a)
{
	uint8_t *r;

	(void)sa;
	(void)req;
	a->recsz = 72;
	if (!(r = sa_add(a)))
		return;
	mad_set_field(r, 0, IB_CPI_BASEVER_F, 1);
	mad_set_field(r, 0, IB_CPI_CLASSVER_F, UMAD_SA_CLASS_VERSION);
	mad_set_field(r, 0, IB_CPI_CAPMASK_F, UMAD_SA_CAP_MASK_IS_UD_MCAST_SUP);
	mad_set_field(r, 0, IB_CPI_RESP_TIME_VALUE_F, SA_RESP_TIME);
}

/* Send @len bytes of answer @m back to the requester of @pkt from @port;
 * @table: a GetTableResp, one RMPP transfer whatever its size (IBA 15.4.4). */
static void send_answer(struct sa *sa, struct port *port, const struct mad_pkt *pkt,
			uint8_t *m, size_t len, bool table)
{
	struct mad_pkt out = { 0 };

	if (table) {
		out.rmpp = rmpp_message(m, len, SA_HDR_LEN);
		memcpy(out.mad, g_bytes_get_data(out.rmpp, NULL), MIN(len, (size_t)MAD_SIZE));
	} else {
		memcpy(out.mad, m, len);
	}
	out.slid = port_mgmt(port)->lid;
	out.dlid = pkt->slid;
	out.sqp = 1;
	out.dqp = pkt->sqp;
	out.qkey = QP1_QKEY;
	out.pkey = pkt->pkey;
	out.sl = pkt->sl;
	fabric_send(sa->f, port, &out);
	mad_pkt_release(&out);
}

/* Answer the request @pkt that reached the SM's port @port. */
static void answer(struct sa *sa, struct port *port, const struct mad_pkt *pkt)
{
	const uint8_t *m = pkt->mad;
	const struct sa_attr *at = NULL;
	struct sa_answer a = { .recs = g_byte_array_new() };
	struct sa_req req = { .method = mad_method(m), .slid = pkt->slid, .sm = port };
	const struct sa_method *mt = method_of(req.method);
	uint16_t status = 0;
	size_t i, stride, len;
	bool table;
	uint8_t *resp;

	/* A wrong SM_Key (neither 0 nor the SA's) goes unanswered, as
	 * opensm's SA drops it (IBA 15.4.1: not to be trusted, not told). */
	if (get_be64(m, SA_SMKEY_OFF) && get_be64(m, SA_SMKEY_OFF) != SA_KEY) {
		g_debug("SA: a request with a wrong SM_Key: dropped");
		return;
	}
	for (i = 0; i < G_N_ELEMENTS(attrs); i++)
		if (attrs[i].id == mad_attr_id(m))
			at = &attrs[i];
	req.comp = get_be64(m, SA_COMP_OFF);
	req.trusted = get_be64(m, SA_SMKEY_OFF) == SA_KEY;
	memcpy(req.rec, m + SA_HDR_LEN, SA_REC_MAX);
	req.from = sa_port_by_lid(sa->f, pkt->slid);
	if (mad_class_version(m) != UMAD_SA_CLASS_VERSION)
		status = UMAD_STATUS_BAD_VERSION;
	else if (!at || !mt || !(at->methods & mt->bit))
		status = UMAD_STATUS_ATTR_NOT_SUPPORTED;
	else {
		at->fn(sa, &req, &a);
		if (!a.status && req.method == UMAD_METHOD_GET && a.n != 1)
			a.status = a.n ? UMAD_SA_STATUS_TOO_MANY_RECORDS :
					 UMAD_SA_STATUS_NO_RECORDS;
		status = (uint16_t)(a.status << 8);	/* the class-specific bits (IBA 13.4.7) */
	}
	if (status)
		a.n = 0;
	stride = (a.recsz + 7) & ~(size_t)7;
	/* GetTableResp and GetMultiResp: every record, one RMPP transfer. */
	table = mt && mt->table;
	/* GetTableResp carries every record (none is a valid answer); the
	 * others one, or none with an error. */
	if (table)
		len = SA_HDR_LEN + (size_t)a.n * stride;
	else
		len = MAD_SIZE;
	resp = g_malloc0(MAX(len, (size_t)MAD_SIZE));
	memcpy(resp, m, SA_HDR_LEN);
	resp[MAD_OFF(method)] = mt ? mt->resp : UMAD_METHOD_GET_RESP;
	mad_set_status(resp, status);
	memset(resp + 24, 0, 12);	/* the RMPP header: rmpp_message writes it */
	memset(resp + SA_SMKEY_OFF, 0, 8);
	put_be16(resp, SA_ATTR_OFFSET_OFF, (uint16_t)(stride / 8));
	if (table && a.n)
		memcpy(resp + SA_HDR_LEN, a.recs->data, (size_t)a.n * stride);
	else if (!table && !status && a.n)
		memcpy(resp + SA_HDR_LEN, a.recs->data, MIN(a.recs->len, (guint)SA_REC_MAX));
	else if (!table && status)
		memcpy(resp + SA_HDR_LEN, req.rec, SA_REC_MAX);	/* opensm echoes the query */
	if (log_tracing())
		g_debug("SA: method 0x%02x attr 0x%04x comp 0x%" G_GINT64_MODIFIER "x from LID %u"
			" -> status 0x%04x, %u records", req.method, mad_attr_id(m), req.comp,
			pkt->slid, status, a.n);
	send_answer(sa, port, pkt, resp, len, table);
	g_free(resp);
	g_byte_array_free(a.recs, TRUE);
}

static enum upper_verdict sa_deliver(void *ctx, struct port *port, const struct mad_pkt *pkt)
{
	struct sa *sa = ctx;
	struct port *m = port_mgmt(port);

	if (pkt->data || !m->lid || m->sm_lid != m->lid)
		return UPPER_UNCLAIMED;
	/* A trap to the SM's own port: the SM's to forward (sa_report.c). */
	if (mad_class(pkt->mad) == UMAD_CLASS_SUBN_LID_ROUTED && pkt->dqp == 0 &&
	    mad_method(pkt->mad) == UMAD_METHOD_TRAP && mad_attr_id(pkt->mad) == UMAD_ATTR_NOTICE) {
		sa_trap(sa, port, pkt);
		return UPPER_TAKEN;
	}
	/* Requests of the SA class to the SM's own port: the SM's SA; and
	 * the subscribers' ReportResps, which it takes (sa_report.c). */
	if (mad_class(pkt->mad) != UMAD_CLASS_SUBN_ADM || pkt->dqp != 1)
		return UPPER_UNCLAIMED;
	if (mad_method(pkt->mad) == UMAD_METHOD_REPORT_RESP)
		return UPPER_TAKEN;
	if (mad_is_response(pkt->mad))
		return UPPER_UNCLAIMED;
	answer(sa, port, pkt);
	return UPPER_TAKEN;
}

static const struct host_client sa_client = { .deliver = sa_deliver };

struct sa *sa_new(struct host *h)
{
	struct sa *sa = g_new0(struct sa, 1);

	sa->h = h;
	sa->f = host_fabric(h);
	sa->groups = g_ptr_array_new();
	sa->services = g_ptr_array_new_with_free_func(g_free);	/* struct sa_svc */
	sa->informs = g_ptr_array_new_with_free_func(g_free);
	host_register_client(h, &sa_client, sa);
	return sa;
}

void sa_free(struct sa *sa)
{
	if (!sa)
		return;
	host_unregister_client(sa->h, &sa_client, sa);
	sa_mcast_free(sa);
	g_ptr_array_free(sa->services, TRUE);
	g_ptr_array_free(sa->informs, TRUE);
	g_free(sa);
}
