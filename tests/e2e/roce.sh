#!/bin/bash
# RoCE ports (docs/roce.md; issue #50, first part): `ibemu run --roce`
# makes every CA port an Ethernet one, Active with no SM. ibv_devinfo and
# sysfs show it as Soft-RoCE's do (link layer Ethernet, LID 0, the GID
# table from the interface's MAC and address in both RoCE types, the
# netdev of each GID); `ip` shows the Ethernet interfaces. Then traffic
# between host1 and host3 across both switches: ibv_rc_pingpong with a
# RoCE v2 GID (-g 3, data checked), and UC, UD, SRQ and XRC pingpongs
# so, perftest's ib_send_bw -x 3, rping, rstream (rsockets) and udaddy
# through the RDMA CM (no SA: the route is the addresses'),
# mckey's IP multicast (no SA either), ib_write_bw -R; the verbs refuse
# an address without a GRH on a RoCE port; libfabric's verbs provider
# (fi_info, fi_pingpong -e rdm). The run's capture, read by
# tshark: RoCE v2 frames (Ethernet, IPv4, UDP 4791, good FCS and
# checksums), RoCE v1 (GID 0) and v2 over IPv6 (GID 1) where the GID
# index says so, mckey's group's frames to its multicast MAC, and
# udaddy's replies, whose address handle its server makes from the
# completion, as RoCE v2 too.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/roce.sh" <<'SCRIPT'
set -u
. "$INSIDE"
P=/sys/class/infiniband/ibemu1/ports/1
ibv_devinfo -v -d ibemu1 | grep -E "link_layer|port_lid|sm_lid|state:|active_mtu|GID\[ *[0-3]\]" |
	tr -s ' \t' ' ' | sed 's/^ */devinfo: /'
for i in 0 1 2 3 4; do
	echo "gid $i: $(cat $P/gids/$i) $(cat $P/gid_attrs/types/$i 2>/dev/null) $(cat $P/gid_attrs/ndevs/$i 2>/dev/null)"
done
echo "sysfs: $(cat $P/link_layer) lid $(cat $P/lid) sm_lid $(cat $P/sm_lid)"
ip -br link | awk '$1 ~ /^eth/ { print "link:", $1, $3 }'
ip -br -4 addr | awk '$1 ~ /^eth/ { print "addr:", $1, $3 }'
ip -o link show eth1 | grep -o 'mtu [0-9]*' | sed 's/^/eth1 /'
# Each interface up with its carrier (LOWER_UP), as its port is Active.
echo "carrier: $(cat /sys/class/net/eth[0-9]/carrier | tr -d '\n')"

# The verbs: ibv_rc_pingpong over RoCE v2 (GID 3), data checked.
port=18600
pp() {
	port=$((port + 1))
	timeout 60 "$@" -d ibemu1 -p $port >"$W/pps.out" 2>&1 &
	local s=$!
	wait_listen $port
	timeout 60 "$@" -d ibemu0 -p $port localhost >"$W/ppc.out" 2>&1
	local c=$?
	wait $s
	echo "$1 $2 $3 | client $c server $? | $(grep -c 'remote address: LID 0x0000.*GID ::ffff:10.1.0.5' "$W/ppc.out")"
}
pp ibv_rc_pingpong -g 3 -n 100 -c
# RoCE v1 (GID 0) and RoCE v2 over IPv6 (GID 1: the link-local GID).
pp ibv_rc_pingpong -g 0 -n 5 -c
pp ibv_rc_pingpong -g 1 -n 5 -c
# UC, UD, an SRQ (-c: data checked) and XRC (ibv_xsrq_pingpong, whose
# -c is a count of clients) over RoCE v2 too.
pp ibv_uc_pingpong -g 3 -n 20 -c
pp ibv_ud_pingpong -g 3 -n 20 -c
pp ibv_srq_pingpong -g 3 -n 20 -c
pp ibv_xsrq_pingpong -g 3 -n 20
echo "xsrq: $(grep -c '^success' "$W/ppc.out") $(grep -c 'remote: LID 0000.*GID ::ffff:10.1.0.5' "$W/ppc.out")"
port=$((port + 1))
timeout 60 ib_send_bw -F -d ibemu1 -x 3 -n 200 -p $port >"$W/bws.out" 2>&1 &
s=$!
wait_listen $port
timeout 60 ib_send_bw -F -d ibemu0 -x 3 -n 200 -p $port localhost >"$W/bwc.out" 2>&1
c=$?
wait $s
echo "ib_send_bw -x 3 | client $c server $? | $(grep -E '^ +65536 +200 ' "$W/bwc.out" | awk '{ print $1, $2 }')"

