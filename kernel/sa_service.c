/* SPDX-License-Identifier: MIT */
/*
 * What programs register at the SA: ServiceRecords (IBA 15.2.5.14; Set
 * registers or replaces the record of a ServiceID, GID and P_Key, Get and
 * GetTable find them, Delete takes them away) and InformInfo
 * subscriptions (IBA 13.4.8.3, 15.2.5.12: Set subscribes or unsubscribes
 * the sending port, InformInfoRecord lists them). A ServiceRecord's
 * lease is counted down (on the host's clock, looked at whenever the SA
 * is asked about them).
 */
#include "config.h"

#include <endian.h>
#include <string.h>

#include <infiniband/umad_sa.h>

#include "fabric/port.h"
#include "kernel/sa_priv.h"
#include "lib/timerq.h"

/* ServiceRecord (IBA Table 199): where its fields are. */
#define SR_SIZE		176
#define SR_KEY_LEN	26	/* ServiceID, ServiceGID, ServiceP_Key: the RID */
#define SR_GID_OFF	8
#define SR_PKEY_OFF	24
#define SR_KEY_OFF	32
#define SR_KEY_BYTES	16
#define SR_LEASE_OFF	28
#define SR_LEASE_FOREVER	0xffffffffu
#define SR_COMP_PKEY	(1ull << 2)
#define SR_COMP_LEASE	(1ull << 4)
#define SR_DATA8_OFF	112
#define SR_DATA16_OFF	128
#define SR_DATA32_OFF	144
#define SR_DATA64_OFF	160
#define SR_MAX		4096	/* records kept, all ports together */

/* InformInfo (IBA Table 144) and InformInfoRecord (Table 196). */
#define II_SIZE		36
#define II_SUBSCRIBE_OFF	23
#define II_TYPE_OFF	24
#define II_QPN_OFF	28
#define IIR_SIZE	64
#define IIR_ENUM_OFF	16
#define IIR_INFO_OFF	24
#define II_MAX		4096	/* subscriptions kept */

/* ServiceRecord's components: one a field (bit 3 is reserved), then one
 * a byte, a 16-, 32- or 64-bit word of ServiceData (bits 7 to 36). */
#define SR_RAW(bit, off, len)	{ (bit), IB_NO_FIELD, (off), (len), false }
#define D8(i)	SR_RAW(7 + (i), SR_DATA8_OFF + (i), 1)
#define D16(i)	SR_RAW(23 + (i), SR_DATA16_OFF + 2 * (i), 2)
#define D32(i)	SR_RAW(31 + (i), SR_DATA32_OFF + 4 * (i), 4)
#define D64(i)	SR_RAW(35 + (i), SR_DATA64_OFF + 8 * (i), 8)
static const struct sa_comp sr_comps[] = {
	SR_RAW(0, 0, 8), SR_RAW(1, 8, 16), SR_RAW(2, 24, 2), SR_RAW(4, 28, 4),
	SR_RAW(5, 32, 16), SR_RAW(6, 48, 64),
	D8(0), D8(1), D8(2), D8(3), D8(4), D8(5), D8(6), D8(7),
	D8(8), D8(9), D8(10), D8(11), D8(12), D8(13), D8(14), D8(15),
	D16(0), D16(1), D16(2), D16(3), D16(4), D16(5), D16(6), D16(7),
	D32(0), D32(1), D32(2), D32(3), D64(0), D64(1),
};
#undef D8
#undef D16
#undef D32
#undef D64
#undef SR_RAW

/* A registration: the record, and when its lease ends (0: never). */
struct sa_svc {
	uint8_t rec[SR_SIZE];
	uint64_t expires_us;
};

static uint64_t now_us(struct sa *sa)
{
	return timerq_now(host_tq(sa->h));
}

