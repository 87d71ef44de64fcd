#!/bin/bash
# Link changes reach the SM as on hardware: disabling leaf1 port 2 (host2's
# cable) makes leaf1 send Trap 128; opensm re-sweeps and host2 drops out of
# the SA; enabling it brings another trap, and opensm brings the port back
# to Active and host2 back into the SA.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/run.sh" <<'SCRIPT'
set -u
W=$1
. "$INSIDE"
start_opensm
echo "before NodeRecords $(saquery | grep -c 'NodeRecord dump')"
ibportstate -D 0,1 2 disable >/dev/null
wait_ups 2
echo "disabled NodeRecords $(saquery | grep -c 'NodeRecord dump')"
ibportstate -D 0,1 2 enable >/dev/null
wait_ups 3
echo "enabled NodeRecords $(saquery | grep -c 'NodeRecord dump')"
smpquery -D portinfo 0,1 2 | grep -E '^(LinkState|PhysLinkState)'
stop_opensm
SCRIPT
ibemu_run -- bash "$WORK/run.sh" "$WORK"
expect_line "before NodeRecords 7" "seven NodeRecords at first"
if [ "$(grep -c 'num:128 (Link state change) Producer:2 (Switch) from LID:2' "$WORK/opensm.log")" -ge 2 ]; then
	pass "opensm received Trap 128 from leaf1 twice"; else fail "traps not received"; grep -i notice "$WORK/opensm.log"; fi
expect_line "disabled NodeRecords 6" "host2 gone from the SA after the re-sweep"
expect_line "enabled NodeRecords 7" "host2 back after the next trap"
expect_line "LinkState:.......................Active" "opensm made the port Active again"
finish
