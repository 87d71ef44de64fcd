#!/bin/bash
# The SA of a fabric configured without an SM (kernel/sa.c; issue #49):
# saquery reads NodeRecords, PortInfoRecords, LinkRecords, forwarding
# tables, ClassPortInfo and PathRecords from the emulator, as it would
# from opensm; a path over a cable that was pulled is gone; programs
# register ServiceRecords and subscribe with InformInfo, and a trap is
# reported to its subscriber; what an SA must
# refuse gets its status; an opensm started in the run answers instead,
# and the emulator again once it stops. (Multicast joins: multicast.sh.)
. "$(dirname "$0")/lib.sh"

cat >"$WORK/sa.sh" <<'SCRIPT'
set -u
. "$INSIDE"
T=$TOOLS/sa_register
saquery | grep -c "NodeRecord dump" | sed 's/^/node records: /'
saquery NR 5 | grep NodeDescription | tr -s '. \t' ' ' | sed 's/^ */by lid: /'
saquery -O 6 | sed 's/^/name of 6: /'
saquery PIR 6 | grep -E "EndPortLid|LinkState|LID\.\.\." | tr -s '. \t' ' ' | sed 's/^ */pir: /'
saquery -x | grep -c "LinkRecord dump" | sed 's/^/link records: /'
saquery LFTR 1 | awk '$1 == 6 { print "lft 1: lid 6 port " $2 }'
saquery SL2VL 3 | grep -E "OutPort|VL:" | tr -s '. \t' ' ' | sed 's/^ */sl2vl: /'
saquery VLAR 3 | grep -c "VLArbTableRecord dump" | sed 's/^/vlarb blocks: /'
saquery -c | grep -E "Class version|Response time" | tr -s '. \t' ' ' | sed 's/^ */cpi: /'
saquery -p | grep -c "PathRecord dump" | sed 's/^/paths: /'
saquery --src-to-dst 3:6 | grep -E "slid|dlid|mtu|rate|pkt_life" | tr -s '. \t' ' ' | sed 's/^ */path: /'
"$IBEMU" ctl link down host3/1 >/dev/null
saquery --src-to-dst 3:6 2>&1 | grep -c "PathRecord dump" | sed 's/^/paths over a pulled cable: /'
saquery -p | grep -c "PathRecord dump" | sed 's/^/paths without host3: /'
"$IBEMU" ctl link up host3/1 >/dev/null	# Init: no SM brings it up again
$T service 0x1234 ibemu-svc
saquery -S | grep -E "ServiceID|ServiceName" | tr -s '. \t' ' ' | sed 's/^ */sr: /'
$T unservice 0x1234
$T unservice 0x1234 | sed 's/^/again: /'
saquery -S | grep -c "ServiceRecord dump" | sed 's/^/services left: /'
$T inform 64
saquery -I | grep -E "SubscriberGID|trap_num" | tr -s '. \t' ' ' | sed 's/^ */iir: /'
$T uninform 64
saquery -I | grep -c "InformInfoRecord dump" | sed 's/^/subscriptions left: /'
# Event forwarding: a subscriber to trap 128 gets the Report of the trap
# leaf2 sends when host4's cable is pulled.
$T listen 128 >"$W/listen.out" 2>&1 &
l=$!
wait_log "$W/listen.out" subscribed
"$IBEMU" ctl link down host4/1 >/dev/null
wait $l
sed 's/^/listen: /' "$W/listen.out"
$T hostile | sed 's/^/hostile: /'
mkdir -p "$W/cache"
OSM_CACHE_DIR=$W/cache opensm -d2 -f "$W/opensm.log" >/dev/null 2>&1 &
osm=$!
wait_log "$W/opensm.log" "SUBNET UP"
saquery -c | grep "Capability mask\.\." | tr -s '. \t' ' ' | sed 's/^ */with opensm: /'
kill $osm
wait $osm
saquery -c | grep "Capability mask\.\." | tr -s '. \t' ' ' | sed 's/^ */after opensm: /'
exit 0
SCRIPT
ibemu_run --configured -a host1 -a host3 -- env W="$WORK" IBEMU="$IBEMU" bash "$WORK/sa.sh"
expect_rc 0 "the run"
# The default fabric: 2 switches, host1's two ports, hosts 2 to 4.
expect_line "node records: 7" "NodeRecords: every switch and CA port"
expect_line "by lid: NodeDescription host2 HCA-1" "a NodeRecord by LID (Get)"
expect_line "name of 6: host3 HCA-1" "saquery -O: the name of a LID"
expect_line "pir: EndPortLid 6" "a PortInfoRecord by LID"
expect_line "pir: LinkState: Active" "its PortInfo is the SMA's (Active)"
expect_line "link records: 14" "LinkRecords: both ends of the seven cables"
expect_line "lft 1: lid 6 port 7" "LinearForwardingTableRecord: the switch's LFT"
expect_line "sl2vl: OutPort 1" "SLtoVLMappingTableRecord of a CA port"
expect_line "sl2vl: VL: 0| 1| 2| 3| 4| 5| 6| 7| 0| 1| 2| 3| 4| 5| 6| 7|" "its table, as the SMA has it"
expect_line "vlarb blocks: 4" "VLArbitrationTableRecords: a CA port's four blocks"
expect_line "cpi: Class version 2" "ClassPortInfo: SA class version 2"
expect_line "cpi: Response time value 0x12" "ClassPortInfo: opensm's response time"
expect_line "paths: 49" "saquery -p: a path between every two of the 7 end ports (CA ports, switches), as opensm"
for l in "slid 3" "dlid 6" "mtu 0x85" "rate 0x87" "pkt_life 0x92"; do
	expect_line "path: $l" "PathRecord 3 to 6: $l"
