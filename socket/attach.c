/* SPDX-License-Identifier: MIT */
/* Remote hosts' attachments, owner side; see attach.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl/sockname.h"
#include "dev/sysfs.h"
#include "dev/vfs.h"
#include "fabric/fabric.h"
#include "kernel/ipoib_link.h"
#include "kernel/ucma.h"
#include "kernel/umad.h"
#include "kernel/uverbs.h"
#include "lib/log.h"
#include "socket/attach.h"


struct attach_owner {
	struct ctl_env *env;	/* its remotes: our attachments' r */
	struct ctl_server *ctl;	/* the hosts' `ibemu ctl` (FAST_CTL), or NULL */
};

/*
 * The channels one attached host may hold here (its programs' open files,
 * one each): a host could otherwise fill this emulator's fd table, and
 * no other host could attach (README "Limits").
 */
#define ATTACH_MAX_CHANNELS	1024

struct attachment {
	struct ctl_remote r;	/* in env->remotes while attached */
	bool said_full;		/* the cap was logged */
	struct host *hw;	/* its HCAs' ports (kernel/host.h) */
	struct uverbs *uv;	/* its HCAs' verbs devices */
	struct ucma *ucma;	/* its connection manager (docs/rdmacm.md) */
	struct ipoib_links *ipoib;	/* its ibN interfaces' (docs/ipoib.md) */
	struct vfs *vfs;
	struct fastpath *fp;
};

/* Who holds @n now: a remote's label, or NULL for nobody; "this emulator"
 * when its own host does. */
static const char *holder(struct attach_owner *o, const struct node *n)
{
	unsigned i, k;

	for (k = 1; k <= n->nports; k++)
		if (n->ports[k].upper.deliver)
			break;
	if (k > n->nports)
		return NULL;
	for (i = 0; i < o->env->remotes->len; i++) {
		struct ctl_remote *r = g_ptr_array_index(o->env->remotes, i);
		const struct host *hw = umad_host_hw(r->host);

		for (k = 0; k < host_ncas(hw); k++)
			if (host_ca(hw, k, NULL) == n)
				return r->label;
	}
	return "this emulator";
}

static void attachment_free(struct attachment *a)
{
	/* The files first (agents, queues, outstanding sends, verbs
	 * contexts), then the devices, whose ports drop what comes for them
	 * from now on. */
	fastpath_free(a->fp);
	ipoib_links_free(a->ipoib);	/* its QPs are contexts of the devices */
	a->r.ipoib = NULL;
	uverbs_free(a->uv);
	ucma_free(a->ucma);
	a->r.ucma = NULL;
	umad_host_free(a->r.host);
	host_free(a->hw);
	vfs_free(a->vfs);
	g_free(a->r.label);
	g_free(a->r.nodes);
	g_free(a);
}

/* Check every name before anything is attached: all or nothing. */
static int check_nodes(struct attach_owner *o, char **names, GString *out)
{
	unsigned i, j;

	if (!names[0]) {
		g_string_append(out, "no node to attach");
		return -EINVAL;
	}
	for (i = 0; names[i]; i++) {
		struct node *n = fabric_lookup(o->env->fabric, names[i]);
		const char *by;

		if (!n) {
			g_string_append_printf(out, "%s: no such node in the topology", names[i]);
			return -ENOENT;
		}
		if (n->type != NODE_CA) {
			g_string_append_printf(out, "%s: only a CA can be attached (a host's HCA)",
					       names[i]);
			return -EINVAL;
		}
		for (j = 0; j < i; j++)
			if (fabric_lookup(o->env->fabric, names[j]) == n) {
				g_string_append_printf(out, "%s: named twice", names[i]);
				return -EINVAL;
			}
		if ((by = holder(o, n))) {
			g_string_append_printf(out, "%s is attached already, by %s", names[i], by);
			return -EBUSY;
		}
	}
	return 0;
}

/*
 * @nodes (checked) as a host named @label: its ports, connection manager,
 * MAD layer, verbs devices and mock sysfs, served by a fast path of its
 * own, listening on @sock (a host of this run) or on nothing (a remote
 * one, whose channels come through the one that attached it: FAST_ADOPT;
 * a container may see only the one bind-mounted socket).
 */
static struct attachment *attachment_new(struct attach_owner *o, const char *label,
					 char **nodes, const char *sock, GError **err)
{
	struct attachment *a = g_new0(struct attachment, 1);
	unsigned i;

	a->r.label = g_strdup(label);
	a->hw = host_new(o->env->fabric, o->env->tq);
	for (i = 0; nodes[i]; i++)
		host_attach(a->hw, fabric_lookup(o->env->fabric, nodes[i]));
	/* Its kernel's clients, in cli/emulator.c's order: IPoIB (its CM
	 * MADs and SA answers), ib_cm's agents, the MAD layer, the verbs
	 * devices. */
	a->ipoib = ipoib_links_new(a->hw);
	a->r.ipoib = a->ipoib;
	a->ucma = ucma_new(a->hw);
	a->r.ucma = a->ucma;
	a->r.host = umad_host_new(a->hw);
	a->r.nodes = g_strjoinv(" ", nodes);
	/* Its verbs devices and rdma_cm file: served over its channels too
	 * (socket/fastpath_verbs.h), their port events and packets are its. */
	a->uv = uverbs_new(a->hw);
	ipoib_links_set_verbs(a->ipoib, a->uv);
	a->vfs = vfs_new();
	/* A host of this run has its interfaces (ns/vhosts.c); a remote
	 * one has none yet. */
	sysfs_build_host(a->vfs, a->r.host, a->uv, a->ucma, sock != NULL);
	if (!(a->fp = fastpath_new(a->r.host, sock, err))) {
		attachment_free(a);
		return NULL;
	}
	fastpath_set_vfs(a->fp, a->vfs);
	return a;
}

