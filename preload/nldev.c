/* SPDX-License-Identifier: MIT */
/*
 * The RDMA netlink family's device commands (RDMA_NL_NLDEV), answered
 * from the run's sysfs, with the attributes the kernel's
 * drivers/infiniband/core/nldev.c puts in each answer (fill_dev_info,
 * fill_port_info, the clients' get_nl_info for GET_CHARDEV). The device
 * index is the uverbs device's number, which does not change while the
 * emulator runs (a device's name may: SET, NEWLINK and DELLINK are the
 * emulator's to do, FAST_RDMA_LINK); docs/netlink.md says what is
 * answered and what not.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <rdma/rdma_netlink.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "abi/fast_wire.h"
#include "abi/verbs_wire.h"
#include "preload/fast.h"
#include "preload/netlink.h"

#define IB_CLASS	"/sys/class/infiniband"
#define VERBS_CLASS	"/sys/class/infiniband_verbs"
#define MAD_CLASS	"/sys/class/infiniband_mad"
#define DEVS_MAX	256	/* devices in one dump: more are left out */
#define IB_DEVICE_NAME_MAX 64	/* the kernel's (include/rdma/ib_verbs.h), its NUL included */

/* The ABI versions of the kernel's char devices, as their clients say
 * them: ib_umad's IB_USER_MAD_ABI_VERSION, ucma's RDMA_USER_CM_ABI_VERSION. */
#define UMAD_ABI	5
#define UCMA_ABI	4

/* ---- sysfs ------------------------------------------------------------- */

/* The first line of sysfs file @fmt..., without its newline; false if
 * there is none. Plain system calls: our own open and read wrappers would
 * only pass them on. */
