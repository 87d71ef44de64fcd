#!/bin/bash
# The Congestion Control agents (fabric/cc.c, IBA Annex A10): ibccquery
# reads every attribute of a switch's and a CA's, ibccconfig's settings
# read back, a CC_Key with its protect bit makes a keyless query go
# unanswered (and counts a violation), an attribute of the other kind of
# node is refused; opensm with congestion_control TRUE configures every
# switch and CA port with no error, and ibccquery shows its settings.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/run.sh" <<'SCRIPT'
SW=$(ibswitches | head -1 | sed 's/.* lid \([0-9]*\) .*/\1/')
CA=$(ibstat ibemu0 1 | awk '/Base lid/ {print $3}')
for op in ClassPortInfo CongestionInfo CongestionKeyInfo CongestionLog Timestamp \
	SwitchCongestionSetting SwitchPortCongestionSetting; do
	ibccquery $op "$SW" >/dev/null; echo "switch $op rc $?"
done
for op in ClassPortInfo CongestionInfo CongestionKeyInfo CongestionLog Timestamp \
	CACongestionSetting CongestionControlTable; do
	ibccquery $op "$CA" >/dev/null; echo "ca $op rc $?"
done
ibccquery CongestionInfo "$CA" | sed 's/^/ca info: /'
ibccquery CongestionLog "$SW" | grep LogType | sed 's/^/switch log: /'
ibccquery -t 300 SwitchCongestionSetting "$CA" >/dev/null 2>&1; echo "switch setting of a CA rc $?"
ibccconfig SwitchCongestionSetting "$SW" 0x1 0x0 0x0 0xf 0x8 0x0 0:0 1 >/dev/null
ibccquery SwitchCongestionSetting "$SW" | grep -E "Control_Map|^Threshold|Marking" | sed 's/^/set: /'
ibccconfig CongestionKeyInfo "$CA" 0x1234 1 0 0 >/dev/null
ibccquery -t 300 CongestionInfo "$CA" >/dev/null 2>&1; echo "no key rc $?"
ibccquery -c 0x1234 CongestionKeyInfo "$CA" | sed 's/^/key: /'
SCRIPT
ibemu_run -c -a host1 -- bash "$WORK/run.sh"
expect_rc 0 "the CC queries ran"
for op in ClassPortInfo CongestionInfo CongestionKeyInfo CongestionLog Timestamp \
	SwitchCongestionSetting SwitchPortCongestionSetting; do
	expect_line "switch $op rc 0" "ibccquery $op of a switch"
done
for op in ClassPortInfo CongestionInfo CongestionKeyInfo CongestionLog Timestamp \
	CACongestionSetting CongestionControlTable; do
	expect_line "ca $op rc 0" "ibccquery $op of a CA"
done
expect_line "ca info: ControlTableCap:.................8" "a CA's CCT: 8 blocks of 64"
expect_line "switch log: LogType:.........................1" "a switch's log is the switch kind"
expect_line "switch setting of a CA rc 255" "SwitchCongestionSetting of a CA: refused"
expect_line "set: Control_Map:.....................0x00000001" "ibccconfig's switch setting reads back"
expect_line "set: Threshold:.......................0x0f" "its threshold"
expect_line "set: Marking_Rate:....................1" "its marking rate"
expect_line "no key rc 255" "a CC_Key with its protect bit: a keyless Get goes unanswered"
expect_line "key: CC_Key:..........................0x0000000000001234" "with the key it is answered"
# (each of ibccquery's retries is one more: 1 to 3 here, by its timing)
expect_match "^key: CC_KeyViolations:\.+[1-3]$" "and the violations were counted"

# opensm's congestion control manager (congestion_control TRUE).
cat >"$WORK/osm.sh" <<'SCRIPT'
set -u
W=$1
. "$INSIDE"
opensm --create-config "$W/default.conf" >/dev/null 2>&1
sed -e 's/^congestion_control FALSE/congestion_control TRUE/' \
    -e 's/^cc_sw_cong_setting_control_map 0x0/cc_sw_cong_setting_control_map 0x1/' \
    -e 's/^cc_sw_cong_setting_threshold 0x00/cc_sw_cong_setting_threshold 0x0f/' \
    -e 's/^cc_ca_cong_setting_port_control 0x0000/cc_ca_cong_setting_port_control 0x0001/' \
    -e 's/^cc_ca_cong_setting_ccti_timer 0 0/cc_ca_cong_setting_ccti_timer 0 150/' \
    -e 's/^cc_cct (null)/cc_cct 0:0,0:1,0:2,1:1/' "$W/default.conf" >"$W/osm.conf"
start_opensm -F "$W/osm.conf"
SW=$(ibswitches | head -1 | sed 's/.* lid \([0-9]*\) .*/\1/')
CA=$(ibstat ibemu0 1 | awk '/Base lid/ {print $3}')
# opensm sends its Sets after SUBNET UP: wait for the last of them.
wait_until sh -c "ibccquery CongestionControlTable $CA | grep -q 'CCTI_Limit:\.*3$'"
ibccquery SwitchCongestionSetting "$SW" | grep -E "Control_Map|^Threshold" | sed 's/^/osm: /'
ibccquery CACongestionSetting "$CA" | grep -m1 CCTI_Timer | sed 's/^/osm: /'
ibccquery CongestionControlTable "$CA" | grep CCTI_Limit | sed 's/^/osm: /'
stop_opensm
SCRIPT
ibemu_run -- bash "$WORK/osm.sh" "$WORK"
expect_rc 0 "opensm with congestion control"
expect_line "osm: Control_Map:.....................0x00000001" "opensm's switch setting reached the switch"
expect_line "osm: Threshold:.......................0x0f" "its threshold"
expect_line "osm: CCTI_Timer:......................150" "opensm's CA setting reached the CA"
expect_line "osm: CCTI_Limit:......................3" "and its CCT"
if grep -q " ERR " "$WORK/opensm.log"; then fail "opensm logged errors: $(grep ' ERR ' "$WORK/opensm.log" | head -3)"
else pass "opensm logged no ERR"; fi
finish
