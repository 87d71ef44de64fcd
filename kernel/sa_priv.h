/* SPDX-License-Identifier: MIT */
/*
 * Inside the emulator's SA (sa.h; docs/umad.md "The SA without an SM"):
 * the request as the handlers see it, the records they answer with, and
 * the component-mask matcher they share.
 */
#ifndef IBEMU_KERNEL_SA_PRIV_H
#define IBEMU_KERNEL_SA_PRIV_H

#include <infiniband/mad.h>
#include <infiniband/sa.h>

#include "kernel/host.h"
#include "kernel/sa.h"
#include "kernel/sa_wire.h"

/* The SA header before a record (IBA 15.2.1.1), and QP1's Q_Key (IBA
 * 10.2.4), as libibmad names them. */
#define SA_HDR_LEN		IB_SA_DATA_OFFS
#define QP1_QKEY		IB_DEFAULT_QP1_QKEY

/* The record data of an SA MAD: 200 bytes after the 56-byte SA header. */
#define SA_REC_MAX	IB_SA_DATA_SIZE

/* The most records one GetTable answers: comp mask 0 PathRecords of a
 * big fabric are n^2, and every record is built in memory first. */
#define SA_MAX_RECORDS	(1u << 20)

struct sa {
	struct host *h;
	struct fabric *f;
	GPtrArray *groups;	/* struct sa_group *, owned (sa_mcast.c) */
	GPtrArray *services;	/* struct sa_svc: ServiceRecords, owned (sa_service.c) */
	GPtrArray *informs;	/* uint8_t[64] InformInfoRecords, owned */
	uint16_t next_enum;	/* InformInfoRecord:Enum of the next subscription */
	uint64_t report_tid;	/* the last Report's TID (sa_report.c) */
};

/* A request: its method, component mask, the record it carries (zero
 * past what was sent), who sent it (the LID; the end port with that
 * LID, or NULL) and where it arrived. */
struct sa_req {
	uint8_t method;
	uint64_t comp;
	bool trusted;		/* SM_Key is the SA's, 1 (opensm's sa_key) */
	uint8_t rec[SA_REC_MAX];
	uint16_t slid;
	struct port *from;
	struct port *sm;	/* the port it reached: the SM's */
};

/* The records of an answer, each @recsz bytes (sa_add) and an SA status
 * (UMAD_SA_STATUS_*; 0: the records stand). */
struct sa_answer {
	GByteArray *recs;
	unsigned n;
	size_t recsz;
	uint8_t status;
};

/* Append a zeroed record to @a and return it; NULL once SA_MAX_RECORDS
 * are there (status NO_RESOURCES is set). */
uint8_t *sa_add(struct sa_answer *a);

/*
 * One component of a record: its bit in the component mask and where it
 * is, a libibmad field at byte @off (decoded the same way from both
 * records and compared), or, with @field IB_NO_FIELD, @len bytes at @off.
 * @all_bits: the record must have every bit the query's value has
 * (PortInfo:CapabilityMask, as opensm matches it).
 */
struct sa_comp {
	uint8_t bit;
	enum MAD_FIELDS field;
	uint16_t off, len;
	bool all_bits;
};

/* Does record @rec match query @q in every component of @comp that @t
 * (@n entries) describes? Components it does not describe are not
 * compared (reserved fields). */
bool sa_comp_match(const struct sa_comp *t, size_t n, uint64_t comp, const uint8_t *q,
		   const uint8_t *rec);
/* @rec (@a->recsz bytes) as one more record of @a, if it matches what
 * @req asks (sa_comp_match of its component mask, @t and @n as there). */
void sa_add_matching(struct sa_answer *a, const struct sa_req *req, const struct sa_comp *t,
		     size_t n, const uint8_t *rec);

/* Every CA port with a LID, and every switch's port 0 with one, in the
 * fabric's node order. */
GPtrArray *sa_end_ports(struct fabric *f);
/* The end port (CA port or switch port 0) that owns @lid, or the port
 * whose GUID is @guid; NULL if none. */
struct port *sa_port_by_lid(struct fabric *f, uint16_t lid);
struct port *sa_port_by_guid(struct fabric *f, uint64_t guid);
/* A rate code's rate in tenths of Gb/s (0: no such code); the code of
 * the next rate up (@dir 1) or down (-1), or 0 past the ends. */
unsigned sa_rate_deci(uint8_t code);
uint8_t sa_rate_step(uint8_t code, int dir);

/* The attributes: fill @a for @req (sa_records.c, sa_path.c, sa_mcast.c,
 * sa_service.c). */
void sa_node_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a);
void sa_portinfo_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a);
void sa_switchinfo_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a);
void sa_link_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a);
void sa_guidinfo_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a);
void sa_pkey_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a);
void sa_lft_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a);
void sa_mft_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a);
void sa_sminfo_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a);
void sa_slvl_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a);
void sa_vlarb_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a);
void sa_path_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a);
void sa_multipath_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a);
void sa_mcmember(struct sa *sa, const struct sa_req *req, struct sa_answer *a);
void sa_service(struct sa *sa, const struct sa_req *req, struct sa_answer *a);
void sa_inform_info(struct sa *sa, const struct sa_req *req, struct sa_answer *a);
void sa_inform_records(struct sa *sa, const struct sa_req *req, struct sa_answer *a);

/* sa_report.c: a trap that reached the SM's port @sm: repressed, and
 * reported to its subscribers. */
void sa_trap(struct sa *sa, struct port *sm, const struct mad_pkt *pkt);

/* sa_mcast.c: the groups, freed with the SA. */
void sa_mcast_free(struct sa *sa);

#endif
