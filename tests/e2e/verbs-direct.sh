#!/bin/bash
# The verbs direct path (docs/verbs.md "The direct path"): between two
# attached CAs two switch hops apart (host1 = ibemu0, host3 = ibemu1),
# packets go from one context's memory into the other's inbox past the
# daemon, and the fabric stays the authority: the PMA counters of the
# ports on the way count them exactly; a capture, a fault rule or a link
# taken down in the middle of a stream takes the short way back at once
# and sees, drops or stops what follows, with nothing lost or reordered
# (every byte checked in order); between the hosts of `ibemu run --hosts`
# too; IBEMU_DIRECT=0 keeps to the daemon.
. "$(dirname "$0")/lib.sh"
export IBEMU W="$WORK" RC_TOOL="$TOOLS/verbs_rc"
unset IBEMU_FAST_PATH	# the direct path stands on the fast path (the sanitizer pass turns it off)

cat >"$WORK/direct.sh" <<'SCRIPT'
set -u
. "$INSIDE"
direct() { "$IBEMU" ctl status --json | sed -n 's/.*"verbs_direct_packets" *: *\([0-9]*\).*/\1/p'; }
grown() { [ "$(direct)" -gt "$1" ]; }
L2=$(ibswitches | awk '/leaf switch 2/ {for (i = 1; i <= NF; i++) if ($i == "lid") print $(i + 1)}')
L3=$(ibstat ibemu1 1 | awk '/Base lid/ {print $3}')
count() { perfquery -x "$L2" 1 | awk -F. '/^'"$1"':/ {print $NF}'; }

ibv_rc_pingpong -n 1000 -c -p 18611 -d ibemu1 >"$W/srv" 2>&1 &
s=$!
wait_listen 18611
ibv_rc_pingpong -n 1000 -c -p 18611 -d ibemu0 localhost >"$W/cli" 2>&1
c=$?
wait $s
echo "rc_pingpong: client $c server $?"
echo "rc_pingpong direct: $(direct)"
ibv_rc_pingpong -e -n 1000 -c -p 18612 -d ibemu1 >"$W/srv" 2>&1 &
s=$!
wait_listen 18612
d0=$(direct)
ibv_rc_pingpong -e -n 1000 -c -p 18612 -d ibemu0 localhost >"$W/cli" 2>&1
c=$?
wait $s
echo "rc_pingpong -e: client $c server $?"
echo "rc_pingpong -e direct: $(( $(direct) - d0 ))"

# Exactly what the stream sends, on the port that delivers to host3.
d0=$(count PortXmitData) p0=$(count PortXmitPkts) x0=$(direct)
"$RC_TOOL" ibemu0 ibemu1 stream 10 4096 14
echo "leaf2/1 xmit: $(( $(count PortXmitData) - d0 )) words $(( $(count PortXmitPkts) - p0 )) packets"
echo "stream direct: $(( $(direct) - x0 ))"
"$RC_TOOL" ibemu0 ibemu1 ud 200 0 | sed 's/^/direct ud: /'
# The provider's copies run under a fault guard (verbs/pin.c): the
# program's own faults stay its own.
ulimit -c 0
"$RC_TOOL" ibemu0 ibemu1 segv bare 2>/dev/null
bare=$?
"$RC_TOOL" ibemu0 ibemu1 segv 2>/dev/null
echo "segv: status $? (without us: $bare)"
"$RC_TOOL" ibemu0 ibemu1 segv handler
echo "segv handler: status $?"

# Streams that run until stopped (every message checked as it comes: a
# wrong one ends it with a line saying which), so that what follows
# happens in their middle whatever the machine's speed.
BIG=100000000
stop_stream() { kill "$st"; wait "$st" 2>/dev/null; }
bigger() { [ "$(stat -c %s "$1" 2>/dev/null || echo 0)" -gt "$2" ]; }

# A capture started in the middle of a stream sees the rest of it, and
# nothing goes past it; once it stops, the direct way again.
x0=$(direct)
"$RC_TOOL" ibemu0 ibemu1 stream $BIG 4096 14 >"$W/s1" &
st=$!
wait_until grown "$x0"
"$IBEMU" ctl capture start "$W/mid.pcap" >/dev/null
x1=$(direct)
wait_until bigger "$W/mid.pcap" 100000
x2=$(direct)
"$IBEMU" ctl capture stop >/dev/null
wait_until grown "$x2"
stop_stream
sed 's/^/capture stream: /' "$W/s1"
echo "direct during the capture: $(( x2 - x1 ))"
echo "direct after the capture: $(( $(direct) - x2 ))"
echo "tshark RC packets: $(tshark -r "$W/mid.pcap" 2>/dev/null | grep -c 'RC ')"

# A drop rule added in the middle of a stream drops from then on, until
# it goes: RC delivers every message, in order, by retransmission.
hits() { "$IBEMU" ctl fault list | grep -q 'hits [1-9]'; }
x0=$(direct)
"$RC_TOOL" ibemu0 ibemu1 stream $BIG 1024 14 >"$W/s2" &
st=$!
wait_until grown "$x0"
"$IBEMU" ctl fault add drop --class data --node leaf2 --dlid "$L3" --prob 0.3 >/dev/null
wait_until hits
"$IBEMU" ctl fault list | sed 's/^/rule: /'
"$IBEMU" ctl fault del 1 >/dev/null
x1=$(direct)
wait_until grown "$x1"
stop_stream
sed 's/^/rule stream: /' "$W/s2"
echo "direct after the rule went: $(( $(direct) - x1 ))"

