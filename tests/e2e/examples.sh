#!/bin/bash
# The files under examples/ keep working: the opensm fault walk-through
# runs to the end, and the scenario example loads and runs its first steps.
. "$(dirname "$0")/lib.sh"
EX="$(cd "$(dirname "$0")/../../examples" && pwd)"
BIN=$(dirname "$IBEMU")

ibemu_run -- env PATH="$BIN:$PATH" bash "$EX/opensm-faults.sh"
expect_rc 0 "examples/opensm-faults.sh"
expect_line "== SUBNET UP: 7 NodeRecords" "opensm came up"
expect_line "== cable out: 6 NodeRecords" "a pulled cable shows in the SA"
expect_line "== cable back: 7 NodeRecords" "and its return"
expect_line "SymbolErrorCounter == 500" "ibqueryerrors shows the injected counter"

ibemu_run --scenario "$EX/link-flap.scn" -- bash -c '
st() { cat /sys/class/infiniband/ibemu0/ports/1/state; }
n=0; until [ "$(st)" = "1: DOWN" ] || [ $n -ge 100 ]; do n=$((n + 1)); timeout 0.05 tail -f /dev/null; done
echo "flap: $(st)"'
expect_rc 0 "examples/link-flap.scn loads and runs"
expect_line "flap: 1: DOWN" "its first step pulled host1's cable"
finish
