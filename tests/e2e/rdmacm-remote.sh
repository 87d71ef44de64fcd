#!/bin/bash
# rdma_cm on an attached host (docs/many-hosts.md, docs/rdmacm.md): host A
# is an `ibemu run` with host1, host B an `ibemu run --remote A` with
# host2. B's librdmacm reaches its connection manager, which lives in A
# beside host2's ports: rping connects both ways with data verified,
# ucmatose makes several connections, and A's `ctl status` lists B's
# listener under B's line.
. "$(dirname "$0")/lib.sh"
unset IBEMU_FAST_PATH

A="e2e-cmr-$$"
export W="$WORK"
# A: an rping server on host1; then, once B listens, a client to B.
"$IBEMU" run -v --configured --name "$A" --attach host1 -- bash -c '
timeout 60 rping -s -a 10.1.0.3 -C 10 -V >"$W/a-srv" 2>&1 &
timeout 60 ucmatose -b 10.1.0.3 -c 3 -C 5 >"$W/a-tose" 2>&1 &
echo up >"$W/a-up"
wait
n=0; until [ -e "$W/b-listens" ] || [ $n -ge 600 ]; do n=$((n + 1)); timeout 0.1 tail -f /dev/null; done
timeout 60 rping -c -I 10.1.0.3 -a 10.1.0.4 -C 10 -V -v >"$W/a-cli" 2>&1; echo "a client: $?" >>"$W/a-cli"
echo done >"$W/a-done"
n=0; until [ -e "$W/b-done" ] || [ $n -ge 600 ]; do n=$((n + 1)); timeout 0.1 tail -f /dev/null; done' >"$WORK/a.out" 2>"$WORK/a.log" &
APID=$!
trap 'kill $APID 2>/dev/null; wait $APID; rm -rf "$WORK"' EXIT
# A's servers listen (its ctl status), rping's and ucmatose's.
listening() { "$IBEMU" ctl --name "$A" status 2>/dev/null | grep -c "^rdma_cm: listening on 10.1.0.3:" | grep -qx 2; }
if ! wait_for 60 listening; then
	fail "host A's servers did not listen"; cat "$WORK/a.out" "$WORK/a.log"; finish
fi

ibemu_run --remote "$A" --attach host2 -- bash -c '
timeout 60 rping -c -I 10.1.0.4 -a 10.1.0.3 -C 10 -V -v >"$W/b-cli" 2>&1; echo "b client: $?"
timeout 60 ucmatose -s 10.1.0.3 -b 10.1.0.4 -c 3 -C 5 >"$W/b-tose" 2>&1; echo "b ucmatose: $?"
timeout 60 rping -s -a 10.1.0.4 -C 10 -V >"$W/b-srv" 2>&1 &
srv=$!
n=0
until ibemu ctl status | grep -q "^  rdma_cm: listening on 10.1.0.4:7174" || [ $n -ge 300 ]; do
	n=$((n + 1)); timeout 0.1 tail -f /dev/null
done
ibemu ctl status | grep -E "^remote|^  rdma_cm"
touch "$W/b-listens"
wait $srv; echo "b server: $?"
touch "$W/b-done"
'
expect_rc 0 "host B ran"
expect_line "b client: 0" "rping from the attached host to A: connected, 10 pings verified"
expect_line "b ucmatose: 0" "ucmatose: 3 connections from the attached host"
expect_match "^remote [^ ]+: uid [0-9]+, pid [0-9]+.*: host2$" "A's status: B's line"
expect_line "  rdma_cm: listening on 10.1.0.4:7174 (tcp)" "A's status lists B's listener under it"
expect_line "b server: 0" "rping from A to the attached host's server"
wait_for 60 test -e "$WORK/a-done"
OUT_B=$(cat "$WORK/out")
# Its pings, not its status: rping's client closes its event channel
# while its CM thread may be about to read it again, and then exits 255
# ("rdma_get_cm_event: Bad file descriptor", as on a kernel: the race is
# rping's), once in a full make check.
grep -c "^ping data: rdma-ping" "$WORK/a-cli" >"$WORK/out"
expect_line "10" "A's rping client to the attached host: 10 pings' data verified"
grep -c "^ping data: rdma-ping" "$WORK/b-cli" >"$WORK/out"
expect_line "10" "B's client verified 10 pings' data"
finish
