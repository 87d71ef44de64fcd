#!/bin/bash
# The same net file in ibsim (ibsim-utils + libumad2sim) and in ibemu gives
# the same set of links in ibnetdiscover. Both attach at the first switch's
# port 0, as ibsim does by default. Then ibsim's link options (w=, s=, e=:
# enable masks) give the same widths and speeds in both.
. "$(dirname "$0")/lib.sh"
SIM=
trap 'kill $SIM 2>/dev/null; rm -rf "$WORK"' EXIT

# sim_discover NET: ibnetdiscover under ibsim on NET, output in $WORK/sim.out.
sim_discover() {
	export IBSIM_SOCKNAME="ibemu-test-$$-$RANDOM"
	ibsim -s -n "$1" >"$WORK/ibsim.log" 2>&1 &
	SIM=$!
	# Wait (bounded) for ibsim's sockets to appear.
	for _ in $(seq 100); do
		grep -q "@$IBSIM_SOCKNAME:" /proc/net/unix && break
		kill -0 $SIM 2>/dev/null || break
		timeout 0.1 tail -f /dev/null
	done
	(cd "$WORK" && timeout 60 env LD_PRELOAD=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so \
		ibnetdiscover) >"$WORK/sim.out" 2>"$WORK/sim.err"
	RC=$?
	kill $SIM; wait $SIM 2>/dev/null
	cp "$WORK/sim.out" "$WORK/out"
}

sim_discover "$TOPOLOGIES/ibsim-2sw2path4hca.net"
expect_rc 0 "ibnetdiscover under ibsim"
links_of <"$WORK/sim.out" >"$WORK/sim.links"
ibemu_run --topology "$TOPOLOGIES/ibsim-2sw2path4hca.net" --attach Switch1 -- ibnetdiscover
expect_rc 0 "ibnetdiscover under ibemu"
links_of <"$WORK/out" >"$WORK/emu.links"
[ -s "$WORK/sim.links" ] && pass "ibsim found links" || fail "ibsim found no links"
expect_same "$WORK/sim.links" "$WORK/emu.links" "same links under ibsim and ibemu"

# Each port line as "[port] remote-description 4xQDR".
rates_of() {
	sed -n 's/^\(\[[0-9]*\]\)[^#]*#.*"\([^"]*\)" lid [0-9]* \([0-9]*x[A-Z0-9]*\)$/\1 \2 \3/p' | sort
}
sim_discover "$TOPOLOGIES/ibsim-link-options.net"
expect_rc 0 "ibnetdiscover under ibsim, link options"
rates_of <"$WORK/sim.out" >"$WORK/sim.rates"
ibemu_run --topology "$TOPOLOGIES/ibsim-link-options.net" --attach S1 -- ibnetdiscover
expect_rc 0 "ibnetdiscover under ibemu, link options"
rates_of <"$WORK/out" >"$WORK/emu.rates"
grep -q "12xDDR" "$WORK/sim.rates" && grep -q "4xEDR" "$WORK/sim.rates" &&
	pass "ibsim reads w=8 s=2 as 12xDDR, w=2 s=4 e=2 as 4xEDR" || fail "ibsim's rates: $(cat "$WORK/sim.rates")"
expect_same "$WORK/sim.rates" "$WORK/emu.rates" "same widths and speeds under ibsim and ibemu"
finish
