/* SPDX-License-Identifier: MIT */
/*
 * The verbs part of the mock sysfs (sysfs.h): what libibverbs' sysfs scan
 * reads (docs/verbs.md "Discovery"), and the daemon files of
 * abi/verbs_wire.h that the provider reads.
 */
#include "config.h"

#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "abi/verbs_wire.h"
#include "dev/sysfs.h"
#include "kernel/ucma.h"
#include "kernel/uverbs.h"

/* IB_USER_VERBS_ABI_VERSION (kernel rdma/ib_user_verbs.h): libibverbs
 * takes 3 to 6 in class/infiniband_verbs/abi_version. */
#define UVERBS_ABI_VERSION	6
/* The per-device driver ABI (uverbs_abi_ver), which the provider's match
 * range names: ours is 1. */
#define UVERBS_DRIVER_ABI	1
/* ib_uverbs' char devices: major 231, minors from 192. */
#define UVERBS_MAJOR		231
#define UVERBS_BASE_MINOR	192

#define DEV(v)	((struct uverbs_dev *)(v)->ctx)

static char *show_abi(const struct vnode *v)
{
	return g_strdup_printf("%u\n", v->arg);
}

static char *show_ibdev(const struct vnode *v)
{
	return g_strdup_printf("%s\n", uverbs_dev_ca_name(DEV(v)));
}

/*
 * libibverbs opens /dev/infiniband/uverbsN only if its st_rdev is this
 * (util/open_cdev.c): say what the file there is, a CUSE device or, in
 * namespace mode, the host's /dev/full bound over it.
 */
char *sysfs_uverbs_devno(unsigned index)
{
	char *path = g_strdup_printf("/dev/infiniband/uverbs%u", index);
	struct stat st;
	char *text;

	if (stat(path, &st) == 0 && S_ISCHR(st.st_mode))
		text = g_strdup_printf("%u:%u\n", major(st.st_rdev), minor(st.st_rdev));
	else
		text = g_strdup_printf("%u:%u\n", UVERBS_MAJOR, UVERBS_BASE_MINOR + index);
	g_free(path);
	return text;
}

static char *show_devno(const struct vnode *v)
{
	return sysfs_uverbs_devno(uverbs_dev_index(DEV(v)));
}

static char *show_device(const struct vnode *v)
{
	return uverbs_device_text(DEV(v));
}

static char *show_port(const struct vnode *v)
{
	char *text = uverbs_port_text(DEV(v), v->arg);

	return text ? text : g_strdup("");
}

void sysfs_build_verbs(struct vfs *vfs, struct vnode *verbs, struct vnode *dev,
		       struct uverbs *uv)
{
	unsigned i, p;

	vfs_attr(vfs, verbs, "abi_version", show_abi, NULL, UVERBS_ABI_VERSION);
	for (i = 0; i < uverbs_ndevs(uv); i++) {
		struct uverbs_dev *d = uverbs_dev(uv, i);
		char name[32];
		struct vnode *dir;

		snprintf(name, sizeof(name), "uverbs%u", i);
		dir = vfs_dir(vfs, verbs, name);
		vfs_attr(vfs, dir, "ibdev", show_ibdev, d, 0);
		vfs_attr(vfs, dir, "dev", show_devno, d, 0);
		vfs_attr(vfs, dir, "abi_version", show_abi, NULL, UVERBS_DRIVER_ABI);
		vfs_attr(vfs, dir, VERBS_WIRE_DEVICE, show_device, d, 0);
		for (p = 1; p <= uverbs_dev_node(d)->nports; p++) {
			char pname[32];

			snprintf(pname, sizeof(pname), VERBS_WIRE_PORT "%u", p);
			vfs_attr(vfs, dir, pname, show_port, d, p);
		}
		vfs_file(vfs, dir, VERBS_WIRE_EVENTS, &uverbs_events_fops, d);
		vfs_file(vfs, dir, VERBS_WIRE_CMD, &uverbs_cmd_fops, uverbs_dev_ctx_node(d));
		vfs_file(vfs, dev, name, &uverbs_cmd_fops, uverbs_dev_ctx_node(d));
	}
}

void sysfs_build_host(struct vfs *vfs, struct umad_host *host, struct uverbs *uv,
		      struct ucma *ucma, bool netdevs)
{
	struct vnode *root = vfs->root, *dev = vfs_dir(vfs, root, "dev");

	sysfs_build(vfs, vfs_dir(vfs, root, "infiniband"), vfs_dir(vfs, root, "infiniband_mad"),
		    dev, host, netdevs);
	sysfs_build_verbs(vfs, vfs_dir(vfs, root, "infiniband_verbs"), dev, uv);
	if (ucma) {
		/* librdmacm reads class/infiniband_ucma/abi_version when
		 * class/misc/rdma_cm has none; the command file beside it is
		 * ours (abi/ucma_wire.h). /dev/infiniband/rdma_cm is the
		 * host's /dev/full bound over this node (ns/nsmode.c). */
		struct vnode *dir = vfs_dir(vfs, root, "infiniband_ucma");

		vfs_attr(vfs, dir, "abi_version", show_abi, NULL, UCMA_ABI_VERSION);
		vfs_file(vfs, dir, UCMA_WIRE_CMD, &ucma_fops, ucma);
		vfs_file(vfs, dev, "rdma_cm", &ucma_fops, ucma);
	}
}
