/* SPDX-License-Identifier: MIT */
/* The hosts of `ibemu run --hosts`, the run's side; see vhosts.h. */
#include "config.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dev/fusefs.h"
#include "dev/vfs.h"
#include "fabric/port.h"
#include "kernel/host.h"
#include "kernel/ipoib_link.h"
#include "lib/log.h"
#include "ns/hostns.h"
#include "ns/ipoib.h"
#include "ns/netwatch.h"
#include "ns/vhosts.h"
#include "socket/attach.h"

/* The directories of a host's tree and where its keeper binds them. */
static const char *const tree_binds[][2] = {
	{ "dev", "/dev/infiniband" },
	{ "infiniband", "/sys/class/infiniband" },
	{ "infiniband_mad", "/sys/class/infiniband_mad" },
	{ "infiniband_verbs", "/sys/class/infiniband_verbs" },
	{ "infiniband_ucma", "/sys/class/infiniband_ucma" },
};
G_STATIC_ASSERT(G_N_ELEMENTS(tree_binds) + 1 == HOSTNS_BINDS);	/* and the socket */

struct vhost {
	struct ctl_host c;		/* name, nodes, fast, pids */
	char **nodes;
	struct attachment *att;		/* hosts after the first */
	struct fusefs *fs;
	char *tree;			/* where fs is mounted */
	struct host *hw;		/* its CAs */
	struct netwatch *nw;		/* its network's addresses (RoCE GIDs) */
	struct ipoib_links *ipoib;	/* its IPoIB interfaces */
	bool taps;			/* taken (vhosts_ready) */
};

struct vhosts {
	struct vhost *h;
	unsigned n;
	struct ctl_env *env;
	struct hostns_plan *plan;
	int reg[2];			/* ours, the keepers' */
	char *hosts_file;
};

/* A hostname: labels of letters, digits and '-' joined by '.', at most
 * 63 characters here (a path component too). */
static bool hostname_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (!n || n > 63 || s[0] == '-' || s[0] == '.' || s[n - 1] == '-' || s[n - 1] == '.')
		return false;
	for (i = 0; i < n; i++)
		if (!g_ascii_isalnum(s[i]) && s[i] != '-' && s[i] != '.')
			return false;
	return !strstr(s, "..");
}

struct vhosts *vhosts_parse(const char *spec, GError **err)
{
	char **items = g_strsplit(spec, ",", -1);
	struct vhosts *vh = g_new0(struct vhosts, 1);
	unsigned i, j, n = g_strv_length(items);

	vh->reg[0] = vh->reg[1] = -1;
	if (!n || n > VHOSTS_MAX) {
		g_set_error(err, IBEMU_ERROR, EINVAL, "--hosts: %s hosts: 1 to %u are possible",
			    n ? "too many" : "no", VHOSTS_MAX);
		goto fail;
	}
	vh->h = g_new0(struct vhost, n);
	vh->n = n;
	for (i = 0; i < n; i++) {
		struct vhost *h = &vh->h[i];
		char *eq = strchr(items[i], '=');

		h->nodes = g_strsplit(eq ? eq + 1 : items[i], "+", -1);
		h->c.name = eq ? g_strndup(items[i], (gsize)(eq - items[i])) : g_strdup(h->nodes[0]);
		for (j = 0; h->nodes[j]; j++)
			if (!*h->nodes[j])
				break;
		if (!h->nodes[0] || h->nodes[j]) {
			g_set_error(err, IBEMU_ERROR, EINVAL, "--hosts: '%s': a host is [NAME=]NODE[+NODE...]",
				    items[i]);
			goto fail;
		}
		if (!hostname_ok(h->c.name)) {
			g_set_error(err, IBEMU_ERROR, EINVAL,
				    "--hosts: '%s' is no hostname (letters, digits, '-' and '.', at most 63): name it, NAME=%s",
				    h->c.name, items[i]);
			goto fail;
		}
		for (j = 0; j < i; j++)
			if (!g_ascii_strcasecmp(vh->h[j].c.name, h->c.name)) {
				g_set_error(err, IBEMU_ERROR, EINVAL, "--hosts: %s is named twice",
					    h->c.name);
				goto fail;
			}
		h->c.nodes = g_strjoinv(" ", h->nodes);
	}
	g_strfreev(items);
	return vh;
fail:
	g_strfreev(items);
	vhosts_free(vh);
	return NULL;
}

