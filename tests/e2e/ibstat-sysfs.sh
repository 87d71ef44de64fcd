#!/bin/bash
# ibstat, ibstat -p/-l, ibstatus and the raw sysfs files against the default
# fabric (topologies/default.net): host1 is attached, a dual-port CA whose
# GUIDs are assigned from 0x0002c90300000100; its links are 4x QDR.
. "$(dirname "$0")/lib.sh"

ibemu_run -- ibstat
expect_rc 0 "ibstat runs"
expect_line "CA 'ibemu0'" "CA name"
expect_line "Number of ports: 2" "host1 has two ports"
expect_line "Node GUID: 0x0002c90300000100" "node GUID"
expect_line "Port GUID: 0x0002c90300000102" "port 2 GUID"
expect_line "State: Initializing" "ports are Init before any SM"
expect_line "Physical state: LinkUp" "links are up"
expect_line "Rate: 40" "4x QDR rate"

ibemu_run -- ibstat -p
expect_line "0x0002c90300000101" "ibstat -p lists port 1"
expect_line "0x0002c90300000102" "ibstat -p lists port 2"

ibemu_run -- ibstatus
expect_rc 0 "ibstatus runs"
expect_line "default gid:	 fe80:0000:0000:0000:0002:c903:0000:0101" "ibstatus gid"
expect_line "rate:		 40 Gb/sec (4X QDR)" "ibstatus rate string"

ibemu_run -- sh -c 'cat /sys/class/infiniband_mad/abi_version /sys/class/infiniband_mad/umad1/ibdev /sys/class/infiniband_mad/umad1/port /sys/class/infiniband/ibemu0/node_guid /sys/class/infiniband/ibemu0/ports/1/cap_mask; ls /sys/class/infiniband/ibemu0/ports/1/pkeys | wc -l; ls /dev/infiniband'
expect_line "ibemu0" "umad1 ibdev"
expect_line "0002:c903:0000:0100" "node_guid format"
expect_line "0x02510868" "cap_mask without IsSM"
expect_line "64" "64 pkey files"
expect_line "umad1" "umad1 device exists"
expect_line "issm0" "issm0 device exists"

ibemu_run --attach host3 -- ibstat -l
expect_line "ibemu0" "ibstat -l with --attach host3"
ibemu_run --attach leaf1 -- ibstat
expect_line "Switch type: MT51000" "an attached switch shows its device id"
expect_line "Port 0:" "a switch shows port 0"
ibemu_run --attach host2 --attach host4 -- ibstat -l
expect_line "ibemu1" "two attached CAs"
finish
