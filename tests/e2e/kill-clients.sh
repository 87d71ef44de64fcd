#!/bin/bash
# Clients killed at the worst moments do not hurt the emulator or the next
# client: saquery SIGKILLed at staggered moments of its RMPP exchange with
# opensm (request sent, table on its way, or queued unread), and opensm
# itself SIGKILLed while its agents are registered (no unregister). After
# them the emulator's fds are back where they were, a new opensm registers
# the same classes and brings the subnet up, and saquery gets whole tables.
. "$(dirname "$0")/lib.sh"
export W="$WORK"

ibemu_run -- bash -c '
. "$INSIDE"
# The daemon is outside the run'"'"'s PID namespace: its status says these.
stat_of() { "$IBEMU" ctl status --json | sed -n "s/^{[^[]*\"$1\":\([0-9]*\).*/\1/p"; }
fds() { stat_of open_fds; }
start_opensm
f0=$(fds)
for i in $(seq 1 30); do
	saquery -p >/dev/null 2>&1 &
	c=$!
	# Staggered on purpose: 0 to 29 ms into the exchange.
	timeout "0.$(printf %03d "$i")" tail -f /dev/null
	kill -9 $c 2>/dev/null
	wait $c 2>/dev/null
done
echo "emulator alive: $("$IBEMU" ctl status | grep -c .) status lines"
echo "fds before $f0 after $(fds)"
echo "PathRecords after the kills: $(saquery -p | grep -c "PathRecord dump")"
kill -9 $osm; wait $osm 2>/dev/null
: >"$W/opensm.log"
start_opensm
echo "second opensm: $(log_count "$W/opensm.log" "SUBNET UP") SUBNET UP"
echo "NodeRecords: $(saquery | grep -c "NodeRecord dump")"
stop_opensm'
expect_rc 0 "the run"
expect_line "fds before" "fds measured"
read -r _ _ before _ after < <(grep "^fds before" "$WORK/out")
[ -n "$before" ] && [ "$before" = "$after" ] && pass "the emulator's fds are back ($after)" ||
	fail "fds before $before, after $after"
expect_match "^emulator alive: [1-9][0-9]* status lines" "the emulator answers after 30 killed saquery"
expect_line "PathRecords after the kills: 49" "and the next saquery gets the whole table"
expect_line "second opensm: 1 SUBNET UP" "an opensm killed with its agents registered leaves them free for the next"
expect_line "NodeRecords: 7" "which serves the SA again"
finish
