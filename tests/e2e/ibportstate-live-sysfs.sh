#!/bin/bash
# PortInfo Set through ibportstate (a real SubnSet) moves link states on
# both ends, and the host's sysfs follows at once (it is live, unlike
# ibsim's snapshot): disabling leaf1 port 1 takes host1 port 1 down. The
# SMPs go out of host1 port 2 (via leaf2, path 0,2,7): disabling the cable
# they travel on would lose the answer, as on real hardware.
. "$(dirname "$0")/lib.sh"

ST=/sys/class/infiniband/ibemu0/ports/1
ibemu_run -- sh -c "
cat $ST/state $ST/phys_state;
ibportstate -P 2 -D 0,2,7 1 disable >/dev/null; echo disabled;
cat $ST/state $ST/phys_state; ibstat ibemu0 1 | grep State;
smpquery -P 2 -D portinfo 0,2,7 1 | grep PhysLinkState;
ibportstate -P 2 -D 0,2,7 1 enable >/dev/null; echo enabled;
cat $ST/state $ST/phys_state"
expect_rc 0 "ibportstate disable/enable"
sed -n '/^disabled/,/^enabled/p' "$WORK/out" >"$WORK/mid"
if grep -q "^1: DOWN" "$WORK/mid" && grep -q "^2: Polling" "$WORK/mid"; then
	pass "host1 port 1 is Down/Polling once its peer is disabled"; else fail "peer disable not seen in sysfs"; fi
if grep -q "State: Down" "$WORK/mid"; then pass "ibstat sees Down"; else fail "ibstat sees Down"; fi
if grep -q "PhysLinkState:...................Disabled" "$WORK/mid"; then pass "leaf1 port 1 reads Disabled"; else fail "leaf1 port 1 Disabled"; fi
if sed -n '/^enabled/,$p' "$WORK/out" | grep -q "^2: INIT" && sed -n '/^enabled/,$p' "$WORK/out" | grep -q "^5: LinkUp"; then
	pass "link retrains to Init/LinkUp after enable"; else fail "link back up after enable"; fi
finish
