/* SPDX-License-Identifier: MIT */
/*
 * The run's network (ipoib.h). Links and addresses through rtnetlink
 * (rtnetlink(7)); lo up through SIOCSIFFLAGS. Between fork and exec: no
 * allocation, no stdio.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/if_tun.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <net/if.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib.h>

#include "fabric/port.h"
#include "kernel/host.h"
#include "ns/ipoib.h"
#include "ns/netns.h"

/* IPoIB's datagram-mode MTU (RFC 4391: the 2048-byte IB MTU less the
 * 4-byte IPoIB header), what ip link shows on a ConnectX port. */
#define IPOIB_MTU		2044
/* A RoCE port's Ethernet interface: the standard frame (docs/roce.md). */
#define ROCE_MTU		1500
#define IPOIB_PREFIX4		16
#define IPOIB_PREFIX6		64
/* run --hosts: the switch every host's interfaces are cabled to. */
#define IPOIB_BRIDGE		"ibfabric"

struct ipoib_if {
	char name[IFNAMSIZ];
	char peer[IFNAMSIZ];	/* run --hosts: its veth's other end */
	uint32_t ip4;		/* host order; 0: none */
	uint64_t guid;
	uint32_t mtu;		/* IPoIB's, or Ethernet's for a RoCE port */
	bool roce;		/* a RoCE port's: @mac is its address */
	uint8_t mac[6];
	/* The emulator's sysfs directory of the interface (the CA's
	 * device/net/<name>, with its mode file), or "". */
	char sys_dir[128];
};

struct ipoib_plan {
	unsigned n;
	struct ipoib_if ifs[];
};

struct ipoib_plan *ipoib_plan(const struct host *h)
{
	return ipoib_plan_host(h, -1);
}

struct ipoib_plan *ipoib_plan_host(const struct host *h, int index)
{
	struct ipoib_plan *p;
	unsigned i, n = 0;

	p = g_malloc0(sizeof(*p) + (h ? host_nports(h) : 0) * sizeof(p->ifs[0]));
	for (i = 0; h && i < host_nports(h); i++) {
		const char *ca = NULL;
		struct port *port = host_port(h, i, &ca);

		if (!host_netdev_name(h, port, p->ifs[n].name, IFNAMSIZ))
			continue;	/* a switch's */
		if (ca && !port_is_roce(port)) {
			char name[IFNAMSIZ];

			memcpy(name, p->ifs[n].name, IFNAMSIZ);
			snprintf(p->ifs[n].sys_dir, sizeof(p->ifs[n].sys_dir),
				 "/sys/class/infiniband/%s/device/net/%s", ca, name);
		}
		if (index >= 0)
			snprintf(p->ifs[n].peer, IFNAMSIZ, "h%dp%u", index, n);
		p->ifs[n].ip4 = port_ip4(port);
		p->ifs[n].guid = port->guid;
		p->ifs[n].mtu = port_is_roce(port) ? ROCE_MTU : IPOIB_MTU;
		if ((p->ifs[n].roce = port_is_roce(port)))
			port_mac(port, p->ifs[n].mac);
		n++;
	}
	p->n = n;
	return p;
}

uint32_t ipoib_plan_ip4(const struct ipoib_plan *p)
{
	unsigned k;

	for (k = 0; k < p->n; k++)
		if (p->ifs[k].ip4)
			return p->ifs[k].ip4;
	return 0;
}

void ipoib_plan_free(struct ipoib_plan *p)
{
	g_free(p);
}

/* One rtnetlink request and its buffer; attributes appended in place. */
struct nlreq {
	struct nlmsghdr h;
	char body[512];
};

static void *nl_tail(struct nlreq *r)
{
	return (char *)r + NLMSG_ALIGN(r->h.nlmsg_len);	/* h is at offset 0 */
}

static struct rtattr *nl_put(struct nlreq *r, unsigned short type, const void *data, size_t len)
{
	struct rtattr *a = nl_tail(r);

