/* SPDX-License-Identifier: MIT */
/* What the fast path serves hosts: their sysfs, control connections and
 * attachments; see fastpath_priv.h and docs/many-hosts.md. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <glib-unix.h>

#include "abi/fast_wire.h"
#include "abi/fd_pass.h"
#include "ctl/ctl.h"
#include "dev/serve.h"
#include "dev/vfs.h"
#include "kernel/kfile.h"
#include "lib/listener.h"
#include "lib/log.h"
#include "socket/fastpath_priv.h"
#include "socket/fastpath_verbs.h"
#include "socket/fastslot.h"

/* ---- many hosts (docs/many-hosts.md) ----------------------------------- */

/* @v and what is below it; the verbs files (and the class that holds
 * them) only for an asker that mirrors them (FAST_LIST_VERBS), the rdma_cm
 * file and its class likewise (FAST_LIST_UCMA). */
static char kind_of(const struct vnode *v)
{
	if (v->kind != VN_FILE)
		return v->kind == VN_DIR ? 'd' : 'f';
	/* Another emulator's file (a forwarder's, which has no code, or a
	 * layer over one) is not ours to offer. */
	if (v->ops->stacked && ((const struct kfile_node *)v->ctx)->ops->forwards)
		return 0;
	return kfile_kind(v->ops->code) == v->ops ? v->ops->code : 0;
}

static void list_tree(const struct vnode *v, const char *path, uint64_t what, GString *out)
{
	char kind = kind_of(v);
	unsigned i;

	if (!kind)
		return;
	if (!(what & FAST_LIST_VERBS) && (kind == 'c' || kind == 'e' ||
					  !strcmp(path, "infiniband_verbs")))
		return;
	if (!(what & FAST_LIST_UCMA) && (kind == 'm' || !strcmp(path, "infiniband_ucma")))
		return;
	if (*path)
		g_string_append_printf(out, "%c %s\n", kind, path);
	for (i = 0; v->kind == VN_DIR && i < v->children->len; i++) {
		const struct vnode *c = g_ptr_array_index(v->children, i);
		char *sub = *path ? g_strdup_printf("%s/%s", path, c->name) : g_strdup(c->name);

		list_tree(c, sub, what, out);
		g_free(sub);
	}
}

void fp_do_sysfs(struct fast_chan *ch, uint32_t op, uint64_t arg, const char *payload,
		     size_t n)
{
	struct vfs *vfs = ch->fp->vfs;
	char *path, *text;
	int err;
	struct vnode *v;
	GString *out;

	if (!vfs) {
		fp_reply(ch, -EOPNOTSUPP, NULL, 0, -1);
		return;
	}
	if (op == FAST_SYSFS_LIST) {
		out = g_string_new(NULL);
		list_tree(vfs->root, "", arg, out);
		if (out->len > FAST_INLINE_MAX)	/* one datagram */
			fp_reply(ch, -E2BIG, NULL, 0, -1);
		else
			fp_reply(ch, 0, out->str, (uint32_t)out->len, -1);
		g_string_free(out, TRUE);
		return;
	}
	path = g_strndup(payload, n);
	v = vfs_path(vfs->root, path);
	g_free(path);
	if (!v || v->kind != VN_ATTR) {
		fp_reply(ch, v ? -EISDIR : -ENOENT, NULL, 0, -1);
		return;
	}
	/* As a read of the FUSE file would answer (vfs.h). */
	if ((err = vfs_attr_read(v, &text)) < 0) {
		fp_reply(ch, err, NULL, 0, -1);
		return;
	}
	n = MIN(strlen(text), (size_t)FAST_INLINE_MAX);
	fp_reply(ch, (int64_t)n, text, (uint32_t)n, -1);
	g_free(text);
}

void fp_do_host(struct fast_chan *ch, const char *payload, size_t n)
{
	GString *out = g_string_new(NULL);
	int err = 0;

	if (!ch->fp->host_begin) {
		fp_reply(ch, -EOPNOTSUPP, NULL, 0, -1);
	} else if (fp_chan_taken(ch)) {
		fp_reply(ch, -EBUSY, NULL, 0, -1);
	} else {
		ch->hosting = ch->fp->host_begin(ch->fp->host_ctx, ch->pid, ch->uid, ch->guest,
						 payload, n, out, &err);
		fp_reply(ch, ch->hosting ? 0 : err, out->str, (uint32_t)out->len, -1);
	}
	g_string_free(out, TRUE);
}

/* The channel becomes a control connection: the control server's now. */
void fp_do_ctl(struct fast_chan *ch)
{
	if (!ch->fp->ctl) {
		fp_reply(ch, -EOPNOTSUPP, NULL, 0, -1);
	} else if (ch->fp->ctl_refused) {
		fp_reply(ch, -EACCES, NULL, 0, -1);
	} else if (fp_chan_taken(ch)) {	/* a slot is a file's */
		fp_reply(ch, -EBUSY, NULL, 0, -1);
	} else {
		fp_reply(ch, 0, NULL, 0, -1);
		ctl_server_adopt(ch->fp->ctl, ch->fd);
		ch->fd = -1;	/* serve_one() says it is gone: on_chan ends it */
	}
}
