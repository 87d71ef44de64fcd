#!/bin/bash
# The RDMA netlink family (docs/netlink.md; issue #50, what scripts around
# rxe call): iproute2's `rdma`, unmodified, lists the emulated devices and
# ports as the run's sysfs has them (InfiniBand with its LIDs after the
# emulator's SM, RoCE with each port's netdev), follows a pulled cable,
# and `rdma sys` answers. libibverbs finds its devices through the same
# socket (ibv_devices). netlink_client.py checks what no tool asks: the
# char devices (GET_CHARDEV: the dev_t sysfs and a stat give), errors
# with the kernel's errnos, a dump past a socket's queue, hostile and
# oversized requests, the limit on sockets, a reused fd number. Without
# the preloaded library the socket is refused, as without ib_core, and
# libibverbs reads sysfs instead.
. "$(dirname "$0")/lib.sh"
# The preloaded library answers: on even in CI's FUSE-only pass.
unset IBEMU_FAST_PATH
export E2E=$(cd "$(dirname "$0")" && pwd)

cat >"$WORK/ib.sh" <<'SCRIPT'
set -u
P=/sys/class/infiniband/ibemu0/ports/1
rdma dev show | sed 's/^/dev: /'
rdma link show | sed 's/^/link: /'
rdma sys show | sed 's/^/sys: /'
rdma -j link show ibemu0/1 | sed 's/^/json: /'
# The same numbers as sysfs, as the kernel fills both from one device.
echo "sysfs: lid $(($(cat $P/lid))) sm_lid $(($(cat $P/sm_lid))) state $(cut -d' ' -f2 $P/state) guid $(cat /sys/class/infiniband/ibemu0/node_guid) fw $(cat /sys/class/infiniband/ibemu0/fw_ver)"
ibv_devices | awk 'NR > 2 { print "ibv_devices:", $1, $2 }'
ibemu ctl link down host1/1 >/dev/null
rdma link show ibemu0/1 | sed 's/^/pulled: /'
echo "pulled sysfs: $(cat $P/state) / $(cat $P/phys_state)"
/usr/bin/python3 -S "$E2E/netlink_client.py" | sed 's/^/client: /'
IBEMU_FAST_PATH=0 bash -c 'rdma dev show 2>&1 | sed "s/^/no preload: /"; ibv_devices | awk "NR > 2 { print \"no preload ibv_devices:\", \$1 }"'
SCRIPT
ibemu_run --configured -- bash "$WORK/ib.sh"
expect_rc 0 "the InfiniBand run"
expect_line "dev: 0: ibemu0: node_type ca fw 2.42.5000 node_guid 0002:c903:0000:0100 sys_image_guid 0002:c903:0000:0100 " \
	"rdma dev: index, name, node type, firmware, GUIDs"
expect_line "link: link ibemu0/1 subnet_prefix fe80:0000:0000:0000 lid 3 sm_lid 3 lmc 0 state ACTIVE physical_state LINK_UP " \
	"rdma link: port 1 with the LIDs the emulator's SM gave"
expect_match "^link: link ibemu0/2 .* lid 4 sm_lid 3 .*state ACTIVE" "rdma link: port 2"
expect_line "sysfs: lid 3 sm_lid 3 state ACTIVE guid 0002:c903:0000:0100 fw 2.42.5000" \
	"... the numbers sysfs has"
expect_line "sys: netns shared " "rdma sys: no copy-on-fork, as before 5.13 (docs/verbs.md)"
expect_match '^json: \[\{"ifindex":0,"ifname":"ibemu0","port":1,.*"lid":3,"sm_lid":3,"lmc":0,"state":"ACTIVE","physical_state":"LINK_UP"\}\]' \
	"rdma -j link: the same in JSON"
expect_line "ibv_devices: ibemu0 0002c90300000100" "libibverbs finds the device through netlink"
expect_line "pulled sysfs: 1: DOWN / 2: Polling" "a pulled cable: sysfs..."
expect_line "pulled: link ibemu0/1 subnet_prefix fe80:0000:0000:0000 lid 3 sm_lid 3 lmc 0 state DOWN physical_state POLLING " \
	"... and rdma link say Down, Polling"