done
expect_line "paths over a pulled cable: 0" "no path over a cable that was pulled"
expect_line "paths without host3: 36" "saquery -p without host3: 6 x 6"
expect_line "register: status 0x0000" "ServiceRecord registered (SubnAdmSet)"
expect_line "registered: ibemu-svc" "the SA answers with the record"
expect_line "sr: ServiceID 0x0000000000001234" "saquery -S lists it"
expect_line "sr: ServiceName ibemu-svc" "saquery -S: its name"
expect_line "delete: status 0x0000" "ServiceRecord deleted (SubnAdmDelete)"
expect_line "again: delete: status 0x0300" "deleting it again: ERR_NO_RECORDS"
expect_line "services left: 0" "no ServiceRecord left"
expect_line "inform: status 0x0000" "InformInfo subscription accepted"
expect_line "iir: SubscriberGID fe80::2:c903:0:101" "saquery -I: the subscriber"
expect_line "iir: trap_num 64" "saquery -I: the trap"
expect_line "subscriptions left: 0" "the subscription taken back"
expect_line "listen: report: trap 128 type 1 producer 2 issuer LID 2" \
	"a Report of leaf2's trap 128 to its subscriber (InformInfo)"
expect_line "hostile: unknown attribute: status 0x000c" "an unknown attribute: 0x000C"
expect_line "hostile: delete of a NodeRecord: status 0x000c" "a method the attribute lacks: 0x000C"
expect_line "hostile: class version 1: status 0x0004" "another class version: 0x0004"
expect_line "hostile: Get of every NodeRecord: status 0x0400" "Get matching many: ERR_TOO_MANY_RECORDS"
expect_line "hostile: Get of a NodeRecord by a LID nobody has: status 0x0300" \
	"Get matching none: ERR_NO_RECORDS"
expect_line "hostile: join without a PortGID: status 0x0600" "a join without PortGID: ERR_INSUFFICIENT_COMPONENTS"
expect_line "hostile: join of a port nobody has: status 0x0500" "a join of an unknown port: ERR_INVALID_GID"
expect_line "hostile: leave of a group nobody made: status 0x0200" "leaving no group: ERR_REQ_INVALID"
expect_line "hostile: PathRecord to a GID nobody has: status 0x0300" "a path to no port: ERR_NO_RECORDS"
expect_line "hostile: ServiceRecord without its key: status 0x0200" \
	"a ServiceRecord without ServiceID and GID: ERR_REQ_INVALID, as opensm"
expect_line "with opensm: Capability mask 0x2602" "opensm's SA answers while it runs"
expect_line "after opensm: Capability mask 0x0200" "the emulator's again once it stopped"

# Without --configured there is no SA: the query goes unanswered, as with
# no SM on a kernel.
ibemu_run -a host1 -- sh -c 'timeout 20 saquery -t 300 >/dev/null 2>&1; echo "rc $?"'
expect_match "^rc [1-9]" "no SA without --configured"
finish
