/* SPDX-License-Identifier: MIT */
/*
 * The Congestion Control agent (IBA Annex A10; class 0x21, version 2):
 * firmware on every switch (on port 0) and every CA port answers Get and
 * Set of its attributes, one const table of them as the SMA and the PMA
 * have. A CC MAD carries the CC_Key at byte 24, the CongestionLog's data
 * at 32 and every other attribute's at 64 (libibmad's IB_CC_*_OFFS); the
 * fields are libibmad's (IB_CC_*_F), as ibccquery and ibccconfig read
 * and write them.
 *
 * What a Set gives, a Get shows: the settings are kept as the MAD's
 * attribute data (zero until set: congestion control off, as an HCA
 * comes up). Nothing acts on them yet: no packet is marked, the log has
 * no events (the timing model, issue #53, will). CC_Key (A10.4.1): a MAD
 * whose key is not the agent's, while the agent's is not 0, is dropped
 * and counted in CC_KeyViolations, but a Get while the protect bit is
 * clear, which is answered.
 */
#include "config.h"

#include <string.h>

#include "fabric/cc.h"
#include "fabric/packet.h"
#include "lib/log.h"

#define CC_VERSION	2
/* CongestionInfo:ControlTableCap: 64-entry blocks of a CA's CCT. */
#define CCT_BLOCKS	8
/* LogType of CongestionLog (A10.4.3.5). */
#define LOG_SWITCH	1
#define LOG_CA		2

enum { ON_SWITCH = 1, ON_CA = 2, ON_BOTH = 3 };

struct cc_attr {
	uint16_t id;
	const char *name;
	unsigned on;		/* ON_*: which agents have it */
	bool set;		/* Set takes it */
	/* A kept attribute: its blocks (attribute modifier 0..n-1) on this
	 * agent, and where they are; NULL: computed by @get. */
	unsigned (*blocks)(const struct port *p);
	uint8_t *(*block)(struct cc_state *s, unsigned i);
	void (*get)(const struct port *p, struct cc_state *s, uint8_t *data);
};

/* The state of one agent: its key, and the attributes Sets gave it. */
struct cc_state {
	uint64_t key;
	uint8_t protect;
	uint16_t lease, violations;
	uint8_t switch_setting[IB_CC_DATA_SZ];
	uint8_t ca_setting[IB_CC_DATA_SZ];
	uint8_t cct[CCT_BLOCKS][IB_CC_DATA_SZ];
	uint8_t *port_settings;	/* a switch's, IB_CC_DATA_SZ a block of 32 ports */
	unsigned port_blocks;
};

/* An agent's state: a switch's on port 0, a CA's on each port, made at
 * its first CC MAD (about 2 KiB: a fabric whose SM turns congestion
 * control on holds that much a CA port, plus 192 bytes a 32-port block
 * on a switch). */
static struct cc_state *state_of(struct port *p)
{
	if (!p->cc) {
		p->cc = g_new0(struct cc_state, 1);
		if (node_is_switch(p->node)) {
			p->cc->port_blocks = (p->node->nports + 1 + 31) / 32;
			p->cc->port_settings = g_malloc0((size_t)p->cc->port_blocks *
							 IB_CC_DATA_SZ);
		}
	}
	return p->cc;
}

void cc_free(struct port *p)
{
	if (p->cc)
		g_free(p->cc->port_settings);
	g_free(p->cc);
	p->cc = NULL;
}

static unsigned one(const struct port *p)
{
	(void)p;
	return 1;
}

static unsigned port_blocks(const struct port *p)
{
	return (p->node->nports + 1 + 31) / 32;
}

static unsigned cct_blocks(const struct port *p)
{
	(void)p;
	return CCT_BLOCKS;
}

static uint8_t *switch_setting(struct cc_state *s, unsigned i)
{
	(void)i;
	return s->switch_setting;
}

static uint8_t *port_setting(struct cc_state *s, unsigned i)
{
	return s->port_settings + (size_t)i * IB_CC_DATA_SZ;
}