static bool attr_read(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static bool attr_read(char *buf, size_t size, const char *fmt, ...)
{
	char path[512];
	va_list ap;
	long n;
	int fd;

	va_start(ap, fmt);
	n = vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(path))
		return false;
	fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = syscall(SYS_read, fd, buf, size - 1);
	syscall(SYS_close, fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return true;
}

/* "0002:c900:0001:0101" -> 0x0002c90000010101; of a GID, its prefix */
static bool guid_parse(const char *s, uint64_t *v)
{
	unsigned a, b, c, d;

	if (sscanf(s, "%4x:%4x:%4x:%4x", &a, &b, &c, &d) != 4)
		return false;
	*v = (uint64_t)a << 48 | (uint64_t)b << 32 | (uint64_t)c << 16 | d;
	return true;
}

/* The kernel's huge_encode_dev, which RDMA_NLDEV_ATTR_CHARDEV carries. */
static uint64_t huge_dev(dev_t d)
{
	uint64_t mj = major(d), mn = minor(d);

	return (mn & 0xff) | (mj << 8) | ((mn & ~0xffull) << 12);
}

/* "MAJ:MIN" in a sysfs dev file */
static bool attr_dev(dev_t *d, const char *fmt, const char *name)
{
	char buf[32];
	unsigned mj, mn;

	if (!attr_read(buf, sizeof(buf), fmt, name) || sscanf(buf, "%u:%u", &mj, &mn) != 2)
		return false;
	*d = makedev(mj, mn);
	return true;
}

/* ---- the devices ------------------------------------------------------- */

struct dev {
	uint32_t index;		/* its uverbs device's number (uverbsN) */
	char name[64];
};

static int dev_cmp(const void *a, const void *b)
{
	const struct dev *x = a, *y = b;

	return x->index < y->index ? -1 : x->index > y->index;
}

/* Every device, in index order; how many (at most @max). */
static unsigned devs_list(struct dev *devs, unsigned max)
{
	DIR *d = opendir(VERBS_CLASS);
	struct dirent *e;
	unsigned n = 0;

	if (!d)
		return 0;
	while (n < max && (e = readdir(d))) {
		unsigned k;
		char c;

		if (sscanf(e->d_name, "uverbs%u%c", &k, &c) != 1 ||
		    !attr_read(devs[n].name, sizeof(devs[n].name), VERBS_CLASS "/%s/ibdev",
			       e->d_name))
			continue;
		devs[n++].index = k;
	}
	closedir(d);
	qsort(devs, n, sizeof(*devs), dev_cmp);
	return n;
}

static bool dev_by_index(uint32_t index, struct dev *out)
{
	out->index = index;
	return attr_read(out->name, sizeof(out->name), VERBS_CLASS "/uverbs%u/ibdev", index);
}

/* The first line of @dv's sysfs file ports/@port/@name (@port 0: @name). */
static bool dev_attr(const struct dev *dv, unsigned port, const char *name, char *buf,
		     size_t size)
{
	if (port)
		return attr_read(buf, size, IB_CLASS "/%s/ports/%u/%s", dv->name, port, name);
	return attr_read(buf, size, IB_CLASS "/%s/%s", dv->name, name);
}

/* A number in that file: "4: ACTIVE" -> 4, "0x3" -> 3, "1: CA" -> 1 */
static bool dev_num(const struct dev *dv, unsigned port, const char *name, uint64_t *v)
{
	char buf[64], *end;

	if (!dev_attr(dv, port, name, buf, sizeof(buf)))
		return false;
	*v = strtoull(buf, &end, 0);
	return end != buf;
}

/* The highest port number under ports/ (rdma_end_port). */
static unsigned dev_ports(const struct dev *dv)
{
	char path[256];
	struct dirent *e;
	unsigned max = 0;
	DIR *d;

	snprintf(path, sizeof(path), IB_CLASS "/%s/ports", dv->name);
	if (!(d = opendir(path)))
		return 0;
	while ((e = readdir(d))) {
		unsigned p = (unsigned)strtoul(e->d_name, NULL, 10);

		if (p > max)
			max = p;
	}
	closedir(d);
	return max;
}

static bool port_is_eth(const struct dev *dv, unsigned port)
{
	char buf[32];

	return dev_attr(dv, port, "link_layer", buf, sizeof(buf)) && !strcmp(buf, "Ethernet");
}

static void put_handle(struct nl_out *o, const struct dev *dv)
{
	nl_put_u32(o, RDMA_NLDEV_ATTR_DEV_INDEX, dv->index);
	nl_put_str(o, RDMA_NLDEV_ATTR_DEV_NAME, dv->name);
}

/* fill_dev_info: the device's capability flags are not in sysfs, and are
 * left out. */
static void put_dev(struct nl_out *o, const struct dev *dv)
{
	char buf[64];
	uint64_t v;

	put_handle(o, dv);
	nl_put_u32(o, RDMA_NLDEV_ATTR_PORT_INDEX, dev_ports(dv));
	if (dev_attr(dv, 0, "fw_ver", buf, sizeof(buf)) && buf[0])
		nl_put_str(o, RDMA_NLDEV_ATTR_FW_VERSION, buf);
	if (dev_attr(dv, 0, "node_guid", buf, sizeof(buf)) && guid_parse(buf, &v))
		nl_put_u64(o, RDMA_NLDEV_ATTR_NODE_GUID, v);
	if (dev_attr(dv, 0, "sys_image_guid", buf, sizeof(buf)) && guid_parse(buf, &v))
		nl_put_u64(o, RDMA_NLDEV_ATTR_SYS_IMAGE_GUID, v);
	if (dev_num(dv, 0, "node_type", &v))
		nl_put_u8(o, RDMA_NLDEV_ATTR_DEV_NODE_TYPE, (uint8_t)v);
	nl_put_u8(o, RDMA_NLDEV_ATTR_DEV_DIM, 0);
	nl_put_str(o, RDMA_NLDEV_ATTR_DEV_PROTOCOL, port_is_eth(dv, 1) ? "roce" : "ib");
}

/* fill_port_info */
static void put_port(struct nl_out *o, const struct dev *dv, unsigned port)
{
	char buf[64];
	uint64_t v;

	put_handle(o, dv);
	nl_put_u32(o, RDMA_NLDEV_ATTR_PORT_INDEX, port);
	if (dev_num(dv, port, "cap_mask", &v))
		nl_put_u64(o, RDMA_NLDEV_ATTR_CAP_FLAGS, v);
	if (!port_is_eth(dv, port)) {
		/* The prefix: GID 0's first four groups, as a GUID's. */
		if (dev_attr(dv, port, "gids/0", buf, sizeof(buf)) && guid_parse(buf, &v))
			nl_put_u64(o, RDMA_NLDEV_ATTR_SUBNET_PREFIX, v);
		if (dev_num(dv, port, "lid", &v))
			nl_put_u32(o, RDMA_NLDEV_ATTR_LID, (uint32_t)v);
		if (dev_num(dv, port, "sm_lid", &v))
			nl_put_u32(o, RDMA_NLDEV_ATTR_SM_LID, (uint32_t)v);
		if (dev_num(dv, port, "lid_mask_count", &v))
			nl_put_u8(o, RDMA_NLDEV_ATTR_LMC, (uint8_t)v);
	}
	if (dev_num(dv, port, "state", &v))
		nl_put_u8(o, RDMA_NLDEV_ATTR_PORT_STATE, (uint8_t)v);
	if (dev_num(dv, port, "phys_state", &v))
		nl_put_u8(o, RDMA_NLDEV_ATTR_PORT_PHYS_STATE, (uint8_t)v);
	/* The port's netdev: the one its first GID names (RoCE). */
	if (dev_attr(dv, port, "gid_attrs/ndevs/0", buf, sizeof(buf)) && buf[0]) {
		unsigned ifindex = if_nametoindex(buf);

		if (ifindex) {
			nl_put_u32(o, RDMA_NLDEV_ATTR_NDEV_INDEX, ifindex);
			nl_put_str(o, RDMA_NLDEV_ATTR_NDEV_NAME, buf);
		}
	}
}

/* ---- the commands ------------------------------------------------------ */

/* The request's attributes, by type (the last of each kind wins). */
struct req {
	const struct nlmsghdr *h;
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX];
	uint32_t portid;
	bool dump;
};

