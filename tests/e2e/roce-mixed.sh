#!/bin/bash
# InfiniBand and RoCE in one run (docs/roce.md; issue #50): a topology's
# `link_layer=Ethernet` makes a CA's ports RoCE ports, on a network of
# their own. topologies/ib-and-roce.net gives two machines an HCA each on
# an InfiniBand switch and a NIC each on an Ethernet switch. opensm, run
# on node1, manages the InfiniBand network only (saquery and ibnetdiscover
# see its three nodes; `ctl wait sm-up` waits for it alone) while the
# RoCE NICs are up with no SM; rping and ibv_rc_pingpong -g 3 cross the
# Ethernet switch, ibv_rc_pingpong by LID the InfiniBand one, data
# checked. `--configured` stands for the SM on the InfiniBand network
# only. A file that puts both kinds on one network, or link_layer= on a
# switch, is refused with where and why.
. "$(dirname "$0")/lib.sh"
export W="$WORK"
TOPO="$(cd "$(dirname "$0")/../.." && pwd)/topologies/ib-and-roce.net"
HOSTS=node1=node1-ib+node1-eth,node2=node2-ib+node2-eth

cat >"$WORK/mixed.sh" <<'SCRIPT'
set -u
. "$INSIDE"
ibv_devinfo | grep -E "hca_id|link_layer" | paste -d' ' - - | tr -s ' \t' ' ' | sed 's/^/devinfo: /'
echo "netdevs: $(ls /sys/class/infiniband/ibemu0/device/net) $(ls /sys/class/infiniband/ibemu1/device/net)"
# The RoCE network needs no SM: it carries traffic before opensm runs.
listening_on() { ibemu ctl status | grep -q "listening on 192.168.1.2"; }
ssh node2 "timeout 60 rping -s -a 192.168.1.2 -C 5" >/dev/null 2>&1 &
s=$!
wait_until listening_on
# The client's pings, not its status (tests/e2e/roce-addr.sh says why).
timeout 60 rping -c -a 192.168.1.2 -C 5 -v >"$W/rping.out" 2>&1
wait $s
echo "rping over RoCE | server $? | $(grep -c '^ping data: rdma-ping-' "$W/rping.out")"
echo "ib port before opensm: $(cat /sys/class/infiniband/ibemu0/ports/1/state)"
start_opensm
ibemu ctl wait sm-up --timeout 60 >/dev/null
echo "sm-up $?"
echo "saquery nodes: $(saquery | grep -c 'NodeRecord dump')"
ibnetdiscover | grep -E '^(Switch|Ca)' | sed 's/.*# "\([^"]*\)".*/ibnetdiscover: \1/' | sort
echo "lids: $(cat /sys/class/infiniband/ibemu0/ports/1/lid) $(cat /sys/class/infiniband/ibemu1/ports/1/lid)"
pp() {
	ssh node2 "timeout 60 ibv_rc_pingpong -p $1 $2 -n 20 -c" >/dev/null 2>&1 &
	local s=$!
	ssh_listen() { ssh node2 "ss -ltn 'sport = :$1'" | grep -q LISTEN; }
	wait_until ssh_listen "$1"
	timeout 60 ibv_rc_pingpong -p "$1" $2 -n 20 -c node2 >"$W/pp.out" 2>&1
	local c=$?
	wait $s
	echo "pingpong $2 | client $c server $? | $(grep -o 'remote address: LID 0x[0-9a-f]*' "$W/pp.out")"
}
pp 18650 "-d ibemu0"
pp 18651 "-d ibemu1 -g 3"
stop_opensm
exit 0
SCRIPT
ibemu_run --topology "$TOPO" --hosts "$HOSTS" -- bash "$WORK/mixed.sh"
expect_rc 0 "the mixed run with opensm"
expect_line "devinfo: hca_id: ibemu0 link_layer: InfiniBand" "node1's HCA is InfiniBand"
expect_line "devinfo: hca_id: ibemu1 link_layer: Ethernet" "and its NIC Ethernet"
expect_line "netdevs: ib0 eth0" "their interfaces ib0 and eth0"
expect_line "rping over RoCE | server 0 | 5" "rping over the Ethernet switch, no SM running"
expect_line "ib port before opensm: 2: INIT" "meanwhile the InfiniBand port waits for an SM"
expect_line "sm-up 0" "ctl wait sm-up: the InfiniBand network is up (the RoCE one has no SM)"
expect_line "saquery nodes: 3" "opensm's SA: the InfiniBand network's three nodes"
expect_line "ibnetdiscover: InfiniBand switch" "ibnetdiscover finds the InfiniBand switch..."
expect_no_line "ibnetdiscover: Ethernet switch" "... and not the Ethernet one"
expect_match "^lids: 0x[0-9a-f]*[1-9a-f][0-9a-f]* 0x0$" "a LID from opensm on the HCA, none on the NIC"
expect_match "^pingpong -d ibemu0 \| client 0 server 0 \| remote address: LID 0x0*[1-9a-f]" \
	"ibv_rc_pingpong by LID over InfiniBand (-c: data checked)"
expect_line "pingpong -d ibemu1 -g 3 | client 0 server 0 | remote address: LID 0x0000" \
	"ibv_rc_pingpong -g 3 over RoCE (data checked)"

# --configured: the emulator stands for the SM on the InfiniBand network.
ibemu_run --configured --topology "$TOPO" --hosts "$HOSTS" -- bash -c '
	echo "sm_lid: $(cat /sys/class/infiniband/ibemu0/ports/1/sm_lid) $(cat /sys/class/infiniband/ibemu1/ports/1/sm_lid)"
	echo "states: $(cat /sys/class/infiniband/ibemu0/ports/1/state) $(cat /sys/class/infiniband/ibemu1/ports/1/state)"
	echo "saquery nodes: $(saquery | grep -c "NodeRecord dump")"'
expect_rc 0 "the mixed run --configured"
expect_match "^sm_lid: 0x[1-9a-f][0-9a-f]* 0x0$" "the InfiniBand port has the SM's LID, the RoCE one none"
expect_line "states: 4: ACTIVE 4: ACTIVE" "both Active"
expect_line "saquery nodes: 3" "the emulator's SA: the InfiniBand network's nodes"

# Files that cannot be: refused FILE TEXT LINE WHAT
refused() {
	printf "$2" >"$WORK/$1"
	"$IBEMU" topo check "$WORK/$1" >"$WORK/out" 2>&1
	RC=$?
	expect_rc 1 "$4 refused"
	expect_line "ibemu: $WORK/$1$3" "saying where and why"
}
refused one-net.net 'Switch 4 "sw"\n[1] "a"[1]\n[2] "b"[1]\n\nlink_layer=Ethernet\nCa 1 "a"\n\nCa 1 "b"\n' \
	": a/1 is a RoCE (Ethernet) port and b/1 an InfiniBand one on the same network: a network has one link layer" \
	"a RoCE port and an InfiniBand one on one network"
refused sw.net 'link_layer=Ethernet\nSwitch 4 "sw"\n' \
	":1: link_layer=Ethernet: \"sw\" is a switch; only a CA's ports can be Ethernet" "link_layer=Ethernet on a switch"
refused bad.net 'Ca 1 "a"\n\nlink_layer=wifi\nCa 1 "b"\n' \
	":3: bad link_layer \"wifi\" (Ethernet or InfiniBand)" "an unknown link layer"
finish
