/* SPDX-License-Identifier: MIT */
/*
 * Addresses of the run's network; see netwatch.h. Two rtnetlink sockets
 * in the run's namespace (a socket stays in the namespace it was made in:
 * a thread of ours joins it to make them, setns moving that thread only):
 * one hears IPv4 address events, the other asks for every address when
 * one came (or the first heard was lost: ENOBUFS), and the ports are set
 * from that, so what changed before we listened counts too.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if_addr.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib-unix.h>

#include "fabric/port.h"
#include "kernel/host.h"
#include "lib/log.h"
#include "lib/watch.h"
#include "ns/netns.h"
#include "ns/netwatch.h"

#define ADDRS_MAX	64	/* an interface's IPv4 addresses looked at */
#define DUMP_WAIT_MS	1000	/* the kernel's answer to a dump of them */

struct netwatch {
	struct host *h;
	int events, ask;	/* rtnetlink sockets in the run's namespace */
	guint watch;
	uint32_t seq;
};

struct made {
	int events, ask, err;
};

/* In the run's namespace: the two sockets. */
static void make_sockets(void *arg)
{
	struct made *m = arg;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = RTMGRP_IPV4_IFADDR };

	if ((m->events = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
				NETLINK_ROUTE)) < 0 ||
	    bind(m->events, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    (m->ask = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE)) < 0)
		m->err = errno;
}

/* One IPv4 address of interface @name (an alias's "eth0:1" is eth0's). */
struct addr {
	char name[IFNAMSIZ];
	uint32_t ip4;		/* host order */
};

static void parse_addr(const struct nlmsghdr *h, struct addr *out, unsigned *n)
{
	const struct ifaddrmsg *ifa = NLMSG_DATA(h);
	int len = (int)IFA_PAYLOAD(h);
	const struct rtattr *rta;
	uint32_t local = 0, address = 0;
	char name[IFNAMSIZ] = "", *colon;

	if (ifa->ifa_family != AF_INET || *n >= ADDRS_MAX)
		return;
	for (rta = IFA_RTA(ifa); RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
		if (rta->rta_type == IFA_LOCAL && RTA_PAYLOAD(rta) == 4)
			memcpy(&local, RTA_DATA(rta), 4);
		else if (rta->rta_type == IFA_ADDRESS && RTA_PAYLOAD(rta) == 4)
			memcpy(&address, RTA_DATA(rta), 4);
		else if (rta->rta_type == IFA_LABEL)
			snprintf(name, sizeof(name), "%.*s", (int)RTA_PAYLOAD(rta),
				 (const char *)RTA_DATA(rta));
	}
	if ((colon = strchr(name, ':')))
		*colon = 0;
	if (!*name || !(local ? local : address))
		return;
	snprintf(out[*n].name, IFNAMSIZ, "%s", name);
	out[(*n)++].ip4 = ntohl(local ? local : address);
}

/* Every IPv4 address of the namespace, in the kernel's order (an
 * interface's primary first); how many, or -errno. */
static int dump_addrs(struct netwatch *w, struct addr *out)
{
	struct {
		struct nlmsghdr h;
		struct ifaddrmsg ifa;
	} req = { .h = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETADDR,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = ++w->seq },
		  .ifa = { .ifa_family = AF_INET } };
	static char buf[16384] __attribute__((aligned(4)));
	unsigned n = 0;
	struct timeval tv = { 0, DUMP_WAIT_MS * 1000 };

	setsockopt(w->ask, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (send(w->ask, &req, sizeof(req), 0) < 0)
		return -errno;
	for (;;) {
		ssize_t got = recv(w->ask, buf, sizeof(buf), 0);
		const struct nlmsghdr *h;
		int len = (int)got;

		if (got < 0)
			return -errno;
		for (h = (const struct nlmsghdr *)buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_seq != w->seq)
				continue;	/* an earlier dump's, given up */
			if (h->nlmsg_type == NLMSG_DONE)
				return (int)n;
			if (h->nlmsg_type == NLMSG_ERROR)
				return -EIO;
			if (h->nlmsg_type == RTM_NEWADDR)
				parse_addr(h, out, &n);
		}
	}
}

