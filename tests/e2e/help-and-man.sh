#!/bin/bash
# Every subcommand answers --help; the man page ibemu(1) names every option
# of `ibemu run` and every control command; --version; --log writes the
# log to a file (with IBEMU_DEBUG, a line per MAD).
. "$(dirname "$0")/lib.sh"
MAN="$(cd "$(dirname "$0")/../../docs" && pwd)/ibemu.1"

for c in "run --help" "start --help" "stop --help" "ctl --help" "exec --help" "shell --help" "topo --help" "--help"; do
	"$IBEMU" $c >"$WORK/out" 2>&1 && [ -s "$WORK/out" ] && pass "ibemu $c" || fail "ibemu $c"
done
"$IBEMU" help >"$WORK/out" 2>&1; RC=$?
expect_rc 0 "ibemu help"
expect_line "help [COMMAND]" "ibemu help lists the commands"
"$IBEMU" help topo >"$WORK/out" 2>&1
expect_line "ibemu topo gen fattree" "ibemu help topo is topo's --help"
"$IBEMU" help nosuch >"$WORK/out" 2>&1; RC=$?
expect_rc 2 "ibemu help of an unknown command"
# GLib's "[OPTION" U+2026 "]" reads "[OPTION?]" under LANG=C: plain ASCII.
for c in run start; do
	LANG=C LC_ALL=C "$IBEMU" $c --help >"$WORK/out" 2>&1
	expect_line "ibemu $c [OPTION...]" "ibemu $c --help says [OPTION...] under LANG=C"
	LC_ALL=C.UTF-8 "$IBEMU" $c --help >"$WORK/out" 2>&1
	grep -q "$(printf '[^ -~]')" "$WORK/out" && fail "ibemu $c --help has non-ASCII under C.UTF-8" ||
		pass "and only ASCII under C.UTF-8"
done

# Inside a run (and an exec) `ibemu` is the running binary, on PATH and in
# $IBEMU, so `ibemu ctl` examples work as written; exec inside its own run
# runs there.
IBEMU_DIR=$(cd "$(dirname "$IBEMU")" && pwd)
PATH=/usr/bin:/bin ibemu_run -- sh -c 'command -v ibemu; echo "IBEMU=$IBEMU"; ibemu ctl seed >/dev/null && echo ctl-ok
	ibemu exec -- sh -c "echo exec-IBEMU=\$IBEMU; ls /dev/infiniband"'
expect_line "$IBEMU_DIR/ibemu" "ibemu is on PATH inside a run"
expect_line "IBEMU=$IBEMU_DIR/ibemu" "and \$IBEMU names it"
expect_line "ctl-ok" "so ibemu ctl works inside as written"
expect_line "exec-IBEMU=$IBEMU_DIR/ibemu" "ibemu exec from inside the run runs there"
expect_line "umad0" "and sees the run's devices"

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

# ctl help comes from the command table itself, with no emulator running;
# the man page names every command (both words) and every option of it.
IBEMU_CTL=/nonexistent "$IBEMU" ctl help >"$WORK/help" 2>&1; RC=$?
cp "$WORK/help" "$WORK/out"; expect_rc 0 "ctl help needs no emulator"
expect_line "fault add ACTION [VALUE]" "and lists the commands"
sed -n '/^\.SH CONTROL COMMANDS/,/^\.SH ENVIRONMENT/p' "$MAN" | sed 's/\\-/-/g' >"$WORK/mancmds"
missing=""
while read -r cmd sub _; do
	case "$sub" in [a-z]*) ;; *) sub="" ;; esac
	[ "$cmd" = Every ] && continue
	grep -qE "(^|[ |])$cmd( |\$|\|)" "$WORK/mancmds" || { missing="$missing $cmd"; continue; }
	[ -z "$sub" ] || grep -E "(^|[ |])$cmd( |\|)" "$WORK/mancmds" | grep -qE "(^| |\|)$sub( |\||\$)" ||
		missing="$missing $cmd-$sub"
done < <(cut -c1-36 "$WORK/help")
[ -z "$missing" ] && pass "the man page names every control command ($(grep -vc '^Every' "$WORK/help"))" ||
	fail "commands missing from the man page:$missing"
missing=""
for c in "fault add" dump; do
	for o in $("$IBEMU" ctl help $c | grep -o -- '--[a-z-]*' | sort -u); do
		grep -q -- "$o" "$WORK/mancmds" || missing="$missing $o"
	done
done
[ -z "$missing" ] && pass "and every option of fault add and dump" || fail "options missing:$missing"
"$IBEMU" ctl help lid >"$WORK/out"
expect_line "usage: lid NODE/PORT LID [LMC]" "ctl help COMMAND gives its usage"

IBEMU_DEBUG=1 ibemu_run --log "$WORK/ibemu.log" -- smpquery -D nodedesc 0,1
grep -q "umad0: send agent" "$WORK/ibemu.log" && pass "--log gets the MAD trace" || fail "--log file empty"
grep -q "umad0: send agent" "$WORK/log" && fail "the trace also went to stderr" || pass "and stderr does not"
finish
