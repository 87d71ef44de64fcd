#!/bin/bash
# Issue #51: IPoIB on the wire. Between two hosts of a --hosts run (host1
# and host3, two switch hops apart, opensm the SM) IP goes as IPoIB
# through the fabric (kernel/ipoib_link.h): ping answers, with the route
# on ib0 and the neighbour learnt by IPoIB's ARP; the capture holds the
# ARP with 20-byte IPoIB addresses and the ICMP in IPoIB, as tshark
# decodes them; the PMA counters move; a cut cable and a drop rule stop
# ping, and it comes back with the cable and without the rule; ping -6
# over IPv6's neighbour discovery, its options in IPoIB's form; TCP
# (iperf3) moves data over it, and OpenSSH logs in to an sshd on host3.
. "$(dirname "$0")/lib.sh"
command -v ping >/dev/null && command -v iperf3 >/dev/null ||
	{ fail "ping or iperf3 is not installed (./setup.sh --test)"; finish; exit 1; }
export W="$WORK"

# OpenSSH over it: sshd on host3's address, the system's ssh client on
# host1 (the run's own ssh, first on PATH, does not use TCP).
sshd_prepare 10.1.0.5 "$WORK/sshd.pid"

cat >"$WORK/wire.sh" <<'EOF'
. "$INSIDE"
start_opensm
PEER=$(ssh host3 ip -4 -o addr show ib0 | awk '{print $4}' | cut -d/ -f1)
echo "peer $PEER"
echo "route: $(ip route get "$PEER" | head -1 | grep -o 'dev [a-z0-9]*')"
xmit() { perfquery -x | awk -F. '/^PortXmitPkts:/ {print $NF}'; }
x0=$(xmit)
# (-w: wait for the replies, however late, up to 20 s; it may send more)
ping -c 10 -i 0.05 -w 20 "$PEER" | grep -o "[0-9]* received" | sed 's/^/ping: /'
echo "xmit packets: $(( $(xmit) - x0 ))"
echo "neigh: $(ip neigh show "$PEER" | awk '{print $5}')"
PEER6=$(ssh host3 ip -6 -o addr show ib0 scope link | awk '{print $4}' | cut -d/ -f1)
ping -6 -c 3 -w 20 "$PEER6%ib0" | grep -o "[0-9]* received" | sed 's/^/ping6: /'
echo "neigh6: $(ip -6 neigh show "$PEER6" dev ib0 | awk '{print $3}')"
ssh host3 ip link show ib0 | awk '/link\/ether/ {print "peer mac: " $2}'
"$IBEMU" ctl status | grep "ipoib" | sed 's/^/status: /'

"$IBEMU" ctl link down host3/1 >/dev/null
ping -c 2 -W 1 "$PEER" | grep -o "[0-9]* received" | sed 's/^/cut: /'
"$IBEMU" ctl link up host3/1 >/dev/null
"$IBEMU" ctl wait active --timeout 30 >/dev/null
answers() { ping -c 1 -W 1 "$PEER" >/dev/null; }
wait_until answers
answers && echo "restored: answers" || echo "restored: no answer"

"$IBEMU" ctl fault add drop --class data --node leaf2 >/dev/null
ping -c 2 -W 1 "$PEER" | grep -o "[0-9]* received" | sed 's/^/dropped: /'
"$IBEMU" ctl fault del 1 >/dev/null
wait_until answers
answers && echo "rule gone: answers" || echo "rule gone: no answer"

iperf3_to host3 "$PEER"
ssh host3 sh -c "mkdir -p /run/sshd; exec /usr/sbin/sshd -e -f $W/sshd_config" 2>"$W/sshd.log"
sshd_up() { ssh host3 ss -ltn "sport = :2222" | grep -q LISTEN; }
wait_until sshd_up
/usr/bin/ssh -F none -i "$W/user" -o IdentitiesOnly=yes -o GlobalKnownHostsFile=/dev/null \
	-o UserKnownHostsFile="$W/known_hosts" -o StrictHostKeyChecking=yes -p 2222 root@"$PEER" \
	hostname 2>&1 | sed 's/^/sshd says: /'
kill "$(cat "$W/sshd.pid")"
stop_opensm
EOF
ibemu_run --capture "$WORK/ipoib.pcap" --hosts host1,host3 -- bash "$WORK/wire.sh"
expect_rc 0 "the run"
expect_line "peer 10.1.0.5" "host3's ib0 has its port's address"
expect_line "route: dev ib0" "the route to it is ib0, not lo"
read -r _ n _ < <(grep "^ping: " "$WORK/out")
[ "${n:-0}" -ge 10 ] && pass "ping: $n answers over IPoIB" || fail "ping: ${n:-no} answers"
read -r _ _ n < <(grep "^xmit packets" "$WORK/out")
[ "${n:-0}" -ge 10 ] && pass "host1's port counted the pings it sent ($n packets)" ||
	fail "PortXmitPkts grew by ${n:-nothing}"
