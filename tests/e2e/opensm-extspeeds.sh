#!/bin/bash
# PortInfo on FDR-and-faster fabrics (IBA 14.2.5.6): opensm and ibportstate
# set bit 31 of the attribute modifier (SMSupportsExtendedSpeeds) on every
# port with IsExtendedSpeedsSupported. Read as a port number, that once gave
# status 0x1C to every Set: opensm logged ERR 0F10 hundreds of times and its
# settings never applied. On EDR and NDR fat trees opensm, told to use two
# VLs and one extended speed, must log no error, and smpquery must read back
# what it set on a host port and on a switch port; ibportstate must disable
# and enable a port by LID on a --configured EDR fabric.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/osm.conf" <<'CONF'
max_op_vls 2
force_link_speed_ext 2
CONF
cat >"$WORK/run.sh" <<'SCRIPT'
set -u
W=$1
. "$INSIDE"
start_opensm -F "$W/osm.conf"
echo "host: $(smpquery portinfo 1 0 | grep -E 'OperVLs|LinkSpeedExtEnabled' | tr -d . | tr '\n' ' ')"
sw=$(ibswitches | head -1 | sed 's/.* lid \([0-9]*\) .*/\1/')
echo "switch: $(smpquery portinfo "$sw" 1 | grep -E 'OperVLs|LinkSpeedExtEnabled' | tr -d . | tr '\n' ' ')"
echo "rate $(cat /sys/class/infiniband/ibemu0/ports/1/rate)"
stop_opensm
SCRIPT

for speed in EDR NDR; do
	{ echo "speed=$speed"; "$IBEMU" topo gen fattree 8; } >"$WORK/$speed.net"
	rm -f "$WORK/opensm.log"
	ibemu_run --topology "$WORK/$speed.net" -- bash "$WORK/run.sh" "$WORK"
	if grep -q "SUBNET UP" "$WORK/opensm.log"; then pass "$speed: SUBNET UP"; else fail "$speed: no SUBNET UP"; fi
	n=$(grep -c " ERR " "$WORK/opensm.log")
	if [ "$n" = 0 ]; then pass "$speed: opensm logged no ERR"; else
		fail "$speed: opensm logged $n ERR lines"; grep " ERR " "$WORK/opensm.log" | sort | uniq -c | head -3; fi
	expect_line "host: OperVLs:VL0-1 LinkSpeedExtEnabled:2578125 Gbps " "$speed: opensm's OperVLs and LinkSpeedExtEnabled on the host port"
	expect_line "switch: OperVLs:VL0-1 LinkSpeedExtEnabled:2578125 Gbps " "$speed: ... and on a switch port"
done
expect_line "rate 400 Gb/sec (4X NDR)" "NDR: the host port's rate"

# ibportstate by LID, as an admin would on a configured EDR fabric.
ibemu_run --configured --topology "$WORK/EDR.net" -- sh -c '
sw=$(ibswitches | grep leaf01 | sed "s/.* lid \([0-9]*\) .*/\1/")
ibportstate "$sw" 2 disable >/dev/null; echo "disable rc=$?"
smpquery portinfo "$sw" 2 | grep PhysLinkState
ibportstate "$sw" 2 enable >/dev/null; echo "enable rc=$?"
smpquery portinfo "$sw" 2 | grep PhysLinkState'
expect_line "disable rc=0" "ibportstate LID PORT disable on EDR"
expect_line "PhysLinkState:...................Disabled" "the port reads Disabled"
expect_line "enable rc=0" "ibportstate LID PORT enable on EDR"
expect_line "PhysLinkState:...................LinkUp" "the port trains again"
finish
