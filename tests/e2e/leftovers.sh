#!/bin/bash
# Nothing a run started outlives it (issue #12 item 4): daemons the command
# leaves running (opensm &, a server) and what `ibemu exec` started live in
# the run's PID namespace, whose init ends them when the command exits, and
# which the kernel ends when ibemu itself is SIGKILLed (an orphaned opensm
# once spun on the vanished devices, writing 300 MB of log in 19 s).
# Processes are found by a marker in their command lines. And nothing it
# wrote is left on the machine (issue #35 item 15): opensm with no options
# (/var/log/opensm.log, /var/cache/opensm), a daemon's socket in /run (as
# ibacm's /run/ibacm.sock) stay the run's, while the machine's sockets in
# /run (ours among them) are still reached from inside.
. "$(dirname "$0")/lib.sh"

# still MARKER: how many processes have MARKER in their command line
still() { pgrep -fc -- "$1" || true; }
# none MARKER: no process has MARKER in its command line
none() { [ "$(still "$1")" = 0 ]; }
# at_least N MARKER: N processes or more have it
at_least() { [ "$(still "$2")" -ge "$1" ]; }

M=$WORK/left
touch "$M"
ibemu_run -- bash -c '
timeout 120 tail -f "$0" & echo "tail started"
OSM_CACHE_DIR=${0%/*} timeout 120 opensm -f "$0.osm.log" >/dev/null 2>&1 & echo "opensm started"' "$M"
expect_rc 0 "the command exits at once"
none "$M" && pass "what it left running (tail, opensm) is gone when ibemu run returns" ||
	{ fail "still running: $(pgrep -fa -- "$M")"; pkill -f -- "$M"; }

# What opensm writes with no options, and a socket made in /run.
state() { for f in /var/log/opensm.log /var/cache/opensm /run/ibemu-left.sock; do
	echo "$f $(stat -c '%s %Y' "$f" 2>/dev/null || echo absent)"; done; }
state >"$WORK/before"
ibemu_run -- bash -c 'opensm >/dev/null 2>&1 & osm=$!
	ibemu ctl wait sm-up >/dev/null && echo "sm up"
	kill $osm; wait $osm
	ls /var/log/opensm.log /var/cache/opensm/guid2lid 2>&1 | sed "s/^/inside: /"
	python3 -c "import socket; socket.socket(socket.AF_UNIX).bind(\"/run/ibemu-left.sock\")" && echo "bound /run/ibemu-left.sock"
	ibemu ctl status >/dev/null && echo "ctl through the machine'"'"'s /run/ibemu: ok"'
expect_line "sm up" "opensm with no options brings the fabric up"
expect_line "inside: /var/log/opensm.log" "inside, opensm's log is where it always is"
expect_line "inside: /var/cache/opensm/guid2lid" "and so is its cache"
expect_line "bound /run/ibemu-left.sock" "a socket can be made in /run"
expect_line "ctl through the machine's /run/ibemu: ok" "the machine's sockets in /run are still reached"
state >"$WORK/after"
expect_same "$WORK/before" "$WORK/after" "/var/log/opensm.log, /var/cache/opensm and the socket: none left on the machine"

# SIGKILL of the emulator: the init dies with it, the kernel ends the rest.
NAME="e2e-left-$$"
K=$WORK/killed
touch "$K" "$K.exec"
"$IBEMU" run --name "$NAME" -- bash -c '
OSM_CACHE_DIR=${0%/*} opensm -f "$0.osm.log" >/dev/null 2>&1 &
tail -f "$0" & wait' "$K" >"$WORK/run.out" 2>&1 &
RUN=$!
wait_for 10 at_least 1 "$K.osm"
"$IBEMU" exec --name "$NAME" -- tail -f "$K.exec" >/dev/null 2>&1 &
wait_for 10 at_least 2 "$K.exec"
at_least 6 "$K" && pass "opensm, tail and an exec'd tail run in the emulator" || fail "not started: $(pgrep -fa -- "$K")"
kill -9 "$("$IBEMU" ctl --name "$NAME" pid)"
wait $RUN 2>/dev/null
if wait_for 10 none "$K"; then pass "ibemu run SIGKILLed: opensm, tail and the exec'd tail are gone"; else
	fail "left after SIGKILL: $(pgrep -fa -- "$K")"; pkill -9 -f -- "$K"; fi

# SIGTERM to ibemu run goes to the command; one that ignores it does not
# keep the run alive (`timeout 60 ibemu run ...` once never ended): it is
# killed with the rest after the grace of 2 s.
T=$WORK/stubborn
touch "$T"
"$IBEMU" run -- bash -c 'trap "" TERM HUP; echo ready; exec tail -f "$0"' "$T" >"$WORK/run.out" 2>&1 &
RUN=$!
wait_for 10 grep -q ready "$WORK/run.out"
kill -TERM $RUN
gone() { ! kill -0 $RUN 2>/dev/null; }
if wait_for 10 gone; then
	wait $RUN; rc=$?
	[ $rc = 137 ] && pass "a command ignoring SIGTERM is killed after the grace (run exits 137)" ||
		fail "run exited $rc"
else
	fail "ibemu run still alive 10 s after SIGTERM"; kill -9 $RUN
fi
if wait_for 5 none "$T"; then pass "and nothing of it is left"; else
	fail "left: $(pgrep -fa -- "$T")"; pkill -9 -f -- "$T"; fi
finish
