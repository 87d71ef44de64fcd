/* SPDX-License-Identifier: MIT */
/* The tree behind the FUSE mount; see vfs.h. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "dev/vfs.h"

static void vnode_free(gpointer p)
{
	struct vnode *v = p;

	if (v->children)
		g_ptr_array_free(v->children, TRUE);
	g_free(v->name);
	g_free(v);
}

static struct vnode *add(struct vfs *vfs, struct vnode *parent,
			 const char *name, enum vnode_kind kind)
{
	struct vnode *v = g_new0(struct vnode, 1);

	v->ino = vfs->by_ino->len + 1;	/* FUSE_ROOT_ID is 1 */
	v->name = g_strdup(name);
	v->parent = parent ? parent : v;
	v->kind = kind;
	if (kind == VN_DIR)
		v->children = g_ptr_array_new();
	g_ptr_array_add(vfs->by_ino, v);
	if (parent)
		g_ptr_array_add(parent->children, v);
	return v;
}

struct vfs *vfs_new(void)
{
	struct vfs *vfs = g_new0(struct vfs, 1);

	vfs->by_ino = g_ptr_array_new_with_free_func(vnode_free);
	vfs->root = add(vfs, NULL, "", VN_DIR);
	return vfs;
}

void vfs_free(struct vfs *vfs)
{
	if (!vfs)
		return;
	g_ptr_array_free(vfs->by_ino, TRUE);
	g_free(vfs);
}

struct vnode *vfs_dir(struct vfs *vfs, struct vnode *parent, const char *name)
{
	struct vnode *v = vfs_child(parent, name);

	return v ? v : add(vfs, parent, name, VN_DIR);
}

struct vnode *vfs_attr(struct vfs *vfs, struct vnode *parent, const char *name,
		       vnode_show show, void *ctx, unsigned arg)
{
	struct vnode *v = add(vfs, parent, name, VN_ATTR);

	v->show = show;
	v->ctx = ctx;
	v->arg = arg;
	return v;
}

struct vnode *vfs_attr_rw(struct vfs *vfs, struct vnode *parent, const char *name,
			  vnode_show show, vnode_store store, void *ctx, unsigned arg)
{
	struct vnode *v = vfs_attr(vfs, parent, name, show, ctx, arg);

	v->store = store;
	return v;
}

int vfs_attr_read(const struct vnode *v, char **text)
{
	if (!v->show)
		return -EACCES;
	return (*text = v->show(v)) ? 0 : -EINVAL;
}

struct vnode *vfs_file(struct vfs *vfs, struct vnode *parent, const char *name,
		       const struct kfile_ops *ops, void *dev)
{
	struct vnode *v = add(vfs, parent, name, VN_FILE);

	v->ops = ops;
	v->ctx = dev;
	return v;
}

struct vnode *vfs_get(struct vfs *vfs, uint64_t ino)
{
	return ino >= 1 && ino <= vfs->by_ino->len ?
	       g_ptr_array_index(vfs->by_ino, ino - 1) : NULL;
}

struct vnode *vfs_child(const struct vnode *dir, const char *name)
{
	unsigned i;

	if (!dir || dir->kind != VN_DIR)
		return NULL;
	for (i = 0; i < dir->children->len; i++) {
		struct vnode *c = g_ptr_array_index(dir->children, i);

		if (!strcmp(c->name, name))
			return c;
	}
	return NULL;
}

void vfs_rename(struct vfs *vfs, struct vnode *v, const char *name)
{
	char *was = v->name;

	v->name = g_strdup(name);
	if (vfs->renamed)
		vfs->renamed(vfs->renamed_ctx, v->parent, was, name);
	g_free(was);
}

struct vnode *vfs_path(struct vnode *from, const char *path)
{
	char **parts = g_strsplit(path, "/", -1);
	struct vnode *v = from;
	unsigned i;

	for (i = 0; v && parts[i]; i++)
		if (*parts[i])
			v = vfs_child(v, parts[i]);
	g_strfreev(parts);
	return v;
}
