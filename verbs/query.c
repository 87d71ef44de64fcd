/* SPDX-License-Identifier: MIT */
/*
 * query_device_ex and query_port: the daemon's "name value" files
 * (abi/verbs_wire.h) parsed through a table of the libibverbs fields they
 * fill, so a name means the same on both sides.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/verbs_wire.h"
#include "verbs/provider.h"

enum field_kind { F_UINT, F_BE64, F_STR };

struct field {
	const char *name;
	size_t off, size;
	enum field_kind kind;
};

#define FIELD(type, member, kind) \
	{ #member, offsetof(type, member), sizeof(((type *)0)->member), kind }
#define DEV_U(m)	FIELD(struct ibv_device_attr, m, F_UINT)
#define PORT_U(m)	FIELD(struct ibv_port_attr, m, F_UINT)

static const struct field device_fields[] = {
	FIELD(struct ibv_device_attr, fw_ver, F_STR),
	FIELD(struct ibv_device_attr, node_guid, F_BE64),
	FIELD(struct ibv_device_attr, sys_image_guid, F_BE64),
	DEV_U(max_mr_size), DEV_U(page_size_cap), DEV_U(vendor_id), DEV_U(vendor_part_id),
	DEV_U(hw_ver), DEV_U(max_qp), DEV_U(max_qp_wr), DEV_U(device_cap_flags),
	DEV_U(max_sge), DEV_U(max_sge_rd), DEV_U(max_cq), DEV_U(max_cqe), DEV_U(max_mr),
	DEV_U(max_pd), DEV_U(max_qp_rd_atom), DEV_U(max_qp_init_rd_atom),
	DEV_U(max_res_rd_atom), DEV_U(max_ah), DEV_U(max_pkeys), DEV_U(local_ca_ack_delay),
	DEV_U(phys_port_cnt), DEV_U(atomic_cap), DEV_U(max_srq), DEV_U(max_srq_wr),
	DEV_U(max_srq_sge), DEV_U(max_mcast_grp), DEV_U(max_mcast_qp_attach),
	DEV_U(max_total_mcast_qp_attach), DEV_U(max_mw),
	{ NULL, 0, 0, F_UINT },
};

static const struct field port_fields[] = {
	PORT_U(state), PORT_U(max_mtu), PORT_U(active_mtu), PORT_U(gid_tbl_len),
	PORT_U(port_cap_flags), PORT_U(max_msg_sz), PORT_U(bad_pkey_cntr),
	PORT_U(qkey_viol_cntr), PORT_U(pkey_tbl_len), PORT_U(lid), PORT_U(sm_lid),
	PORT_U(lmc), PORT_U(max_vl_num), PORT_U(sm_sl), PORT_U(subnet_timeout),
	PORT_U(init_type_reply), PORT_U(active_width), PORT_U(active_speed),
	PORT_U(phys_state), PORT_U(link_layer), PORT_U(flags), PORT_U(port_cap_flags2),
	{ NULL, 0, 0, F_UINT },
};

static void store_uint(void *dst, size_t size, unsigned long long v)
{
	switch (size) {
	case 1: *(uint8_t *)dst = (uint8_t)v; break;
	case 2: *(uint16_t *)dst = (uint16_t)v; break;
	case 4: *(uint32_t *)dst = (uint32_t)v; break;
	default: *(uint64_t *)dst = (uint64_t)v; break;
	}
}

/*
 * Fill @obj from @text's lines through @fields. Names we do not know are a
 * newer daemon's and are skipped; a known name with a bad value is EIO.
 */
static int parse(char *text, const struct field *fields, void *obj)
{
	char *save = NULL, *line;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *value = strchr(line, ' '), *end;
		const struct field *f;
		unsigned long long v;

		if (!value)
			return EIO;
		*value++ = 0;
		for (f = fields; f->name && strcmp(f->name, line); f++)
			;
		if (!f->name)
			continue;
		if (f->kind == F_STR) {
			snprintf((char *)obj + f->off, f->size, "%s", value);
			continue;
		}
		errno = 0;
		v = strtoull(value, &end, 0);
		if (errno || end == value || *end)
			return EIO;
		if (f->kind == F_BE64)
			v = htobe64(v);
		store_uint((char *)obj + f->off, f->size, v);
	}
	return 0;
}

