#!/bin/bash
# Clients killed at the worst moments do not hurt the emulator or the next
# client: saquery SIGKILLed at staggered moments of its RMPP exchange with
# opensm (request sent, table on its way, or queued unread), and opensm
# itself SIGKILLed while its agents are registered (no unregister). After
# them the emulator's fds are back where they were, a new opensm registers
# the same classes and brings the subnet up, and saquery gets whole tables.
# A process SIGKILLed in a write the emulator holds (CREATE_COMP_CHANNEL
# through FUSE, waiting for an upcall its dead reader will never answer)
# exits: the held write answers the kernel's interrupt.
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

# The command file with the fast path off, as FUSE serves it: the write
# waits for the upcall this process never reads.
cat >"$WORK/held.py" <<'PY'
import os, struct
fd = os.open("/sys/class/infiniband_verbs/uverbs0/ibemu_cmd", os.O_RDWR)
print("writing", flush=True)
os.write(fd, struct.pack("=IHHQ", 17, 4, 0, 0x1000))  # CREATE_COMP_CHANNEL
print("returned")
PY
ibemu_run -c -- bash -c '
. "$INSIDE"
IBEMU_FAST_PATH=0 /usr/bin/python3 -S "$W/held.py" >"$W/held.out" 2>&1 &
h=$!
in_write() { grep -q request_wait_answer "/proc/$h/wchan" 2>/dev/null; }
wait_until in_write
echo "held: $(cat "/proc/$h/wchan")"
kill -9 $h
gone() { ! grep -qs "^State:[[:space:]]*[RSD]" "/proc/$h/status"; }
wait_until gone
gone && echo "held writer: gone" || echo "held writer: still $(grep ^State "/proc/$h/status")"
wait $h
echo "held writer: status $?"
echo "after it: $(ibv_devinfo -l | grep -c ibemu) devices"'
expect_rc 0 "the run with a held write"
expect_line "held: request_wait_answer" "the writer waits in FUSE for the emulator's answer"
expect_line "held writer: gone" "SIGKILL ends it (the held write answered the interrupt)"
expect_line "held writer: status 137" "killed, as any process"
expect_line "after it: 1 devices" "the emulator serves the next program"
finish