static void *begin(void *ctx, int pid, unsigned uid, bool guest, const char *payload, size_t n,
		   GString *out, int *err)
{
	struct attach_owner *o = ctx;
	struct attachment *a = NULL;
	char **words = NULL;
	GPtrArray *parts = g_ptr_array_new();
	size_t i, start = 0;

	/* label NUL node NUL node NUL ... */
	for (i = 0; i < n; i++)
		if (!payload[i]) {
			g_ptr_array_add(parts, g_strndup(payload + start, i - start));
			start = i + 1;
		}
	g_ptr_array_add(parts, NULL);
	words = (char **)g_ptr_array_free(parts, FALSE);
	if (start != n || !words[0] || !emu_name_ok(words[0])) {
		g_string_append(out, "a host's name is 1 to 64 of A-Z a-z 0-9 . _ -, not starting with . or -");
		*err = -EINVAL;
		goto out;
	}
	if ((*err = check_nodes(o, words + 1, out)) < 0)
		goto out;
	a = attachment_new(o, words[0], words + 1, NULL, NULL);
	a->r.uid = uid;
	a->r.pid = pid;
	/* `ibemu ctl` on the host steers the whole fabric: for those who
	 * may steer it here (a group's members may attach hosts only). */
	fastpath_set_ctl(a->fp, o->ctl, guest);
	g_ptr_array_add(o->env->remotes, &a->r);
	g_message("remote host %s attached %s (uid %u, pid %d)", a->r.label, a->r.nodes, uid,
		  pid);
out:
	g_strfreev(words);
	return a;
}

static void end(void *ctx, void *handle)
{
	struct attach_owner *o = ctx;
	struct attachment *a = handle;

	g_message("remote host %s detached %s", a->r.label, a->r.nodes);
	g_ptr_array_remove(o->env->remotes, &a->r);
	attachment_free(a);
}

static int adopt(void *ctx, void *handle, int fd)
{
	struct attachment *a = handle;
	int type = 0, mine;
	socklen_t len = sizeof(type);

	(void)ctx;
	/* A channel is a connected SOCK_SEQPACKET socket, nothing else. */
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_SEQPACKET)
		return -EINVAL;
	if (fastpath_channels(a->fp) >= ATTACH_MAX_CHANNELS) {
		if (!a->said_full)
			g_message("remote host %s: %u channels, the limit: refusing more (EMFILE)",
				  a->r.label, ATTACH_MAX_CHANNELS);
		a->said_full = true;
		return -EMFILE;
	}
	if ((mine = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0)	/* the caller closes what it was passed */
		return -errno;
	fastpath_adopt(a->fp, mine);
	return 0;
}

static void rtt(void *ctx, void *handle, uint64_t rtt_ns)
{
	struct attachment *a = handle;

	(void)ctx;
	a->r.rtt_ns = rtt_ns;
}

struct attach_owner *attach_owner_new(struct ctl_env *env, struct fastpath *fp,
				     struct ctl_server *ctl)
{
	struct attach_owner *o = g_new0(struct attach_owner, 1);

	o->env = env;
	o->ctl = ctl;
	if (!env->remotes)
		env->remotes = g_ptr_array_new();
	fastpath_set_hosting(fp, begin, end, adopt, rtt, o);
	return o;
}

void attach_owner_free(struct attach_owner *o)
{
	if (!o)
		return;
	while (o->env->remotes->len) {
		struct ctl_remote *r = g_ptr_array_index(o->env->remotes, 0);

		/* fastpath_free() ended every remote one with its channel. */
		g_assert(r->local);
		g_ptr_array_remove_index(o->env->remotes, 0);
		attachment_free((struct attachment *)r);
	}
	g_clear_pointer(&o->env->remotes, g_ptr_array_unref);
	g_free(o);
}

struct attachment *attach_local(struct attach_owner *o, const char *label, char **nodes,
				const char *sock, GError **err)
{
	GString *why = g_string_new(NULL);
	struct attachment *a = NULL;

	if (check_nodes(o, nodes, why) < 0)
		g_set_error(err, IBEMU_ERROR, EINVAL, "%s", why->str);
	else if ((a = attachment_new(o, label, nodes, sock, err))) {
		a->r.local = true;
		a->r.uid = (unsigned)getuid();
		/* Its programs run by this emulator's owner: they steer it. */
		fastpath_set_ctl(a->fp, o->ctl, false);
		g_ptr_array_add(o->env->remotes, &a->r);
	}
	g_string_free(why, TRUE);
	return a;
}

struct ipoib_links *attach_ipoib(struct attachment *a)
{
	return a->ipoib;
}

struct vfs *attach_vfs(struct attachment *a)
{
	return a->vfs;
}

struct umad_host *attach_umad_host(struct attachment *a)
{
	return a->r.host;
}

struct host *attach_hw(struct attachment *a)
{
	return a->hw;
}

struct ctl_remote *attach_remote(struct attachment *a)
{
	return &a->r;
}