static uint8_t *ca_setting(struct cc_state *s, unsigned i)
{
	(void)i;
	return s->ca_setting;
}

static uint8_t *cct_block(struct cc_state *s, unsigned i)
{
	return s->cct[i];
}

/* ClassPortInfo (IBA 13.4.8.1): the class's version, no capabilities,
 * the PMA's response time. */
static void class_port_info(const struct port *p, struct cc_state *s, uint8_t *data)
{
	(void)p;
	(void)s;
	mad_set_field(data, 0, IB_CPI_BASEVER_F, 1);
	mad_set_field(data, 0, IB_CPI_CLASSVER_F, CC_VERSION);
	mad_set_field(data, 0, IB_CPI_RESP_TIME_VALUE_F, 18);
}

static void congestion_info(const struct port *p, struct cc_state *s, uint8_t *data)
{
	(void)s;
	/* A switch does no credit starvation; a CA's table is CCT_BLOCKS
	 * blocks of 64 entries. */
	mad_set_field(data, 0, IB_CC_CONGESTION_INFO_CONTROL_TABLE_CAP_F,
		      node_is_switch(p->node) ? 0 : CCT_BLOCKS);
}

static void key_info(const struct port *p, struct cc_state *s, uint8_t *data)
{
	(void)p;
	mad_set_field64(data, 0, IB_CC_CONGESTION_KEY_INFO_CC_KEY_F, s->key);
	mad_set_field(data, 0, IB_CC_CONGESTION_KEY_INFO_CC_KEY_PROTECT_BIT_F, s->protect);
	mad_set_field(data, 0, IB_CC_CONGESTION_KEY_INFO_CC_KEY_LEASE_PERIOD_F, s->lease);
	mad_set_field(data, 0, IB_CC_CONGESTION_KEY_INFO_CC_KEY_VIOLATIONS_F, s->violations);
}

/* The time in 1.024 us units (A10.4.3.9), from the fabric's clock. */
static uint32_t stamp(const struct port *p)
{
	const struct timerq *tq = p->node->fabric->tq;

	return tq ? (uint32_t)(timerq_now(tq) * 1000 / 1024) : 0;	/* from us */
}

/* No congestion event logged: the type and the time (data at 32). */
static void congestion_log(const struct port *p, struct cc_state *s, uint8_t *log)
{
	(void)s;
	mad_set_field(log, 0, IB_CC_CONGESTION_LOG_LOGTYPE_F,
		      node_is_switch(p->node) ? LOG_SWITCH : LOG_CA);
	if (node_is_switch(p->node))
		mad_set_field(log, 0, IB_CC_CONGESTION_LOG_SWITCH_CURRENT_TIME_STAMP_F, stamp(p));
	else
		mad_set_field(log, 0, IB_CC_CONGESTION_LOG_CA_CURRENT_TIMESTAMP_F, stamp(p));
}

static void timestamp(const struct port *p, struct cc_state *s, uint8_t *data)
{
	(void)s;
	mad_set_field(data, 0, IB_CC_TIMESTAMP_F, stamp(p));
}

static const struct cc_attr attrs[] = {
	{ CLASS_PORT_INFO, "ClassPortInfo", ON_BOTH, false, NULL, NULL,
	  class_port_info },
	{ IB_CC_ATTR_CONGESTION_INFO, "CongestionInfo", ON_BOTH, false, NULL, NULL,
	  congestion_info },
	{ IB_CC_ATTR_CONGESTION_KEY_INFO, "CongestionKeyInfo", ON_BOTH, true, NULL, NULL,
	  key_info },
	{ IB_CC_ATTR_CONGESTION_LOG, "CongestionLog", ON_BOTH, false, NULL, NULL,
	  congestion_log },
	{ IB_CC_ATTR_SWITCH_CONGESTION_SETTING, "SwitchCongestionSetting", ON_SWITCH, true, one,
	  switch_setting, NULL },
	{ IB_CC_ATTR_SWITCH_PORT_CONGESTION_SETTING, "SwitchPortCongestionSetting", ON_SWITCH,
	  true, port_blocks, port_setting, NULL },
	{ IB_CC_ATTR_CA_CONGESTION_SETTING, "CACongestionSetting", ON_CA, true, one, ca_setting,
	  NULL },
	{ IB_CC_ATTR_CONGESTION_CONTROL_TABLE, "CongestionControlTable", ON_CA, true, cct_blocks,
	  cct_block, NULL },
	{ IB_CC_ATTR_TIMESTAMP, "TimeStamp", ON_BOTH, false, NULL, NULL, timestamp },
};

