#!/bin/bash
# ibnetdiscover must print exactly the topology's nodes, links, ports, GUIDs
# and descriptions: on the default fabric against default.net, and on a
# round trip (its own output fed back as the topology prints the same).
. "$(dirname "$0")/lib.sh"

ibemu_run -- ibnetdiscover
expect_rc 0 "ibnetdiscover on the default fabric"
cp "$WORK/out" "$WORK/first.topo"
links_of <"$WORK/out" >"$WORK/links"
cat >"$WORK/want" <<'LINKS'
host1 HCA-1[1] -- ibemu leaf switch 1[1]
host1 HCA-1[2] -- ibemu leaf switch 2[3]
host2 HCA-1[1] -- ibemu leaf switch 1[2]
host3 HCA-1[1] -- ibemu leaf switch 2[1]
host4 HCA-1[1] -- ibemu leaf switch 2[2]
ibemu leaf switch 1[7] -- ibemu leaf switch 2[7]
ibemu leaf switch 1[8] -- ibemu leaf switch 2[8]
LINKS
expect_same "$WORK/want" "$WORK/links" "the seven cables of default.net"
expect_line 'switchguid=0x2c90200000100(2c90200000100)' "leaf1 GUID"
expect_line 'Switch	8 "S-0002c90200000101"		# "ibemu leaf switch 2" enhanced port 0' "leaf2 record"
expect_line 'Ca	2 "H-0002c90300000100"		# "host1 HCA-1"' "host1 record"
expect_line '[2](2c90300000102) 	"S-0002c90200000101"[3]		# lid 0 lmc 0 "ibemu leaf switch 2" lid 0 4xQDR' "host1 port 2 line"
[ "$(grep -c '^Switch' "$WORK/out")" = 2 ] && pass "two switches" || fail "two switches"
[ "$(grep -c '^Ca' "$WORK/out")" = 4 ] && pass "four CAs" || fail "four CAs"

# Round trip: GUIDs, descriptions, speeds and LIDs survive.
ibemu_run --topology "$WORK/first.topo" --attach 0x0002c90300000100 -- ibnetdiscover
expect_rc 0 "ibnetdiscover on its own output"
grep -v '^#' "$WORK/first.topo" >"$WORK/a"
grep -v '^#' "$WORK/out" >"$WORK/b"
expect_same "$WORK/a" "$WORK/b" "round trip through the ibnetdiscover format is exact"

# A fabric with FDR and EDR links and LIDs given in the file.
cat >"$WORK/speeds.net" <<'NET'
Switch	4 "sw"	# "speed switch" enhanced port 0 lid 7 lmc 0
[1]	"a"[1]	s=FDR
[2]	"b"[1]	w=1x s=EDR

Ca	1 "a"	# "node a"
[1]	"sw"[1]	# lid 12 lmc 0 "speed switch" lid 7 4xFDR

Ca	1 "b"	# "node b"
NET
ibemu_run --topology "$WORK/speeds.net" -- sh -c 'ibnetdiscover; ibstat'
expect_line '[1]	"H-' "speeds fabric discovered"
expect_line '# "node a" lid 12 4xFDR' "4xFDR link and the file's LID"
expect_line '# "node b" lid 0 1xEDR' "1xEDR link from w=/s= options"
expect_line 'enhanced port 0 lid 7 lmc 0' "switch LID from the file"
expect_line "Rate: 56" "ibstat rate of 4x FDR"
finish
