#!/bin/bash
# opensm, unmodified, as the subnet manager of the default fabric (on
# host1 port 1): it reaches SUBNET UP, every port goes Active, ibstat shows
# the LIDs it assigned, saquery returns what opensm holds through kernel
# RMPP and the ENOSPC long read, perfquery sees counters that grew with the
# traffic, ibqueryerrors and the LID-routed tools follow its routes; an SA
# slower than saquery's timeout fails it on both paths, as on a kernel.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/run.sh" <<'SCRIPT'
set -u
W=$1
. "$INSIDE"
start_opensm
echo "SUBNET UP seen: $(log_count "$W/opensm.log" "SUBNET UP")"
ibstat ibemu0
echo "NodeRecords $(saquery | grep -c 'NodeRecord dump')"
echo "PathRecords $(saquery -p | grep -c 'PathRecord dump')"
echo "LinkRecords $(saquery LR | grep -c 'LinkRecord dump')"
echo "PortInfoRecords $(saquery PIR 2>/dev/null | grep -c 'PortInfoRecord dump')"
saquery 'host3 HCA-1' | grep -E 'lid|NodeDescription'
echo "MCMemberRecords $(saquery -g 2>/dev/null | grep -c 'MCMemberRecord group dump')"
perfquery -x 5 1 | grep -E 'PortXmitPkts|PortRcvPkts'
perfquery -X 5 1 | grep XmtDataSL0
dump_fts 2>/dev/null | grep 'valid lids dumped'
ibtracert -G 0x0002c90300000101 0x0002c90300000106 | grep -E '^(From|To)|->'
ibqueryerrors; echo "ibqueryerrors rc=$?"
ibswitches
iblinkinfo | grep -c Active | sed 's/^/active link lines /'
# An SA that answers after the request's timeout (saquery's 1 s): the
# kernel's MAD layer ends the send with a timeout and drops the late
# answer; on the fast path and on FUSE alike (issue #49).
ibemu ctl fault add delay 1500 --class sa --dir resp >/dev/null
for fp in 1 0; do
	IBEMU_FAST_PATH=$fp saquery -p >/dev/null 2>&1
	echo "slow SA, fast path $fp: rc $?"
	echo "slow SA, -t 3000, fast path $fp: $(IBEMU_FAST_PATH=$fp saquery -p -t 3000 | grep -c 'PathRecord dump')"
done
stop_opensm
echo "opensm rc=$?"
SCRIPT
ibemu_run -- bash "$WORK/run.sh" "$WORK"
expect_rc 0 "script ran"
expect_line "SUBNET UP seen: 1" "the tools ran after SUBNET UP"
if grep -q "SUBNET UP" "$WORK/opensm.log"; then pass "opensm reached SUBNET UP"; else fail "no SUBNET UP"; cat "$WORK/opensm.log" | tail -20; fi
if grep -q " ERR " "$WORK/opensm.log"; then fail "opensm logged errors"; grep " ERR " "$WORK/opensm.log" | head; else pass "opensm logged no ERR"; fi
expect_line "State: Active" "host1 port 1 Active"
expect_no_line "State: Initializing" "no port left in Init"
expect_line "SM lid: 1" "SM LID in sysfs"
expect_line "Base lid: 1" "opensm gave its own port LID 1"
expect_line "NodeRecords 7" "saquery: a NodeRecord per CA port and switch"
expect_line "PathRecords 49" "saquery -p: 7 x 7 PathRecords"
expect_line "LinkRecords 14" "saquery LR: both directions of 7 cables"
expect_line "NodeDescription.........host3 HCA-1" "saquery -N finds host3"
expect_line "MCMemberRecords" "saquery -g ran"
if awk -F. '/PortXmitPkts/ { if ($NF + 0 > 0) ok = 1 } END { exit !ok }' "$WORK/out"; then
	pass "perfquery -x of a remote port: traffic counted"; else fail "remote counters did not grow"; fi
expect_line "ibqueryerrors rc=0" "ibqueryerrors runs"
if [ "$(grep -c '^7 valid lids dumped' "$WORK/out")" = 2 ]; then pass "dump_fts: both switches route all 7 LIDs"; else fail "dump_fts"; fi
expect_line 'From ca {0x0002c90300000100} portnum 1 lid 1-1 "host1 HCA-1"' "ibtracert by GUID (resolved through the SA) starts at host1"
expect_line 'To ca {0x0002c90300000105} portnum 1' "and follows opensm's routes to host3"
if awk -F. '/XmtDataSL0/ { if ($NF + 0 > 0) ok = 1 } END { exit !ok }' "$WORK/out"; then
	pass "perfquery -X: per-SL data counted"; else fail "perfquery -X"; fi
expect_line 'Switch	: 0x0002c90200000100 ports 8 "ibemu leaf switch 1" enhanced port 0 lid' "ibswitches after the sweep"
expect_line "active link lines 14" "iblinkinfo: every cable Active (7 cables, seen from both ends)"
expect_line "opensm rc=0" "opensm exits cleanly"
for fp in 1 0; do
	expect_line "slow SA, fast path $fp: rc 110" \
		"an SA answer later than the timeout: ETIMEDOUT, the answer dropped (fast path $fp)"
	expect_line "slow SA, -t 3000, fast path $fp: 49" "a longer timeout waits for it (fast path $fp)"
done
finish
