#!/bin/bash
# A RoCE port's GIDs follow its interface's IPv4 address (docs/roce.md
# "Addresses"; issue #50): `ip addr` inside the run changes GID 2/3
# (RoCE v1/v2 of the address mapped), each change raises GID_CHANGE
# (ibv_asyncwatch hears it), the RDMA CM finds the port by its new address
# (rping on it, data checked), `ibemu ctl port` says it, and an interface
# with no address leaves the entries empty. On --hosts, each host's own.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/addr.sh" <<'SCRIPT'
set -u
. "$INSIDE"
P=/sys/class/infiniband/ibemu0/ports/1
gid3() { cat $P/gids/3; }
gid3_is() { [ "$(gid3)" = "$1" ]; }
echo "before: $(gid3) $(cat $P/gid_attrs/types/3)"
timeout 60 ibv_asyncwatch >"$W/aw.out" 2>&1 &
aw=$!
wait_until grep -q "async event FD" "$W/aw.out"
# A second address: GIDs 4/5, the first stays at 2/3.
gid_is() { [ "$(cat $P/gids/$1)" = "$2" ]; }
ip addr add 192.168.7.1/24 dev eth0
wait_until gid_is 5 0000:0000:0000:0000:0000:ffff:c0a8:0701
echo "second: $(gid3) $(cat $P/gids/4) $(cat $P/gid_attrs/types/4) $(cat $P/gids/5) $(cat $P/gid_attrs/types/5)"
# The first deleted: its pair empty, the second's where it was; the port's
# address (ibemu ctl, the RDMA CM's) is the second now.
ip addr del 10.1.0.3/16 dev eth0
wait_until gid3_is 0000:0000:0000:0000:0000:0000:0000:0000
echo "first gone: $(cat $P/gids/5) $(ibemu ctl port host1/1 | grep '^addr')"
echo "first gone's type: $(cat $P/gid_attrs/types/3 2>&1 | sed 's/.*: //')"
# rp ADDR: rping's server and client on ADDR, through the RDMA CM: the
# server's status and the client's pings. Not the client's status: rping
# 44 closes its event channel while its CM thread may be about to ask it
# again, and then exits 255 ("rdma_get_cm_event: Bad file descriptor", on
# a kernel too; rdma-core fixed it in f3ae6534a, "rping: terminate CM
# event thread before exiting"): 3 times in 60 here under load.
rp() {
	timeout 60 rping -s -a "$1" -C 5 -v >"$W/rps.out" 2>&1 &
	local s=$!
	cm_on() { ibemu ctl status | grep -q "listening on $1"; }
	wait_until cm_on "$1"
	timeout 60 rping -c -a "$1" -C 5 -v >"$W/rpc.out" 2>&1
	wait $s
	echo "rping $1 | server $? | $(grep -c '^ping data: rdma-ping-' "$W/rpc.out")"
}
rp 192.168.7.1
ip addr del 192.168.7.1/24 dev eth0
wait_until gid_is 5 0000:0000:0000:0000:0000:0000:0000:0000
echo "none: $(gid3) $(cat $P/gids/5) $(cat $P/gids/0)"
ip addr add 10.9.9.9/24 dev eth0
wait_until gid3_is 0000:0000:0000:0000:0000:ffff:0a09:0909
echo "new: $(gid3) $(ibemu ctl port host1/1 | grep '^addr')"
ibv_devinfo -v -d ibemu0 | grep -E "GID\[ *3\]" | tr -s ' \t' ' ' | sed 's/^/devinfo:/'
rp 10.9.9.9
four() { [ "$(grep -c GID_CHANGE "$W/aw.out")" -ge 4 ]; }
wait_until four
kill $aw
echo "events: $(grep -c 'IBV_EVENT_GID_CHANGE (18), port 1' "$W/aw.out")"
SCRIPT
ibemu_run --roce -a host1 -a host3 -- env W="$WORK" bash "$WORK/addr.sh"
expect_rc 0 "the run"
expect_line "before: 0000:0000:0000:0000:0000:ffff:0a01:0003 RoCE v2" "GID 3: the interface's address, RoCE v2"
expect_line "second: 0000:0000:0000:0000:0000:ffff:0a01:0003 0000:0000:0000:0000:0000:ffff:c0a8:0701 IB/RoCE v1 0000:0000:0000:0000:0000:ffff:c0a8:0701 RoCE v2" \
	"a second address: GIDs 4 and 5 (v1, v2), the first stays at 2/3"
expect_line "first gone: 0000:0000:0000:0000:0000:ffff:c0a8:0701 addr 192.168.7.1" \
	"the first deleted: its pair empty, the second's stays; the port's address is the second"
expect_line "first gone's type: Invalid argument" "an empty entry's type: EINVAL, as the kernel's _show_port_gid_attr"
expect_line "rping 192.168.7.1 | server 0 | 5" "rping on the second address (GID 5): the RDMA CM finds the port"
expect_line "none: 0000:0000:0000:0000:0000:0000:0000:0000 0000:0000:0000:0000:0000:0000:0000:0000 fe80:0000:0000:0000:0202:c9ff:fe00:0101" \
	"no address: the entries empty, the link-local GID stays"
expect_line "new: 0000:0000:0000:0000:0000:ffff:0a09:0909 addr 10.9.9.9" \
	"a new address: the first empty pair (GID 3), and the port's address as ibemu ctl says it"
expect_match "^devinfo: GID\[ *3\]: ::ffff:10.9.9.9, RoCE v2" "ibv_devinfo -v shows it"
expect_line "rping 10.9.9.9 | server 0 | 5" "rping on the new address"
expect_line "events: 4" "GID_CHANGE for each change (ibv_asyncwatch)"

# --hosts: each host's network is its own; a change on host3 is host3's.
cat >"$WORK/hosts.sh" <<'SCRIPT'
. "$INSIDE"
G=/sys/class/infiniband/ibemu0/ports/1/gids/3
ssh host3 ". \"\$INSIDE\"; ip addr del 10.1.0.5/16 dev eth0; ip addr add 10.88.0.1/24 dev eth0
moved() { [ \"\$(cat $G)\" = 0000:0000:0000:0000:0000:ffff:0a58:0001 ]; }
wait_until moved; echo \"host3: \$(cat $G)\""
echo "host1: $(cat $G)"
SCRIPT
ibemu_run --roce --hosts host1,host3 -- bash "$WORK/hosts.sh"
expect_rc 0 "the --hosts run"
expect_line "host3: 0000:0000:0000:0000:0000:ffff:0a58:0001" "--hosts: host3's GID follows its interface"
expect_line "host1: 0000:0000:0000:0000:0000:ffff:0a01:0003" "... and host1's stays"
finish
