#!/bin/bash
# Packet capture, read back by tshark's own InfiniBand dissector (Debian's
# tshark): one smpquery is a SubnGet(NodeInfo) and its GetResp from the
# node asked; an opensm sweep asks NodeInfo of every node of the fabric; an
# SA answer is the RMPP segments a link would carry (numbered 1..N, First
# and Last flags, PayloadLength as the kernel writes it); PMA queries and
# verbs data packets decode; a port filter keeps only that cable's packets;
# the size cap stops the file whole, said once; bad requests are refused.
. "$(dirname "$0")/lib.sh"
command -v tshark >/dev/null || { fail "tshark is not installed (./setup.sh --test)"; finish; exit 1; }
ts() { tshark -r "$@" 2>/dev/null; }

# One smpquery by directed route to leaf1.
ibemu_run --capture "$WORK/one.pcap" -- smpquery -D nodeinfo 0,1
expect_rc 0 "smpquery inside ibemu run --capture"
ts "$WORK/one.pcap" >"$WORK/out"
[ "$(wc -l <"$WORK/out")" -eq 2 ] && pass "one smpquery: two packets on the wire" || fail "not two packets"
expect_match "1 .*LID: 65535 → LID: 65535 .*UD Send Only QP=0x000000 SubnGet\\(NodeInfo\\)" "the Get, directed route, to QP0"
expect_match "2 .*SubnGetResp\\(NodeInfo\\)" "and its GetResp"
ts "$WORK/one.pcap" -Y "infiniband.mad.method == 0x81" -T fields -e infiniband.nodeinfo.nodeguid \
	-e infiniband.lrh.vl -e infiniband.lrh.pktlen >"$WORK/out"
expect_line "0x0002c90200000100	0x0f	72" "from leaf1's GUID, on VL15, 72 words (LRH to ICRC)"

# An opensm sweep, an SA table and a PMA query from the second CA (so they
# cross cables), and a few UD data packets.
cat >"$WORK/in.sh" <<'IN'
. "$INSIDE"
ibemu ctl capture start "$W/sweep.pcap"
ibemu ctl capture start "$W/again.pcap"
start_opensm
saquery -C ibemu1 -p | grep -c "PathRecord dump" | sed 's/^/paths=/'
perfquery -C ibemu1 1 1 >/dev/null && echo perf-ok
if [ -e "$(dirname "$IBEMU")/verbs/libibemu-rdmav34.so" ]; then
	pingpong 18621 ibv_ud_pingpong -n 5
	# RC atomics and their acknowledgements (AtomicETH, AtomicAckETH).
	"$VERBS_RC" ibemu0 ibemu1 ops >/dev/null
fi
ibemu ctl capture stop
ibemu ctl capture stop
ibemu ctl nodes | awk '{ print $3 }' >"$W/guids"
IN
W=$WORK VERBS_RC="$TOOLS/verbs_rc" ibemu_run -a host1 -a host3 -- bash "$WORK/in.sh"
cat "$WORK/log" >>"$WORK/out"
expect_match "^capture to $WORK/sweep.pcap: 0 packets" "ctl capture start"
expect_line "error: a capture to $WORK/sweep.pcap is running: \`capture stop\` first" "a second is refused"
expect_line "error: no capture is running" "stop twice: the second says there is none"
paths=$(sed -n 's/^paths=//p' "$WORK/out")
ts "$WORK/sweep.pcap" -Y "infiniband.mad.method == 0x81 && infiniband.mad.attributeid == 0x0011" \
	-T fields -e infiniband.nodeinfo.nodeguid | sort -u >"$WORK/seen"
sort -u "$WORK/guids" >"$WORK/want"
[ -s "$WORK/want" ] && cmp -s "$WORK/seen" "$WORK/want" &&
	pass "the sweep asked NodeInfo of every node ($(wc -l <"$WORK/want") GUIDs)" ||
	{ diff "$WORK/want" "$WORK/seen" >"$WORK/out"; fail "NodeInfo answers are not the fabric's nodes"; }
