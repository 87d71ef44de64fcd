#!/bin/bash
# `ibemu exec` and `ibemu ctl --name` from another terminal join a running
# namespace-mode emulator: the tools see its devices and its fabric, while
# the host outside stays without /dev/infiniband.
. "$(dirname "$0")/lib.sh"

NAME="e2e-exec-$$"
"$IBEMU" run --name "$NAME" --configured -- bash -c "
	n=0; until [ -e '$WORK/done' ] || [ \$n -ge 300 ]; do n=\$((n + 1)); timeout 0.1 tail -f /dev/null; done" \
	>"$WORK/run.out" 2>&1 &
RUN=$!
trap 'touch "$WORK/done"; wait $RUN; rm -rf "$WORK"' EXIT
n=0
until "$IBEMU" ctl --name "$NAME" status >/dev/null 2>&1 || [ $n -ge 100 ]; do n=$((n + 1)); timeout 0.1 tail -f /dev/null; done

"$IBEMU" exec --name "$NAME" -- sh -c 'ibstat -l; smpquery nodedesc 6; "$0" ctl port host1/1' "$IBEMU" >"$WORK/out" 2>&1
RC=$?
expect_rc 0 "ibemu exec ran"
expect_line "ibemu0" "ibstat sees the device"
expect_line "Node Description:.....................host3 HCA-1" "LID-routed SMPs cross the fabric"
expect_line "host1/1 guid 0x0002c90300000101 state ACTIVE" "ibemu ctl inside finds its emulator"
"$IBEMU" ctl --name "$NAME" link down leaf1/1 >"$WORK/out" 2>&1
"$IBEMU" exec --name "$NAME" -- cat /sys/class/infiniband/ibemu0/ports/1/state >>"$WORK/out" 2>&1
expect_line "1: DOWN" "a change from outside shows inside"
if [ -e /dev/infiniband ]; then fail "the host got /dev/infiniband"; else pass "the host outside is untouched"; fi
"$IBEMU" exec --name no-such-emulator -- true >"$WORK/out" 2>&1
RC=$?
expect_rc 1 "no such emulator"
finish
