#!/bin/bash
# Fault rules make real software time out for real:
# - drop NodeInfo to leaf2: ibnetdiscover maps the rest, reports leaf2's
#   paths as timed out (status 110) and takes its timeout x (retries + 1);
# - drop at host3: a libibumad sender with T=200 ms and R=2 is seen three
#   times by the rule (R + 1 sends) and gets ETIMEDOUT after >= 600 ms;
# - delay 150 ms vs a 200 ms timeout succeeds, 250 ms times out;
# - a status rule makes the target answer with that MAD status.
. "$(dirname "$0")/lib.sh"

export W="$WORK" IBEMU TOOLS
ibemu_run -- bash -c '
ibemu() { "$IBEMU" "$@"; }
ibemu ctl fault add drop --node leaf2 --attr NodeInfo >/dev/null
s=$(date +%s%N); ibnetdiscover -t 200 >"$W/nd" 2>"$W/nd.err"; echo "nd rc=$? ms=$(( ($(date +%s%N) - s) / 1000000 ))"
ibemu ctl fault del 1 >/dev/null
ibemu ctl fault add drop --node host3 --attr NodeInfo >/dev/null
"$TOOLS/umad_timeout" 200 2 0,1,7,1
ibemu ctl fault list
ibemu ctl fault del 2 >/dev/null
ibemu ctl fault add delay 150 --node host3 --attr NodeInfo >/dev/null
echo "delay150: $("$TOOLS/umad_timeout" 200 0 0,1,7,1)"
ibemu ctl fault del 3 >/dev/null
ibemu ctl fault add delay 250 --node host3 --attr NodeInfo >/dev/null
echo "delay250: $("$TOOLS/umad_timeout" 200 0 0,1,7,1)"
ibemu ctl fault del 4 >/dev/null
ibemu ctl fault add status 0x1c --node host3 --attr NodeInfo >/dev/null
echo "status: $("$TOOLS/umad_timeout" 200 0 0,1,7,1)"
smpdump -D 0,1,7,1 0x10 | sed "s/^/nodedesc: /"'
ms=$(sed -n 's/^nd rc=0 ms=\([0-9]*\)/\1/p' "$WORK/out")
if [ -n "$ms" ] && [ "$ms" -ge 800 ]; then pass "ibnetdiscover took its timeout: $ms ms for 200 x 4"; else fail "ibnetdiscover took ${ms:-?} ms"; fi
[ "$(grep -c '^Switch\|^Ca' "$WORK/nd")" = 3 ] && pass "it mapped leaf1, host1, host2" || fail "ibnetdiscover mapped $(grep -c '^Switch\|^Ca' "$WORK/nd") nodes"
grep -q "0,1,7 Attr 0x11:0) bad status 110" "$WORK/nd.err" && pass "and reported leaf2 timed out" || fail "no timeout report"
expect_line "status=110" "R+1 drops end in ETIMEDOUT"
ms=$(sed -n 's/^status=110 elapsed_ms=\([0-9]*\).*/\1/p' "$WORK/out")
if [ -n "$ms" ] && [ "$ms" -ge 600 ]; then pass "after 200 x 3 ms ($ms ms)"; else fail "ETIMEDOUT after ${ms:-?} ms"; fi
expect_line "node host3 port -1 class -1 method -1 attr 17 prob 1 count 0 nth 0: matches 3 hits 3" "exactly R + 1 = 3 sends reached host3"
expect_line "delay150: status=0" "a 150 ms delay under a 200 ms timeout succeeds"
expect_line "delay250: status=110" "a 250 ms delay over it times out"
expect_line "status: status=0 elapsed_ms" "a status rule answers"
expect_line "mad_status=0x001c" "with the given MAD status"
expect_line "nodedesc: SMP status: 0x8000" "other attributes of host3 are untouched"
finish