/* Records whose lease ran out go, as opensm's lease timer drops them. */
static void expire(struct sa *sa)
{
	uint64_t now = now_us(sa);
	unsigned i;

	for (i = 0; i < sa->services->len;) {
		struct sa_svc *v = g_ptr_array_index(sa->services, i);

		if (v->expires_us && v->expires_us <= now)
			g_ptr_array_remove_index(sa->services, i);
		else
			i++;
	}
}

/* The registration with @rec's RID (ServiceID, ServiceGID, ServiceP_Key),
 * or -1. */
static int by_rid(struct sa *sa, const uint8_t *rec)
{
	unsigned i;

	for (i = 0; i < sa->services->len; i++)
		if (!memcmp(((struct sa_svc *)g_ptr_array_index(sa->services, i))->rec, rec,
			    SR_KEY_LEN))
			return (int)i;
	return -1;
}

/* A P_Key given must be in the requester's table and in the table of the
 * port a unicast ServiceGID names (opensm's validate_sr). */
static bool pkey_valid(struct sa *sa, const struct sa_req *req)
{
	uint16_t pkey = get_be16(req->rec, SR_PKEY_OFF);
	struct port *p;
	uint64_t guid;

	if (!(req->comp & SR_COMP_PKEY))
		return true;
	if (!req->from || port_pkey_find(req->from, pkey) < 0)
		return false;
	if (req->rec[SR_GID_OFF] == 0xff)
		return true;	/* a multicast GID */
	guid = get_be64(req->rec, SR_GID_OFF + 8);
	p = sa_port_by_guid(sa->f, guid);
	return p && port_pkey_find(p, pkey) >= 0;
}

/* An answer's record: its ServiceKey only to a trusted requester (IBA
 * 15.2.5.14, opensm's sr_rcv_respond). */
static void answer_rec(struct sa_answer *a, const struct sa_req *req, const uint8_t *rec)
{
	uint8_t *out = sa_add(a);

	if (!out)
		return;
	memcpy(out, rec, SR_SIZE);
	if (!req->trusted)
		memset(out + SR_KEY_OFF, 0, SR_KEY_BYTES);
}

/*
 * ServiceRecord (opensm's osm_sa_service_record.c): Set and Delete name a
 * record by the RID the record sent carries; a Set needs ServiceID and
 * ServiceGID in its mask (else ERR_REQ_INVALID), and no P_Key given is
 * the default one, no lease an infinite one. A Delete of no such record:
 * ERR_NO_RECORDS.
 */
void sa_service(struct sa *sa, const struct sa_req *req, struct sa_answer *a)
{
	uint8_t rec[SR_SIZE];
	struct sa_svc *v;
	uint32_t lease;
	unsigned i;
	int at;

	expire(sa);
	a->recsz = SR_SIZE;
	memcpy(rec, req->rec, SR_SIZE);
	if (req->method == UMAD_METHOD_SET || req->method == UMAD_SA_METHOD_DELETE) {
		/* A Set names its record by ServiceID and ServiceGID at least. */
		if ((req->method == UMAD_METHOD_SET && (req->comp & 3) != 3) ||
		    !pkey_valid(sa, req)) {
			a->status = UMAD_SA_STATUS_REQ_INVALID;
			return;
		}
		if (req->method == UMAD_METHOD_SET && !(req->comp & SR_COMP_PKEY))
			put_be16(rec, SR_PKEY_OFF, PKEY_DEFAULT);
		at = by_rid(sa, rec);
	}
	if (req->method == UMAD_SA_METHOD_DELETE) {
		if (at < 0) {
			a->status = UMAD_SA_STATUS_NO_RECORDS;
			return;
		}
		answer_rec(a, req, ((struct sa_svc *)g_ptr_array_index(sa->services, at))->rec);
		g_ptr_array_remove_index(sa->services, at);
		return;
	}
	if (req->method == UMAD_METHOD_SET) {
		if (!(req->comp & SR_COMP_LEASE))
			put_be32(rec, SR_LEASE_OFF, SR_LEASE_FOREVER);
		if (at < 0 && sa->services->len >= SR_MAX) {
			g_warning("SA: %u ServiceRecords kept already: NO_RESOURCES", SR_MAX);
			a->status = UMAD_SA_STATUS_NO_RESOURCES;
			return;
		}
		if (at < 0) {
			v = g_new0(struct sa_svc, 1);
			g_ptr_array_add(sa->services, v);
		} else
			v = g_ptr_array_index(sa->services, at);
		memcpy(v->rec, rec, SR_SIZE);
		lease = get_be32(rec, SR_LEASE_OFF);
		v->expires_us = lease == SR_LEASE_FOREVER ? 0 :
				now_us(sa) + (uint64_t)lease * 1000000 + !lease;
		answer_rec(a, req, rec);
		return;
	}
	for (i = 0; i < sa->services->len && !a->status; i++) {
		v = g_ptr_array_index(sa->services, i);
		if (sa_comp_match(sr_comps, G_N_ELEMENTS(sr_comps), req->comp, req->rec, v->rec))
			answer_rec(a, req, v->rec);
	}
}

