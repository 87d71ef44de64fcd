#!/bin/bash
# `rdma link add NAME type rxe netdev IF` (docs/roce.md "rdma link";
# issue #50, what scripts around rxe call): a Soft-RoCE CI script's steps
# run as written inside `ibemu run --roce`. The device on that interface
# takes the name the script gives it everywhere a program looks: rdma,
# ibv_devices (libibverbs keeps it with ibemu's provider, not rdma-core's
# rxe one, which takes names starting "rxe"), sysfs (the old name is gone
# even where the kernel had cached it), umad's and uverbs' ibdev. Then
# the script's traffic on it: ibv_rc_pingpong with server and client on
# rxe0 (data checked), rping on the interface's address, and a second
# device between the two. Without CAP_NET_ADMIN: EPERM, as the kernel.
# `rdma link delete` gives the names back. rdma_link_client.py sends
# what iproute2 never does, and hostile requests to the fast socket.
. "$(dirname "$0")/lib.sh"
# The preloaded library answers netlink: on even in CI's FUSE-only pass.
unset IBEMU_FAST_PATH
export E2E=$(cd "$(dirname "$0")" && pwd)

cat >"$WORK/softroce.sh" <<'SCRIPT'
set -u
. "$INSIDE"
/usr/bin/python3 -S "$E2E/rdma_link_client.py" | sed 's/^/client: /'
echo "cached: $(cat /sys/class/infiniband/ibemu0/node_guid)"
# The Soft-RoCE steps, as a CI job has them (after `modprobe rdma_rxe`).
rdma link add rxe0 type rxe netdev eth0
echo "link add: rc $?"
# Before anything looks the new name up (which would move the kernel's
# cached entry to it): the old one must already be gone.
cat /sys/class/infiniband/ibemu0/node_guid 2>&1 | sed 's/^/old name: /'
rdma link show | sed 's/^/link: /'
ibv_devices | awk 'NR > 2 { print "ibv_devices:", $1, $2 }'
ibv_devinfo -d rxe0 | grep -E "hca_id|link_layer" | tr -s ' \t' ' ' | sed 's/^/devinfo:/'
ls /sys/class/infiniband | sed 's/^/class: /'
echo "ibdev: $(cat /sys/class/infiniband_verbs/uverbs0/ibdev) $(cat /sys/class/infiniband_mad/umad0/ibdev) $(cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/ndevs/3)"
# pp LABEL SERVER_DEV CLIENT_DEV GID PORT: ibv_rc_pingpong, data checked
# (-c); the statuses and the client's remote GID.
pp() {
	timeout 60 ibv_rc_pingpong -d "$2" -g "$4" -n 20 -c -p "$5" >"$W/$5.s" 2>&1 &
	local s=$! c
	wait_listen "$5"
	timeout 60 ibv_rc_pingpong -d "$3" -g "$4" -n 20 -c -p "$5" localhost >"$W/$5.c" 2>&1
	c=$?
	wait $s
	echo "$1 | client $c server $? | $(sed -n 's/.*remote address: .* GID //p' "$W/$5.c")"
}
# Server and client on rxe0, as on one runner.
pp "rxe0 pingpong" rxe0 rxe0 1 18650
A=$(ip -4 -br addr show eth0 | awk '{ print $3 }' | cut -d/ -f1)
timeout 60 rping -s -a "$A" -C 5 -v >"$W/rps.out" 2>&1 &
s=$!
cm_on() { ibemu ctl status | grep -q "listening on $A"; }
wait_until cm_on
# The client's pings, not its status: rping's own exit race
# (tests/e2e/roce-addr.sh says which).
timeout 60 rping -c -a "$A" -C 5 -v >"$W/rpc.out" 2>&1
wait $s
echo "rping | server $? | $(grep -c '^ping data: rdma-ping-' "$W/rpc.out")"
# A second device, on the other CA's interface, and traffic between them.
setpriv --bounding-set -net_admin rdma link add rxe1 type rxe netdev eth2 2>&1 | sed 's/^/no cap: /'
rdma link add rxe1 type rxe netdev eth2
rdma link add rxe2 type rxe netdev eth1 2>&1 | sed 's/^/again: /'
pp "rxe0 to rxe1" rxe1 rxe0 3 18651
rdma link delete rxe1
rdma dev set rxe0 name soft0
rdma link delete soft0
rdma link show | sed 's/^/after: /'
ibv_devices | awk 'NR > 2 { print "after ibv_devices:", $1 }'
SCRIPT
ibemu_run --roce -a host1 -a host3 -- env W="$WORK" bash "$WORK/softroce.sh"
expect_rc 0 "the run"
expect_line "client: no netdev attribute: EINVAL" "NEWLINK without its netdev: EINVAL (nldev_newlink)"
expect_line "client: an empty name: EINVAL" "... with an empty name: EINVAL"
expect_line "client: a 65-byte name: EINVAL" "a name longer than nldev_policy takes: EINVAL"
expect_line "client: a 64-byte name: 0, named 63 bytes" "a 64-byte name is cut to 63, as nla_strscpy"
expect_line "client: its delete: 0, ibemu0 ibemu1" "DELLINK gives the device its own name back"
expect_line "client: a device never linked: EINVAL" "DELLINK of a device no link add made: EINVAL"
expect_line "client: no such device index: EINVAL" "DELLINK of no device: EINVAL"
expect_line "client: a set with no name: ENOTSUP" "SET of what the emulator does not set: EOPNOTSUPP"
expect_line "client: renamed to an empty name: EINVAL" "a rename to nothing: EINVAL"
expect_line "client: renamed with a slash: EINVAL" "a name no sysfs directory can have: EINVAL"
expect_line "client: renamed to the other's name: EEXIST" "another device's name: EEXIST (ib_device_rename)"
expect_line "client: renamed to its own name: 0" "its own name: nothing to do"
expect_line "client: 500 renames: 500, back: 0, ibemu0 ibemu1" "500 renames in a row, then back"
for what in "no strings" "two strings for three" "a string without its NUL" "a string too many" \
	"an op there is not" "a rename of no device"; do
	expect_line "client: fast $what: EINVAL" "the fast socket's FAST_RDMA_LINK: $what: EINVAL"
