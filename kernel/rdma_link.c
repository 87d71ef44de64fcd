/* SPDX-License-Identifier: MIT */
/* rdma link add/delete and device renames; see rdma_link.h. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "fabric/port.h"
#include "kernel/rdma_link.h"

static int rename_ca(struct host *h, unsigned k, const char *now, struct rdma_link_renamed *r)
{
	const char *name;
	char was[HOST_CA_NAME_MAX];
	int err;

	host_ca(h, k, &name);
	strcpy(was, name);
	if ((err = host_rename_ca(h, k, now)) < 0 || !strcmp(was, now))
		return err;
	r->k = (int)k;
	strcpy(r->was, was);
	host_ca(h, k, &r->now);
	return 0;
}

int rdma_link_rename(struct host *h, const char *name, const char *now,
		     struct rdma_link_renamed *r)
{
	int k = host_ca_by_name(h, name);

	r->k = -1;
	/* nldev_set_doit: no such device, or an empty name, is EINVAL;
	 * ib_device_rename: another device's name is EEXIST. */
	if (k < 0 || !*now)
		return -EINVAL;
	return rename_ca(h, (unsigned)k, now, r);
}

/* The CA whose port's interface is @netdev, and that port; -1 if none. */
static int ca_of_netdev(const struct host *h, const char *netdev, const struct port **port)
{
	unsigned i, k;

	for (i = 0; i < host_nports(h); i++) {
		const struct port *p = host_port(h, i, NULL);
		char ifname[32];

		if (!host_netdev_name(h, p, ifname, sizeof(ifname)) || strcmp(ifname, netdev))
			continue;
		for (k = 0; k < host_ncas(h); k++)
			if (host_ca(h, k, NULL) == p->node) {
				*port = p;
				return (int)k;
			}
	}
	return -1;
}

int rdma_link_add(struct host *h, const char *name, const char *type, const char *netdev,
		  struct rdma_link_renamed *r)
{
	const struct port *port = NULL;
	int k, other, err;

	r->k = -1;
	/* nldev_newlink: a name with '%' (a driver's pattern) or none is
	 * EINVAL; a type no module registers is EINVAL. Only rxe is one:
	 * siw's devices are iWARP ones, which the emulator has none of. */
	if (!*name || strchr(name, '%') || strcmp(type, "rxe"))
		return -EINVAL;
	/* An interface that is not a RoCE port's (lo, the run's bridge, an
	 * IPoIB one): rxe would make a device there; not the emulator. */
	if ((k = ca_of_netdev(h, netdev, &port)) < 0 || !port_is_roce(port))
		return -EOPNOTSUPP;
	/* rxe_newlink: "already configured on" the interface. */
	if (host_ca_linked(h, (unsigned)k))
		return -EEXIST;
	/* assign_name: a name another device has is ENFILE. */
	if ((other = host_ca_by_name(h, name)) >= 0 && other != k)
		return -ENFILE;
	if ((err = rename_ca(h, (unsigned)k, name, r)) < 0)
		return err;
	host_set_ca_linked(h, (unsigned)k, true);
	return 0;
}

int rdma_link_del(struct host *h, const char *name, struct rdma_link_renamed *r)
{
	char own[HOST_CA_NAME_MAX];
	int k = host_ca_by_name(h, name), err;

	r->k = -1;
	/* nldev_dellink: a device that no `link add` made (no
	 * IBK_ALLOW_USER_UNREG) is EINVAL. */
	if (k < 0 || !host_ca_linked(h, (unsigned)k))
		return -EINVAL;
	/* The device goes, and the CA it named is "ibemu<k>" again; if
	 * another was renamed to that meanwhile, EEXIST and it stays. */
	host_ca_default_name((unsigned)k, own);
	if ((err = rename_ca(h, (unsigned)k, own, r)) < 0)
		return err;
	host_set_ca_linked(h, (unsigned)k, false);
	return 0;
}
