#!/bin/bash
# Issue #51: IPoIB's connected mode (kernel/ipoib_cm.c). host1 and host3
# of a --hosts run, opensm the SM: /sys/class/net/ib0/mode says datagram,
# takes "connected" as ib_ipoib does (and refuses what is neither), and
# the interface's MTU becomes 65520; a 30,000-byte ping goes whole as one
# IPoIB message over an RC connection each way, made with CM REQ, REP and
# RTU through the fabric (tshark decodes them, the service ID IPoIB's);
# ctl status shows the connections; iperf3 moves TCP over them; a cut
# cable stops ping and the cable back brings it back (a new connection);
# "datagram" puts the MTU back and ping goes on over UD. And a P_Key
# child interface (opensm with a second partition, 0x8001): create_child
# makes ib0.8001 on both hosts, ping crosses it with the partition's
# P_Key in the BTH, delete_child takes it away.
. "$(dirname "$0")/lib.sh"
command -v ping >/dev/null && command -v iperf3 >/dev/null ||
	{ fail "ping or iperf3 is not installed (./setup.sh --test)"; finish; exit 1; }
export W="$WORK"

cat >"$WORK/parts.conf" <<'EOF'
Default=0x7fff, ipoib : ALL=full, SELF=full ;
Storage=0x0001, ipoib : ALL_CAS=full ;
EOF
cat >"$WORK/cm.sh" <<'EOF'
. "$INSIDE"
start_opensm -P "$W/parts.conf"
PEER=$(ssh host3 ip -4 -o addr show ib0 | awk '{print $4}' | cut -d/ -f1)
echo "mode before: $(cat /sys/class/net/ib0/mode)"
echo -n connected >/sys/class/net/ib0/mode 2>"$W/einval" || echo "no newline: refused"
echo connected >/sys/class/net/ib0/mode && echo "host1: connected"
ssh host3 "echo connected > /sys/class/net/ib0/mode" && echo "host3: connected"
echo "mode after: $(cat /sys/class/net/ib0/mode)"
echo "mtu: $(cat /sys/class/net/ib0/mtu)"
bytes() { perfquery -x | awk -F. '/^PortXmitData:/ {print $NF}'; }
b0=$(bytes)
# (-w: wait for the replies, however late, up to 20 s; it may send more)
ping -c 5 -i 0.05 -s 30000 -w 20 "$PEER" | grep -o "[0-9]* received" | sed 's/^/big ping: /'
echo "xmit words: $(( $(bytes) - b0 ))"
"$IBEMU" ctl status | grep "ipoib" | sed 's/^/status: /'

iperf3_to host3 "$PEER"

"$IBEMU" ctl link down host3/1 >/dev/null
ping -c 2 -W 1 -s 30000 "$PEER" | grep -o "[0-9]* received" | sed 's/^/cut: /'
"$IBEMU" ctl link up host3/1 >/dev/null
"$IBEMU" ctl wait active --timeout 30 >/dev/null
answers() { ping -c 1 -W 1 -s 30000 "$PEER" >/dev/null; }
wait_until answers
answers && echo "restored: answers" || echo "restored: no answer"

echo datagram >/sys/class/net/ib0/mode
ssh host3 "echo datagram > /sys/class/net/ib0/mode"
echo "datagram mtu: $(cat /sys/class/net/ib0/mtu)"
ping -c 3 -i 0.05 -w 20 "$PEER" | grep -o "[0-9]* received" | sed 's/^/datagram ping: /'
"$IBEMU" ctl status | grep "ipoib: ib0" | sed 's/^/after: /'

echo "create_child: $(stat -c %a /sys/class/net/ib0/create_child) $(cat /sys/class/net/ib0/create_child 2>&1 | sed 's/.*: //')"
echo 0x8001 >/sys/class/net/ib0/create_child && echo "child made"
echo 0x8001 >/sys/class/net/ib0/create_child 2>"$W/notuniq" || echo "again: refused"
ssh host3 "echo 0x8001 > /sys/class/net/ib0/create_child"
ip addr add 192.168.1.1/24 dev ib0.8001
ssh host3 ip addr add 192.168.1.2/24 dev ib0.8001
ip -br link show ib0.8001 | awk '{print "child: " $1 " " $2}'
ping -c 3 -i 0.05 -w 20 192.168.1.2 | grep -o "[0-9]* received" | sed 's/^/child ping: /'
"$IBEMU" ctl status | grep "ipoib: ib0.8001" | sed 's/^/child status: /'
echo 0x8001 >/sys/class/net/ib0/delete_child && echo "child deleted"
ip link show ib0.8001 >/dev/null 2>&1 || echo "child gone"
echo 0x8001 >/sys/class/net/ib0/delete_child 2>"$W/nodev" || echo "delete again: refused"
stop_opensm
EOF
ibemu_run --capture "$WORK/cm.pcap" --hosts host1,host3 -- bash "$WORK/cm.sh"
expect_rc 0 "the run"
expect_line "mode before: datagram" "an interface starts in datagram mode, as ib_ipoib's"
expect_line "no newline: refused" "a write that is not \"connected\\n\" or \"datagram\\n\" is refused"
grep -q "Invalid argument" "$WORK/einval" && pass "with EINVAL, as ipoib_set_mode" ||
	fail "refused with: $(cat "$WORK/einval")"
expect_line "host1: connected" "echo connected > /sys/class/net/ib0/mode"
expect_line "host3: connected" "and on host3"
expect_line "mode after: connected" "the mode file says so"
expect_line "mtu: 65520" "connected mode's MTU, 65520"
read -r _ _ n _ < <(grep "^big ping" "$WORK/out")
[ "${n:-0}" -ge 5 ] && pass "a 30,000-byte ping answers, unfragmented ($n replies)" ||
	fail "big ping: ${n:-no} replies"
