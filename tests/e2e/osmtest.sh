#!/bin/bash
# osmtest against opensm's SA on the default fabric: -f c builds the
# inventory (NodeRecord, PortInfoRecord, PathRecord... GetTables, RMPP,
# ENOSPC in osmtest's receiver thread), -f a validates it, including the
# wrong-SM_Key check and ServiceRecord Set/Get/Delete. (ibsim hangs on -f a.)
# Then every flow but QoS against the SA of a fabric configured without
# an SM (kernel/sa.c): inventory and validation (MultiPathRecord,
# SMInfoRecord, InformInfo, P_KeyTableRecords only when trusted, a wrong
# SM_Key unanswered), services with their leases, event forwarding, the
# multicast flow (o15-0.1.x, o15-0.2.x) and the SA stress.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/run.sh" <<'SCRIPT'
set -u
W=$1
. "$INSIDE"
start_opensm
cd "$W"
timeout 120 osmtest -f c -i "$W/inventory" >"$W/c.log" 2>&1; echo "osmtest -f c rc=$?"
timeout 120 osmtest -f a -i "$W/inventory" >"$W/a.log" 2>&1; echo "osmtest -f a rc=$?"
grep -c '^' "$W/inventory" | sed 's/^/inventory lines /'
stop_opensm
SCRIPT
ibemu_run -- bash "$WORK/run.sh" "$WORK"
expect_line "osmtest -f c rc=0" "osmtest -f c exits 0"
expect_line "osmtest -f a rc=0" "osmtest -f a exits 0"
if grep -q 'TEST "Create Inventory" PASS' "$WORK/c.log"; then pass "Create Inventory PASS"; else fail "Create Inventory"; tail -20 "$WORK/c.log"; fi
if grep -q 'TEST "All Validations" PASS' "$WORK/a.log"; then pass "All Validations PASS"; else fail "All Validations"; tail -20 "$WORK/a.log"; fi
# 7 NodeRecords and 49 PathRecords must all be in the inventory.
if [ "$(grep -c '^DEFINE_NODE' "$WORK/inventory")" = 7 ]; then pass "7 nodes in the inventory"; else fail "inventory nodes: $(grep -c '^DEFINE_NODE' "$WORK/inventory")"; fi
if [ "$(grep -c '^DEFINE_PATH' "$WORK/inventory")" = 49 ]; then pass "49 paths in the inventory"; else fail "inventory paths: $(grep -c '^DEFINE_PATH' "$WORK/inventory")"; fi

cat >"$WORK/own.sh" <<'SCRIPT'
set -u
W=$1
mkdir -p "$W/own"
cd "$W/own"
for f in c a s e m f; do
	timeout 120 osmtest -f $f -i "$W/own/inventory" >"$W/own/$f.log" 2>&1
	echo "own SA: osmtest -f $f rc=$? | $(grep -o 'TEST ".*" [A-Z]*' "$W/own/$f.log" | tail -1)"
done
grep -c '^DEFINE_PATH' "$W/own/inventory" | sed 's/^/own SA: inventory paths /'
SCRIPT
ibemu_run --configured -- bash "$WORK/own.sh" "$WORK"
for t in 'c | TEST "Create Inventory" PASS' 'a | TEST "All Validations" PASS' \
	's | TEST "Services Registration" PASS' 'e | TEST "Event Forwarding" PASS' \
	'm | TEST "Multicast" PASS' 'f | TEST "Stress SA" PASS'; do
	expect_line "own SA: osmtest -f ${t%% |*} rc=0 |${t#*|}" "the emulator's SA: osmtest -f ${t%% |*}"
done
expect_line "own SA: inventory paths 49" "the emulator's SA: 49 paths, switches' too, as opensm's"
finish
