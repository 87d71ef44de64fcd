#!/bin/bash
# A libibumad program sends a DR NodeInfo with timeout_ms T and retries R
# to a switch port with no cable: the ETIMEDOUT receive (status 110) comes
# after T x (R + 1), not earlier. A reachable path answers at once.
. "$(dirname "$0")/lib.sh"

ibemu_run -- "$TOOLS/umad_timeout" 200 2 0,1,3
expect_rc 0 "umad_timeout ran"
expect_line "status=110" "ETIMEDOUT reported"
ms=$(sed -n 's/.*elapsed_ms=\([0-9]*\).*/\1/p' "$WORK/out")
if [ -n "$ms" ] && [ "$ms" -ge 600 ]; then pass "not before 200 x 3 = 600 ms ($ms ms)"; else fail "timed out too early: ${ms} ms"; fi
if [ -n "$ms" ] && [ "$ms" -lt 1500 ]; then pass "and not much later ($ms ms)"; else fail "timed out too late: ${ms} ms"; fi

ibemu_run -- "$TOOLS/umad_timeout" 200 2 0,1,7,1
expect_line "status=0" "reachable node answers"
expect_line "mad_status=0x0000" "with success"
finish
