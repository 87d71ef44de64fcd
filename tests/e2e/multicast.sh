#!/bin/bash
# Multicast (#38): a group joined at the SA (opensm makes it and programs
# the switches' MulticastForwardingTables), UD packets to its MLID copied
# by the switches to every port in the group and by the HCA to every QP
# attached there. perftest -g (its own SA join through umad); mckey
# (rdma_join_multicast through the connection manager) with one sender
# and receivers on both leaves; the group gone from the SA once they
# leave; the PMA's multicast counters; the GRH in a capture, as tshark
# decodes it; ibacm, which joins and attaches its QPs and resolves a name
# by a multicast query. Then what ibv_attach_mcast refuses, and the
# device's multicast limits, one past each. All of it twice: with opensm,
# and on a fabric configured without an SM, whose SA is the emulator's
# (--configured: the group made at the join, the MFTs programmed by it).
. "$(dirname "$0")/lib.sh"

cat >"$WORK/mc.sh" <<'SCRIPT'
set -u
. "$INSIDE"
[ "$SM" = opensm ] && start_opensm
ctr() { cat /sys/class/infiniband/$1/ports/1/counters/multicast_$2_packets; }
echo "before: host3 rcv $(ctr ibemu2 rcv) host1 xmit $(ctr ibemu0 xmit)"
# perftest -g: the server on host3 (ibemu2), the client on host1.
port=18960
for t in ib_send_bw ib_send_lat; do
	port=$((port + 1))
	timeout 60 $t -g -F -d ibemu2 -n 200 -p $port >"$W/s.out" 2>&1 &
	s=$!
	wait_listen $port
	timeout 60 $t -g -F -d ibemu0 -n 200 -p $port localhost >"$W/c.out" 2>&1
	c=$?
	wait $s
	echo "$t -g | client $c server $? | $(grep -E '^ +[0-9]+ +[0-9]+ ' "$W/s.out" | tail -1 | awk '{ print $1, $2 }')"
	grep -q "remote address: LID 0xc0" "$W/c.out" && echo "$t -g: the client sends to a multicast LID"
done
# mckey: receivers on host2 (leaf1, beside the sender) and host3 (leaf2).
for r in 10.1.0.4 10.1.0.5; do
	# Line-buffered: what it printed is waited on.
	timeout 30 stdbuf -oL mckey -m 224.1.2.3 -b $r -C 20 >"$W/r-$r.out" 2>&1 &
	echo $! >"$W/r-$r.pid"
done
wait_log "$W/r-10.1.0.4.out" "receiving data transfers"
wait_log "$W/r-10.1.0.5.out" "receiving data transfers"
saquery -g | grep -c "MGID.*ff12:4001:ffff::1:203" | sed 's/^/joined groups: /'
timeout 30 mckey -m 224.1.2.3 -b 10.1.0.3 -s -C 20 >"$W/snd.out" 2>&1
echo "mckey sender rc=$? | $(grep -o 'joined dgid: [^ ]* mlid 0x[0-9a-f]*' "$W/snd.out")"
for r in 10.1.0.4 10.1.0.5; do
	wait $(cat "$W/r-$r.pid")
	echo "mckey receiver $r rc=$? | $(grep -c 'data transfers complete' "$W/r-$r.out") complete"
done
saquery -g | grep -c "MGID.*ff12:4001:ffff::1:203" | sed 's/^/groups after the leave: /'
echo "after: host3 rcv $(ctr ibemu2 rcv) host1 xmit $(ctr ibemu0 xmit)"
# ibacm: an endpoint on host1 and one on host3, a name resolved between.
printf 'h1 ibemu0 1 default\nh3 ibemu2 1 default\n' >"$W/addr.cfg"
ib_acme -O "$W/opts.cfg" -D "$W" >/dev/null 2>&1
sed -i "s|^log_file .*|log_file $W/acm.log|; s|^log_level .*|log_level 2|; s|^lock_file .*|lock_file $W/acm.pid|; s|^server_mode .*|server_mode unix|" "$W/opts.cfg"
timeout 60 ibacm -P -A "$W/addr.cfg" -O "$W/opts.cfg" &
a=$!
wait_log "$W/acm.log" "acm_listen: listen active"
ib_acme -f n -s h1 -d h3 -v >"$W/acme.out" 2>&1
echo "ib_acme | $(grep -o 'return status 0x[0-9a-f]*' "$W/acme.out")"
kill $a
grep -c "join successful" "$W/acm.log" | sed 's/^/ibacm joins: /'
grep -c "unable to attach" "$W/acm.log" | sed 's/^/ibacm attach errors: /'
grep -q "acmp_process_acm_recv: src  h1" "$W/acm.log" && echo "ibacm: the query reached h3 by multicast"
[ "$SM" = opensm ] && stop_opensm
exit 0
SCRIPT
for sm in opensm emulator; do
[ $sm = opensm ] && conf= || conf=--configured
echo "# the SA: $sm's"
mkdir "$WORK/$sm"	# logs waited on start empty
ibemu_run $conf -a host1 -a host2 -a host3 --capture "$WORK/mc.pcap" -- env W="$WORK/$sm" SM=$sm bash "$WORK/mc.sh"
expect_rc 0 "the run"
for t in ib_send_bw ib_send_lat; do
	expect_line "$t -g | client 0 server 0 | $([ $t = ib_send_bw ] && echo 2048 || echo 2) 200" \
		"$t -g: 200 messages through the group"
	expect_line "$t -g: the client sends to a multicast LID" "$t -g: to an MLID"
