#!/bin/bash
# Every subcommand answers --help; the man page ibemu(1) names every option
# of `ibemu run` and every control command; --version; --log writes the
# log to a file (with IBEMU_DEBUG, a line per MAD).
. "$(dirname "$0")/lib.sh"
MAN="$(cd "$(dirname "$0")/../../docs" && pwd)/ibemu.1"

for c in "run --help" "start --help" "stop --help" "ctl --help" "exec --help" "shell --help" "topo --help" "--help"; do
	"$IBEMU" $c >"$WORK/out" 2>&1 && [ -s "$WORK/out" ] && pass "ibemu $c" || fail "ibemu $c"
done
"$IBEMU" --version >"$WORK/out"
expect_line "ibemu 0.1.0" "--version"

man -l "$MAN" >"$WORK/man" 2>/dev/null || fail "man cannot format ibemu.1"
"$IBEMU" run --help | grep -o -- '--[a-z-]*' | sort -u | grep -v -- '--help' >"$WORK/opts"
missing=""
for o in $(cat "$WORK/opts"); do grep -q -- "$o" "$WORK/man" || missing="$missing $o"; done
[ -z "$missing" ] && pass "the man page names every run option ($(wc -l <"$WORK/opts"))" || fail "not in the man page:$missing"
"$IBEMU" start --help | grep -o -- '--[a-z-]*' | sort -u | grep -v -- '--help' >"$WORK/opts"
missing=""
for o in $(cat "$WORK/opts"); do grep -q -- "$o" "$WORK/man" || missing="$missing $o"; done
[ -z "$missing" ] && pass "and every start option ($(wc -l <"$WORK/opts"))" || fail "start options not in the man page:$missing"

ibemu_run --log "$WORK/ibemu.log" -- bash -c 'IBEMU_CTL=$IBEMU_CTL "$IBEMU" ctl help'
missing=""
while read -r cmd _; do grep -q -- "^$cmd\|[ |]$cmd" "$WORK/man" || missing="$missing $cmd"; done <"$WORK/out"
[ -z "$missing" ] && pass "the man page names every control command" || fail "commands missing:$missing"

IBEMU_DEBUG=1 ibemu_run --log "$WORK/ibemu.log" -- smpquery -D nodedesc 0,1
grep -q "umad0: send agent" "$WORK/ibemu.log" && pass "--log gets the MAD trace" || fail "--log file empty"
grep -q "umad0: send agent" "$WORK/log" && fail "the trace also went to stderr" || pass "and stderr does not"
finish
