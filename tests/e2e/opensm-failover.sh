#!/bin/bash
# Two opensm instances on two attached HCAs (host1 = ibemu0, priority 15;
# host3 = ibemu1, priority 1): the higher priority one becomes MASTER and
# the other STANDBY (SMInfo travels the fabric); when the master stops,
# the standby's polls fail and it takes over; the SM LID that host1's sysfs
# shows follows. Polling is shortened in a config file (default ~40 s).
. "$(dirname "$0")/lib.sh"

printf 'sminfo_polling_timeout 300\npolling_retry_number 2\n' >"$WORK/opensm.conf"
cat >"$WORK/run.sh" <<'SCRIPT'
set -u
W=$1
. "$INSIDE"
OSM_CACHE_DIR=$W/a opensm -F "$W/opensm.conf" -d2 -g 0x0002c90300000101 -p 15 -f "$W/a.log" >/dev/null 2>&1 &
a=$!
wait_log "$W/a.log" "SUBNET UP"
OSM_CACHE_DIR=$W/b opensm -F "$W/opensm.conf" -d2 -g 0x0002c90300000106 -p 1 -f "$W/b.log" >/dev/null 2>&1 &
b=$!
wait_log "$W/b.log" "Entering STANDBY state"
echo "first: $(sminfo -C ibemu0)"
kill $a
wait $a
wait_log "$W/b.log" "SUBNET UP"
n=0
until [ "$(cat /sys/class/infiniband/ibemu0/ports/1/sm_lid)" != "0x1" ] || [ $n -ge 300 ]; do
	n=$((n + 1)); timeout 0.1 tail -f /dev/null
done
echo "after: $(sminfo -C ibemu0)"
echo "host1 sysfs sm_lid $(cat /sys/class/infiniband/ibemu0/ports/1/sm_lid)"
kill $b
wait $b
SCRIPT
mkdir -p "$WORK/a" "$WORK/b"
ibemu_run --attach host1 --attach host3 -- bash "$WORK/run.sh" "$WORK"
expect_line "first: sminfo: sm lid 1 sm guid 0x2c90300000101" "host1's opensm (priority 15) is the master"
expect_line "priority 15 state 3 SMINFO_MASTER" "master state"
if grep -q "Entering STANDBY state" "$WORK/b.log"; then pass "host3's opensm went STANDBY"; else fail "no STANDBY"; fi
if grep -q "Entering MASTER state" "$WORK/b.log"; then pass "the standby took over"; else fail "no takeover"; fi
expect_line "after: sminfo: sm lid 6 sm guid 0x2c90300000106" "sminfo names the new master"
expect_line "host1 sysfs sm_lid 0x6" "host1's SM LID follows in sysfs"
finish
