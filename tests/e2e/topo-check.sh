#!/bin/bash
# `ibemu topo check`: summaries of shipped files, and bad files rejected
# with file:line errors and a non-zero status (the daemon would not start).
. "$(dirname "$0")/lib.sh"

"$IBEMU" topo check "$TOPOLOGIES/default.net" >"$WORK/out" 2>&1; RC=$?
expect_rc 0 "default.net is valid"
expect_line "6 nodes (2 switches, 4 CAs, 0 routers), 7 links, 21 ports" "default.net summary"

printf 'Switch 4 "s1"\n[1] "h1"[1]\n[2] "nowhere"[1]\n\nCa 1 "h1"\n[1] "s1"[1]\n' >"$WORK/bad.net"
"$IBEMU" topo check "$WORK/bad.net" >"$WORK/out" 2>&1; RC=$?
expect_rc 1 "undefined node refused"
expect_line "$WORK/bad.net:3: node \"nowhere\" is not defined" "file:line names the bad link"

printf 'Switch 4 "s1"\n[1] "h1"[1]\n\nCa 1 "h1"\n[1] "s1"[2]\n' >"$WORK/contra.net"
"$IBEMU" topo check "$WORK/contra.net" >"$WORK/out" 2>&1; RC=$?
expect_rc 1 "contradicting link ends refused"
expect_line "contra.net:5: \"h1\"[1] is already linked to \"s1\"[1]" "contradiction named"

printf 'Switch 4 "s1"\n[9] "h1"[1]\n' >"$WORK/port.net"
"$IBEMU" topo check "$WORK/port.net" >"$WORK/out" 2>&1; RC=$?
expect_rc 1 "port out of range refused"
expect_line "port.net:2: node \"s1\" has no port 9 (it has 1..4)" "port range named"

ibemu_run --topology "$WORK/bad.net" -- true
expect_rc 1 "ibemu run refuses a broken topology"
if grep -qF "bad.net:3:" "$WORK/out" "$WORK/log"; then pass "run prints file:line"; else fail "run prints file:line"; fi

ibemu_run --attach nosuchnode -- true
expect_rc 1 "unknown --attach refused"
finish
