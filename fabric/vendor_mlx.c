/* SPDX-License-Identifier: MIT */
/*
 * Mellanox's vendor class (0x0A, vendor range 1: the data at byte 24, no
 * OUI), in the firmware of a node whose NodeInfo VendorID is Mellanox's:
 * the ClassPortInfo the class must have and GeneralInfo (0x17), which
 * `vendstat -N` reads (its layout is infiniband-diags' is3/is4
 * general info). Every other attribute, and any Set, is answered
 * "unsupported" (0x000C), as firmware without that feature answers; a
 * node of another vendor has no agent (route.c's unmatched answer).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "fabric/packet.h"
#include "fabric/vendor_mlx.h"

#define MLX_OUI			0x0002c9
#define ATTR_GENERAL_INFO	0x17
/* GeneralInfo's fields, from the data's start (infiniband-diags'
 * is3_general_info_t / is4_general_info_t). */
#define GI_HW_REV		8
#define GI_DEVICE_ID		10
#define GI_UPTIME		36
#define GI_FW_MAJOR		41
#define GI_FW_MINOR		42
#define GI_FW_SUB_MINOR		43
#define GI_FW_BUILD_ID		44
#define GI_FW_MONTH		48
#define GI_FW_DAY		49
#define GI_FW_YEAR		50
#define GI_FW_PSID		56
#define GI_EXT_MAJOR		76	/* IS4 and ConnectX: the version again, 32 bits each */
#define GI_EXT_MINOR		80
#define GI_EXT_SUB_MINOR	84
#define PSID_LEN		16

/* The firmware version every node reports (sysfs fw_ver says it too). */
#define FW_MAJOR		2
#define FW_MINOR		42
#define FW_SUB_MINOR		5000

static void general_info(const struct node *n, uint8_t *d)
{
	const struct timerq *tq = n->fabric->tq;
	char psid[PSID_LEN + 1];

	put_be16(d, GI_HW_REV, (uint16_t)n->revision);
	put_be16(d, GI_DEVICE_ID, n->device_id);
	put_be32(d, GI_UPTIME, tq ? (uint32_t)(timerq_now(tq) / 1000000) : 0);	/* seconds */
	d[GI_FW_MAJOR] = FW_MAJOR;
	d[GI_FW_MINOR] = FW_MINOR;
	d[GI_FW_SUB_MINOR] = (uint8_t)FW_SUB_MINOR;
	put_be32(d, GI_FW_BUILD_ID, 1);
	d[GI_FW_MONTH] = 0x11;	/* BCD, as vendstat prints it: 11/28/2026 */
	d[GI_FW_DAY] = 0x28;
	put_be16(d, GI_FW_YEAR, 0x2026);
	snprintf(psid, sizeof(psid), "IBEMU%04X", n->device_id);
	memcpy(d + GI_FW_PSID, psid, strlen(psid));
	put_be32(d, GI_EXT_MAJOR, FW_MAJOR);
	put_be32(d, GI_EXT_MINOR, FW_MINOR);
	put_be32(d, GI_EXT_SUB_MINOR, FW_SUB_MINOR);
}

bool vendor_mlx_process(const struct node *n, const uint8_t *req, uint8_t *resp)
{
	uint8_t *d = resp + IB_VENDOR_RANGE1_DATA_OFFS;
	uint16_t status = 0;

	if (n->vendor_id != MLX_OUI)
		return false;
	mad_getresp(resp, req, 0);
	memset(d, 0, MAD_SIZE - IB_VENDOR_RANGE1_DATA_OFFS);
	if (mad_method(req) != UMAD_METHOD_GET)
		status = UMAD_STATUS_ATTR_NOT_SUPPORTED;
	else if (mad_attr_id(req) == CLASS_PORT_INFO) {
		mad_set_field(d, 0, IB_CPI_BASEVER_F, 1);
		mad_set_field(d, 0, IB_CPI_CLASSVER_F, mad_class_version(req));
		mad_set_field(d, 0, IB_CPI_RESP_TIME_VALUE_F, 18);
	} else if (mad_attr_id(req) == ATTR_GENERAL_INFO) {
		general_info(n, d);
	} else {
		status = UMAD_STATUS_ATTR_NOT_SUPPORTED;	/* config space, counters ... */
	}
	mad_set_status(resp, status);
	return true;
}