# The RDMA CM: no SA, the route from the addresses.
timeout 60 rping -s -a 10.1.0.5 -C 5 -v >"$W/rps.out" 2>&1 &
s=$!
until ibemu ctl status | grep -q "listening on 10.1.0.5"; do timeout 0.1 tail -f /dev/null; done
# The client's pings, not its status: rping's own exit race
# (tests/e2e/roce-addr.sh says which).
timeout 60 rping -c -a 10.1.0.5 -C 5 -v >"$W/rpc.out" 2>&1
wait $s
echo "rping | server $? | $(grep -c '^ping data: rdma-ping-' "$W/rpc.out")"
# rsockets over the RDMA CM: rstream's data, 100 transfers of 4 KiB.
timeout 60 rstream -b 10.1.0.5 -S 4096 -C 100 >"$W/rss.out" 2>&1 &
s=$!
until ibemu ctl status | grep -q "listening on 10.1.0.5"; do timeout 0.1 tail -f /dev/null; done
timeout 60 rstream -s 10.1.0.5 -S 4096 -C 100 >"$W/rsc.out" 2>&1
c=$?
wait $s
echo "rstream | client $c server $? | $(awk '$2 == "4k" { print $2, $3, $5 }' "$W/rsc.out")"
timeout 60 udaddy -b 10.1.0.5 >"$W/uds.out" 2>&1 &
s=$!
until ibemu ctl status | grep -q "listening on 10.1.0.5"; do timeout 0.1 tail -f /dev/null; done
timeout 60 udaddy -s 10.1.0.5 -b 10.1.0.3 >"$W/udc.out" 2>&1
c=$?
wait $s
echo "udaddy | client $c server $?"
# IP multicast: mckey's group, with no SA (the MGID the address itself).
timeout 30 stdbuf -oL mckey -m 224.1.2.3 -b 10.1.0.5 -C 20 >"$W/mr.out" 2>&1 &
s=$!
wait_log "$W/mr.out" "receiving data transfers"
timeout 30 mckey -m 224.1.2.3 -b 10.1.0.3 -s -C 20 >"$W/ms.out" 2>&1
c=$?
wait $s
echo "mckey | sender $c receiver $? | $(grep -o 'joined dgid: [^ ]* mlid 0x[0-9a-f]*' "$W/ms.out") | $(grep -c 'data transfers complete' "$W/mr.out")"
# perftest -R (inside.sh's perftest_cm): its REQs wait 100 ms at host3,
# so that its server has listened again when they come.
rule=$(ibemu ctl fault add delay 100 --class cm --attr 0x10 --node host3 | awk '{ print $2 }')
perftest_cm wbw 19001 ibemu1 ibemu0 10.1.0.5 ib_write_bw -n 200
ibemu ctl fault list | awk -v r="$rule" '$1 == r { print "REQs delayed:", ($NF > 0) }'
ibemu ctl fault del "$rule" >/dev/null
echo "ib_write_bw -R | client $pt_client server $pt_server | $(grep -E '^ +65536 +200 ' "$W/wbw.out" | awk '{ print $1, $2 }')"
# A link flap: down, then Active again as soon as it is back (no SM),
# and it carries traffic again.
ibemu ctl link down host3/1 >/dev/null
echo "pulled: $(cat /sys/class/infiniband/ibemu1/ports/1/state)"
ibemu ctl link up host3/1 >/dev/null
echo "back: $(cat /sys/class/infiniband/ibemu1/ports/1/state)"
pp ibv_rc_pingpong -g 3 -n 5 -c
# An address without a GRH is no address on a RoCE port.
port=$((port + 1))
timeout 30 ibv_rc_pingpong -d ibemu1 -n 5 -p $port >"$W/nogrh-s.out" 2>&1 &
s=$!
wait_listen $port
timeout 30 ibv_rc_pingpong -d ibemu0 -n 5 -p $port localhost >"$W/nogrh-c.out" 2>&1
echo "without -g: client $?"
wait $s
grep -m1 -o "Failed to modify QP to RTR" "$W/nogrh-s.out" "$W/nogrh-c.out" | head -1 | sed 's/.*:/without -g: /'
# libfabric's verbs provider: the RoCE devices by their interfaces'
# addresses (MSG endpoints, verbs;ofi_rxm at host3's), and fi_pingpong's
# RDM endpoints (verbs;ofi_rxd on UD QPs, GRH on every packet) moving
# verified data, 64 KiB in 1 KiB datagrams (every size, to 6 MiB, takes
# over a minute through the FUSE files of the sanitizer pass: ipoib.sh
# runs them on InfiniBand); its control connection is TCP.
fi_info -p verbs -s 10.1.0.5 -t FI_EP_MSG | grep -E "domain|type" | paste - - | sed 's/[[:space:]]\+/ /g; s/^/fi_info:/'
echo "fi_info rxm: $(fi_info -p 'verbs;ofi_rxm' -s 10.1.0.5 | awk '/domain:/ { print $2 }' | sort -u)"
fi_pingpong_pair fi 10.1.0.5 -p verbs -e rdm -c -I 10 -S 65536
echo "fi_pingpong -e rdm | client $fi_client server $fi_server | $(grep -cE '^64k +10 +=10 ' "$W/fi-c.out")"
exit 0
SCRIPT
ibemu_run --roce -a host1 -a host3 --capture "$WORK/roce.pcap" -- env W="$WORK" bash "$WORK/roce.sh"
expect_rc 0 "the RoCE run"
expect_line "devinfo: link_layer: Ethernet" "ibv_devinfo: link layer Ethernet"
expect_line "devinfo: state: PORT_ACTIVE (4)" "the port Active with no SM"
expect_line "devinfo: port_lid: 0" "no LID"
expect_line "devinfo: sm_lid: 0" "no SM LID"
expect_line "devinfo: active_mtu: 1024 (3)" "the IB MTU of a 1500-byte interface"
expect_line "devinfo: GID[ 3]: ::ffff:10.1.0.5, RoCE v2" "ibv_devinfo: GID 3, IPv4-mapped, RoCE v2"
expect_line "devinfo: GID[ 0]: fe80:0000:0000:0000:0202:c9ff:fe00:0106, RoCE v1" \
	"ibv_devinfo: GID 0, the MAC's link-local, RoCE v1"
