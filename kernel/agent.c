/* SPDX-License-Identifier: MIT */
/*
 * Registration rules and method tables, after ib_register_mad_agent() in
 * the kernel's mad.c (docs/umad.md §4.3). Vendor range 2 classes are keyed by
 * OUI as well, with at most 8 OUIs per class (MAX_MGMT_OUI).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include <infiniband/umad_types.h>

#include "kernel/agent.h"

#define MAX_MGMT_VERSION	0x83
#define MAX_MGMT_OUI		8
#define USER_RMPP_FLAG		1u

struct method_table {
	struct umad_agent *owner[128];
};

struct agent_table {
	GHashTable *tables;	/* key -> struct method_table * */
};

bool mgmt_class_is_vendor2(uint8_t c)
{
	return c >= UMAD_CLASS_VENDOR_RANGE2_START &&
	       c <= UMAD_CLASS_VENDOR_RANGE2_END;
}

bool mgmt_class_is_rmpp(uint8_t c)
{
	return c == UMAD_CLASS_SUBN_ADM || c == UMAD_CLASS_DEVICE_MGMT ||
	       c == UMAD_CLASS_DEVICE_ADM || c == UMAD_CLASS_BIS ||
	       mgmt_class_is_vendor2(c);
}

static bool is_smp_class(uint8_t c)
{
	return c == UMAD_CLASS_SUBN_LID_ROUTED ||
	       c == UMAD_CLASS_SUBN_DIRECTED_ROUTE;
}

static guint64 *table_key(uint8_t mgmt_class, uint8_t version, uint32_t oui)
{
	guint64 *k = g_new(guint64, 1);

	*k = (guint64)version << 40 | (guint64)mgmt_class << 32 |
	     (mgmt_class_is_vendor2(mgmt_class) ? oui : 0);
	return k;
}

struct agent_table *agent_table_new(void)
{
	struct agent_table *t = g_new0(struct agent_table, 1);

	t->tables = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
	return t;
}

void agent_table_free(struct agent_table *t)
{
	if (!t)
		return;
	g_hash_table_destroy(t->tables);
	g_free(t);
}

int agent_reg_validate(const struct agent_reg *r, bool v2)
{
	if (r->qpn > 1)
		return -EINVAL;
	if (v2 && (r->flags & ~USER_RMPP_FLAG))
		return -EINVAL;
	if (v2 && r->mgmt_class && (r->oui & 0xff000000))
		return -EINVAL;
	if (r->rmpp_version > 1)
		return -EINVAL;
	if (r->mgmt_class) {
		if (r->class_version >= MAX_MGMT_VERSION)
			return -EINVAL;
		if (r->mgmt_class >= 0x50 && r->mgmt_class != UMAD_CLASS_SUBN_DIRECTED_ROUTE)
			return -EINVAL;
		if (mgmt_class_is_vendor2(r->mgmt_class) && !r->oui)
			return -EINVAL;
		if (r->rmpp_version && !mgmt_class_is_rmpp(r->mgmt_class))
			return -EINVAL;
		if ((r->qpn == 0) != is_smp_class(r->mgmt_class))
			return -EINVAL;
	} else if (r->flags & USER_RMPP_FLAG) {
		return -EINVAL;
	}
	return 0;
}

static bool mask_empty(const uint8_t *m)
{
	unsigned i;

	for (i = 0; i < 16; i++)
		if (m[i])
			return false;
	return true;
}

static bool method_set(const uint8_t *mask, unsigned m)
{
	return mask[m / 8] & (1u << (m % 8));
}

static unsigned ouis_in_use(struct agent_table *t, struct umad_agent *a)
{
	GHashTableIter it;
	gpointer k;
	unsigned n = 0;

	g_hash_table_iter_init(&it, t->tables);
	while (g_hash_table_iter_next(&it, &k, NULL))
		if ((*(guint64 *)k >> 32) == ((guint64)a->class_version << 8 | a->mgmt_class))
			n++;
	return n;
}

int agent_table_add(struct agent_table *t, struct umad_agent *a)
{
	struct method_table *mt;
	guint64 *key;
	unsigned m;

	if (!a->mgmt_class || mask_empty(a->method_mask))
		return 0;	/* send-only: installs nothing, never conflicts */
	key = table_key(a->mgmt_class, a->class_version, a->oui);
	mt = g_hash_table_lookup(t->tables, key);
	if (mt) {
		for (m = 0; m < 128; m++)
			if (method_set(a->method_mask, m) && mt->owner[m]) {
				g_debug("method 0x%02x of class 0x%02x already in use", m, a->mgmt_class);
				g_free(key);
				return -EINVAL;
			}
	} else {
		if (mgmt_class_is_vendor2(a->mgmt_class) &&
		    ouis_in_use(t, a) >= MAX_MGMT_OUI) {
			g_free(key);
			return -ENOMEM;
		}
		mt = g_new0(struct method_table, 1);
		g_hash_table_insert(t->tables, key, mt);
		key = NULL;
	}
	g_free(key);
	for (m = 0; m < 128; m++)
		if (method_set(a->method_mask, m))
			mt->owner[m] = a;
	return 0;
}

void agent_table_remove(struct agent_table *t, struct umad_agent *a)
{
	g_autofree guint64 *key = NULL;
	struct method_table *mt;
	bool empty = true;
	unsigned m;

	if (!a->mgmt_class)
		return;
	key = table_key(a->mgmt_class, a->class_version, a->oui);
	mt = g_hash_table_lookup(t->tables, key);
	if (!mt)
		return;
	for (m = 0; m < 128; m++) {
		if (mt->owner[m] == a)
			mt->owner[m] = NULL;
		if (mt->owner[m])
			empty = false;
	}
	if (empty)
		g_hash_table_remove(t->tables, key);
}

struct umad_agent *agent_table_find(struct agent_table *t, uint8_t mgmt_class,
				    uint8_t class_version, uint8_t method,
				    uint32_t oui)
{
	g_autofree guint64 *key = NULL;
	struct method_table *mt;

	if (class_version >= MAX_MGMT_VERSION)
		return NULL;
	key = table_key(mgmt_class, class_version, oui);
	mt = g_hash_table_lookup(t->tables, key);
	return mt ? mt->owner[method & 0x7f] : NULL;
}
