#!/bin/bash
# What a client or a file does cannot grow the emulator without bound or
# starve it (issue #12 item 10): a scenario that loads itself twice at 0 ms
# stops at the nesting limit, the emulator keeps answering and ends on
# SIGTERM; a duplicate rule on every packet copies a 21-hop SMP once, not
# at every hop (2^21 copies once ate 4 GB).
. "$(dirname "$0")/lib.sh"

cat >"$WORK/self.scn" <<EOS
at 0ms scenario $WORK/self.scn
at 0ms scenario $WORK/self.scn
at 10ms link down leaf1/7
EOS
NAME="e2e-bounded-$$"
"$IBEMU" run --name "$NAME" --scenario "$WORK/self.scn" -- sh -c 'until [ -e "$0" ]; do timeout 0.1 tail -f /dev/null; done' "$WORK/done" >"$WORK/out" 2>"$WORK/log" &
RUN=$!
link_down_seen() { "$IBEMU" ctl --name "$NAME" events 2>/dev/null | grep -q "link down"; }
wait_for 10 link_down_seen
"$IBEMU" ctl --name "$NAME" status >"$WORK/out" 2>&1; RC=$?
expect_rc 0 "a self-loading scenario: the emulator still answers"
pid=$("$IBEMU" ctl --name "$NAME" pid)
rss=$(awk '/VmHWM/ { print $2 }' /proc/$pid/status)
[ "${rss:-999999}" -lt 100000 ] && pass "its peak memory stays small (${rss} kB)" || fail "peak RSS ${rss} kB"
grep -q "scenarios started by scenarios 8 deep: not starting" "$WORK/log" && pass "the nesting limit is met and said" || fail "no nesting-limit line"
kill -TERM $RUN
start=$(date +%s%N)
wait $RUN
ms=$((($(date +%s%N) - start) / 1000000))
[ $ms -lt 3000 ] && pass "SIGTERM ends it ($ms ms)" || fail "SIGTERM took $ms ms"
touch "$WORK/done"

PATH21="0,1$(printf ',7%.0s' $(seq 20))"
ibemu_run -- sh -c '"$IBEMU" ctl fault add duplicate >/dev/null; smpquery -D nodedesc '"$PATH21"'; "$IBEMU" ctl status'
expect_rc 0 "a 21-hop SMP under a global duplicate rule"
expect_match "Node Description:\.+ibemu leaf switch" "is answered"
expect_match "MADs delivered, [0-9]{1,3} dropped" "and the copies stay few"
finish