expect_line "gid 1: fe80:0000:0000:0000:0202:c9ff:fe00:0106 RoCE v2 eth2" "sysfs: GID 1, its type and netdev"
expect_line "gid 2: 0000:0000:0000:0000:0000:ffff:0a01:0005 IB/RoCE v1 eth2" "sysfs: GID 2 (v1)"
expect_line "gid 3: 0000:0000:0000:0000:0000:ffff:0a01:0005 RoCE v2 eth2" "sysfs: GID 3 (v2)"
expect_line "gid 4: 0000:0000:0000:0000:0000:0000:0000:0000" "sysfs: no GID past them"
expect_line "sysfs: Ethernet lid 0x0 sm_lid 0x0" "sysfs: link_layer, lid, sm_lid"
expect_line "link: eth2 00:02:c9:00:01:06" "ip: eth2 (host3 port 1) with the port's MAC"
expect_line "addr: eth2 10.1.0.5/16" "ip: eth2 with the port's address"
expect_line "eth1 mtu 1500" "ip: an Ethernet MTU"
expect_line "carrier: 111" "ip: every RoCE interface has its carrier (on a kernel without dummy too)"
expect_line "ibv_rc_pingpong -g 3 | client 0 server 0 | 1" "ibv_rc_pingpong -g 3 over RoCE v2 (-c: data checked)"
expect_line "ibv_uc_pingpong -g 3 | client 0 server 0 | 1" "ibv_uc_pingpong -g 3: UC over RoCE v2, data checked"
expect_line "ibv_ud_pingpong -g 3 | client 0 server 0 | 1" "ibv_ud_pingpong -g 3: UD, data checked"
expect_line "ibv_srq_pingpong -g 3 | client 0 server 0 | 16" "ibv_srq_pingpong -g 3: 16 QPs on an SRQ, data checked"
expect_line "ibv_xsrq_pingpong -g 3 | client 0 server 0 | 0" "ibv_xsrq_pingpong -g 3: XRC over RoCE v2..."
expect_line "xsrq: 1 1" "... its client says success, its peer by its RoCE v2 GID"
expect_line "rstream | client 0 server 0 | 4k 100 800k" "rstream: rsockets over the RDMA CM on RoCE"
expect_line "ib_send_bw -x 3 | client 0 server 0 | 65536 200" "ib_send_bw -x 3 (RoCE v2 GID)"
expect_line "rping | server 0 | 5" "rping through the RDMA CM with no SA: 5 pings"
expect_line "udaddy | client 0 server 0" "udaddy: UD through SIDR on RoCE"
expect_line "ib_write_bw -R | client 0 server 0 | 65536 200" "ib_write_bw -R (RDMA CM)"
expect_line "REQs delayed: 1" "a fault rule delays RoCE's CM REQs too"
expect_line "mckey | sender 0 receiver 0 | joined dgid: ::ffff:224.1.2.3 mlid 0x0 | 1" \
	"mckey: an IP multicast group with no SA, all 20 received"
