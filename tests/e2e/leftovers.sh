#!/bin/bash
# Daemons a command leaves running in `ibemu run` (opensm &, a server) do not
# outlive the emulator: without their devices they would spin on errors (an
# orphaned opensm once wrote a 14 GB log that way). ibemu is their subreaper
# and ends them when the command exits.
. "$(dirname "$0")/lib.sh"

ibemu_run -- bash -c '
timeout 120 tail -f /dev/null & echo "tail $!"
OSM_CACHE_DIR=$0 timeout 120 opensm -f /dev/null >/dev/null 2>&1 & echo "opensm $!"' "$WORK"
expect_rc 0 "the command exits at once"
grep -q "ending 2 process(es) the command left running" "$WORK/log" && pass "ibemu says what it ends" || fail "no message about leftovers"
for what in tail opensm; do
	pid=$(sed -n "s/^$what //p" "$WORK/out")
	if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then pass "the $what it left is gone"; else fail "$what ${pid:-?} still runs"; kill "$pid" 2>/dev/null; fi
done
finish
