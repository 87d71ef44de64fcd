/* SPDX-License-Identifier: MIT */
/*
 * The mock sysfs that libibumad 44 reads (docs/umad.md §1), built into a vfs:
 *
 *   <ib>/<ca>/{node_type,fw_ver,hw_rev,hca_type,node_guid,sys_image_guid,
 *             node_desc,board_id}
 *   <ib>/<ca>/ports/<n>/{lid,lid_mask_count,sm_lid,sm_sl,state,phys_state,
 *             rate,cap_mask,link_layer,gids/0..7,pkeys/0..N-1,
 *             gid_attrs/{types,ndevs}/0..7,counters/...}
 *   <ib>/<ca>/device/{vendor,device,subsystem_vendor,subsystem_device,
 *             class,numa_node,net/ib<k>/dev_port}
 *   <mad>/abi_version, <mad>/umad<N>/{ibdev,port,dev}, <mad>/issm<N>/...
 *   <dev>/umad<N>, <dev>/issm<N>          (the device files)
 *
 * and (sysfs_build_verbs, docs/verbs.md):
 *
 *   <verbs>/abi_version, <verbs>/uverbs<k>/{ibdev,dev,abi_version,
 *             ibemu_device,ibemu_port<n>,ibemu_events,ibemu_cmd}
 *   <dev>/uverbs<k>                       (the command device)
 *
 * Every value is formatted on read from the fabric's port state, in the
 * kernel's exact formats (docs/umad.md §1.3.4-1.3.5, docs/umad.md §1.4).
 */
#ifndef IBEMU_DEV_SYSFS_H
#define IBEMU_DEV_SYSFS_H

#include "dev/vfs.h"
#include "kernel/umad.h"

/* @netdevs: the run gives the host's ports IPoIB interfaces (device/net/). */
void sysfs_build(struct vfs *vfs, struct vnode *ib, struct vnode *mad,
		 struct vnode *dev, struct umad_host *host, bool netdevs);
struct uverbs;
void sysfs_build_verbs(struct vfs *vfs, struct vnode *verbs, struct vnode *dev,
		       struct uverbs *uv);
/* A host's whole tree in @vfs: infiniband/, infiniband_mad/ and dev/
 * for @host's umad devices, infiniband_verbs/ for @uv's verbs devices
 * (what `run`, `start` and an attachment each serve), and with @ucma
 * (namespace mode) infiniband_ucma/ and dev/rdma_cm for rdma_cm. */
struct ucma;
void sysfs_build_host(struct vfs *vfs, struct umad_host *host, struct uverbs *uv,
		      struct ucma *ucma, bool netdevs);
/* A host's CA renamed from @was to @now (kernel/rdma_link.h): its
 * directory in a tree sysfs_build_host made. False if it has none. */
bool sysfs_rename_ca(struct vfs *vfs, const char *was, const char *now);
/* uverbs<@index>/dev's text: the major:minor of /dev/infiniband/uverbs<@index>
 * as this process sees it (g_malloc'd). */
char *sysfs_uverbs_devno(unsigned index);

#endif