	if (NLMSG_ALIGN(r->h.nlmsg_len) + RTA_SPACE(len) > sizeof(*r))
		return NULL;	/* not with the sizes used here */
	a->rta_type = type;
	a->rta_len = RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(a), data, len);
	r->h.nlmsg_len = NLMSG_ALIGN(r->h.nlmsg_len) + RTA_SPACE(len);
	return a;
}

/* A nested attribute ends where the message now ends. */
static void nl_end(struct nlreq *r, struct rtattr *nest)
{
	nest->rta_len = (unsigned short)((char *)nl_tail(r) - (char *)nest);
}

static void nl_start(struct nlreq *r, uint16_t type, uint16_t flags, const void *hdr, size_t len)
{
	memset(r, 0, sizeof(*r));
	r->h.nlmsg_type = type;
	r->h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	r->h.nlmsg_len = NLMSG_LENGTH(len);
	memcpy(NLMSG_DATA(&r->h), hdr, len);
}

/* Send @r and read the kernel's answer: 0 or -errno. */
static int nl_talk(int fd, struct nlreq *r)
{
	char buf[1024];
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	ssize_t n;

	r->h.nlmsg_seq++;
	if (send(fd, r, r->h.nlmsg_len, 0) < 0)
		return -errno;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -errno;
	if (!NLMSG_OK(h, (size_t)n) || h->nlmsg_type != NLMSG_ERROR)
		return -EPROTO;
	return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
}

/* No IPv6 address of the kernel's making on @name (the link-local one
 * is the port's: add_addr6). A new link takes IFLA_AF_SPEC only as a
 * change; without IPv6 in the kernel it fails, and there is nothing to do. */
static void no_addr_gen(int fd, const char *name)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	uint8_t gen = IN6_ADDR_GEN_MODE_NONE;
	struct nlreq r;
	struct rtattr *spec, *in6;

	nl_start(&r, RTM_NEWLINK, 0, &ifi, sizeof(ifi));
	nl_put(&r, IFLA_IFNAME, name, strlen(name) + 1);
	spec = nl_put(&r, IFLA_AF_SPEC, NULL, 0);
	in6 = nl_put(&r, AF_INET6, NULL, 0);
	nl_put(&r, IFLA_INET6_ADDR_GEN_MODE, &gen, sizeof(gen));
	nl_end(&r, in6);
	nl_end(&r, spec);
	(void)nl_talk(fd, &r);
}

/*
 * A link named @name of @kind with the MTU @mtu (and the MAC @mac, or
 * the kernel's). A veth's other end is @peer, made in the network
 * namespace @peer_ns (an fd of it).
 */
static int new_link(int fd, const char *name, const char *kind, const char *peer, int peer_ns,
		    uint32_t mtu, const uint8_t *mac)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct nlreq r;
	struct rtattr *info, *data, *end;
	uint32_t nsfd = (uint32_t)peer_ns;
	int ret;

	nl_start(&r, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, &ifi, sizeof(ifi));
	nl_put(&r, IFLA_IFNAME, name, strlen(name) + 1);
	nl_put(&r, IFLA_MTU, &mtu, sizeof(mtu));
	if (mac)
		nl_put(&r, IFLA_ADDRESS, mac, 6);
	info = nl_put(&r, IFLA_LINKINFO, NULL, 0);
	nl_put(&r, IFLA_INFO_KIND, kind, strlen(kind));
	if (peer) {
		/* veth(4): the peer's ifinfomsg, then its own attributes. */
		data = nl_put(&r, IFLA_INFO_DATA, NULL, 0);
		end = nl_put(&r, VETH_INFO_PEER, &ifi, sizeof(ifi));
		nl_put(&r, IFLA_IFNAME, peer, strlen(peer) + 1);
		nl_put(&r, IFLA_MTU, &mtu, sizeof(mtu));
		nl_put(&r, IFLA_NET_NS_FD, &nsfd, sizeof(nsfd));
		nl_end(&r, end);
		nl_end(&r, data);
	} else if (!strcmp(kind, "vxlan")) {
		/* A VXLAN with no remote and no forwarding entries sends
		 * nothing; the kernel wants a VNI of its own for each (on
		 * one port), and gets the IANA port (its default is the
		 * older 8472). */
		static uint32_t vnis;
		uint32_t vni = ++vnis;
		uint16_t port = htobe16(4789);

		data = nl_put(&r, IFLA_INFO_DATA, NULL, 0);
		nl_put(&r, IFLA_VXLAN_ID, &vni, sizeof(vni));
		nl_put(&r, IFLA_VXLAN_PORT, &port, sizeof(port));
		nl_end(&r, data);
	}
	nl_end(&r, info);
	if ((ret = nl_talk(fd, &r)) < 0)
		return ret;
	no_addr_gen(fd, name);
	return 0;
}