static bool req_u32(const struct req *r, int attr, uint32_t *v)
{
	const struct nlattr *a = r->tb[attr];

	if (!a || a->nla_len < NLA_HDRLEN + 4)
		return false;
	memcpy(v, (const char *)a + NLA_HDRLEN, 4);
	return true;
}

/* A string attribute, NUL-terminated within it; NULL if not. */
static const char *req_str(const struct req *r, int attr)
{
	const struct nlattr *a = r->tb[attr];
	const char *s;

	if (!a || a->nla_len <= NLA_HDRLEN)
		return NULL;
	s = (const char *)a + NLA_HDRLEN;
	return memchr(s, 0, a->nla_len - NLA_HDRLEN) ? s : NULL;
}

static void reply_begin(struct nl_out *o, const struct req *r)
{
	nl_begin(o, r->h->nlmsg_type, r->dump ? NLM_F_MULTI : 0, r->h->nlmsg_seq, r->portid);
}

/* The device the request's DEV_INDEX names; an error if none. */
static int req_dev(const struct req *r, struct dev *dv)
{
	uint32_t index;

	if (!req_u32(r, RDMA_NLDEV_ATTR_DEV_INDEX, &index))
		return -EINVAL;
	return dev_by_index(index, dv) ? 0 : -EINVAL;
}

/* The device the request names (@one), or all of them: how many, in
 * *@devs (to free), or an error. */
