#!/bin/bash
# opensm on a 2-level fat tree of 36-port switches (topologies/fattree-648.net,
# from `ibemu topo gen fattree 36`): 648 HCAs, 54 switches, 1296 cables.
# SUBNET UP, every cable Active, and saquery returns all 702 NodeRecords and
# all 702 x 702 PathRecords (one 31.5 MB RMPP message: the FUSE write and
# read of it once came in pieces and saquery -p got 16,381, exiting 0).
. "$(dirname "$0")/lib.sh"

NET="$TOPOLOGIES/fattree-648.net"
"$IBEMU" topo gen fattree 36 >"$WORK/gen.net"
expect_same "$NET" "$WORK/gen.net" "the shipped fat tree is what the generator writes"

cat >"$WORK/run.sh" <<'SCRIPT'
set -u
W=$1
. "$INSIDE"
start_opensm
echo "NodeRecords $(saquery | grep -c 'NodeRecord dump')"
# opensm takes about a second of CPU to build the 31 MB answer, saquery's
# default timeout: on a loaded machine (make -j2) it ran out. Wait longer.
saquery -t 10000 -p >"$W/paths"; echo "saquery -p rc=$?"
echo "PathRecords $(grep -c 'PathRecord dump' "$W/paths")"
echo "active ends $(iblinkinfo | grep -c 'Active/  LinkUp')"
ibstat ibemu0 | grep -E 'State|Base lid'
stop_opensm
SCRIPT
ibemu_run --topology "$NET" -- bash "$WORK/run.sh" "$WORK"
if grep -q "SUBNET UP" "$WORK/opensm.log"; then pass "SUBNET UP on 648 HCAs"; else fail "no SUBNET UP"; fi
if grep -q " ERR " "$WORK/opensm.log"; then fail "opensm logged errors"; grep " ERR " "$WORK/opensm.log" | head -5; else pass "opensm logged no ERR"; fi
expect_line "NodeRecords 702" "saquery: 648 + 54 NodeRecords"
expect_line "saquery -p rc=0" "saquery -p succeeded"
expect_line "PathRecords 492804" "saquery -p: a PathRecord for each of the 702 x 702 pairs of LIDs"
expect_line "active ends 2592" "iblinkinfo: both ends of all 1296 cables Active"
expect_line "State: Active" "the host's port is Active"
finish