/* SubnAdmSet(InformInfo): the sending port subscribes (Subscribe 1) or
 * takes back what it subscribed with the same InformInfo (0). */
void sa_inform_info(struct sa *sa, const struct sa_req *req, struct sa_answer *a)
{
	uint8_t gid[16], *out;
	unsigned i;

	a->recsz = II_SIZE;
	if (!req->from) {
		a->status = UMAD_SA_STATUS_REQ_INVALID;
		return;
	}
	port_gid(req->from, 0, gid);
	for (i = 0; i < sa->informs->len; i++) {
		uint8_t *r = g_ptr_array_index(sa->informs, i);

		/* The same subscriber and InformInfo but for Subscribe and the
		 * QPN word (opensm keeps the requester's QP there). */
		if (!memcmp(r, gid, 16) && !memcmp(r + IIR_INFO_OFF, req->rec, II_SUBSCRIBE_OFF) &&
		    !memcmp(r + IIR_INFO_OFF + II_TYPE_OFF, req->rec + II_TYPE_OFF,
			    II_QPN_OFF - II_TYPE_OFF) &&
		    !memcmp(r + IIR_INFO_OFF + II_QPN_OFF + 4, req->rec + II_QPN_OFF + 4,
			    II_SIZE - II_QPN_OFF - 4))
			break;
	}
	if (req->rec[II_SUBSCRIBE_OFF] & 1) {
		if (i == sa->informs->len) {
			uint8_t *r;

			if (sa->informs->len >= II_MAX) {
				g_warning("SA: %u subscriptions kept already: NO_RESOURCES", II_MAX);
				a->status = UMAD_SA_STATUS_NO_RESOURCES;
				return;
			}
			r = g_malloc0(IIR_SIZE);
			memcpy(r, gid, 16);
			put_be16(r, IIR_ENUM_OFF, sa->next_enum++);
			memcpy(r + IIR_INFO_OFF, req->rec, II_SIZE);
			g_ptr_array_add(sa->informs, r);
		}
	} else if (i < sa->informs->len) {
		g_ptr_array_remove_index(sa->informs, i);
	} else {
		a->status = UMAD_SA_STATUS_REQ_INVALID;	/* nothing to take back */
		return;
	}
	if ((out = sa_add(a)))
		memcpy(out, req->rec, II_SIZE);
}

static const struct sa_comp iir_comps[] = {
	{ 0, IB_NO_FIELD, 0, 16, false },
	{ 1, IB_NO_FIELD, IIR_ENUM_OFF, 2, false },
};

void sa_inform_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a)
{
	unsigned i;

	a->recsz = IIR_SIZE;
	for (i = 0; i < sa->informs->len && !a->status; i++) {
		uint8_t *r = g_ptr_array_index(sa->informs, i);

		sa_add_matching(a, req, iir_comps, G_N_ELEMENTS(iir_comps), r);
	}
}