neigh=$(sed -n 's/^neigh: //p' "$WORK/out")
[ -n "$neigh" ] && grep -qx "peer mac: $neigh" "$WORK/out" &&
	pass "ARP learnt the peer: its MAC stands for its IPoIB address ($neigh)" ||
	fail "neighbour $neigh; $(grep 'peer mac' "$WORK/out")"
expect_match "^status: ipoib: ib0: QPN 0x[0-9a-f]{6}, broadcast group joined \\(MLID 0xc000\\), datagram mode, MTU 2044, [1-9][0-9]* sent, [1-9][0-9]* received, [0-9]+ dropped$" \
	"ctl status: host1's ib0, joined, its packets"
expect_match "^status: ipoib:   neighbour 80:[0-9a-f:]{8}:fe:80(:00){6}:00:02:c9:03:00:00:01:06 as $neigh, LID 6$" \
	"ctl status: the neighbour's IPoIB address (host3's QPN and GID) behind its MAC"
expect_match "^status:   ipoib: ib0: QPN 0x[0-9a-f]{6}, broadcast group joined" "and host3's, under its host"
read -r _ n _ < <(grep "^ping6: " "$WORK/out")
[ "${n:-0}" -ge 3 ] && pass "ping -6 to host3's link-local address: IPv6 over IPoIB" ||
	fail "ping6: ${n:-no} answers"
[ "$(sed -n 's/^neigh6: //p' "$WORK/out")" = "$neigh" ] &&
	pass "neighbour discovery learnt the same stand-in MAC" ||
	fail "IPv6 neighbour: $(grep neigh6 "$WORK/out")"
expect_line "cut: 0 received" "a cut cable stops ping"
expect_line "restored: answers" "and the cable back brings it back"
expect_line "dropped: 0 received" "a drop rule for data at leaf2 stops it"
expect_line "rule gone: answers" "and without the rule it answers"
expect_line "iperf3: status 0" "iperf3 (TCP) over IPoIB"
expect_match "^iperf3 receiver: [0-9.]+ Mbits/sec" "iperf3 says what it moved"
grep "^iperf3 receiver" "$WORK/out"

expect_line "sshd says: host3" "OpenSSH's client reaches host3's sshd over IPoIB"

ts() { tshark -r "$WORK/ipoib.pcap" -Y "$1" 2>/dev/null; }
ts arp >"$WORK/arp"
grep -q "fe80::2:c903:0:101 → GID: ff12:401b:ffff::ffff:ffff ARP .* Who has 10.1.0.5? Tell 10.1.0.3" \
	"$WORK/arp" && pass "tshark: the ARP request to the broadcast group" ||
	fail "no ARP request: $(head -3 "$WORK/arp")"
grep -Eq "10.1.0.5 is at 80[0-9a-f]{6}fe800000000000000002c90300000106" "$WORK/arp" &&
	pass "tshark: the reply with host3's 20-byte IPoIB address (QPN, GID)" ||
	fail "no ARP reply: $(head -3 "$WORK/arp")"
ts 'icmpv6.type == 135' | grep -q "fe80::2:c903:0:101 → ff02::1:ff00:106 .*Neighbor Solicitation for fe80::2:c903:0:106" &&
	pass "tshark: the neighbour solicitation to host3's solicited-node address" ||
	fail "no NS: $(ts icmpv6 | head -3)"
# Its option: 24 bytes, two of padding and host1's 20-byte address; the
# checksum right for the longer packet.
tshark -r "$WORK/ipoib.pcap" -Y 'icmpv6.type == 135 && ipv6.src == fe80::2:c903:0:101' \
	-T fields -e icmpv6.checksum.status -e icmpv6.opt.length -e icmpv6.opt.linkaddr 2>/dev/null |
	grep -Eq "^1	3	000080[0-9a-f]{6}fe800000000000000002c90300000101$" &&
	pass "tshark: its source link-layer option IPoIB's, the checksum right" ||
	fail "NS option: $(tshark -r "$WORK/ipoib.pcap" -Y 'icmpv6.type == 135' -T fields -e icmpv6.opt.length -e icmpv6.opt.linkaddr 2>&1 | head -2)"
[ "$(ts 'icmp.type == 0' | grep -c "10.1.0.5 → 10.1.0.3")" -ge 10 ] &&
	pass "tshark: the echo replies, IPv4 in IPoIB" || fail "echo replies: $(ts icmp | head -3)"
[ "$(ts 'tcp.port == 5201' | wc -l)" -ge 20 ] && pass "tshark: iperf3's TCP segments" ||
	fail "no TCP in the capture"
[ "$(ts 'tcp.port == 2222' | grep -c "10.1.0.3 → 10.1.0.5")" -ge 5 ] && pass "tshark: the SSH session, to host3" ||
	fail "no SSH in the capture"
finish