char **vhosts_first_nodes(struct vhosts *vh)
{
	return vh->h[0].nodes;
}

/* /etc/hosts of the run: the machine's, then each host's first address. */
static bool write_hosts_file(struct vhosts *vh, GError **err)
{
	GString *s = g_string_new(NULL);
	char *old = NULL;
	unsigned k;
	bool ok;

	if (g_file_get_contents("/etc/hosts", &old, NULL, NULL))
		g_string_append(s, old);
	if (s->len && s->str[s->len - 1] != '\n')
		g_string_append_c(s, '\n');
	g_string_append(s, "# the hosts of this ibemu run (--hosts)\n");
	for (k = 0; k < vh->n; k++) {
		uint32_t a = ipoib_plan_ip4(vh->plan->h[k].net);

		if (a)
			g_string_append_printf(s, IP4_FMT "\t%s\n", IP4_PARTS(a), vh->h[k].c.name);
	}
	vh->hosts_file = g_build_filename(VHOSTS_DIR, "etc-hosts", NULL);
	ok = g_file_set_contents(vh->hosts_file, s->str, (gssize)s->len, err);
	g_free(old);
	g_string_free(s, TRUE);
	return ok;
}

/* Host @k's part of the plan: its tree's binds and character devices. */
static bool plan_host(struct vhosts *vh, unsigned k, struct host *hw, GError **err)
{
	struct hostns_host *p = &vh->plan->h[k];
	struct vhost *h = &vh->h[k];
	struct vnode *dev;
	unsigned i;

	g_strlcpy(p->name, h->c.name, sizeof(p->name));
	p->net = ipoib_plan_host(hw, (int)k);
	g_strlcpy(p->bind[p->nbind][0], h->c.fast, HOSTNS_PATH);
	g_strlcpy(p->bind[p->nbind][1], VHOSTS_FAST, HOSTNS_PATH);
	p->nbind++;
	if (!h->att)
		return true;	/* the run's own: its tree in place already */
	g_strlcpy(p->tree, h->tree, sizeof(p->tree));
	for (i = 0; i < G_N_ELEMENTS(tree_binds); i++) {
		if (!vfs_child(attach_vfs(h->att)->root, tree_binds[i][0]))
			continue;
		g_snprintf(p->bind[p->nbind][0], HOSTNS_PATH, "%s/%s", h->tree, tree_binds[i][0]);
		g_strlcpy(p->bind[p->nbind][1], tree_binds[i][1], HOSTNS_PATH);
		p->nbind++;
	}
	dev = vfs_child(attach_vfs(h->att)->root, "dev");
	for (i = 0; dev && i < dev->children->len; i++) {
		const struct vnode *f = g_ptr_array_index(dev->children, i);

		if (!g_str_has_prefix(f->name, "uverbs") && strcmp(f->name, "rdma_cm"))
			continue;
		if (p->ncdevs == HOSTNS_CDEVS) {
			g_set_error(err, IBEMU_ERROR, E2BIG, "--hosts: %s has more than %u verbs devices",
				    h->c.name, HOSTNS_CDEVS - 1);
			return false;
		}
		g_snprintf(p->cdevs[p->ncdevs++], HOSTNS_PATH, "/dev/infiniband/%s", f->name);
	}
	return true;
}

