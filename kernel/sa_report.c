/* SPDX-License-Identifier: MIT */
/*
 * Event forwarding (IBA 13.4.8.2, 14.2.5.1): the traps the SMAs send the
 * SM reach the SA's port; each is repressed (a TrapRepress back, as an
 * SM answers) and given as a Report of its Notice to every port whose
 * InformInfo subscription it matches (opensm's osm_inform.c), at the QP
 * the subscription names (QP1 when none). A Report is sent once: the
 * subscriber's ReportResp is not waited for.
 */
#include "config.h"

#include <endian.h>
#include <string.h>

#include <infiniband/umad_sa.h>
#include <infiniband/umad_types.h>

#include "fabric/port.h"
#include "kernel/sa_priv.h"

/* InformInfo (IBA Table 144) in an InformInfoRecord, and the Notice. */
#define IIR_INFO_OFF		24
#define II_LID_BEGIN_OFF	16
#define II_LID_END_OFF		18
#define II_GENERIC_OFF		22
#define II_TYPE_OFF		24
#define II_TRAP_OFF		26
#define II_QPN_OFF		28
#define II_PRODUCER_OFF		33	/* 24 bits */
#define ALL16			0xffff
#define ALL24			0xffffff
#define NOTICE_SIZE		80
#define NOTICE_ISSUER_GID_OFF	64

static uint32_t get_be24(const uint8_t *m, size_t off)
{
	return (uint32_t)m[off] << 16 | (uint32_t)m[off + 1] << 8 | m[off + 2];
}

/* Does the subscription's InformInfo @ii take @notice from @issuer? */
static bool matches(const uint8_t *ii, const uint8_t *notice, const uint8_t *issuer_gid)
{
	uint16_t lid = (uint16_t)mad_get_field((void *)notice, 0, IB_NOTICE_ISSUER_LID_F);
	uint16_t begin = get_be16(ii, II_LID_BEGIN_OFF), end = get_be16(ii, II_LID_END_OFF);
	uint16_t type = get_be16(ii, II_TYPE_OFF), trap = get_be16(ii, II_TRAP_OFF);
	uint32_t producer = get_be24(ii, II_PRODUCER_OFF);
	bool generic = mad_get_field((void *)notice, 0, IB_NOTICE_IS_GENERIC_F);

	if ((ii[II_GENERIC_OFF] & 1) != generic)
		return false;
	/* A GID names the issuer; else the LID range does (0xFFFF: any). */
	if (memcmp(ii, (uint8_t[16]){ 0 }, 16)) {
		if (memcmp(ii, issuer_gid, 16))
			return false;
	} else if (begin != ALL16 && (lid < begin || lid > (end ? end : begin))) {
		return false;
	}
	if (type != ALL16 && type != mad_get_field((void *)notice, 0, IB_NOTICE_TYPE_F))
		return false;
	if (generic && trap != ALL16 && trap != mad_get_field((void *)notice, 0,
							       IB_NOTICE_TRAP_NUMBER_F))
		return false;
	return !generic || producer == ALL24 ||
	       producer == mad_get_field((void *)notice, 0, IB_NOTICE_PRODUCER_F);
}

/* A Report of @notice to the subscriber of record @r. */
static void report(struct sa *sa, struct port *sm, const uint8_t *r, const uint8_t *notice)
{
	struct port *to = sa_port_by_guid(sa->f, get_be64(r, 8));
	uint32_t qpn = get_be32(r, IIR_INFO_OFF + II_QPN_OFF) >> 8;
	struct mad_pkt out = { 0 };

	if (!to || !port_mgmt(to)->lid)
		return;
	out.mad[0] = 1;
	out.mad[1] = UMAD_CLASS_SUBN_ADM;
	out.mad[2] = UMAD_SA_CLASS_VERSION;
	out.mad[3] = UMAD_METHOD_REPORT;
	mad_set_tid(out.mad, ++sa->report_tid);
	mad_set_attr_id(out.mad, UMAD_ATTR_NOTICE);
	memcpy(out.mad + SA_HDR_LEN, notice, NOTICE_SIZE);
	out.slid = port_mgmt(sm)->lid;
	out.dlid = port_mgmt(to)->lid;
	out.sqp = 1;
	out.dqp = qpn ? qpn : 1;
	out.qkey = QP1_QKEY;
	out.pkey = PKEY_DEFAULT;
	g_debug("SA: Report of trap %u to LID %u QP %u",
		(unsigned)mad_get_field((void *)notice, 0, IB_NOTICE_TRAP_NUMBER_F), out.dlid,
		out.dqp);
	fabric_send(sa->f, sm, &out);
}

void sa_trap(struct sa *sa, struct port *sm, const struct mad_pkt *pkt)
{
	uint8_t notice[NOTICE_SIZE] = { 0 };
	struct mad_pkt repress = *pkt;
	struct port *issuer;
	unsigned i;

	/* What a Notice carries in an SMP, and the issuer's GID after it. */
	memcpy(notice, smp_data((uint8_t *)pkt->mad), 64);
	issuer = sa_port_by_lid(sa->f, (uint16_t)mad_get_field(notice, 0, IB_NOTICE_ISSUER_LID_F));
	if (issuer)
		port_gid(issuer, 0, notice + NOTICE_ISSUER_GID_OFF);
	/* TrapRepress: the Trap itself, the method changed, back. */
	repress.mad[MAD_OFF(method)] = UMAD_METHOD_TRAP_REPRESS;
	repress.dlid = pkt->slid;
	repress.slid = port_mgmt(sm)->lid;
	repress.sqp = repress.dqp = 0;
	repress.rmpp = repress.data = NULL;
	fabric_send(sa->f, sm, &repress);
	for (i = 0; i < sa->informs->len; i++) {
		const uint8_t *r = g_ptr_array_index(sa->informs, i);

		if (matches(r + IIR_INFO_OFF, notice, notice + NOTICE_ISSUER_GID_OFF))
			report(sa, sm, r, notice);
	}
}
