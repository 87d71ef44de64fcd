#!/bin/bash
# What a client or a file does cannot grow the emulator without bound or
# starve it (issue #12 item 10): a scenario that loads itself at 0 ms
# stops at the nesting limit, the emulator keeps answering and ends on
# SIGTERM; a duplicate rule on every packet copies a 21-hop SMP once, not
# at every hop (2^21 copies once ate 4 GB). Issue #35: one that loads
# itself eight times (8^8 starts) meets the limit on running scenarios;
# a FIFO or /dev/zero is refused as a scenario file, and a relative name
# is the caller's.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/self.scn" <<EOS
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

for i in 1 2 3 4 5 6 7 8; do echo "at 0ms scenario $WORK/fan.scn"; done >"$WORK/fan.scn"
mkfifo "$WORK/fifo"
ibemu_run -- sh -c 'cd "$0" && "$IBEMU" ctl scenario fan.scn
	n=0; until "$IBEMU" ctl events | grep -q "started (8 steps)" && [ $n -gt 0 ] || [ $n -ge 50 ]; do n=$((n + 1)); done
	"$IBEMU" ctl scenario fifo; "$IBEMU" ctl scenario /dev/zero; "$IBEMU" ctl status' "$WORK"
expect_rc 0 "eight self-starting lines: the run ends"
expect_line "scenario $WORK/fan.scn started (8 steps)" "a relative scenario name is the caller's"
grep -q "64 scenarios running, the limit: not starting $WORK/fan.scn" "$WORK/log" &&
	pass "the limit on running scenarios is met and said" || fail "no limit line in the log"
grep -qF "error: $WORK/fifo: not a regular file" "$WORK/log" && pass "a FIFO is refused, not read" ||
	fail "no refusal of the FIFO"
grep -qF "error: /dev/zero: not a regular file" "$WORK/log" && pass "so is /dev/zero" ||
	fail "no refusal of /dev/zero"
rss=$(sed -n 's/.*peak RSS \([0-9]*\)\..*/\1/p' "$WORK/out")
[ "${rss:-999}" -lt 100 ] && pass "the emulator's peak RSS stays small (${rss} MB)" || fail "peak RSS ${rss} MB"

PATH21="0,1$(printf ',7%.0s' $(seq 20))"
ibemu_run -- sh -c '"$IBEMU" ctl fault add duplicate >/dev/null; smpquery -D nodedesc '"$PATH21"'; "$IBEMU" ctl status'
expect_rc 0 "a 21-hop SMP under a global duplicate rule"
expect_match "Node Description:\.+ibemu leaf switch" "is answered"
expect_match "MADs delivered, [0-9]{1,3} dropped" "and the copies stay few"
finish