done
expect_line "client: still: ibemu0 ibemu1" "... and nothing changed"
expect_line "link add: rc 0" "rdma link add rxe0 type rxe netdev eth0"
expect_line "link: link rxe0/1 state ACTIVE physical_state LINK_UP netdev eth0 " "rdma link: rxe0 on eth0"
expect_line "ibv_devices: rxe0 0002c90300000100" "ibv_devices: rxe0, the same device"
expect_line "devinfo:hca_id: rxe0" "ibv_devinfo -d rxe0 opens it (ibemu's provider, by driver id)"
expect_line "class: rxe0" "sysfs: the class has rxe0..."
expect_no_line "class: ibemu0" "... and no ibemu0"
expect_line "old name: cat: /sys/class/infiniband/ibemu0/node_guid: No such file or directory" \
	"the old name is gone, though the kernel had it cached"
expect_line "ibdev: rxe0 rxe0 eth0" "uverbs0's and umad0's ibdev say rxe0"
expect_line "rxe0 pingpong | client 0 server 0 | fe80::202:c9ff:fe00:101" \
	"ibv_rc_pingpong on rxe0, server and client (its link-local GID), data checked"
expect_line "rping | server 0 | 5" "rping on eth0's address: its 5 pings"
expect_line "no cap: error: Operation not permitted" "without CAP_NET_ADMIN: EPERM"
expect_line "again: error: File exists" "a link on rxe0's other port: EEXIST (already configured)"
expect_line "rxe0 to rxe1 | client 0 server 0 | ::ffff:10.1.0.5" \
	"ibv_rc_pingpong from rxe0 to rxe1 (host3's RoCE v2 GID), data checked"
expect_match "^after: link ibemu0/1 .*netdev eth0" "rdma link delete: ibemu0 again..."
expect_line "after ibv_devices: ibemu1" "... and ibemu1"
finish
