/* SPDX-License-Identifier: MIT */
/* Mock sysfs contents; formats cite docs/umad.md §1.3 and kernel sysfs.c. */
#include "config.h"

#include <stdio.h>

#include "dev/sysfs.h"
#include "fabric/pma.h"
#include "fabric/port.h"
#include "kernel/ipoib_link.h"

static char *fmt_guid(uint64_t g)
{
	/* sys_read_guid() wants four 16-bit groups (docs/umad.md §1.2). */
	return g_strdup_printf("%04x:%04x:%04x:%04x\n", (unsigned)(g >> 48) & 0xffff,
			       (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff,
			       (unsigned)g & 0xffff);
}

static char *show_node_type(const struct vnode *v)
{
	const struct node *n = v->ctx;

	return g_strdup_printf("%u: %s\n", n->type, node_type_sysfs_name(n->type));
}

static char *show_fw_ver(const struct vnode *v)
{
	(void)v;
	return g_strdup("2.42.5000\n");
}

static char *show_hw_rev(const struct vnode *v)
{
	return g_strdup_printf("%x\n", ((const struct node *)v->ctx)->revision);
}

static char *show_hca_type(const struct vnode *v)
{
	return g_strdup_printf("MT%u\n", ((const struct node *)v->ctx)->device_id);
}

static char *show_node_guid(const struct vnode *v)
{
	return fmt_guid(((const struct node *)v->ctx)->guid);
}

static char *show_sys_guid(const struct vnode *v)
{
	return fmt_guid(((const struct node *)v->ctx)->sys_guid);
}

static char *show_node_desc(const struct vnode *v)
{
	return g_strdup_printf("%s\n", ((const struct node *)v->ctx)->desc);
}

static char *show_board_id(const struct vnode *v)
{
	return g_strdup_printf("IBEMU%04X\n", ((const struct node *)v->ctx)->device_id);
}

#define PORT(v)	((struct port *)(v)->ctx)
#define INFO(v)	port_mgmt(PORT(v))

/* A RoCE port has no LID and no SM (its routes are the fabric's own). */
static char *show_lid(const struct vnode *v)
{
	return g_strdup_printf("0x%x\n", port_is_roce(PORT(v)) ? 0 : INFO(v)->lid);
}

static char *show_lmc(const struct vnode *v)
{
	return g_strdup_printf("%u\n", INFO(v)->lmc);
}

static char *show_sm_lid(const struct vnode *v)
{
	return g_strdup_printf("0x%x\n", port_is_roce(PORT(v)) ? 0 : INFO(v)->sm_lid);
}

static char *show_sm_sl(const struct vnode *v)
{
	return g_strdup_printf("%u\n", INFO(v)->sm_sl);
}

static char *show_state(const struct vnode *v)
{
	unsigned s = PORT(v)->state;

	return g_strdup_printf("%u: %s\n", s, port_state_name(s));
}

static char *show_phys_state(const struct vnode *v)
{
	unsigned s = PORT(v)->phys_state;

	return g_strdup_printf("%u: %s\n", s, phys_state_name(s));
}

static char *show_rate(const struct vnode *v)
{
	char buf[64];

	port_rate_string(PORT(v), buf, sizeof(buf));
	return g_strdup_printf("%s\n", buf);
}

static char *show_cap_mask(const struct vnode *v)
{
	return g_strdup_printf("0x%08x\n", INFO(v)->cap_mask);
}

static char *show_link_layer(const struct vnode *v)
{
	return g_strdup(port_is_roce(PORT(v)) ? "Ethernet\n" : "InfiniBand\n");
}

/* GID i (port_gid): an IB port's subnet prefix and GUID i of GUIDInfo, a
 * RoCE port's from its MAC and address; an empty entry is all zero, as
 * the kernel's cache shows it. */
static char *show_gid(const struct vnode *v)
{
	uint8_t g[16];

	port_gid(PORT(v), v->arg, g);
	/* All eight groups, as %pI6 prints: libibumad cannot read "::". */
	return g_strdup_printf("%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:"
			       "%02x%02x\n", g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8],
			       g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
}

/* gid_attrs/types/i (sysfs.c print_gid_type): an IB port's GIDs are
 * "IB/RoCE v1", a RoCE port's each type in turn (port_gid_type); an
 * empty entry fails EINVAL, which libibverbs' ibv_query_gid_type reads
 * as the IB type. */
static char *show_gid_type(const struct vnode *v)
{
	const char *t = port_gid_type(PORT(v), v->arg);

	return t ? g_strdup_printf("%s\n", t) : NULL;
}

/* gid_attrs/ndevs/i: a RoCE GID's net device, the port's interface
 * where the run has a network (its number + 1 in arg's NDEV bits); an IB
 * GID has none (EINVAL). */
#define NDEV_SHIFT	8
static char *show_gid_ndev(const struct vnode *v)
{
	unsigned k = v->arg >> NDEV_SHIFT, i = v->arg & ((1u << NDEV_SHIFT) - 1);
	char name[32];

	if (!port_is_roce(PORT(v)) || !port_gid_type(PORT(v), i) || !k)
		return NULL;
	host_netdev_format(PORT(v), k - 1, name, sizeof(name));
	return g_strdup_printf("%s\n", name);
}

/*
 * ports/N/counters/: the kernel's PMA counter files (sysfs.c, the set it
 * takes when ClassPortInfo has the extended width, as ibemu's PMA says):
 * each read is a Get of PortCounters or PortCountersExtended to the
 * port's own PMA, in its units (data in 4-byte words), narrow counters
 * saturated as the PMA holds them.
 */
static const struct {
	const char *name;
	uint16_t attr;
	enum MAD_FIELDS field;
} sysfs_counters[] = {
#define PC(n, f) { n, IB_GSI_PORT_COUNTERS, f }
#define PCX(n, f) { n, IB_GSI_PORT_COUNTERS_EXT, f }
	PC("symbol_error", IB_PC_ERR_SYM_F),
	PC("link_error_recovery", IB_PC_LINK_RECOVERS_F),
	PC("link_downed", IB_PC_LINK_DOWNED_F),
	PC("port_rcv_errors", IB_PC_ERR_RCV_F),
	PC("port_rcv_remote_physical_errors", IB_PC_ERR_PHYSRCV_F),
	PC("port_rcv_switch_relay_errors", IB_PC_ERR_SWITCH_REL_F),
	PC("port_xmit_discards", IB_PC_XMT_DISCARDS_F),
	PC("port_xmit_constraint_errors", IB_PC_ERR_XMTCONSTR_F),
	PC("port_rcv_constraint_errors", IB_PC_ERR_RCVCONSTR_F),
	PC("local_link_integrity_errors", IB_PC_ERR_LOCALINTEG_F),
	PC("excessive_buffer_overrun_errors", IB_PC_ERR_EXCESS_OVR_F),
	PC("VL15_dropped", IB_PC_VL15_DROPPED_F),
	PCX("port_xmit_data", IB_PC_EXT_XMT_BYTES_F),
	PCX("port_rcv_data", IB_PC_EXT_RCV_BYTES_F),
	PCX("port_xmit_packets", IB_PC_EXT_XMT_PKTS_F),
	PC("port_xmit_wait", IB_PC_XMT_WAIT_F),
	PCX("port_rcv_packets", IB_PC_EXT_RCV_PKTS_F),
	PCX("unicast_rcv_packets", IB_PC_EXT_RCV_UPKTS_F),
	PCX("unicast_xmit_packets", IB_PC_EXT_XMT_UPKTS_F),
	PCX("multicast_rcv_packets", IB_PC_EXT_RCV_MPKTS_F),
	PCX("multicast_xmit_packets", IB_PC_EXT_XMT_MPKTS_F),
#undef PC
#undef PCX
};

static char *show_counter(const struct vnode *v)
{
	uint64_t val;

	/* The kernel returns the error of a failed MAD: EINVAL. */
	if (!pma_query(PORT(v), sysfs_counters[v->arg].attr, sysfs_counters[v->arg].field, &val))
		return NULL;
	return g_strdup_printf("%" G_GUINT64_FORMAT "\n", val);
}

static char *show_pkey(const struct vnode *v)
{
	const struct port *p = PORT(v);

	return g_strdup_printf("0x%04x\n", v->arg < p->npkeys ? p->pkeys[v->arg] : 0);
}

static char *show_abi(const struct vnode *v)
{
	(void)v;
	return g_strdup("5\n");	/* IB_USER_MAD_ABI_VERSION */
}

static char *show_ibdev(const struct vnode *v)
{
	return g_strdup_printf("%s\n", umad_dev_ca_name(v->ctx));
}

static char *show_dev_port(const struct vnode *v)
{
	return g_strdup_printf("%u\n", umad_dev_port(v->ctx)->num);
}

static char *show_devno(const struct vnode *v)
{
	/* 231:N for umad, 231:64+N for issm, as real ib_umad minors. */
	return g_strdup_printf("231:%u\n", umad_dev_index(v->ctx) + v->arg);
}

/* The MAD class's two files per port, each with its class directory:
 * ib_umad's umadN and issmN (minors from 0 and from 64). */
static const struct {
	const char *prefix;
	const struct kfile_ops *ops;
	unsigned minor;
} mad_kinds[] = {
	{ "umad", &umad_fops, 0 },
	{ "issm", &issm_fops, 64 },
};

static void build_port(struct vfs *vfs, struct vnode *ports, struct port *p,
		       const struct host *netdevs)
{
	static const struct { const char *name; vnode_show show; } files[] = {
		{ "lid", show_lid }, { "lid_mask_count", show_lmc },
		{ "sm_lid", show_sm_lid }, { "sm_sl", show_sm_sl },
		{ "state", show_state }, { "phys_state", show_phys_state },
		{ "rate", show_rate }, { "cap_mask", show_cap_mask },
		{ "link_layer", show_link_layer },
	};
	char name[16];
	struct vnode *dir, *sub, *types, *ndevs;
	unsigned i, k, ndev = 0;

	if (netdevs && host_netdev_index(netdevs, p, &k))
		ndev = (k + 1) << NDEV_SHIFT;
	snprintf(name, sizeof(name), "%u", p->num);
	dir = vfs_dir(vfs, ports, name);
	for (i = 0; i < G_N_ELEMENTS(files); i++)
		vfs_attr(vfs, dir, files[i].name, files[i].show, p, 0);
	/* As many GIDs as GUIDCap: ibv_query_gid reads them here. */
	sub = vfs_dir(vfs, dir, "gids");
	for (i = 0; i < GUIDS_PER_PORT; i++) {
		snprintf(name, sizeof(name), "%u", i);
		vfs_attr(vfs, sub, name, show_gid, p, i);
	}
	sub = vfs_dir(vfs, dir, "gid_attrs");
	types = vfs_dir(vfs, sub, "types");
	ndevs = vfs_dir(vfs, sub, "ndevs");
	for (i = 0; i < GUIDS_PER_PORT; i++) {
		snprintf(name, sizeof(name), "%u", i);
		vfs_attr(vfs, types, name, show_gid_type, p, i);
		vfs_attr(vfs, ndevs, name, show_gid_ndev, p, i | ndev);
	}
	sub = vfs_dir(vfs, dir, "counters");
	for (i = 0; i < G_N_ELEMENTS(sysfs_counters); i++)
		vfs_attr(vfs, sub, sysfs_counters[i].name, show_counter, p, i);
	/* pkeys/ must be exactly 0..N-1 (docs/umad.md §1.3.5). */
	sub = vfs_dir(vfs, dir, "pkeys");
	for (i = 0; i < p->npkeys; i++) {
		snprintf(name, sizeof(name), "%u", i);
		vfs_attr(vfs, sub, name, show_pkey, p, i);
	}
}

/*
 * device/: the HCA as the PCI function it would be (its ids from the
 * topology's node, the InfiniBand controller class), and net/ with a
 * directory for each port's IPoIB interface where the run has them,
 * whose dev_port is the port's number less one: how rdma-core's tests,
 * libfabric and node feature discovery find an HCA's netdev.
 */
static char *show_vendor(const struct vnode *v)
{
	uint32_t oui = ((const struct node *)v->ctx)->vendor_id;

	/* NodeInfo's VendorID is an IEEE OUI; Mellanox's (0x0002c9) HCAs
	 * are PCI vendor 0x15b3, whose device ids NodeInfo's DeviceID
	 * repeats. Another's: the OUI's low 16 bits. */
	return g_strdup_printf("0x%04x\n", oui == 0x0002c9 ? 0x15b3 : oui & 0xffff);
}

static char *show_device(const struct vnode *v)
{
	return g_strdup_printf("0x%04x\n", ((const struct node *)v->ctx)->device_id);
}

static char *show_class(const struct vnode *v)
{
	(void)v;
	return g_strdup("0x020700\n");	/* network controller, InfiniBand */
}

static char *show_numa_node(const struct vnode *v)
{
	(void)v;
	return g_strdup("-1\n");
}

static char *show_netdev_port(const struct vnode *v)
{
	return g_strdup_printf("%u\n", PORT(v)->num - 1);
}

/* net/ibN/mode (ib_ipoib's): datagram until a write makes it connected;
 * an interface the fabric does not carry (one host's) stays datagram. */
static char *show_mode(const struct vnode *v)
{
	char *m = ipoib_port_mode(PORT(v));

	return m ? m : g_strdup("datagram\n");
}

static int store_mode(const struct vnode *v, const char *buf, size_t len)
{
	(void)len;
	return ipoib_port_set_mode(PORT(v), buf);
}

/* create_child, delete_child: write-only (no show: 0200, and an open
 * for reading is EACCES, as sysfs's). */
static int store_create_child(const struct vnode *v, const char *buf, size_t len)
{
	(void)len;
	return ipoib_port_create_child(PORT(v), buf);
}

static int store_delete_child(const struct vnode *v, const char *buf, size_t len)
{
	(void)len;
	return ipoib_port_delete_child(PORT(v), buf);
}

static void build_device(struct vfs *vfs, struct vnode *ca, struct node *n,
			 const struct host *hw)
{
	static const struct { const char *name; vnode_show show; } files[] = {
		{ "vendor", show_vendor }, { "device", show_device },
		{ "subsystem_vendor", show_vendor }, { "subsystem_device", show_device },
		{ "class", show_class }, { "numa_node", show_numa_node },
	};
	struct vnode *dir = vfs_dir(vfs, ca, "device"), *net;
	char ifname[32];
	unsigned i;

	for (i = 0; i < G_N_ELEMENTS(files); i++)
		vfs_attr(vfs, dir, files[i].name, files[i].show, n, 0);
	if (!hw)
		return;
	net = vfs_dir(vfs, dir, "net");
	for (i = 1; i <= n->nports; i++)
		if (host_netdev_name(hw, &n->ports[i], ifname, sizeof(ifname))) {
			struct vnode *d = vfs_dir(vfs, net, ifname);

			vfs_attr(vfs, d, "dev_port", show_netdev_port, &n->ports[i], 0);
			if (port_is_roce(&n->ports[i]))
				continue;
			vfs_attr_rw(vfs, d, "mode", show_mode, store_mode, &n->ports[i], 0);
			vfs_attr_rw(vfs, d, "create_child", NULL, store_create_child,
				    &n->ports[i], 0);
			vfs_attr_rw(vfs, d, "delete_child", NULL, store_delete_child,
				    &n->ports[i], 0);
		}
}

static void build_ca(struct vfs *vfs, struct vnode *ib, struct node *n,
		     const char *ca_name, const struct host *netdevs)
{
	static const struct { const char *name; vnode_show show; } files[] = {
		{ "node_type", show_node_type }, { "fw_ver", show_fw_ver },
		{ "hw_rev", show_hw_rev }, { "hca_type", show_hca_type },
		{ "node_guid", show_node_guid }, { "sys_image_guid", show_sys_guid },
		{ "node_desc", show_node_desc }, { "board_id", show_board_id },
	};
	struct vnode *dir = vfs_dir(vfs, ib, ca_name), *ports;
	unsigned i;

	for (i = 0; i < G_N_ELEMENTS(files); i++)
		vfs_attr(vfs, dir, files[i].name, files[i].show, n, 0);
	ports = vfs_dir(vfs, dir, "ports");
	/* Switches show port 0 only; CAs 1..N (docs/umad.md §1.3.4). */
	if (node_is_switch(n)) {
		build_port(vfs, ports, &n->ports[0], NULL);
		return;
	}
	for (i = 1; i <= n->nports; i++)
		build_port(vfs, ports, &n->ports[i], netdevs);
	build_device(vfs, dir, n, netdevs);
}

bool sysfs_rename_ca(struct vfs *vfs, const char *was, const char *now)
{
	struct vnode *ib = vfs_child(vfs->root, "infiniband");
	struct vnode *dir = vfs_child(ib, was);

	if (!dir || vfs_child(ib, now))
		return false;
	vfs_rename(vfs, dir, now);
	return true;
}

void sysfs_build(struct vfs *vfs, struct vnode *ib, struct vnode *mad,
		 struct vnode *dev, struct umad_host *host, bool netdevs)
{
	const struct host *hw = umad_host_hw(host);
	unsigned i;

	for (i = 0; i < host_ncas(hw); i++) {
		const char *name = NULL;
		struct node *n = host_ca(hw, i, &name);

		build_ca(vfs, ib, n, name, netdevs ? hw : NULL);
	}
	vfs_attr(vfs, mad, "abi_version", show_abi, NULL, 0);
	for (i = 0; i < umad_host_ndevs(host); i++) {
		struct umad_dev *d = umad_host_dev(host, i);
		unsigned k;

		for (k = 0; k < G_N_ELEMENTS(mad_kinds); k++) {
			char *name = g_strdup_printf("%s%u", mad_kinds[k].prefix, i);
			struct vnode *dir = vfs_dir(vfs, mad, name);

			vfs_attr(vfs, dir, "ibdev", show_ibdev, d, 0);
			vfs_attr(vfs, dir, "port", show_dev_port, d, 0);
			vfs_attr(vfs, dir, "dev", show_devno, d, mad_kinds[k].minor);
			vfs_file(vfs, dev, name, mad_kinds[k].ops, d);
			g_free(name);
		}
	}
}