read -r _ _ n < <(grep "^xmit words" "$WORK/out")
[ "${n:-0}" -ge $((5 * 30000 / 4)) ] && pass "PortXmitData counted them ($n words)" ||
	fail "PortXmitData grew by ${n:-nothing} words"
expect_match "^status: ipoib: ib0: QPN 0x[0-9a-f]{6}, broadcast group joined \\(MLID 0xc000\\), connected mode, MTU 65520, [1-9][0-9]* sent" \
	"ctl status: connected mode"
expect_match "^status: ipoib:   connection out: QP 0x[0-9a-f]{6} to LID 6 QP 0x[0-9a-f]{6}, up, [1-9][0-9]* messages sent$" \
	"ctl status: host1's connection to host3"
expect_match "^status: ipoib:   connection in: QP 0x[0-9a-f]{6} from LID 6 QP 0x[0-9a-f]{6}, up, [1-9][0-9]* messages received$" \
	"and host3's to host1 (the replies)"
expect_match "^status:   ipoib:   connection in: QP 0x[0-9a-f]{6} from LID 1 " "host3 took host1's"
expect_line "iperf3: status 0" "iperf3 (TCP) over connected mode"
expect_match "^iperf3 receiver: [0-9.]+ Mbits/sec" "iperf3 says what it moved"
grep "^iperf3 receiver" "$WORK/out"
expect_line "cut: 0 received" "a cut cable stops it"
expect_line "restored: answers" "and the cable back brings it back"
expect_line "datagram mtu: 2044" "datagram mode puts IPoIB's MTU back"
read -r _ _ n _ < <(grep "^datagram ping" "$WORK/out")
[ "${n:-0}" -ge 3 ] && pass "and ping goes on over UD ($n replies)" || fail "datagram ping: ${n:-no} replies"
expect_match "^after: ipoib: ib0: .* datagram mode, MTU 2044" "ctl status: datagram mode again"
expect_line "create_child: 200 Permission denied" "create_child is write-only (0200), a read EACCES, as sysfs's"
expect_line "child made" "echo 0x8001 > /sys/class/net/ib0/create_child"
expect_line "again: refused" "the same P_Key again is refused"
grep -q "Name not unique on network" "$WORK/notuniq" && pass "with ENOTUNIQ, as ipoib_vlan_add" ||
	fail "refused with: $(cat "$WORK/notuniq")"
expect_line "child: ib0.8001 UNKNOWN" "ib0.8001 is an interface of host1, up"
read -r _ _ n _ < <(grep "^child ping" "$WORK/out")
[ "${n:-0}" -ge 3 ] && pass "ping over the partition's interfaces ($n replies)" ||
	fail "child ping: ${n:-no} replies"
expect_match "^child status: ipoib: ib0.8001: QPN 0x[0-9a-f]{6}, P_Key 0x8001, broadcast group joined \\(MLID 0xc[0-9a-f]{3}\\)" \
	"ctl status: the child, its P_Key, its own broadcast group"
expect_line "child deleted" "echo 0x8001 > delete_child"
expect_line "child gone" "and ib0.8001 is gone"
expect_line "delete again: refused" "deleting it again is refused"
grep -q "No such device" "$WORK/nodev" && pass "with ENODEV, as ipoib_vlan_delete" ||
	fail "refused with: $(cat "$WORK/nodev")"

ts() { tshark -r "$WORK/cm.pcap" -Y "$1" 2>/dev/null; }
tshark -r "$WORK/cm.pcap" -Y 'infiniband.cm.req' -T fields -e infiniband.cm.req.serviceid \
	-e infiniband.cm.req.retrcount 2>/dev/null >"$WORK/req"
grep -Eq "^0x10000000000000[0-9a-f]{2}	0x00$" "$WORK/req" &&
	pass "tshark: a CM REQ to IPoIB's service ID (RFC 4755), retry count 0" ||
	fail "no REQ: $(head -3 "$WORK/req")"
ts 'infiniband' | grep -q "CM: ConnectReply" && ts 'infiniband' | grep -q "CM: ReadyToUse" &&
	pass "tshark: the REP and the RTU" || fail "no REP or RTU"
# Each 30,028-byte datagram a message of RC SENDs at the path MTU, the
# first of which tshark decodes as the IP it starts.
[ "$(ts 'icmp.type == 0 && infiniband.bth.opcode == 0' | grep -c "10.1.0.5 → 10.1.0.3")" -ge 5 ] &&
	pass "tshark: the echo replies, IPv4 in IPoIB over RC SENDs" ||
	fail "replies: $(ts icmp | head -3)"
[ "$(ts 'infiniband.bth.opcode == 2' | wc -l)" -ge 10 ] && pass "tshark: each message's last SEND" ||
	fail "no SEND LAST"
ts 'infiniband.bth.opcode == 17' | grep -q "RC Acknowledge" && pass "tshark: the RC ACKs" ||
	fail "no ACKs"
[ "$(ts 'icmp.type == 0 && infiniband.bth.p_key == 0x8001' | grep -c "192.168.1.2 → 192.168.1.1")" -ge 3 ] &&
	pass "tshark: the child's echo replies carry P_Key 0x8001" ||
	fail "child replies: $(ts 'ip.addr == 192.168.1.1' | head -3)"
ts 'infiniband.bth.p_key == 0x8001' | grep -q "ARP .*Who has 192.168.1.2" &&
	pass "tshark: the child's ARP to its partition's broadcast group" || fail "no child ARP"
finish
