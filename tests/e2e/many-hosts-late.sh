#!/bin/bash
# An answer from the owner that comes after its request gave up (issue #35
# item 17): host B reads an attribute of its sysfs while A's emulator is
# stopped; the read fails with EIO after the answer timeout (10 s); A goes
# on, and its late answer must not become the answer to B's next request.
# Requests and answers carry a tag (abi/fast_wire.h): the late one is
# dropped. Before, every read after it got the answer of the one before.
. "$(dirname "$0")/lib.sh"

A="e2e-late-$$"
"$IBEMU" run --name "$A" -- sh -c 'until [ -e "$0/done" ]; do timeout 0.1 tail -f /dev/null; done' \
	"$WORK" >"$WORK/a.out" 2>"$WORK/a.log" &
APID=$!
emu() { "$IBEMU" ctl --name "$A" pid 2>/dev/null; }
wait_for 20 emu >/dev/null || { fail "host A did not come up"; touch "$WORK/done"; finish; exit; }
EMU=$(emu)

# B: read, ask for A to be stopped, read (EIO), ask for it to go on, read.
timeout 120 "$IBEMU" run -v --remote "$A" --attach host2 -- sh -c '
S=/sys/class/infiniband/ibemu0
echo "first guid: $(cat $S/node_guid)"
touch "$0/stop-a"; until [ -e "$0/a-stopped" ]; do timeout 0.1 tail -f /dev/null; done
echo "state while stopped: $(cat $S/ports/1/state 2>&1)"
touch "$0/cont-a"; until [ -e "$0/a-going" ]; do timeout 0.1 tail -f /dev/null; done
echo "guid after: $(cat $S/node_guid)"
echo "state after: $(cat $S/ports/1/state)"
echo "rate after: $(cat $S/ports/1/rate)"' "$WORK" >"$WORK/out" 2>"$WORK/log" &
B=$!
if wait_for 30 test -e "$WORK/stop-a"; then
	kill -STOP "$EMU"; touch "$WORK/a-stopped"
	wait_for 60 test -e "$WORK/cont-a" || fail "B's read did not give up"
	kill -CONT "$EMU"; touch "$WORK/a-going"
else
	fail "B did not attach"; touch "$WORK/a-stopped" "$WORK/a-going"
fi
wait $B; RC=$?
touch "$WORK/done"; wait $APID
expect_rc 0 "host B's command ran"
expect_line "first guid: 0002:c903:0000:0103" "B reads host2's node GUID"
expect_match "^state while stopped: .*Invalid argument" "a read while A is stopped fails after the timeout (EINVAL, as a show that fails)"
expect_line "guid after: 0002:c903:0000:0103" "the next read gets its own answer, not the late one"
expect_match "^state after: [0-9]: [A-Z]+" "and the one after it"
expect_match "^rate after: [0-9]+ Gb/sec" "and the next"
grep -q "an answer that came after its request gave up: dropped" "$WORK/log" &&
	pass "B's log says the late answer was dropped" || fail "no line for the late answer"
finish