expect_line "client: a stream socket: ESOCKTNOSUPPORT" "netlink's socket types only (raw, datagram)"
expect_line "client: getsockname: pid ours groups 0" "bind autobinds to the process's pid, as netlink does"
expect_line "client: dump: 1 devices, ends with DONE, multi 1" "a dump: NLM_F_MULTI, then NLMSG_DONE"
expect_line "client: doit: ibemu0, then ack" "a request with NLM_F_ACK: the answer, then an ACK"
expect_line "client: no such device: EINVAL" "an unknown device index: EINVAL (nldev's)"
expect_line "client: doit without an index: EINVAL" "a GET without an index: EINVAL"
expect_line "client: an op with no handler (RES_GET): ENOTSUP" "an op not answered: EOPNOTSUPP"
expect_line "client: an unknown client: EINVAL" "another netlink client: EINVAL"
expect_line "client: an attribute longer than its message: EINVAL" "a malformed attribute: EINVAL"
expect_line "client: a dump of a command that has none: EINVAL" "a dump where there is none: EINVAL"
expect_line "client: chardev uverbs: uverbs0 abi 1, dev_t as sysfs says: True" \
	"GET_CHARDEV uverbs: the name, the driver ABI, sysfs's dev_t"
expect_line "client: chardev rdma_cm: rdma_cm abi 4, dev_t as stat says: True" \
	"GET_CHARDEV rdma_cm: ucma's ABI, the file's dev_t"
expect_line "client: chardev umad: umad0 abi 5, dev_t as sysfs says: True" "GET_CHARDEV umad"
expect_line "client: chardev nosuch: ENOTSUP" "GET_CHARDEV of no client: EOPNOTSUPP"
expect_line "client: 200 dumps in one send: 200 DONE, 400 port messages" \
	"200 dumps at once: all of it, past the socket's queue"
expect_line "client: a 70000-byte request: EMSGSIZE" "an oversized request: EMSGSIZE"
expect_line "client: to another portid: ECONNREFUSED" "no other RDMA netlink socket to send to"
expect_line "client: garbage then a request: ack" "garbage is not a message; the next request is answered"
expect_line "client: a 17th socket: ENOBUFS" "the limit on sockets at once"
expect_line "client: after a close: answers" "a closed socket makes room"
expect_line "client: its number reused by a UDP socket (same): getsockname 0.0.0.0" \
	"a reused fd number is the program's again"
expect_match "^no preload: " "without the library: rdma cannot open the socket..."
expect_line "no preload ibv_devices: ibemu0" "... and libibverbs reads sysfs"

cat >"$WORK/roce.sh" <<'SCRIPT'
set -u
rdma link show | sed 's/^/link: /'
rdma dev show ibemu1 | sed 's/^/dev: /'
rdma link show ibemu1/1 -d | head -1 | sed 's/^/detail: /'
echo "eth2's ifindex: $(cat /sys/class/net/eth2/ifindex)"
SCRIPT
ibemu_run --roce -a host1 -a host3 -- bash "$WORK/roce.sh"
expect_rc 0 "the RoCE run"
expect_line "link: link ibemu0/1 state ACTIVE physical_state LINK_UP netdev eth0 " \
	"rdma link on RoCE: no LIDs, the port's netdev"
expect_line "link: link ibemu1/1 state ACTIVE physical_state LINK_UP netdev eth2 " \
	"... each port's own (host3's first: eth2)"
expect_match "^dev: 1: ibemu1: node_type ca " "rdma dev ibemu1: the second device's index"
idx=$(sed -n "s/^eth2's ifindex: //p" "$WORK/out")
expect_line "detail: link ibemu1/1 state ACTIVE physical_state LINK_UP netdev eth2 netdev_index $idx " \
	"rdma link -d: the netdev's index"
finish