static int add_addr(int fd, int ifindex, int family, const void *addr, size_t len,
		    unsigned prefix)
{
	struct ifaddrmsg ifa = {
		.ifa_family = (uint8_t)family, .ifa_prefixlen = (uint8_t)prefix,
		/* No duplicate detection: nobody else is on the link, and a
		 * tentative address cannot be bound. */
		.ifa_flags = IFA_F_NODAD, .ifa_scope = RT_SCOPE_UNIVERSE,
		.ifa_index = (uint32_t)ifindex,
	};
	struct nlreq r;

	if (family == AF_INET6)
		ifa.ifa_scope = RT_SCOPE_LINK;
	nl_start(&r, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, &ifa, sizeof(ifa));
	nl_put(&r, IFA_LOCAL, addr, len);
	nl_put(&r, IFA_ADDRESS, addr, len);
	return nl_talk(fd, &r);
}

static int link_up(int sock, const char *name, int *ifindex)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, name, strlen(name) + 1);
	if (ioctl(sock, SIOCGIFINDEX, &ifr) < 0)
		return -errno;
	if (ifindex)
		*ifindex = ifr.ifr_ifindex;
	if (ioctl(sock, SIOCGIFFLAGS, &ifr) < 0)
		return -errno;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(sock, SIOCSIFFLAGS, &ifr) < 0)
		return -errno;
	return 0;
}

/* run --hosts: @peer, a veth's end in the run's network, joins its
 * bridge and comes up (netlink socket @nl is of that network). */
static int peer_to_bridge(int nl, const char *peer, int bridge)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_flags = IFF_UP,
				 .ifi_change = IFF_UP };
	uint32_t master = (uint32_t)bridge;
	struct nlreq r;

	no_addr_gen(nl, peer);
	nl_start(&r, RTM_NEWLINK, 0, &ifi, sizeof(ifi));
	nl_put(&r, IFLA_IFNAME, peer, strlen(peer) + 1);
	nl_put(&r, IFLA_MASTER, &master, sizeof(master));
	return nl_talk(nl, &r);
}

/* Where a host's interfaces are cabled (run --hosts): the run's network
 * (an fd of it, a netlink socket in it) and its bridge's index. */
struct cable {
	int ns, nl, bridge;
};

/* TAP interface @name (made if it is not there) on a new fd of the tun
 * driver opened with @oflags, @persist or not: the fd, or -errno. System
 * calls only: the keeper makes them between fork and exec. */
static int tap_fd(const char *name, int oflags, int persist)
{
	struct ifreq ifr;
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC | oflags), err;

	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, name, strnlen(name, IFNAMSIZ - 1));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	if (ioctl(fd, TUNSETIFF, &ifr) < 0 || ioctl(fd, TUNSETPERSIST, persist) < 0) {
		err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

/* Interface @name's MTU, through socket @sock: 0 or -errno. */
static int if_set_mtu(int sock, const char *name, uint32_t mtu)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, name, strnlen(name, IFNAMSIZ - 1));
	ifr.ifr_mtu = (int)mtu;
	return ioctl(sock, SIOCSIFMTU, &ifr) < 0 ? -errno : 0;
}

/* A host's InfiniBand interface: a TAP device, kept (persistent) until
 * the emulator takes it (ipoib_tap_open), then gone with it. */
static int make_tap(int sock, const char *name, uint32_t mtu)
{
	int fd = tap_fd(name, 0, 1);

	if (fd < 0)
		return fd;
	close(fd);
	return if_set_mtu(sock, name, mtu);
}