#define ODP_RC	(IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE | \
		 IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV)

int ibemu_query_device_ex(struct ibv_context *context,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size)
{
	char text[4096];
	int ret;

	if (input && input->comp_mask)
		return EINVAL;
	if (attr_size < sizeof(attr->orig_attr))
		return EINVAL;
	ret = ibemu_read_file(context, VERBS_WIRE_DEVICE, text, sizeof(text));
	if (ret)
		return ret == ENOENT ? EIO : ret;
	/* The extended part (ODP, TSO, RSS, ...): none of it, all zero, but
	 * for the port count (libibverbs' ibv_query_device_ex callers read
	 * phys_port_cnt_ex, which a device of more than 255 ports needs) and
	 * the completion clock (cq_ex.c: 64 bits of ns, a 1 GHz clock). */
	memset(attr, 0, attr_size);
	ret = parse(text, device_fields, &attr->orig_attr);
	if (ret)
		return ret;
	if (attr_size >= offsetof(struct ibv_device_attr_ex, phys_port_cnt_ex) +
			 sizeof(attr->phys_port_cnt_ex))
		attr->phys_port_cnt_ex = attr->orig_attr.phys_port_cnt;
	/* On-demand paging: the provider reaches the process's memory as
	 * it is at each access (mr.c, pin.c), implicit regions too. */
	if (attr_size >= offsetof(struct ibv_device_attr_ex, odp_caps) + sizeof(attr->odp_caps))
		attr->odp_caps = (struct ibv_odp_caps){
			.general_caps = IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT,
			.per_transport_caps = {
				.rc_odp_caps = ODP_RC,
				.uc_odp_caps = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
					       IBV_ODP_SUPPORT_WRITE,
				.ud_odp_caps = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
					       IBV_ODP_SUPPORT_SRQ_RECV,
			},
		};
	if (attr_size >= offsetof(struct ibv_device_attr_ex, max_dm_size) +
			 sizeof(attr->max_dm_size))
		attr->max_dm_size = IBEMU_DM_SIZE_MAX;	/* dm.c */
	if (attr_size >= offsetof(struct ibv_device_attr_ex, xrc_odp_caps) +
			 sizeof(attr->xrc_odp_caps))
		attr->xrc_odp_caps = ODP_RC;
	if (attr_size >= offsetof(struct ibv_device_attr_ex, hca_core_clock) +
			 sizeof(attr->hca_core_clock)) {
		attr->completion_timestamp_mask = UINT64_MAX;
		attr->hca_core_clock = IBEMU_CORE_CLOCK_KHZ;
	}
	return 0;
}

int ibemu_query_port(struct ibv_context *context, uint8_t port_num,
		     struct ibv_port_attr *port_attr)
{
	char name[32], text[4096];
	int ret;

	snprintf(name, sizeof(name), VERBS_WIRE_PORT "%u", port_num);
	ret = ibemu_read_file(context, name, text, sizeof(text));
	if (ret)
		return ret == ENOENT ? EINVAL : ret;	/* no such port */
	memset(port_attr, 0, sizeof(*port_attr));
	return parse(text, port_fields, port_attr);
}

bool ibemu_port_roce(struct ibemu_context *ctx, uint8_t port)
{
	struct ibv_port_attr attr;
	uint8_t link;

	if (!port || port > IBEMU_MAX_PORTS)
		return false;
	pthread_mutex_lock(&ctx->lock);
	link = ctx->link[port - 1];
	pthread_mutex_unlock(&ctx->lock);
	/* Asked of the daemon once: a port's link layer never changes. */
	if (!link) {
		link = ibv_query_port(&ctx->vctx.context, port, &attr) ? IBV_LINK_LAYER_INFINIBAND :
									  attr.link_layer;
		if (!link)
			link = IBV_LINK_LAYER_INFINIBAND;
		pthread_mutex_lock(&ctx->lock);
		ctx->link[port - 1] = link;
		pthread_mutex_unlock(&ctx->lock);
	}
	return link == IBV_LINK_LAYER_ETHERNET;
}
