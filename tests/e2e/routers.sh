#!/bin/bash
# A router between two subnets' switches (Rt records, as ibnetdiscover
# writes them): the file loads; ibnetdiscover from one side finds it as a
# router (R- name, rtguid=, its port toward us) and does not go through it
# (routers do not forward directed-route SMPs, IBA 14.2.2); opensm brings
# its port Active with a LID and lists it; --attach refuses it in one line.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/rt.net" <<'NET'
Switch	4 "swA"	# "subnet A switch"
[1]	"hA"[1]
[2]	"rt"[1]

Switch	4 "swB"	# "subnet B switch"
[1]	"hB"[1]
[2]	"rt"[2]

Ca	1 "hA"	# "host A"
Ca	1 "hB"	# "host B"

rtguid=0x2c90400000700
Rt	2 "rt"	# "router AB"
NET
"$IBEMU" topo check "$WORK/rt.net" >"$WORK/out" 2>&1; RC=$?
expect_rc 0 "topo check"
expect_line "5 nodes (2 switches, 2 CAs, 1 routers), 4 links" "two subnets and a router"

cat >"$WORK/run.sh" <<'SCRIPT'
W=$1
. "$INSIDE"
ibnetdiscover
smpquery -D nodeinfo 0,1,2 | grep NodeType
smpquery -D nodeinfo 0,1,2,2 >/dev/null 2>&1; echo "through the router rc=$?"
start_opensm
echo "opensm ERR $(grep -c ' ERR ' "$W/opensm.log")"
smpquery -D portinfo 0,1,2 1 | grep -E '^(Lid|LinkState)'
ibrouters
stop_opensm
SCRIPT
ibemu_run --topology "$WORK/rt.net" -a hA -- bash "$WORK/run.sh" "$WORK"
expect_line "rtguid=0x2c90400000700" "ibnetdiscover: the router's GUID"
expect_line 'Rt	2 "R-0002c90400000700"		# "router AB"' "ibnetdiscover: an Rt record"
expect_line '[2]	"R-0002c90400000700"[1](2c90400000701) 		# "router AB" lid 0 4xQDR' "swA's port to it"
expect_no_line "subnet B switch" "discovery stops at the router"
expect_line "NodeType:........................Router" "NodeInfo says Router"
expect_match "^through the router rc=[1-9]" "a DR SMP is not forwarded past it"
expect_line "opensm ERR 0" "opensm logs no error"
expect_line "LinkState:.......................Active" "opensm brings the router port Active"
expect_match "^Lid:\.*[1-9][0-9]*$" "... with a LID"
expect_line 'Rt	: 0x0002c90400000700 ports 2 "router AB"' "ibrouters lists it"

ibemu_run --topology "$WORK/rt.net" -a rt -- true
expect_rc 1 "--attach of a router"
grep -v '^ibemu: seed' "$WORK/log" >"$WORK/said"	# -v adds the seed
if [ "$(wc -l <"$WORK/said")" = 1 ] && grep -q "^ibemu: --attach rt: a router cannot be attached" "$WORK/said"; then
	pass "refused in one line"; else fail "refusal is not one line"; cat "$WORK/said"; fi
finish