/* Whether @a is one of the @n addresses of interface @name. */
static bool has_addr(const struct addr *addrs, int n, const char *name, uint32_t a)
{
	int k;

	for (k = 0; k < n; k++)
		if (addrs[k].ip4 == a && !strcmp(addrs[k].name, name))
			return true;
	return false;
}

/*
 * Each RoCE port of the host from its interface's addresses now, as the
 * kernel keeps the GID table: an address gone empties its pair of
 * entries (the others stay where they are), a new one takes the first
 * empty pair; past ROCE_IP4_SLOTS it has none. One another port has
 * (two interfaces, one address) or no port may have is passed over.
 */
static void reconcile(struct netwatch *w)
{
	struct addr addrs[ADDRS_MAX];
	int n = dump_addrs(w, addrs), k;
	unsigned i, slot;

	if (n < 0) {
		g_debug("netwatch: the run's addresses: %s", g_strerror(-n));
		return;
	}
	for (i = 0; i < host_nports(w->h); i++) {
		struct port *p = host_port(w->h, i, NULL);
		char ifname[IFNAMSIZ];

		if (!port_is_roce(p) || !host_netdev_name(w->h, p, ifname, sizeof(ifname)))
			continue;
		for (slot = 0; slot < ROCE_IP4_SLOTS; slot++) {
			uint32_t a = port_roce_ip4(p, slot);

			if (a && !has_addr(addrs, n, ifname, a)) {
				port_set_roce_ip4(p, slot, 0);
				g_info("netwatch: %s: " IP4_FMT " gone (GIDs %u, %u)", ifname,
				       IP4_PARTS(a), 2 + 2 * slot, 3 + 2 * slot);
			}
		}
		for (k = 0; k < n; k++) {
			if (strcmp(addrs[k].name, ifname) || port_has_ip4(p, addrs[k].ip4))
				continue;
			for (slot = 0; slot < ROCE_IP4_SLOTS && port_roce_ip4(p, slot); slot++)
				;
			if (slot < ROCE_IP4_SLOTS && port_set_roce_ip4(p, slot, addrs[k].ip4) == 0)
				g_info("netwatch: %s: " IP4_FMT " (GIDs %u, %u)", ifname,
				       IP4_PARTS(addrs[k].ip4), 2 + 2 * slot, 3 + 2 * slot);
		}
	}
}

static gboolean on_events(gint fd, GIOCondition cond, gpointer data)
{
	struct netwatch *w = data;
	static char buf[8192] __attribute__((aligned(4)));
	bool changed = false;
	ssize_t got;

	(void)cond;
	while ((got = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) != 0) {
		const struct nlmsghdr *h;
		int len = (int)got;

		if (got < 0) {
			if (errno == ENOBUFS)	/* some lost: look at all */
				changed = true;
			else if (errno != EINTR)
				break;
			continue;
		}
		for (h = (const struct nlmsghdr *)buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len))
			changed |= h->nlmsg_type == RTM_NEWADDR || h->nlmsg_type == RTM_DELADDR;
	}
	if (changed)
		reconcile(w);
	return G_SOURCE_CONTINUE;
}

struct netwatch *netwatch_new(pid_t pid, struct host *h)
{
	struct made m = { .events = -1, .ask = -1 };
	struct netwatch *w;
	bool roce = false;
	unsigned i;
	int ret;

	for (i = 0; i < host_nports(h); i++)
		roce |= port_is_roce(host_port(h, i, NULL));
	if (!roce)
		return NULL;	/* InfiniBand ports' GIDs are not addresses */
	if ((ret = netns_run((int)pid, make_sockets, &m)) < 0)
		m.err = -ret;
	if (m.err) {
		if (m.events >= 0)
			close(m.events);
		if (m.ask >= 0)
			close(m.ask);
		g_info("netwatch: not watching the run's addresses (%s): RoCE GIDs stay as made",
		       g_strerror(m.err));
		return NULL;
	}
	w = g_new0(struct netwatch, 1);
	w->h = h;
	w->events = m.events;
	w->ask = m.ask;
	w->watch = watch_fd(w->events, G_IO_IN, on_events, w);
	reconcile(w);	/* what changed before we listened */
	return w;
}

void netwatch_free(struct netwatch *w)
{
	if (!w)
		return;
	g_source_remove(w->watch);
	close(w->events);
	close(w->ask);
	g_free(w);
}