# The only link to host3 goes down in the middle of a stream: it stops.
x0=$(direct)
"$RC_TOOL" ibemu0 ibemu1 stream $BIG 4096 14 >"$W/s3" &
st=$!
wait_until grown "$x0"
"$IBEMU" ctl link down host3/1 >/dev/null
wait $st
sed 's/^/link stream: /' "$W/s3"
SCRIPT
# at_least WHAT MIN TEXT: the number the script said after "WHAT: " is
# MIN or more (TEXT, with N for it, is the check's name)
at_least() {
	local n
	n=$(sed -n "s/^$1: \([0-9]*\)\$/\1/p" "$WORK/out")
	[ -n "$n" ] && [ "$n" -ge "$2" ] && pass "${3//N/$n}" ||
		fail "${3//N/${n:-no}} (want $2 or more)"
}

ibemu_run -c -a host1 -a host3 -- bash "$WORK/direct.sh"
expect_rc 0 "the run"
expect_line "rc_pingpong: client 0 server 0" "ibv_rc_pingpong, data checked"
at_least "rc_pingpong direct" 2000 "its N packets went the direct path (2000 messages and more)"
expect_line "rc_pingpong -e: client 0 server 0" "ibv_rc_pingpong -e (completion channels)"
at_least "rc_pingpong -e direct" 2000 "and -e's N packets too: senders ring a sleeping reader"
# 10 messages of 4096 bytes at MTU 1024: 40 packets of 8+12+1024+4+2 bytes,
# 263 words each (IBA 7.7, 9.2).
expect_line "leaf2/1 xmit: 10520 words 40 packets" \
	"perfquery on the switch port to host3: exactly the stream's packets and words"
at_least "stream direct" 40 "which went the direct path (N packets with the ACKs)"
expect_line "direct ud: ud sent 200 received 200" "UD the direct way: nothing lost"
# 139: SIGSEGV; 134 (SIGABRT) where the tool is built with ASan, whose handler reports it.
expect_match "^segv: status (13[49]) \(without us: \1\)$" \
	"a program's own fault after our copies ends it as without us (killed by a signal)"
expect_line "own handler: SIGSEGV" "a handler the program put in before: it gets the fault"
expect_line "segv handler: status 3" "and ends the program as it says"
expect_no_line "capture stream: " "a capture started mid-stream: every message in order, data checked"
expect_line "direct during the capture: 0" "no packet went past the capture"
at_least "direct after the capture" 1 "once it stops, the direct way again (N)"
at_least "tshark RC packets" 100 "tshark reads the stream's packets from the capture (N RC packets)"
expect_match "^rule: 1 drop .*hits [1-9]" "a drop rule added mid-stream drops its packets"
expect_no_line "rule stream: " "RC delivers all, in order, data checked"
at_least "direct after the rule went" 1 "once the rule is gone the stream goes the direct way again (N)"
expect_match "^link stream: stream: message [0-9]*: transport retry counter exceeded" \
	"a link down mid-stream stops it"

# A sender that writes what it likes over the daemon's words in its
# sub-ring (as one stopped in the middle of a write, or hostile): the
# daemon waits for nobody when it takes grants back, so control commands
# go on and the sender may have a grant again. Its memfd is sealed.
ibemu_run -c -a host1 -a host3 -- env PYTHONPATH="$(cd "$(dirname "$0")" && pwd)" \
	python3 "$(dirname "$0")/verbs_stuck.py"
expect_line "stuck: grant 0" "a raw client gets a grant"
expect_line "stuck: sub-ring shrink: Operation not permitted" "the sub-ring's memfd cannot shrink (sealed)"
expect_line "stuck: again 0" "its grant taken back three times over its words: a grant again"
expect_line "stuck: ctl rc 0" "the emulator answers"
grep -q "in the middle of a write" "$WORK/log" && fail "a sender was waited for" ||
	pass "nobody was waited for (nothing said of it in the log)"

# Between the hosts of a virtual cluster (one daemon, a host each): the
# receiver's device is the one of the host that has its port.
cat >"$WORK/hosts.sh" <<'SCRIPT'
. "$INSIDE"
ssh host3 "ibv_rc_pingpong -n 500 -p 18613" >"$W/srv" 2>&1 &
s=$!
wait_until ssh host3 ". $INSIDE; listening 18613"
ssh host1 "ibv_rc_pingpong -n 500 -p 18613 host3" >"$W/cli" 2>&1
c=$?
wait $s
echo "hosts rc_pingpong: client $c server $?"
"$IBEMU" ctl status --json | sed -n 's/.*"verbs_direct_packets" *: *\([0-9]*\).*/hosts direct: \1/p'
SCRIPT
ibemu_run --configured --hosts host1,host3 -- bash "$WORK/hosts.sh"
expect_line "hosts rc_pingpong: client 0 server 0" "ibv_rc_pingpong from host1 to host3 of ibemu run --hosts"
at_least "hosts direct" 1000 "its N packets went the direct path between the hosts"

# IBEMU_DIRECT=0: the daemon carries everything.
cat >"$WORK/off.sh" <<'SCRIPT'
"$RC_TOOL" ibemu0 ibemu1 stream 100 4096 14
"$IBEMU" ctl status --json | sed -n 's/.*"verbs_direct_packets" *: *\([0-9]*\).*/off: \1 direct/p'
SCRIPT
IBEMU_DIRECT=0 ibemu_run -c -a host1 -a host3 -- bash "$WORK/off.sh"
expect_line "stream 100 ok" "IBEMU_DIRECT=0: the stream"
expect_line "off: 0 direct" "went through the daemon"
finish