static const struct cc_attr *find_attr(uint16_t id, const struct port *p)
{
	unsigned i, on = node_is_switch(p->node) ? ON_SWITCH : ON_CA;

	for (i = 0; i < G_N_ELEMENTS(attrs); i++)
		if (attrs[i].id == id && (attrs[i].on & on))
			return &attrs[i];
	return NULL;
}

/* A Set of CongestionKeyInfo: the new key, its protection and lease. */
static void key_set(struct cc_state *s, const uint8_t *req_data)
{
	void *data = (void *)req_data;	/* libibmad's getters take no const */

	s->key = mad_get_field64(data, 0, IB_CC_CONGESTION_KEY_INFO_CC_KEY_F);
	s->protect = (uint8_t)mad_get_field(data, 0, IB_CC_CONGESTION_KEY_INFO_CC_KEY_PROTECT_BIT_F);
	s->lease = (uint16_t)mad_get_field(data, 0, IB_CC_CONGESTION_KEY_INFO_CC_KEY_LEASE_PERIOD_F);
	s->violations = (uint16_t)mad_get_field(data, 0,
						IB_CC_CONGESTION_KEY_INFO_CC_KEY_VIOLATIONS_F);
}

bool cc_process(struct port *p, const uint8_t *req, uint8_t *resp)
{
	struct cc_state *s = state_of(p);
	bool set = mad_method(req) == UMAD_METHOD_SET;
	const struct cc_attr *a = find_attr(mad_attr_id(req), p);
	uint32_t mod = mad_attr_mod(req);
	uint64_t key = mad_get_field64((void *)req, 0, IB_CC_CCKEY_F);
	bool log = a && a->id == IB_CC_ATTR_CONGESTION_LOG;
	uint8_t *data = resp + (log ? IB_CC_LOG_DATA_OFFS : IB_CC_DATA_OFFS);
	uint16_t status = 0;

	/* CC_Key (A10.4.1): a wrong key is silence, and a violation. */
	if (s->key && key != s->key && (set || s->protect)) {
		if (s->violations < 0xffff)
			s->violations++;
		g_debug("CC %s/%u: CC_Key violation (%s)", p->node->id, p->num,
			set ? "Set" : "Get");
		return false;
	}
	mad_getresp(resp, req, 0);
	memset(resp + IB_CC_LOG_DATA_OFFS, 0, MAD_SIZE - IB_CC_LOG_DATA_OFFS);
	if (mad_class_version(req) != CC_VERSION)
		status = UMAD_STATUS_BAD_VERSION;
	else if (!a || (set && !a->set))
		status = UMAD_STATUS_ATTR_NOT_SUPPORTED;
	else if (a->blocks && mod >= a->blocks(p))
		status = UMAD_STATUS_INVALID_ATTR_VALUE;
	else if (a->blocks) {
		uint8_t *kept = a->block(s, mod);

		if (set)
			memcpy(kept, req + IB_CC_DATA_OFFS, IB_CC_DATA_SZ);
		memcpy(data, kept, IB_CC_DATA_SZ);
	} else {
		if (set)	/* CongestionKeyInfo, the one other Set */
			key_set(s, req + IB_CC_DATA_OFFS);
		a->get(p, s, data);
	}
	mad_set_status(resp, status);
	if (log_tracing())
		g_debug("CC %s/%u: %s %s(0x%04x) mod %u -> status 0x%04x", p->node->id, p->num,
			set ? "Set" : "Get", a ? a->name : "?", mad_attr_id(req), mod, status);
	return true;
}