static int req_devs(const struct req *r, bool one, struct dev **devs)
{
	int n, err;

	if (!(*devs = calloc(DEVS_MAX, sizeof(**devs))))
		return -ENOMEM;
	n = one ? ((err = req_dev(r, *devs)) ? err : 1) : (int)devs_list(*devs, DEVS_MAX);
	if (n < 0) {
		free(*devs);
		*devs = NULL;
	}
	return n;
}

static int cmd_get(const struct req *r, struct nl_out *o)
{
	struct dev *devs;
	int i, n = req_devs(r, !r->dump, &devs);

	for (i = 0; i < n; i++) {
		reply_begin(o, r);
		put_dev(o, &devs[i]);
		nl_end(o);
	}
	free(devs);
	return n < 0 ? n : 0;
}

static int cmd_port_get(const struct req *r, struct nl_out *o)
{
	struct dev *devs;
	unsigned p, nports;
	uint32_t port = 0;
	int i, n;

	/* One port, or (a dump) those of the device named, or of all: the
	 * kernel needs the index; `rdma link` asks device by device. */
	n = req_devs(r, !r->dump || r->tb[RDMA_NLDEV_ATTR_DEV_INDEX], &devs);
	if (n > 0 && !r->dump &&
	    (!req_u32(r, RDMA_NLDEV_ATTR_PORT_INDEX, &port) || !port || port > dev_ports(devs)))
		n = -EINVAL;
	for (i = 0; i < n; i++) {
		nports = dev_ports(&devs[i]);
		for (p = r->dump ? 1 : port; p <= (r->dump ? nports : port); p++) {
			reply_begin(o, r);
			put_port(o, &devs[i], p);
			nl_end(o);
		}
	}
	free(devs);
	return n < 0 ? n : 0;
}

static int cmd_sys_get(const struct req *r, struct nl_out *o)
{
	reply_begin(o, r);
	nl_put_u8(o, RDMA_NLDEV_SYS_ATTR_NETNS_MODE, 1);	/* shared, the default */
	/* No RDMA_NLDEV_SYS_ATTR_COPY_ON_FORK, as a kernel before 5.13:
	 * libibverbs then keeps ibv_fork_init's MADV_DONTFORK and says
	 * ENABLED, what programs saw here before this family was answered
	 * (docs/verbs.md "Fork"). */
	nl_end(o);
	return 0;
}

/*
 * GET_CHARDEV: which char device a client of a device (uverbs, umad,
 * issm) or of none (rdma_cm) has, as its get_nl_info says: the name, the
 * ABI and the dev_t the program then opens by. The emulated files' dev_t
 * is what sysfs and a stat of /dev/infiniband say.
 */