/* Host @k (after the first): attached, its tree served and mounted. */
static bool setup_host(struct vhosts *vh, unsigned k, struct attach_owner *att, GError **err)
{
	struct vhost *h = &vh->h[k];
	GError *e = NULL;

	h->c.fast = g_strdup_printf(VHOSTS_DIR "/fast/%s", h->c.name);
	if (!(h->att = attach_local(att, h->c.name, h->nodes, h->c.fast, &e))) {
		g_set_error(err, IBEMU_ERROR, e->code, "--hosts: %s: %s", h->c.name, e->message);
		g_error_free(e);
		return false;
	}
	h->tree = g_strdup_printf(VHOSTS_DIR "/hosts/%s", h->c.name);
	h->fs = fusefs_new(attach_vfs(h->att));
	if (g_mkdir_with_parents(h->tree, 0755) < 0 || fusefs_mount(h->fs, h->tree, err) < 0) {
		if (err && !*err)
			g_set_error(err, IBEMU_ERROR, errno, "--hosts: cannot make %s: %s", h->tree,
				    g_strerror(errno));
		return false;
	}
	return true;
}

int vhosts_setup(struct vhosts *vh, struct attach_owner *att, struct host *hw,
		 struct ipoib_links *ipoib, const char *fast_sock, struct ctl_env *env,
		 GError **err)
{
	static const char *const dirs[] = { "bin", "fast", "hosts", "scratch" };
	const char *self = g_getenv("IBEMU");
	char *ssh = g_build_filename(VHOSTS_BIN, "ssh", NULL);
	int one = 1;
	unsigned k;
	bool ok = true;

	for (k = 0; k < G_N_ELEMENTS(dirs); k++) {
		char *d = g_build_filename(VHOSTS_DIR, dirs[k], NULL);

		if (g_mkdir_with_parents(d, 0755) < 0)
			ok = false;
		g_free(d);
	}
	/* `ssh HOST CMD` is this ibemu (main.c: by the name it is run as). */
	if (!ok || !self || symlink(self, ssh) < 0) {
		g_set_error(err, IBEMU_ERROR, errno, "--hosts: cannot make %s: %s", ssh,
			    g_strerror(errno));
		g_free(ssh);
		return -1;
	}
	g_free(ssh);
	/* Where each host's socket is bound (hostns.c): a file to bind on. */
	if (!g_file_set_contents(VHOSTS_FAST, "", 0, err))
		return -1;
	vh->h[0].c.fast = g_strdup(fast_sock);
	for (k = 1; k < vh->n; k++)
		if (!setup_host(vh, k, att, err))
			return -1;
	vh->plan = g_malloc0(sizeof(*vh->plan) + vh->n * sizeof(vh->plan->h[0]));
	vh->plan->n = vh->n;
	g_strlcpy(vh->plan->scratch, VHOSTS_DIR "/scratch", HOSTNS_PATH);
	for (k = 0; k < vh->n; k++) {
		vh->h[k].hw = k ? attach_hw(vh->h[k].att) : hw;
		vh->h[k].ipoib = k ? attach_ipoib(vh->h[k].att) : ipoib;
		if (!plan_host(vh, k, vh->h[k].hw, err))
			return -1;
	}
	if (!write_hosts_file(vh, err))
		return -1;
	g_strlcpy(vh->plan->hosts_file, vh->hosts_file, HOSTNS_PATH);
	/* The keepers say who they are here; the kernel adds their pids
	 * as we see them. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, vh->reg) < 0 ||
	    setsockopt(vh->reg[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0) {
		g_set_error(err, IBEMU_ERROR, errno, "--hosts: cannot make a socket: %s",
			    g_strerror(errno));
		return -1;
	}
	vh->plan->reg_fd = vh->reg[1];
	vh->env = env;
	env->hosts = g_ptr_array_new();
	for (k = 0; k < vh->n; k++)
		g_ptr_array_add(env->hosts, &vh->h[k].c);
	return 0;
}

char **vhosts_path(char **envp)
{
	const char *path = g_environ_getenv(envp, "PATH");
	char **dirs = g_strsplit(path ? path : "", ":", -1);
	char *both;

	if (!g_strv_contains((const char *const *)dirs, VHOSTS_BIN)) {
		both = g_strconcat(VHOSTS_BIN, path && *path ? ":" : "", path ? path : "", NULL);
		envp = g_environ_setenv(envp, "PATH", both, TRUE);
		g_free(both);
	}
	g_strfreev(dirs);
	return envp;
}

struct hostns_plan *vhosts_plan(struct vhosts *vh)
{
	return vh->plan;
}

void vhosts_spawned(struct vhosts *vh)
{
	if (vh->reg[1] >= 0)
		close(vh->reg[1]);
	vh->reg[1] = -1;
}

/* Host @h's InfiniBand interfaces, TAP devices its keeper made, taken
 * into the fabric; one that cannot be stays a local device. */
static void take_taps(struct vhost *h)
{
	char name[IFNAMSIZ];
	unsigned i;
	int fd, ret;

	static const struct ipoib_host_ops ops = { .set_mtu = ipoib_tap_set_mtu,
						   .add_if = ipoib_tap_add };

	h->taps = true;
	ipoib_links_set_host(h->ipoib, h->c.pid, &ops);
	for (i = 0; i < host_nports(h->hw); i++) {
		struct port *p = host_port(h->hw, i, NULL);

		if (port_is_roce(p) || !host_netdev_name(h->hw, p, name, sizeof(name)))
			continue;
		if ((fd = ipoib_tap_open(h->c.pid, name)) < 0) {
			g_warning("host %s: %s carries no IPoIB over the fabric: %s", h->c.name,
				  name, g_strerror(-fd));
			continue;
		}
		if ((ret = ipoib_link_add(h->ipoib, p, fd)) < 0)
			g_warning("host %s: %s carries no IPoIB over the fabric: %s", h->c.name,
				  name, g_strerror(-ret));
	}
}

void vhosts_ready(struct vhosts *vh)
{
	struct hostns_reg reg;
	unsigned k;
	char cbuf[CMSG_SPACE(sizeof(struct ucred))];
	struct iovec iov = { .iov_base = &reg, .iov_len = sizeof(reg) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

	for (;;) {
		struct cmsghdr *cm;
		struct ucred cred = { 0 };
		ssize_t n;

		m.msg_control = cbuf;
		m.msg_controllen = sizeof(cbuf);
		n = recvmsg(vh->reg[0], &m, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_CREDENTIALS)
				memcpy(&cred, CMSG_DATA(cm), sizeof(cred));
		if (n != sizeof(reg) || reg.index >= vh->n || !cred.pid)
			continue;
		vh->h[reg.index].c.pid = cred.pid;
		vh->h[reg.index].c.ns_pid = reg.ns_pid;
		if (vh->h[reg.index].att)
			attach_remote(vh->h[reg.index].att)->pid = cred.pid;
		g_message("host %s: keeper pid %d", vh->h[reg.index].c.name, (int)cred.pid);
	}
	/* Each host's network is its keeper's: RoCE GIDs follow `ip addr`
	 * there (netwatch.h). */
	for (k = 0; k < vh->n; k++)
		if (vh->h[k].c.pid > 0 && !vh->h[k].nw)
			vh->h[k].nw = netwatch_new(vh->h[k].c.pid, vh->h[k].hw);
	for (k = 0; k < vh->n; k++)
		if (vh->h[k].c.pid > 0 && !vh->h[k].taps)
			take_taps(&vh->h[k]);
}

void vhosts_free(struct vhosts *vh)
{
	unsigned k;

	if (!vh)
		return;
	for (k = 0; k < vh->n; k++)
		netwatch_free(vh->h[k].nw);
	if (vh->env)
		g_clear_pointer(&vh->env->hosts, g_ptr_array_unref);
	for (k = 0; k < 2; k++)
		if (vh->reg[k] >= 0)
			close(vh->reg[k]);
	for (k = 0; vh->plan && k < vh->n; k++)
		ipoib_plan_free(vh->plan->h[k].net);
	for (k = 0; k < vh->n; k++) {
		struct vhost *h = &vh->h[k];

		/* Its tree goes before its devices (attach_owner_free). */
		fusefs_free(h->fs);
		g_free(h->tree);
		g_free(h->c.name);
		g_free(h->c.nodes);
		g_free(h->c.fast);
		g_strfreev(h->nodes);
	}
	g_free(vh->h);
	g_free(vh->plan);
	g_free(vh->hosts_file);
	g_free(vh);
}