expect_match "^without -g: client [1-9]" "ibv_rc_pingpong without a GID fails on RoCE..."
expect_line "without -g: Failed to modify QP to RTR" "... at RTR: an address needs a GRH there"
expect_line "fi_info: domain: ibemu1 type: FI_EP_MSG" "libfabric's verbs provider: a MSG endpoint at host3's address"
expect_line "fi_info rxm: ibemu1" "verbs;ofi_rxm at 10.1.0.5 is host3's HCA"
expect_line "fi_pingpong -e rdm | client 0 server 0 | 1" \
	"fi_pingpong over RDM endpoints (verbs;ofi_rxd): 64 KiB, 10 round trips, data checked"
expect_line "pulled: 1: DOWN" "a pulled cable: the RoCE port Down"
expect_line "back: 4: ACTIVE" "plugged back: Active at once, no SM"
[ "$(grep -c "^ibv_rc_pingpong -g 3 | client 0 server 0 | 1" "$WORK/out")" -eq 2 ] &&
	pass "and ibv_rc_pingpong -g 3 runs again after the flap" || fail "no pingpong after the flap"

# The capture: RoCE v2 frames, as Wireshark decodes them.
ts() { tshark -r "$WORK/roce.pcap" -o eth.check_fcs:TRUE -o ip.check_checksum:TRUE "$@" 2>/dev/null; }
# frames -ge|-eq N WHAT FILTER: the capture has N (or more) frames FILTER takes
frames() {
	local n
	n=$(ts -Y "$4" | wc -l)
	[ "$n" "$1" "$2" ] && pass "capture: $3: $n" || fail "capture: $3: $n frames, want $1 $2"
}
frames -ge 100 "ibv_rc_pingpong's sends as RoCE v2 (Ethernet, IPv4, UDP 4791)" \
	'eth.src == 00:02:c9:00:01:01 && eth.dst == 00:02:c9:00:01:06 && ip.src == 10.1.0.3 &&
	ip.dst == 10.1.0.5 && udp.dstport == 4791 && udp.srcport >= 0xc000 && infiniband.bth.opcode <= 4'
frames -ge 1 "udaddy's SIDR REQ to QP1 over RoCE v2" \
	'ip.src == 10.1.0.3 && udp.dstport == 4791 && infiniband.bth.destqp == 1 &&
	infiniband.mad.attributeid == 0x0017'
frames -ge 10 "udaddy's UD sends (with immediate) over RoCE v2" \
	'ip.src == 10.1.0.3 && ip.dst == 10.1.0.5 && infiniband.bth.opcode == 0x65'
frames -ge 20 "ibv_rc_pingpong -g 0 as RoCE v1 (EtherType 0x8915, GRH)" \
	'eth.type == 0x8915 && infiniband.grh.sgid == fe80::202:c9ff:fe00:101 && infiniband.bth.opcode <= 4'
frames -ge 20 "ibv_rc_pingpong -g 1 as RoCE v2 over IPv6" \
	'ipv6.src == fe80::202:c9ff:fe00:101 && ipv6.nxt == 17 && udp.dstport == 4791 && infiniband.bth.opcode <= 4'
# Every frame one of those, none an InfiniBand one, every FCS and IPv4
# checksum right; a UD reply (udaddy's server answers what it got, its
# address handle from the completion: ibv_create_ah_from_wc) goes back
# as RoCE v2, as it came.
[ "$(ts | wc -l)" -gt 0 ] || fail "capture: no frames"
frames -eq 0 "frames not RoCE, or with a bad FCS or checksum" \
	'erf.types.type != 2 || eth.fcs.status == 0 || ip.checksum.status == 0 ||
	!(eth.type == 0x8915 || ip.ttl > 0 || ipv6.nxt == 17)'
frames -eq 20 "mckey's sends to 224.1.2.3 (MAC 01:00:5e:01:02:03), once each" \
	'eth.dst == 01:00:5e:01:02:03 && ip.dst == 224.1.2.3 && infiniband.bth.destqp == 0xffffff'
frames -ge 10 "udaddy's replies (ibv_create_ah_from_wc) as RoCE v2" \
	'ip.src == 10.1.0.5 && ip.dst == 10.1.0.3 && infiniband.bth.opcode == 0x65'
finish