done
expect_line "joined groups: 1" "mckey's group at the SA while joined"
expect_match "^mckey sender rc=0 \| joined dgid: ff12:4001:ffff::1:203 mlid 0xc0[0-9a-f]+$" \
	"mckey: the sender's join (the RDMA CM's MGID for 224.1.2.3)"
for r in 10.1.0.4 10.1.0.5; do
	expect_line "mckey receiver $r rc=0 | 1 complete" "mckey: the receiver at $r got all 20"
done
expect_line "groups after the leave: 0" "the group is gone when its members left (SubnAdmDelete)"
before=$(awk '/^before:/ { print $4 }' "$WORK/out")
after=$(awk '/^after:/ { print $4 }' "$WORK/out")
[ -n "$after" ] && [ "$((after - before))" -ge 40 ] &&
	pass "PortMulticastRcvPkts at host3 counted the group's packets (+$((after - before)))" ||
	fail "PortMulticastRcvPkts at host3: $before before, $after after"
expect_line "ib_acme | return status 0x0" "ib_acme resolves h1 to h3 through ibacm"
expect_line "ibacm joins: 2" "ibacm joined the group at both endpoints"
expect_line "ibacm attach errors: 0" "ibacm attached its QPs (no 'unable to attach')"
expect_line "ibacm: the query reached h3 by multicast" "ibacm's query went by multicast"
n=$(tshark -r "$WORK/mc.pcap" -Y 'infiniband.grh.dgid == ff12:4001:ffff::1:203 && infiniband.bth.destqp == 0xffffff' 2>/dev/null | wc -l)
# The capture has each packet where it was sent: mckey's 20.
[ "$n" = 20 ] && pass "tshark: mckey's 20 packets to the MGID, with a GRH, to QP 0xffffff" ||
	fail "tshark: $n packets to the MGID with a GRH and QP 0xffffff, want mckey's 20"
done

# What the kernel refuses, and the limits ibv_devinfo -v states.
ibemu_run --configured -a host1 -- sh -c "ibv_devinfo -v -d ibemu0 | grep mcast; \"$TOOLS/verbs_mcast\" ibemu0"
expect_rc 0 "the attach rules run"
for l in "rc qp: Invalid argument" "unicast gid: Invalid argument" "unicast lid: Invalid argument" \
	"permissive lid: Invalid argument" "attach: ok" "attach again: ok" \
	"destroy attached: Device or resource busy" "detach: ok" "detach again: Invalid argument" \
	"destroy detached: ok"; do
	expect_line "$l" "ibv_attach_mcast rules: $l"
done
expect_match "max_mcast_grp:[[:space:]]+1024$" "ibv_devinfo -v: max_mcast_grp 1024"
expect_match "max_mcast_qp_attach:[[:space:]]+256$" "ibv_devinfo -v: max_mcast_qp_attach 256"
expect_match "max_total_mcast_qp_attach:[[:space:]]+4096$" "ibv_devinfo -v: max_total_mcast_qp_attach 4096"
expect_line "qps in a group: 256 made, next Cannot allocate memory" "one QP past max_mcast_qp_attach: ENOMEM"
expect_line "groups: 1024 made, next Cannot allocate memory" "one group past max_mcast_grp: ENOMEM"
expect_line "attachments: 4096 made, next Cannot allocate memory" "one past max_total_mcast_qp_attach: ENOMEM"
expect_line "self loopback (not blocked): sender 1, other 1" "a UD QP's own multicast loops back to it, as an HCA's"
expect_line "self loopback (blocked): sender 0, other 1" \
	"IBV_QP_CREATE_BLOCK_SELF_MCAST_LB: not to the sender, still to the port's other QPs"
expect_line "block self loopback on an RC QP: Operation not supported" "the flag on an RC QP: EOPNOTSUPP"
finish
