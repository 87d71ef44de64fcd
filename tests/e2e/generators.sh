#!/bin/bash
# `ibemu topo gen`: every generator writes a fabric the parser accepts (it
# checks that both ends of each cable agree), with the expected shape; a
# generated torus is discovered whole by ibnetdiscover.
. "$(dirname "$0")/lib.sh"

check() {	# check "GEN ARGS" "expected topo check summary"
	"$IBEMU" topo gen $1 >"$WORK/g.net" && "$IBEMU" topo check "$WORK/g.net" >"$WORK/out" 2>&1
	RC=$?
	expect_line "$2" "gen $1"
}
check "fattree 36" "702 nodes (54 switches, 648 CAs, 0 routers), 1296 links, 2592 ports"
check "fattree3 36 6" "2214 nodes (270 switches, 1944 CAs, 0 routers), 5832 links, 11664 ports"
check "torus 4 4 4" "128 nodes (64 switches, 64 CAs, 0 routers), 256 links, 512 ports"
check "mesh 3 3" "18 nodes (9 switches, 9 CAs, 0 routers), 21 links, 54 ports"
check "dragonfly 4 2 2" "108 nodes (36 switches, 72 CAs, 0 routers), 162 links, 324 ports"
# Oversubscribed: 24 HCAs and 12 uplinks a leaf (2:1), so 12 spines.
check "fattree 36 24" "912 nodes (48 switches, 864 CAs, 0 routers), 1296 links, 2592 ports"
# 6 HCAs and 2 uplinks a leaf (3:1): 2 pods x (4 leaves + 2 aggregation) + 2 cores.
check "fattree3 8 2 6" "62 nodes (14 switches, 48 CAs, 0 routers), 80 links, 160 ports"
"$IBEMU" topo gen fattree 7 >/dev/null 2>"$WORK/out"; RC=$?
expect_rc 2 "an odd radix is refused"
expect_line "ibemu topo gen fattree: RADIX must be even, 2..254 (ports a switch)" "saying which limit"
"$IBEMU" topo gen fattree 8 8 >/dev/null 2>"$WORK/out"; RC=$?
expect_rc 2 "a leaf with no uplink is refused"
"$IBEMU" topo gen fattree3 8 1 5 >/dev/null 2>"$WORK/out"; RC=$?
expect_rc 2 "aggregation uplinks that do not fill whole cores are refused"

# The oversubscribed three-level tree is cabled as its header says.
"$IBEMU" topo gen fattree3 8 2 6 >"$WORK/o.net"
ibemu_run --topology "$WORK/o.net" -- ibnetdiscover
[ "$(grep -c '^Switch' "$WORK/out")" = 14 ] && pass "ibnetdiscover finds its 14 switches" || fail "oversubscribed switches"
[ "$(grep -c '^Ca' "$WORK/out")" = 48 ] && pass "and its 48 HCAs" || fail "oversubscribed HCAs"

"$IBEMU" topo gen torus 3 3 >"$WORK/t.net"
ibemu_run --topology "$WORK/t.net" -- ibnetdiscover
[ "$(grep -c '^Switch' "$WORK/out")" = 9 ] && pass "ibnetdiscover finds the 9 torus switches" || fail "torus switches"
[ "$(grep -c '^Ca' "$WORK/out")" = 9 ] && pass "and the 9 HCAs" || fail "torus HCAs"

# Progress while loading a big fabric: on a terminal (script(1) gives one),
# one line rewritten in place and wiped at the end; none into a pipe.
# IBEMU_PROGRESS=always drops the half-second delay before it shows.
"$IBEMU" topo gen fattree3 36 6 >"$WORK/big.net"
IBEMU_PROGRESS=always script -qec "'$IBEMU' topo check '$WORK/big.net'" /dev/null >"$WORK/out" 2>&1
expect_line "reading $WORK/big.net: 0 of 16096 lines (0%)" "a terminal sees the progress of reading"
expect_line "connecting ports: 0 of 11664 cables" "and of connecting ports"
grep -q "$(printf '\r\033\[K')$WORK/big.net: 2214 nodes" "$WORK/out" &&
	pass "wiped before the result" || fail "the progress line was not wiped"
IBEMU_PROGRESS=always "$IBEMU" topo check "$WORK/big.net" >"$WORK/out" 2>&1
expect_no_line "reading" "a pipe sees none"

# Arguments out of range: one line saying which limit, exit 2, no fabric.
# (65536^3 once wrapped to 0 switches: an empty fabric, exit 0.)
gen_refused() {	# WANT ARGS...
	local want=$1
	shift
	"$IBEMU" topo gen "$@" >"$WORK/out" 2>"$WORK/err"; RC=$?
	if [ $RC = 2 ] && [ ! -s "$WORK/out" ] && [ "$(cat "$WORK/err")" = "$want" ]; then
		pass "topo gen $*: refused"; else fail "topo gen $*: rc $RC, said '$(cat "$WORK/err")'"; fi
}
gen_refused "ibemu topo gen mesh: X x Y x Z must be at most 100000 switches" mesh 65536 65536 65536
gen_refused "ibemu topo gen dragonfly: ROUTERS-1 + HOSTS + GLOBAL must be at most 254 (ports a switch)" \
	dragonfly 4 2 4294967295
"$IBEMU" topo gen fattree 4294967298 >"$WORK/out" 2>&1; RC=$?
expect_rc 2 "a radix past 32 bits is refused, not read as 2"
"$IBEMU" run --seed -1 -- true >"$WORK/out" 2>&1; RC=$?
expect_rc 2 "--seed -1"
expect_line 'ibemu: --seed wants a number 0..4294967295, not "-1"' "is refused, not read as 4294967295"
finish