/* make_if: this kernel has neither a dummy nor a bridge driver (a guest
 * with few modules): the network stays lo only, still the run's own. */
#define NO_DRIVER	1

static int make_if(int nl, int sock, const struct ipoib_if *i, const struct cable *c,
		   const char **what)
{
	uint32_t a4 = htobe32(i->ip4);
	uint64_t guid = htobe64(i->guid);
	uint8_t a6[16] = { 0xfe, 0x80 };
	int ret, ifindex;

	/* A host's: a veth to the run's bridge. Otherwise dummy where the
	 * kernel has it; where it does not, a bridge with no ports (never
	 * forwards anything), or for a RoCE port a VXLAN with no remote. */
	*what = "create the interfaces";
	if (c && !i->roce && (ret = make_tap(sock, i->name, i->mtu)) != -ENOENT &&
	    ret != -ENODEV && ret != -EPERM && ret != -EACCES) {
		/* IPoIB through the fabric (kernel/ipoib_link.h); without a
		 * tun driver, a veth to the bridge as below. */
		if (ret < 0)
			return ret;
		no_addr_gen(nl, i->name);
	} else if (c) {
		if ((ret = new_link(nl, i->name, "veth", i->peer, c->ns, i->mtu,
				    i->roce ? i->mac : NULL)) < 0)
			return ret;
		*what = "join the interfaces to the run's bridge";
		if ((ret = peer_to_bridge(c->nl, i->peer, c->bridge)) < 0)
			return ret;
	} else {
		ret = new_link(nl, i->name, "dummy", NULL, -1, i->mtu, i->roce ? i->mac : NULL);
		/* A bridge given a MAC has no carrier while it has no ports
		 * (br_set_mac_address reruns the port state selection), and
		 * `ip link` would show a RoCE port's interface DOWN while the
		 * port is Active: a VXLAN has its carrier and takes a MAC. */
		if ((ret == -EOPNOTSUPP || ret == -ENOENT) && i->roce)
			ret = new_link(nl, i->name, "vxlan", NULL, -1, i->mtu, i->mac);
		if (ret == -EOPNOTSUPP || ret == -ENOENT)
			ret = new_link(nl, i->name, "bridge", NULL, -1, i->mtu,
				       i->roce ? i->mac : NULL);
		if (ret == -EOPNOTSUPP || ret == -ENOENT)
			return NO_DRIVER;
		if (ret < 0)
			return ret;
	}
	*what = "bring the interfaces up";
	if ((ret = link_up(sock, i->name, &ifindex)) < 0)
		return ret;
	*what = "give the interfaces their addresses";
	if (i->ip4 && (ret = add_addr(nl, ifindex, AF_INET, &a4, sizeof(a4), IPOIB_PREFIX4)) < 0)
		return ret;
	memcpy(a6 + 8, &guid, 8);
	if (i->roce) {
		/* An Ethernet interface's: the EUI-64 of its MAC, RoCE's GID 0. */
		a6[8] = i->mac[0] ^ 0x02;
		a6[9] = i->mac[1];
		a6[10] = i->mac[2];
		a6[11] = 0xff;
		a6[12] = 0xfe;
		a6[13] = i->mac[3];
		a6[14] = i->mac[4];
		a6[15] = i->mac[5];
	}
	/* IPv6 is optional: a kernel without it refuses, and that is all. */
	(void)add_addr(nl, ifindex, AF_INET6, a6, sizeof(a6), IPOIB_PREFIX6);
	return 0;
}

/* /sys/class/net of the new namespace: a sysfs shows the namespace of
 * whoever mounts it. */