ts "$WORK/sweep.pcap" -Y "infiniband.mad.method == 0x92" -T fields -e infiniband.rmpp.segmentnumber \
	-e infiniband.rmpp.rmppflags -e infiniband.rmpp.payloadlength >"$WORK/out"
# $paths PathRecords of 64 bytes, 200 data bytes and the 20-byte SA header a segment.
segs=$(( (paths * 64 + 199) / 200 ))
pad=$(( segs * 200 - paths * 64 ))
[ "$paths" -gt 0 ] && [ "$(wc -l <"$WORK/out")" -eq "$segs" ] &&
	pass "saquery -p's $paths PathRecords are $segs RMPP segments" || fail "want $segs segments for $paths PathRecords"
expect_line "$(printf '0x%08x\t0x03\t0x%08x' 1 $((segs * 220 - pad)))" "the first: Active|First, the whole PayloadLength"
expect_line "$(printf '0x%08x\t0x05\t0x%08x' "$segs" $((220 - pad)))" "the last: Active|Last, its own length"
[ "$(grep -c $'\t0x01\t0x00000000$' "$WORK/out")" -eq $((segs - 2)) ] && pass "the middle ones: Active, 0" ||
	fail "middle segments wrong"
ts "$WORK/sweep.pcap" >"$WORK/out"
expect_match "LID: 6 → LID: 1 .* PERF \\(PortCounters\\)" "perfquery's PortCounters Get from LID 6"
if [ -e "$(dirname "$IBEMU")/verbs/libibemu-rdmav34.so" ]; then
	[ "$(grep -c "UD Send Only QP=0x0000[4-9a-f][0-9a-f]" "$WORK/out")" -ge 10 ] &&
		pass "ibv_ud_pingpong's data packets decode as UD SEND Only to QP 0x40+" ||
		fail "no UD data packets"
	expect_match "RC Compare Swap QP=" "an RC compare-and-swap decodes"
	expect_match "RC Fetch Add QP=" "an RC fetch-and-add decodes"
	expect_match "RC Atomic Acknowledge QP=" "and their atomic acknowledgements"
	ts "$WORK/sweep.pcap" -Y "infiniband.bth.opcode == 20" -T fields \
		-e infiniband.atomiceth.swapdt >"$WORK/out"
	expect_line "1" "the fetch-and-add's AtomicETH carries its addend (1)"
fi

# One cable: host3's. A query of host3 crosses it (both ways), one of leaf1
# does not.
cat >"$WORK/in.sh" <<'IN'
ibemu ctl capture start cable.pcap --node host3 --port 1 >/dev/null
smpquery -D nodedesc 0,1 >/dev/null; smpquery -D nodedesc 0,1,7,1 >/dev/null
ibemu ctl capture stop
ibemu ctl capture start x.pcap --port 1; ibemu ctl capture start x.pcap --node host3 --port 2
ibemu ctl capture start /nonexistent/x.pcap; ibemu ctl capture start x.pcap --max-mb 0
true
IN
(cd "$WORK" && ibemu_run -- bash "$WORK/in.sh")
cat "$WORK/log" >>"$WORK/out"
expect_line "capture ended, $WORK/cable.pcap: 4 packets" "ctl capture start FILE (relative) --node host3 --port 1"
expect_line "error: --port needs --node" "--port alone is refused"
expect_line "error: host3 has no port 2" "a port the node lacks"
expect_line "error: cannot write /nonexistent/x.pcap: No such file or directory" "an unwritable file"
expect_line "error: --max-mb is 1 to 1048576, not 0" "a cap of 0"
# smpquery nodedesc asks NodeInfo, then NodeDescription.
ts "$WORK/cable.pcap" -T fields -e infiniband.mad.method -e infiniband.mad.attributeid \
	-e infiniband.smpdirected.hopcount >"$WORK/seen"
