#!/bin/bash
# LID-routed tools on the default fabric started --configured (LIDs in file
# order: leaf1 1, leaf2 2, host1 3/4, host2 5, host3 6, host4 7; min-hop
# routes, lowest port first): ibroute, ibtracert, smpquery by LID and by
# combined route, ibswitches, ibhosts, iblinkinfo, ibportstate query; then an
# LFT block set over the wire with a real SubnSet shows up in ibroute;
# vendstat's general information from Mellanox's vendor class.
. "$(dirname "$0")/lib.sh"

ibemu_run --configured -- sh -c '
ibroute 1; ibtracert 3 6; smpquery nodedesc 6; smpquery -c nodedesc 1,0,7,1;
ibswitches; ibhosts; iblinkinfo; ibportstate 2 3 query; cat /sys/class/infiniband/ibemu0/ports/1/lid'
expect_rc 0 "LID-routed tools run"
expect_line "Unicast lids [0x0-0x7] of switch Lid 1 guid 0x0002c90200000100 (ibemu leaf switch 1):" "ibroute header"
expect_line "0x0003 001 : (Channel Adapter portguid 0x0002c90300000101: 'host1 HCA-1')" "route to host1 port 1"
expect_line "0x0006 007 : (Channel Adapter portguid 0x0002c90300000106: 'host3 HCA-1')" "route to host3 over the first ISL"
expect_line "7 valid lids dumped" "ibroute counts seven LIDs"
expect_line 'From ca {0x0002c90300000100} portnum 1 lid 3-3 "host1 HCA-1"' "ibtracert source"
expect_line '[7] -> switch port {0x0002c90200000101}[7] lid 2-2 "ibemu leaf switch 2"' "ibtracert crosses to leaf2"
expect_line 'To ca {0x0002c90300000105} portnum 1 lid 6-6 "host3 HCA-1"' "ibtracert destination"
expect_line "Node Description:.....................host3 HCA-1" "smpquery by LID (and by combined route)"
if [ "$(grep -c 'host3 HCA-1$' "$WORK/out")" -ge 2 ]; then pass "combined route reached host3"; else fail "combined route"; fi
expect_line 'Switch	: 0x0002c90200000101 ports 8 "ibemu leaf switch 2" enhanced port 0 lid 2 lmc 0' "ibswitches"
expect_line 'Ca	: 0x0002c90300000105 ports 1 "host3 HCA-1"' "ibhosts"
expect_line '2    3[  ] ==( 4X          10.0 Gbps Active/  LinkUp)==>       4    2[  ] "host1 HCA-1" ( )' "iblinkinfo"
expect_line "LinkState:.......................Active" "ibportstate query"
expect_line "0x3" "sysfs lid"

# Route LID 5 (host2) out of leaf1 port 8 instead of 2, over the wire:
# read block 0, change byte 5, SubnSet it back.
ibemu_run --configured -- sh -c '
bytes=$(smpdump -D 0,1 0x19 0 | head -4 |
	awk "{for (i = 1; i <= NF; i++) printf \"%s %s \", substr(\$i, 1, 2), substr(\$i, 3, 2)}");
new=$(echo "$bytes" | awk "{\$6 = \"08\"; print}");
'"$TOOLS"'/smp_set 0,1 0x19 0 "$new" >/dev/null && ibroute 1'
# leaf2 sends LID 5 back to leaf1: the SMP loops and is lost, so ibroute
# shows the new port and cannot name the (now unreachable) destination.
expect_line "0x0005 008 : (unknown node and type)" "ibroute shows the LFT entry that was set, and packets follow it"
expect_line "0x0006 007 : (Channel Adapter portguid 0x0002c90300000106: 'host3 HCA-1')" "other entries unchanged"

# Mellanox's vendor class (fabric/vendor_mlx.c): vendstat -N reads the
# general info of a switch and of a CA; what is not emulated (the IS3
# config space) is answered "unsupported", not left to time out.
ibemu_run --configured -- sh -c 'vendstat -N 1; vendstat -N 6; vendstat -t 300 -R 0x10 1 2>&1 | sed "s/^/cs: /"'
expect_rc 0 "vendstat runs"
expect_line "hw_dev_id:   0xc738" "vendstat -N of a switch: its device id (SwitchX)"
expect_line "hw_dev_id:   0x1003" "vendstat -N of a CA: its device id"
expect_line "fw_version:  02.42.5000" "the firmware version sysfs gives too"
expect_line "fw_psid:     'IBEMU1003'" "a PSID"
expect_line "cs: vendstat: method 1, attribute 80 failure" "config space: refused..."
expect_no_line "cs: ibwarn" "... at once (unsupported), no timeout"

# mstflint's in-band access reads the CR space (vendor classes 0x0A and
# 0x09, attribute 0x50), which no emulated device has: "unsupported" at
# once, and mstflint says it cannot open the device (well inside its 30 s
# MAD timeout, with no retry).
ibemu_run --configured -- bash -c 'timeout 25 mstflint -d lid-5 q 2>&1 | sed "s/^/mstflint: /"; echo "mstflint done ${PIPESTATUS[0]}"'
expect_line "mstflint: -E- Cannot open Device: lid-5." "mstflint -d lid-N: a clear refusal"
expect_match "^mstflint done [0-9]+$" "mstflint ends by itself (not killed by timeout 25)"
expect_no_line "mstflint done 124" "mstflint is not left to time out"
finish
