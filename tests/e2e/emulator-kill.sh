#!/bin/bash
# The emulator itself SIGKILLed: its clients end with it (they live in the
# run's PID namespace; none is left to hang or spin on the vanished files),
# nothing is left on the host (no mounts, no staging directories), and an
# emulator started again under the same name replaces the stale control
# socket and works.
. "$(dirname "$0")/lib.sh"

NAME="e2e-kill-$$"
before=$(ls -d /tmp/ibemu.* 2>/dev/null | wc -l)
"$IBEMU" run --name "$NAME" -- bash -c "
	exec 3<>/dev/infiniband/umad0
	echo ready >'$WORK/ready'
	n=0; until [ -e '$WORK/killed' ] || [ \$n -ge 300 ]; do n=\$((n + 1)); timeout 0.1 tail -f /dev/null '$WORK/client'; done
	ibstat -l >'$WORK/after' 2>&1; echo \"ibstat rc=\$?\" >>'$WORK/after'" >"$WORK/run1" 2>&1 &
wait_for 10 test -e "$WORK/ready"
pid=$("$IBEMU" ctl --name "$NAME" pid)
kill -9 "$pid"
# The client's shell carries "$WORK/client" in its own command line, so it
# is matched even between two of its waits. "killed" is only touched once the
# clients are gone, or once they have outlived the deadline: an emulator
# whose memory takes long to free (ASan's shadow) is still alive for a while
# after kill returns, and a client that saw "killed" in that window would run
# ibstat against a fabric that has not yet gone.
client_gone() { ! pgrep -f -- "$WORK/client" >/dev/null; }
if wait_for 10 client_gone; then pass "its clients end with it"; else touch "$WORK/killed"; fail "a client outlived the emulator"; fi
wait
after=$(ls -d /tmp/ibemu.* 2>/dev/null | wc -l)
[ "$after" = "$before" ] && pass "no staging directory left in /tmp" || fail "staging dirs: $before -> $after"
grep -q " /dev/infiniband \| /sys/class/infiniband " /proc/mounts && fail "host mounts left" || pass "no mount left on the host"
if [ "$(id -u)" = 0 ]; then SOCK=/run/ibemu/$NAME.sock; else SOCK=/tmp/ibemu-$(id -u)/$NAME.sock; fi
[ -S "$SOCK" ] && pass "the killed emulator's socket is left behind" || fail "no stale socket to test the restart with"
# What ibemu ctl says of it, and of a name never used (issue #35 item 16).
"$IBEMU" ctl --name "$NAME" status >"$WORK/out" 2>&1
expect_line "ibemu: the emulator $NAME is not running: it ended without cleaning up (killed?) and left $SOCK" \
	"ctl on the killed emulator says it is not running, and why"
"$IBEMU" ctl --name "never-$$" status >"$WORK/out" 2>&1
expect_line "ibemu: no emulator named never-$$ is running (ibemu list shows those that are)" \
	"ctl on a name never used says so"

ibemu_run --name "$NAME" -- bash -c '"$IBEMU" ctl --name '"$NAME"' status; ibstat -l'
expect_rc 0 "a new emulator under the same name starts"
expect_line "6 nodes (2 switches, 4 CAs)" "its control socket answers"
expect_line "ibemu0" "its devices work"
finish
