#!/bin/bash
# Issue #47, 1: a hostile sender of the verbs direct path reaches the
# receiving process only as the fabric would let its packets. Between
# host1 (ibemu0) and host3 (ibemu1), two switch hops apart, a program
# that speaks the fast protocol itself (verbs_attack.py) takes a grant to
# an ordinary UD receiver (verbs_victim) and writes into every piece of
# memory it is given: another source QP, a wrong Q_Key, a forged SLID,
# an UPCALL record aimed at address 0x10, credit and inbox records,
# counters raised by 2^40, packets in sub-rings it was not granted, and,
# once the receiver's link is down and a drop rule is on, packets of its
# own. The receiver takes only its own grant's packets, with the SLID
# the fabric gives; it does not crash; nothing comes in past the link
# and the rule; the PMA counters count what was taken. A receiver with
# IBEMU_DIRECT=0 is given no sender at all.
. "$(dirname "$0")/lib.sh"
export IBEMU W="$WORK" VICTIM="$TOOLS/verbs_victim"
export ATTACK="$(cd "$(dirname "$0")" && pwd)/verbs_attack.py"
export PYTHONPATH="$(dirname "$ATTACK")"
unset IBEMU_FAST_PATH	# the direct path stands on the fast path (the sanitizer pass turns it off)

cat >"$WORK/attack.sh" <<'SCRIPT'
set -u
. "$INSIDE"
L2=$(ibswitches | awk '/leaf switch 2/ {for (i = 1; i <= NF; i++) if ($i == "lid") print $(i + 1)}')
count() { perfquery -x "$L2" 1 | awk -F. '/^'"$1"':/ {print $NF}'; }
echo "host1 lid $(ibstat ibemu0 1 | awk '/Base lid/ {print $3}')"
"$VICTIM" ibemu1 >"$W/v.out" 2>&1 &
v=$!
wait_log "$W/v.out" "^victim lid"
read -r _ _ vlid _ vqpn <"$W/v.out"
p0=$(count PortXmitPkts)
/usr/bin/python3 -S "$ATTACK" "$vlid" "$vqpn" "${GRANT_SECONDS:-30}" >"$W/a.out" 2>&1 &
a=$!
if [ "${GRANT_SECONDS:-30}" = 30 ]; then
	wait_log "$W/v.out" "text MARK1"
	"$IBEMU" ctl link down host3/1 >/dev/null
	"$IBEMU" ctl fault add drop --class data --node leaf2 >/dev/null
	touch "$W/go2"
	wait_log "$W/a.out" "phase 2 written"
	"$IBEMU" ctl fault del 1 >/dev/null
	"$IBEMU" ctl link up host3/1 >/dev/null
	# as an SM would: both ends of the cable Armed, then Active
	for state in arm active; do
		ibportstate "$L2" 1 $state >/dev/null
		ibportstate "$vlid" 1 $state >/dev/null
	done
	"$IBEMU" ctl wait active --timeout 30 >/dev/null
	touch "$W/go3"
fi
wait "$v"
echo "victim: status $?"
wait "$a"
echo "xmit packets: $(( $(count PortXmitPkts) - p0 ))"
sed 's/^/victim: /' "$W/v.out"
cat "$W/a.out"
SCRIPT

ibemu_run -c -a host1 -a host3 -- bash "$WORK/attack.sh"
expect_rc 0 "the run"
expect_line "attack: grant" "the attacker took a grant to the victim's QP"
expect_line "victim: status 0" "the receiver did not crash (an UPCALL record aimed at 0x10)"
lid1=$(sed -n 's/^host1 lid //p' "$WORK/out")
expect_match "^victim: got src_qp [0-9]+ slid $lid1 text OWN-SLID\$" \
	"its own packet came with the SLID the fabric gives ($lid1), not the forged 2457"
expect_line "text MARK1" "what its grant lets through arrives"
expect_no_line "FORGED-QP" "a packet with another source QP: not taken"
expect_no_line "FORGED-QKEY" "a packet with a wrong Q_Key: not taken"
expect_no_line "OTHER-SUB" "nothing in sub-rings it was not granted"
expect_no_line "AFTER-DOWN" "nothing past a link down and a drop rule"
expect_match "^victim: got .* text SYNC$" "the daemon's packet after all of that"
n=$(sed -n 's/^xmit packets: //p' "$WORK/out")
[ -n "$n" ] && [ "$n" -lt 1000 ] && pass "the PMA counted what was taken ($n packets), not 2^40" ||
	fail "leaf2/1's PortXmitPkts moved by ${n:-nothing}"

# The receiver keeps out: no grant to it, whatever a sender asks.
export GRANT_SECONDS=3
ibemu_run -c -a host1 -a host3 -- env IBEMU_DIRECT=0 bash "$WORK/attack.sh"
expect_rc 0 "the run with IBEMU_DIRECT=0"
expect_line "attack: no grant (-11)" "IBEMU_DIRECT=0 on the receiver: no sender is given it"
expect_match "^victim: got .* text STOP$" "its packets come through the daemon"

finish