static int cmd_get_chardev(const struct req *r, struct nl_out *o)
{
	const char *type = req_str(r, RDMA_NLDEV_ATTR_CHARDEV_TYPE);
	char name[64], buf[64], path[128];
	uint64_t abi;
	struct dev dv;
	struct stat st;
	dev_t cdev;
	int err;

	if (!type)
		return -EINVAL;
	if (!strcmp(type, "rdma_cm")) {
		snprintf(path, sizeof(path), "/dev/infiniband/%s", type);
		if (stat(path, &st) < 0)
			return -EOPNOTSUPP;
		snprintf(name, sizeof(name), "%s", type);
		cdev = st.st_rdev;
		abi = UCMA_ABI;
	} else if (!strcmp(type, "uverbs")) {
		if ((err = req_dev(r, &dv)))
			return err;
		snprintf(name, sizeof(name), "uverbs%u", dv.index);
		if (!attr_dev(&cdev, VERBS_CLASS "/%s/dev", name) ||
		    !attr_read(buf, sizeof(buf), VERBS_CLASS "/%s/abi_version", name))
			return -EOPNOTSUPP;
		abi = strtoull(buf, NULL, 10);
	} else if (!strcmp(type, "umad") || !strcmp(type, "issm")) {
		uint32_t port;
		bool found = false;
		struct dirent *e;
		DIR *d;

		if ((err = req_dev(r, &dv)))
			return err;
		if (!req_u32(r, RDMA_NLDEV_ATTR_PORT_INDEX, &port))
			return -EINVAL;
		if (!(d = opendir(MAD_CLASS)))
			return -EOPNOTSUPP;
		while (!found && (e = readdir(d))) {
			if (strncmp(e->d_name, "umad", 4) ||
			    !attr_read(buf, sizeof(buf), MAD_CLASS "/%s/ibdev", e->d_name) ||
			    strcmp(buf, dv.name) ||
			    !attr_read(buf, sizeof(buf), MAD_CLASS "/%s/port", e->d_name) ||
			    strtoul(buf, NULL, 10) != port)
				continue;
			snprintf(name, sizeof(name), "%s%s", type, e->d_name + 4);
			found = attr_dev(&cdev, MAD_CLASS "/%s/dev", name);
		}
		closedir(d);
		if (!found)
			return -EINVAL;
		abi = UMAD_ABI;
	} else {
		return -EOPNOTSUPP;
	}
	reply_begin(o, r);
	nl_put_u64(o, RDMA_NLDEV_ATTR_CHARDEV, huge_dev(cdev));
	nl_put_u64(o, RDMA_NLDEV_ATTR_CHARDEV_ABI, abi);
	nl_put_str(o, RDMA_NLDEV_ATTR_CHARDEV_NAME, name);
	/* ib_uverbs_get_nl_info: the device's driver (abi/verbs_wire.h). */
	if (!strcmp(type, "uverbs"))
		nl_put_u32(o, RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID, IBEMU_VERBS_DRIVER_ID);
	nl_end(o);
	return 0;
}

/*
 * A string attribute as nldev_policy takes one (NLA_NUL_STRING of at most
 * @size bytes before its NUL, else EINVAL) and nla_strscpy copies it into
 * @buf of @size: a name of @size bytes loses its last.
 */
static bool req_strscpy(const struct req *r, int attr, char *buf, size_t size)
{
	const char *s = req_str(r, attr);
	size_t len = s ? strlen(s) : 0;

	if (!s || len > size)
		return false;
	len = len < size ? len : size - 1;
	memcpy(buf, s, len);
	buf[len] = 0;
	return true;
}

/* The emulator's answer to a change: the strings @s, NUL-terminated. */
static int ask_link(enum fast_link_op op, const char *const *s, unsigned n)
{
	char buf[3 * 64];
	size_t len = 0;
	unsigned i;

	for (i = 0; i < n; i++) {
		size_t l = strlen(s[i]) + 1;

		if (len + l > sizeof(buf))
			return -EINVAL;
		memcpy(buf + len, s[i], l);
		len += l;
	}
	return (int)fast_ask(FAST_RDMA_LINK, op, buf, len);
}

/* SET: a rename (`rdma dev set NAME name NEW`); nldev_set_doit's other
 * settings (the network namespace, DIM) are not the emulator's. */
static int cmd_set(const struct req *r, struct nl_out *o)
{
	char name[IB_DEVICE_NAME_MAX];
	struct dev dv;
	int err;

	(void)o;
	if ((err = req_dev(r, &dv)))
		return err;
	if (!r->tb[RDMA_NLDEV_ATTR_DEV_NAME])
		return -EOPNOTSUPP;
	if (!req_strscpy(r, RDMA_NLDEV_ATTR_DEV_NAME, name, sizeof(name)) || !*name)
		return -EINVAL;
	return ask_link(FAST_LINK_RENAME, (const char *[]){ dv.name, name }, 2);
}

