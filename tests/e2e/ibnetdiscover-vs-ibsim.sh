#!/bin/bash
# The same net file in ibsim (ibsim-utils + libumad2sim) and in ibemu gives
# the same set of links in ibnetdiscover. Both attach at Switch1 port 0, as
# ibsim does by default.
. "$(dirname "$0")/lib.sh"

NET="$TOPOLOGIES/ibsim-2sw2path4hca.net"
export IBSIM_SOCKNAME="ibemu-test-$$"
ibsim -s -n "$NET" >"$WORK/ibsim.log" 2>&1 &
SIM=$!
trap 'kill $SIM 2>/dev/null; rm -rf "$WORK"' EXIT
# Wait (bounded) for ibsim's sockets to appear.
for _ in $(seq 100); do
	grep -q "@$IBSIM_SOCKNAME:" /proc/net/unix && break
	kill -0 $SIM 2>/dev/null || break
	timeout 0.1 tail -f /dev/null
done
(cd "$WORK" && timeout 60 env LD_PRELOAD=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so \
	ibnetdiscover) >"$WORK/sim.out" 2>"$WORK/sim.err"
RC=$?
cp "$WORK/sim.out" "$WORK/out"
expect_rc 0 "ibnetdiscover under ibsim"
links_of <"$WORK/sim.out" >"$WORK/sim.links"

ibemu_run --topology "$NET" --attach Switch1 -- ibnetdiscover
expect_rc 0 "ibnetdiscover under ibemu"
links_of <"$WORK/out" >"$WORK/emu.links"
[ -s "$WORK/sim.links" ] && pass "ibsim found links" || fail "ibsim found no links"
expect_same "$WORK/sim.links" "$WORK/emu.links" "same links under ibsim and ibemu"
finish
