/* SPDX-License-Identifier: MIT */
/*
 * A small read-only tree of directories, attribute files (whose text is
 * made on every read, so sysfs stays live) and device files, indexed by
 * inode number for the FUSE adapter.
 */
#ifndef IBEMU_DEV_VFS_H
#define IBEMU_DEV_VFS_H

#include <glib.h>
#include <stdint.h>

/* Directories, attribute files, and the device files of devfile.h: umad,
 * issm, the verbs command file and the verbs async event file; then the
 * same files another emulator serves (their ctx a struct umad_fwd,
 * issm_fwd or verbs_fwd); last, the rdma_cm command file (a struct ucma). */
enum vnode_kind { VN_DIR, VN_ATTR, VN_UMAD, VN_ISSM, VN_VCMD, VN_VEVENTS, VN_UMAD_FWD,
		  VN_ISSM_FWD, VN_VCMD_FWD, VN_VEVENTS_FWD, VN_UCMA, VN_UCMA_FWD };

struct vnode;
typedef char *(*vnode_show)(const struct vnode *v);

struct vnode {
	uint64_t ino;
	char *name;
	struct vnode *parent;
	enum vnode_kind kind;
	GPtrArray *children;	/* VN_DIR only */
	vnode_show show;	/* VN_ATTR: returns g_malloc'd text, or NULL: the
				 * read fails with EINVAL, as a kernel show's error */
	void *ctx;
	unsigned arg;
};

struct vfs {
	GPtrArray *by_ino;	/* index ino - 1 */
	struct vnode *root;
};

struct vfs *vfs_new(void);
void vfs_free(struct vfs *vfs);
struct vnode *vfs_dir(struct vfs *vfs, struct vnode *parent, const char *name);
struct vnode *vfs_attr(struct vfs *vfs, struct vnode *parent, const char *name,
		       vnode_show show, void *ctx, unsigned arg);
struct vnode *vfs_node(struct vfs *vfs, struct vnode *parent, const char *name,
		       enum vnode_kind kind, void *ctx);
struct vnode *vfs_get(struct vfs *vfs, uint64_t ino);
struct vnode *vfs_child(const struct vnode *dir, const char *name);
/* Resolve "a/b/c" below @from; NULL if absent. */
struct vnode *vfs_path(struct vnode *from, const char *path);

#endif
