#!/bin/bash
# SM failover between two hosts of one fabric (issue #17, docs/many-hosts.md):
# opensm on host A (its HCA host1, priority 15) and opensm on host B, an
# `ibemu run --remote A --attach host2` (priority 1). B's opensm holds
# B's issm0, so A sees IsSM on host2's port; SMInfo crosses between the
# hosts and B's opensm goes STANDBY. When A's opensm stops, B's polls of
# it fail and B's takes over: host1's SM LID follows to host2's LID.
# Polling is shortened as in opensm-failover.sh.
. "$(dirname "$0")/lib.sh"
unset IBEMU_FAST_PATH	# opensm as by default: the library (issm: FUSE)

A="e2e-mhf-$$"
ctl() { "$IBEMU" ctl --name "$A" "$@"; }
printf 'sminfo_polling_timeout 300\npolling_retry_number 2\n' >"$WORK/opensm.conf"
mkdir -p "$WORK/a" "$WORK/b"
mkfifo "$WORK/a-stop" "$WORK/b-stop"
# A: its opensm until told to stop it (a-stop), then waits to be ended.
"$IBEMU" run --name "$A" -- bash -c '
OSM_CACHE_DIR=$0/a opensm -F "$0/opensm.conf" -d2 -p 15 -f "$0/a.log" >/dev/null 2>&1 &
osm=$!
"$IBEMU" ctl wait sm-up >/dev/null && echo up >"$0/a-up"
read -r _ <"$0/a-stop"
kill $osm; wait $osm
echo stopped >"$0/a-stopped"
exec tail -f /dev/null' "$WORK" >"$WORK/a.out" 2>&1 &
APID=$!
if ! wait_for 60 test -s "$WORK/a-up"; then
	fail "host A's opensm did not bring the subnet up"; kill $APID; finish; exit
fi
LID2=$(ctl port host2/1 | sed -n 's/.* lid \([0-9]*\) .*/\1/p')

# B: its opensm, STANDBY, then (once A's has stopped) MASTER.
"$IBEMU" run --remote "$A" --attach host2 -- bash -c '
W=$0
. "$INSIDE"
OSM_CACHE_DIR=$0/b opensm -F "$0/opensm.conf" -d2 -p 1 -f "$0/b.log" >/dev/null 2>&1 &
osm=$!
wait_log "$0/b.log" "Entering STANDBY state"
echo "B standby: $(log_count "$0/b.log" "Entering STANDBY state")"
echo "B sminfo: $(sminfo -C ibemu0)"
n=0; until [ -e "$0/a-stopped" ] || [ $n -ge 600 ]; do n=$((n + 1)); timeout 0.1 tail -f /dev/null; done
wait_log "$0/b.log" "Entering MASTER state"
wait_log "$0/b.log" "SUBNET UP"
echo "B master: $(log_count "$0/b.log" "Entering MASTER state")"
echo "B sminfo after: $(sminfo -C ibemu0)"
read -r _ <"$0/b-stop"
kill $osm; wait $osm' "$WORK" >"$WORK/out" 2>"$WORK/log" &
BPID=$!
standby() { grep -q "^B sminfo:" "$WORK/out"; }
wait_for 60 standby || fail "B's opensm did not go STANDBY: $(tail -5 "$WORK/b.log" 2>&1)"
expect_line "B standby: 1" "opensm on B (priority 1) goes STANDBY: A's is master"
expect_match "^B sminfo: sminfo: sm lid [0-9]+ sm guid 0x2c90300000101, .*SMINFO_MASTER" \
	"sminfo on B names A's SM (host1) as master"
# IsSM (bit 1 of CapabilityMask) on host2's port at A: B's issm0 is held.
cap=$(ctl port host2/1 | sed -n 's/.* cap_mask \(0x[0-9a-f]*\) .*/\1/p')
[ -n "$cap" ] && [ $((cap & 2)) = 2 ] && pass "A sees IsSM on host2's port ($cap)" ||
	fail "host2's cap_mask at A: '$cap'"

timeout 5 sh -c 'echo stop >"$1"' _ "$WORK/a-stop"
took_over() { grep -q "^B sminfo after:" "$WORK/out"; }
wait_for 60 took_over || fail "B's opensm did not take over: $(tail -5 "$WORK/b.log" 2>&1)"
expect_line "B master: 1" "A's opensm stopped: B's takes over (MASTER)"
expect_match "^B sminfo after: sminfo: sm lid $LID2 sm guid 0x2c90300000104, .*SMINFO_MASTER" \
	"sminfo on B names itself (host2, LID $LID2)"
sm_lid_is_b() { ctl port host1/1 | grep -q " sm_lid $LID2 "; }
wait_for 10 sm_lid_is_b && pass "host1 on A follows: its SM LID is host2's ($LID2)" ||
	fail "host1 at A: $(ctl port host1/1)"

timeout 5 sh -c 'echo stop >"$1"' _ "$WORK/b-stop"
wait $BPID
RC=$?
expect_rc 0 "host B's run"
kill $APID
wait $APID 2>/dev/null
finish
