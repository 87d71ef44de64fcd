/* SPDX-License-Identifier: MIT */
/*
 * A small read-only tree of directories, attribute files (whose text is
 * made on every read, so sysfs stays live) and device files, indexed by
 * inode number for the FUSE adapter. Its shape is made once; only a name
 * changes after (a renamed device's directory, vfs_rename).
 */
#ifndef IBEMU_DEV_VFS_H
#define IBEMU_DEV_VFS_H

#include <glib.h>
#include <stdint.h>

#include "kernel/kfile.h"

/* Directories, attribute files, and device files (devfile.h): a kind's
 * table and its device (kernel/kfile.h), whoever serves it. */
enum vnode_kind { VN_DIR, VN_ATTR, VN_FILE };

struct vnode;
typedef char *(*vnode_show)(const struct vnode *v);
/* A write of @len bytes (NUL-terminated for it) to a writable attribute:
 * 0, or -errno, as a kernel store's. */
typedef int (*vnode_store)(const struct vnode *v, const char *buf, size_t len);

struct vnode {
	uint64_t ino;
	char *name;
	struct vnode *parent;
	enum vnode_kind kind;
	GPtrArray *children;	/* VN_DIR only */
	vnode_show show;	/* VN_ATTR: returns g_malloc'd text, or NULL: the
				 * read fails with EINVAL, as a kernel show's error;
				 * NULL for a write-only one (0200) */
	vnode_store store;	/* VN_ATTR: NULL for a read-only one (0444) */
	const struct kfile_ops *ops;	/* VN_FILE: its kind; ctx is its device */
	void *ctx;
	unsigned arg;
};

/* A name changed under directory @dir (@was to @now): what caches names
 * (the FUSE adapter's kernel) forgets both. */
typedef void (*vfs_renamed_fn)(void *ctx, const struct vnode *dir, const char *was,
			       const char *now);

struct vfs {
	GPtrArray *by_ino;	/* index ino - 1 */
	struct vnode *root;
	vfs_renamed_fn renamed;	/* the one adapter serving the tree, or NULL */
	void *renamed_ctx;
};

struct vfs *vfs_new(void);
void vfs_free(struct vfs *vfs);
struct vnode *vfs_dir(struct vfs *vfs, struct vnode *parent, const char *name);
struct vnode *vfs_attr(struct vfs *vfs, struct vnode *parent, const char *name,
		       vnode_show show, void *ctx, unsigned arg);
/* A device file: @ops's kind, of device @dev. */
struct vnode *vfs_file(struct vfs *vfs, struct vnode *parent, const char *name,
		       const struct kfile_ops *ops, void *dev);
/* A writable one (0644): its writes go to @store; write-only (0200) with
 * no @show. */
struct vnode *vfs_attr_rw(struct vfs *vfs, struct vnode *parent, const char *name,
			  vnode_show show, vnode_store store, void *ctx, unsigned arg);
/* Attribute @v's text (g_malloc'd) into *@text: 0; -EACCES for a
 * write-only one (sysfs refuses the open), -EINVAL when its show fails. */
int vfs_attr_read(const struct vnode *v, char **text);
struct vnode *vfs_get(struct vfs *vfs, uint64_t ino);
struct vnode *vfs_child(const struct vnode *dir, const char *name);
/* Name @v @name (the same inode; its parent has no other child so named:
 * the caller checked), and tell vfs->renamed. */
void vfs_rename(struct vfs *vfs, struct vnode *v, const char *name);
/* Resolve "a/b/c" below @from; NULL if absent. */
struct vnode *vfs_path(struct vnode *from, const char *path);

#endif
