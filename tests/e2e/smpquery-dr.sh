#!/bin/bash
# smpquery by directed route, several hops away, on the default fabric:
# host1 -(1)- leaf1 -(7)- leaf2 -(1)- host3. Checks what each attribute
# says against default.net, and the MAD statuses of unsupported attributes.
. "$(dirname "$0")/lib.sh"

ibemu_run -- sh -c '
smpquery -D nodeinfo 0,1,7,1;
smpquery -D nodedesc 0,1,7,1;
smpquery -D nodedesc 0,1,7,2;
smpquery -D portinfo 0,1,7 3;
smpquery -D switchinfo 0,1,7;
smpquery -D pkeys 0,1,7,1;
smpquery -D sl2vl 0,1 1;
smpquery -D vlarb 0,1,7 2;
smpdump -D 0,1 0x14 0;
echo pie; smpdump -D 0 0x33 1;
echo lft_on_ca; smpdump -D 0,1,7,1 0x19 0;
smpquery -D nodeinfo 0,1,3; echo deadend_rc=$?'
expect_line "NodeType:........................Channel Adapter" "remote node type"
expect_line "Guid:............................0x0002c90300000105" "host3 GUID three hops away"
expect_line "LocalPort:.......................1" "host3 received on port 1"
expect_line "Node Description:.....................host3 HCA-1" "host3 description"
expect_line "Node Description:.....................host4 HCA-1" "host4 description"
expect_line "LinkState:.......................Initialize" "leaf2 port 3 state"
expect_line "LinearFdbCap:....................49152" "switchinfo of leaf2"
expect_line "   0: 0xffff 0x0000" "host3 P_Key table"
expect_line "ports: in  0, out  1: | 0| 1| 2| 3| 4| 5| 6| 7|" "SL2VL table"
expect_line "# VLArbitration tables" "VLArb answered"
expect_line "0002 c902 0000 0100 0000 0000" "GUIDInfo block 0 of leaf1 by smpdump"
if grep -A5 "^pie" "$WORK/out" | grep -q "SMP status: 0x800c"; then
	pass "PortInfoExtended refused with 0x000C (and the DR D bit)"; else fail "PortInfoExtended status"; fi
if grep -A5 "^lft_on_ca" "$WORK/out" | grep -q "SMP status: 0x800c"; then
	pass "LinearForwardingTable on a CA refused with 0x000C"; else fail "LFT on a CA status"; fi
expect_line "deadend_rc=" "query through a dead end returns"
expect_no_line "deadend_rc=0" "a port with no cable does not answer"
finish