static int net_sysfs(const char *scratch, const char **what)
{
	static const char *const dirs[][2] = {
		{ "class/net", "/sys/class/net" },
		{ "devices/virtual/net", "/sys/devices/virtual/net" },
	};
	char src[256];
	unsigned k;
	int ret = 0;

	*what = "mount a sysfs of the namespace";
	if (mount("sysfs", scratch, "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return -errno;
	*what = "show the interfaces in /sys/class/net";
	for (k = 0; k < sizeof(dirs) / sizeof(dirs[0]) && !ret; k++) {
		size_t n = strlen(scratch);

		if (n + 1 + strlen(dirs[k][0]) + 1 > sizeof(src))
			return -ENAMETOOLONG;
		memcpy(src, scratch, n);
		src[n] = '/';
		memcpy(src + n + 1, dirs[k][0], strlen(dirs[k][0]) + 1);
		if (mount(src, dirs[k][1], NULL, MS_BIND, NULL) < 0)
			ret = -errno;
	}
	umount2(scratch, MNT_DETACH);
	return ret;
}

/* Append @s to @buf (of @cap bytes) at *@len: false if it does not fit.
 * (Between fork and exec: no stdio.) */
static bool cat(char *buf, size_t cap, size_t *len, const char *s)
{
	size_t n = strlen(s);

	if (*len + n + 1 > cap)
		return false;
	memcpy(buf + *len, s, n + 1);
	*len += n;
	return true;
}

/*
 * /sys/class/net/ibN/mode, create_child and delete_child, which only
 * ib_ipoib makes (docs/ipoib.md): a TAP interface's sysfs directory
 * becomes an overlay of the emulator's (the CA's device/net/ibN, with
 * those and dev_port) on the namespace's own, and the emulator's
 * writable files are bound over the overlay's, so that writes reach it
 * (an overlay without an upper layer is read-only). Not fatal: said, and
 * the interface has no such files.
 */
static void mode_file(const struct ipoib_if *i)
{
	static const char *const rw[] = { "/mode", "/create_child", "/delete_child" };
	static const char say[] = "ibemu: warning: no /sys/class/net/ibN/mode: "
				  "cannot overlay the interface's sysfs\n";
	char dir[64], opts[256], from[160], to[96], tun[96];
	size_t nd = 0, no = 0, nu = 0;
	unsigned k;

	if (!i->sys_dir[0] || !cat(dir, sizeof(dir), &nd, "/sys/devices/virtual/net/") ||
	    !cat(dir, sizeof(dir), &nd, i->name) ||
	    !cat(opts, sizeof(opts), &no, "lowerdir=") ||
	    !cat(opts, sizeof(opts), &no, i->sys_dir) || !cat(opts, sizeof(opts), &no, ":") ||
	    !cat(opts, sizeof(opts), &no, dir) ||
	    !cat(tun, sizeof(tun), &nu, dir) || !cat(tun, sizeof(tun), &nu, "/tun_flags"))
		return;
	/* Only a TAP's (a veth stands in where there is no tun driver). */
	if (access(tun, F_OK) < 0)
		return;
	if (mount("ibemu", dir, "overlay", MS_RDONLY, opts) < 0) {
		(void)!write(STDERR_FILENO, say, sizeof(say) - 1);
		return;
	}
	for (k = 0; k < sizeof(rw) / sizeof(rw[0]); k++) {
		size_t nf = 0, nt = 0;

		if (!cat(from, sizeof(from), &nf, i->sys_dir) || !cat(from, sizeof(from), &nf, rw[k]) ||
		    !cat(to, sizeof(to), &nt, dir) || !cat(to, sizeof(to), &nt, rw[k]) ||
		    mount(from, to, NULL, MS_BIND, NULL) < 0)
			(void)!write(STDERR_FILENO, say, sizeof(say) - 1);
	}
}

/* A new network namespace with lo up, the interfaces of @p (cabled by
 * @c, or not), and (with @scratch) /sys/class/net showing them. */
static int apply(const struct ipoib_plan *p, const struct cable *c, const char *scratch,
		 const char **what)
{
	int nl, sock, ret = 0;
	unsigned k;

	*what = "make a network namespace";
	if (unshare(CLONE_NEWNET) < 0)
		return -errno;
	nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (nl < 0 || sock < 0) {
		ret = -errno;
		*what = "open a netlink socket";
		goto out;
	}
	*what = "bring lo up";
	if ((ret = link_up(sock, "lo", NULL)) < 0)
		goto out;
	for (k = 0; p && k < p->n && !ret; k++)
		ret = make_if(nl, sock, &p->ifs[k], c, what);
	if (ret == NO_DRIVER) {
		/* Between fork and exec: a plain write. */
		static const char say[] = "ibemu: warning: no dummy or bridge driver in this kernel: "
					  "the run's network has lo only (no ibN interfaces)\n";

		(void)!write(STDERR_FILENO, say, sizeof(say) - 1);
		ret = 0;
	}
	if (!ret && scratch)
		ret = net_sysfs(scratch, what);
	for (k = 0; !ret && scratch && c && p && k < p->n; k++)
		if (!p->ifs[k].roce)
			mode_file(&p->ifs[k]);
out:
	if (nl >= 0)
		close(nl);
	if (sock >= 0)
		close(sock);
	return ret;
}

int ipoib_apply(const struct ipoib_plan *p, const char *scratch, const char **what)
{
	return apply(p, NULL, scratch, what);
}

int ipoib_fabric(int *bridge, const char **what)
{
	int sock, ret;

	if ((ret = apply(NULL, NULL, NULL, what)) < 0)
		return ret;
	*what = "make the run's bridge";
	if ((sock = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE)) < 0)
		return -errno;
	ret = new_link(sock, IPOIB_BRIDGE, "bridge", NULL, -1, IPOIB_MTU, NULL);
	close(sock);
	if (ret < 0)
		return ret;
	if ((sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	ret = link_up(sock, IPOIB_BRIDGE, bridge);
	close(sock);
	return ret;
}

int ipoib_apply_host(const struct ipoib_plan *p, int bridge, const char *scratch,
		     const char **what)
{
	struct cable c = { .bridge = bridge };
	int ret;

	/* Both of the run's network, opened before we leave it. */
	*what = "open the run's network";
	c.ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	c.nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	ret = c.ns < 0 || c.nl < 0 ? -errno : apply(p, &c, scratch, what);
	if (c.ns >= 0)
		close(c.ns);
	if (c.nl >= 0)
		close(c.nl);
	return ret;
}

struct tap_open {
	int fd;		/* or -errno */
	const char *name;
};

/* In the host's network: a tap device is the opener's network's. */
static void tap_open_in(void *arg)
{
	struct tap_open *t = arg;

	t->fd = tap_fd(t->name, O_NONBLOCK, 0);
}

int ipoib_tap_open(int pid, const char *name)
{
	struct tap_open t = { .fd = -EAGAIN, .name = name };
	int ret = netns_run(pid, tap_open_in, &t);

	return ret < 0 ? ret : t.fd;
}

struct tap_mtu {
	const char *name;
	unsigned mtu;
	int ret;
};

static void tap_mtu_in(void *arg)
{
	struct tap_mtu *t = arg;
	int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	t->ret = sock < 0 ? -errno : if_set_mtu(sock, t->name, t->mtu);
	if (sock >= 0)
		close(sock);
}

int ipoib_tap_set_mtu(int pid, const char *name, unsigned mtu)
{
	struct tap_mtu t = { .name = name, .mtu = mtu, .ret = -EAGAIN };
	int ret = netns_run(pid, tap_mtu_in, &t);

	return ret < 0 ? ret : t.ret;
}

struct tap_add {
	const char *name;
	unsigned mtu;
	int fd;		/* or -errno */
};

static void tap_add_in(void *arg)
{
	struct tap_add *t = arg;
	int sock, ret;

	if ((t->fd = tap_fd(t->name, O_NONBLOCK, 0)) < 0)
		return;
	sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ret = sock < 0 ? -errno : if_set_mtu(sock, t->name, t->mtu);
	if (!ret)
		ret = link_up(sock, t->name, NULL);
	if (sock >= 0)
		close(sock);
	if (ret < 0) {
		close(t->fd);
		t->fd = ret;
	}
}

int ipoib_tap_add(int pid, const char *name, unsigned mtu)
{
	struct tap_add t = { .name = name, .mtu = mtu, .fd = -EAGAIN };
	int ret = netns_run(pid, tap_add_in, &t);

	return ret < 0 ? ret : t.fd;
}
