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
"$IBEMU" topo gen fattree 7 >/dev/null 2>"$WORK/out"; RC=$?
expect_rc 2 "an odd radix is refused"
expect_line "Usage: ibemu topo gen" "with the usage"

"$IBEMU" topo gen torus 3 3 >"$WORK/t.net"
ibemu_run --topology "$WORK/t.net" -- ibnetdiscover
[ "$(grep -c '^Switch' "$WORK/out")" = 9 ] && pass "ibnetdiscover finds the 9 torus switches" || fail "torus switches"
[ "$(grep -c '^Ca' "$WORK/out")" = 9 ] && pass "and the 9 HCAs" || fail "torus HCAs"
finish
