#!/bin/bash
# What published ibnetdiscover dumps hold loads, and the real tools print
# it back as the hardware did:
# - the example in `man ibnetdiscover` (taken from the installed page): a
#   grouping line, a switch with no sysimgguid= line, and two cables whose
#   ends disagree (4x and 1x: the link trained to 1x, said with -v);
#   ibnetdiscover and ibnetdiscover -g print the file back, but for those
#   two lines, which now read 1x on both ends;
# - ibnetdiscover -g output, ibemu's own, round-trips exactly;
# - a dump that begins with ibnetdiscover's stderr loads with one warning a
#   line naming it, and --strict refuses it;
# - FDR10 stays FDR10: ibnetdiscover, sysfs rate, ibstat, opensm's
#   MlnxExtPortInfo;
# - vendid=0x0/devid=0x0 are kept, a port GUID named only by the far end
#   is the port's, and an uncabled ConnectX-5 has port GUID = node GUID.
. "$(dirname "$0")/lib.sh"

norm() { grep -v '^#' "$1" | grep -v '^$' | tr -s ' \t' ' ' | sed 's/ $//' | sort; }

MAN=/usr/share/man/man8/ibnetdiscover.8.gz
zcat "$MAN" | sed -n '/^An example of this is:/,/^\.ft P/p' | sed -n '/^\.ft C/,/^\.ft P/p' |
	sed '1d;$d; s/\\-/-/g' >"$WORK/man.net"
if grep -q '^Non-Chassis Nodes' "$WORK/man.net" && [ "$(grep -c '^\[' "$WORK/man.net")" = 14 ]; then
	pass "the example taken from $MAN"; else fail "no example in $MAN"; cat "$WORK/man.net"; fi

"$IBEMU" topo check -v "$WORK/man.net" >"$WORK/out" 2>&1; RC=$?
expect_rc 0 "topo check loads the man page example"
expect_line "man.net: 6 nodes (2 switches, 4 CAs, 0 routers), 7 links, 40 ports" "its nodes and links"
expect_match "man.net:26: width 1x, 4x at .*man.net:15: the link trained to 1x" "-v says which cable ends disagree"

norm "$WORK/man.net" | sed '/^\[1[02]\] .* lid [0-9]* 4xSDR$/s/4xSDR$/1xSDR/' | grep -v '^Non-Chassis' >"$WORK/want"
ibemu_run --topology "$WORK/man.net" -a H-0008f10403960558 -- ibnetdiscover
expect_rc 0 "ibnetdiscover on the man page example"
norm "$WORK/out" >"$WORK/got"
expect_same "$WORK/want" "$WORK/got" "ibnetdiscover prints the example back (degraded cables at 1x)"
ibemu_run --topology "$WORK/man.net" -a H-0008f10403960558 -- ibnetdiscover -g
cp "$WORK/out" "$WORK/g.net"
norm "$WORK/out" | sed 's/ #$//' | grep -v '^Non-Chassis' >"$WORK/got"
expect_same "$WORK/want" "$WORK/got" "ibnetdiscover -g prints it back too"
expect_line "Non-Chassis Nodes" "with its grouping line"

# ibnetdiscover -g output fed back: the same discovery.
ibemu_run --topology "$WORK/g.net" -a H-0008f10403960558 -- ibnetdiscover -g
expect_rc 0 "ibemu runs on ibnetdiscover -g output"
grep -v '^#' "$WORK/g.net" >"$WORK/a"
grep -v '^#' "$WORK/out" >"$WORK/b"
[ "$(grep -c '^Switch' "$WORK/a")" = 2 ] || fail "ibnetdiscover -g wrote no fabric to feed back"
expect_same "$WORK/a" "$WORK/b" "ibnetdiscover -g round trip is exact"

# Stray lines: skipped with a warning each, or refused with --strict.
{ echo "ibwarn: [4242] _do_madrpc: recv failed: Connection timed out"
  echo "ibwarn: [4242] handle_port: Query remote node info failed"
  cat "$WORK/man.net"; } >"$WORK/stray.net"
"$IBEMU" topo check "$WORK/stray.net" >"$WORK/out" 2>&1; RC=$?
expect_rc 0 "a dump beginning with ibwarn lines loads"
expect_match "stray.net:1: skipped, not topology: \"ibwarn: \[4242\] _do_madrpc" "the first stray line named"
expect_match "stray.net:2: skipped, not topology" "the second too"
"$IBEMU" topo check --strict "$WORK/stray.net" >"$WORK/out" 2>&1; RC=$?
expect_rc 1 "--strict refuses it"
expect_match "stray.net:1: unrecognized line" "... naming file:line"

# FDR10 end to end.
{ echo "speed=FDR10"; "$IBEMU" topo gen fattree 4; } >"$WORK/fdr10.net"
cat >"$WORK/fdr10.sh" <<'SCRIPT'
W=$1
. "$INSIDE"
echo "FDR10 links $(ibnetdiscover | grep -c '4xFDR10$')"
echo "QDR links $(ibnetdiscover | grep -c 'QDR$')"
cat /sys/class/infiniband/ibemu0/ports/1/rate
ibstat ibemu0 | grep Rate
start_opensm
echo "opensm ERR $(grep -c ' ERR ' "$W/opensm.log")"
smpquery mlnxextportinfo 1 1 | grep LinkSpeed
stop_opensm
SCRIPT
ibemu_run --topology "$WORK/fdr10.net" -- bash "$WORK/fdr10.sh" "$WORK"
expect_line "FDR10 links 32" "ibnetdiscover: both ends of all 16 cables 4xFDR10"
expect_line "QDR links 0" "... and none QDR"
expect_line "40 Gb/sec (4X FDR10)" "sysfs rate as the kernel's for FDR10"
expect_line "Rate: 40 (FDR10)" "ibstat"
expect_line "opensm ERR 0" "opensm (fdr10 on) logs no error"
expect_line "LinkSpeedActive:.................0x01" "MlnxExtPortInfo LinkSpeedActive FDR10"

# Identity as the file says it.
cat >"$WORK/ids.net" <<'NET'
vendid=0x0
devid=0x0
switchguid=0x10(10)
Switch	4 "S-0000000000000010"	# "no ids" base port 0 lid 1 lmc 0
[1]	"H-0002c90300000500"[1](2c9030000beef) 	# "cx3" lid 2 4xQDR

vendid=0x2c9
devid=0x1003
caguid=0x2c90300000500
Ca	1 "H-0002c90300000500"	# "cx3"

vendid=0x2c9
devid=0x1017
sysimgguid=0x98039b0300aaaa00
caguid=0x98039b0300aaaa00
Ca	1 "H-98039b0300aaaa00"	# "uncabled cx5"
NET
ibemu_run --topology "$WORK/ids.net" -a H-0002c90300000500 -a H-98039b0300aaaa00 -- sh -c '
ibnetdiscover; ibstat ibemu0 | grep "Port GUID"; ibstat ibemu1 | grep -E "Node GUID|Port GUID"'
expect_line "vendid=0x0" "vendid=0x0 kept"
expect_line "devid=0x0" "devid=0x0 kept"
expect_line "Port GUID: 0x0002c9030000beef" "a CA port GUID named only by the switch's line"
expect_line "Port GUID: 0x98039b0300aaaa00" "uncabled ConnectX-5: port GUID = node GUID"
finish