/* NEWLINK: `rdma link add NAME type rxe netdev IF` (kernel/rdma_link.h). */
static int cmd_newlink(const struct req *r, struct nl_out *o)
{
	char name[IB_DEVICE_NAME_MAX], type[IFNAMSIZ], ndev[IFNAMSIZ];

	(void)o;
	if (!req_strscpy(r, RDMA_NLDEV_ATTR_DEV_NAME, name, sizeof(name)) ||
	    !req_strscpy(r, RDMA_NLDEV_ATTR_LINK_TYPE, type, sizeof(type)) ||
	    !req_strscpy(r, RDMA_NLDEV_ATTR_NDEV_NAME, ndev, sizeof(ndev)) ||
	    !*name || strchr(name, '%'))
		return -EINVAL;
	/* dev_get_by_name in the caller's network namespace. */
	if (!if_nametoindex(ndev))
		return -ENODEV;
	return ask_link(FAST_LINK_ADD, (const char *[]){ name, type, ndev }, 3);
}

/* DELLINK: `rdma link delete NAME`. */
static int cmd_dellink(const struct req *r, struct nl_out *o)
{
	struct dev dv;
	int err;

	(void)o;
	if ((err = req_dev(r, &dv)))
		return err;
	return ask_link(FAST_LINK_DEL, (const char *[]){ dv.name }, 1);
}

/* The commands answered, by RDMA_NLDEV_CMD_*; the others are refused
 * with EOPNOTSUPP, as a kernel refuses an op it has no handler for. */
static const struct {
	int (*doit)(const struct req *, struct nl_out *);
	bool can_dump;
} cmds[RDMA_NLDEV_NUM_OPS] = {
	[RDMA_NLDEV_CMD_GET] = { cmd_get, true },
	[RDMA_NLDEV_CMD_PORT_GET] = { cmd_port_get, true },
	[RDMA_NLDEV_CMD_SYS_GET] = { cmd_sys_get, false },
	[RDMA_NLDEV_CMD_GET_CHARDEV] = { cmd_get_chardev, false },
	[RDMA_NLDEV_CMD_SET] = { cmd_set, false },
	[RDMA_NLDEV_CMD_NEWLINK] = { cmd_newlink, false },
	[RDMA_NLDEV_CMD_DELLINK] = { cmd_dellink, false },
};

void nldev_answer(const struct nlmsghdr *h, uint32_t portid, struct nl_out *o)
{
	struct req r = { .h = h, .portid = portid, .dump = !!(h->nlmsg_flags & NLM_F_DUMP) };
	unsigned client = h->nlmsg_type >> 10, op = h->nlmsg_type & 0x3ff;
	const struct nlattr *a;
	size_t off;
	int err;

	if (!(h->nlmsg_flags & NLM_F_REQUEST) || h->nlmsg_type < NLMSG_MIN_TYPE)
		return;		/* the kernel ignores these */
	/* rdma_nl_rcv_msg: an unknown client or op is EINVAL. */
	if (client != RDMA_NL_NLDEV || op >= RDMA_NLDEV_NUM_OPS) {
		nl_error(o, h, portid, -EINVAL);
		return;
	}
	if (!cmds[op].doit) {
		nl_error(o, h, portid, -EOPNOTSUPP);
		return;
	}
	if (r.dump && !cmds[op].can_dump) {
		nl_error(o, h, portid, -EINVAL);
		return;
	}
	for (off = NLMSG_HDRLEN; off + NLA_HDRLEN <= h->nlmsg_len;
	     off += NLA_ALIGN(a->nla_len)) {
		a = (const struct nlattr *)((const char *)h + off);
		if (a->nla_len < NLA_HDRLEN || off + a->nla_len > h->nlmsg_len) {
			nl_error(o, h, portid, -EINVAL);
			return;
		}
		if ((a->nla_type & NLA_TYPE_MASK) < RDMA_NLDEV_ATTR_MAX)
			r.tb[a->nla_type & NLA_TYPE_MASK] = a;
	}
	err = cmds[op].doit(&r, o);
	if (err)
		nl_error(o, h, portid, err);
	else if (r.dump)
		nl_done(o, h, portid);
	else if (h->nlmsg_flags & NLM_F_ACK)
		nl_error(o, h, portid, 0);
}