printf '0x01\t0x0011\t0x03\n0x81\t0x0011\t0x03\n0x01\t0x0010\t0x03\n0x81\t0x0010\t0x03\n' >"$WORK/want"
cmp -s "$WORK/seen" "$WORK/want" && pass "only the query of host3 (three hops), both ways" ||
	{ cp "$WORK/seen" "$WORK/out"; fail "the cable filter"; }

# The cap: 1 MiB, then nothing more, said once; the file reads whole.
ibemu_run --capture "$WORK/cap.pcap" -- sh -c 'ibemu ctl capture stop >/dev/null
	ibemu ctl capture start '"$WORK/cap.pcap"' --max-mb 1 >/dev/null
	for i in $(seq 40); do ibnetdiscover >/dev/null; done; ibemu ctl capture'
expect_line "(its size cap stopped it)" "a capture stops at its --max-mb"
size=$(stat -c %s "$WORK/cap.pcap")
[ "$size" -le 1048576 ] && [ "$size" -gt 1000000 ] && pass "the file is just under 1 MiB ($size bytes)" ||
	fail "file is $size bytes"
n=$(ts "$WORK/cap.pcap" | wc -l)
tshark -r "$WORK/cap.pcap" >/dev/null 2>"$WORK/out" && ! grep -qi "cut short\|appears to have been" "$WORK/out" &&
	pass "and tshark reads all $n packets whole" || fail "tshark: truncated capture"
[ "$(grep -c "reached its 1 MiB cap" "$WORK/log")" -eq 1 ] && pass "said once in the log" || fail "cap not logged once"

# Issue #35 item 12: a device is no capture file; a file there is
# replaced, and the answer says so.
ibemu_run -- sh -c 'ibemu ctl capture start /dev/full; echo "rc $?"
	ibemu ctl capture start '"$WORK/cap.pcap"'; ibemu ctl capture stop >/dev/null'
cat "$WORK/log" >>"$WORK/out"
expect_line "error: cannot write /dev/full: not a regular file" "capture start /dev/full is refused"
expect_match "^capture: replacing the file of [0-9]+ bytes that was at $WORK/cap.pcap$" \
	"capture start on a file there says it replaces it"

# A full disk: the file is cut back to its last whole packet, and ctl
# says why it stopped, with the counts the file holds. A small tmpfs in
# a mount namespace of the test's own (root only).
if [ "$(id -u)" = 0 ]; then
	mkdir "$WORK/small"
	unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs "$0/small" &&
		timeout 120 "$1" run -v --capture "$0/small/full.pcap" -- sh -c "
			for i in \$(seq 10); do ibnetdiscover >/dev/null; done; ibemu ctl capture stop
			cp \"$0/small/full.pcap\" \"$0/full.pcap\""' "$WORK" "$IBEMU" >"$WORK/out" 2>"$WORK/log"
	expect_match "^capture ended, $WORK/small/full.pcap: [0-9]+ packets, [0-9]+ bytes \(No space left on device stopped it\)$" \
		"a full disk: ctl says the capture stopped for it"
	said=$(sed -n 's/^capture ended, .*: \([0-9]*\) packets, \([0-9]*\) bytes.*/\1 \2/p' "$WORK/out")
	n=$(tshark -r "$WORK/full.pcap" 2>"$WORK/tshark-err" | wc -l)
	bytes=$(stat -c %s "$WORK/full.pcap")
	[ "$said" = "$n $bytes" ] && pass "the file holds the $n packets ($bytes bytes) ctl said" ||
		fail "ctl said '$said', the file holds $n packets, $bytes bytes"
	! grep -qi "cut short\|appears to have been" "$WORK/tshark-err" && pass "and tshark reads it whole" ||
		fail "tshark: $(cat "$WORK/tshark-err")"
	grep -q "capture $WORK/small/full.pcap stopped: No space left on device; it holds $n whole packets" "$WORK/log" &&
		pass "the log says why" || fail "no log line for the full disk"
else
	echo "not run: the full-disk check mounts a tmpfs (needs root)"
fi
finish
