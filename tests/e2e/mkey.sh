#!/bin/bash
# M_Key with the real tools (IBA 14.2.4). With opensm up, an SM-style
# PortInfo Set gives host3's port an M_Key with protect bits 2: smpquery
# without the key gets no answer (the SMP is dropped, as hardware drops
# it), with `-y KEY` it reads the port and the counted violation, and
# opensm receives Trap 256 (Bad M_Key). Then, opensm stopped so that only
# the test talks to the port, a Set bearing the key gives it a 2 s lease:
# one wrong-key SMP starts it, and when it runs out the protection goes and
# smpquery without the key is answered again (not before).
. "$(dirname "$0")/lib.sh"
export W="$WORK"

ibemu_run -- bash -c '
. "$INSIDE"
KEY=0x1122334455667788
# portinfo_with LEASE: host3 port 1 PortInfo as opensm left it, with M_Key
# KEY, M_KeyLeasePeriod LEASE, M_KeyProtectBits 2, no state change asked.
portinfo_with() {
	python3 -c "
b = bytearray.fromhex(\"$hex\")
b[0:8] = ($KEY).to_bytes(8, \"big\")
b[26:28] = ($1).to_bytes(2, \"big\")
b[32] &= 0xf0; b[33] &= 0x0f
b[34] = (b[34] & 0x3f) | 0x80
print(\" \".join(\"%02x\" % x for x in b))"
}
start_opensm
hex=$(smpdump -D 0,1,7,1 0x15 1 | grep -v status | tr -d " \n")
"$TOOLS/smp_set" 0,1,7,1 0x15 1 "$(portinfo_with 0)" >/dev/null; echo "set rc=$?"
smpquery -D -t 300 portinfo 0,1,7,1 >/dev/null 2>&1; echo "without the key rc=$?"
smpquery -D -t 300 -y $KEY portinfo 0,1,7,1 | grep -E "^Mkey(Violations|LeasePeriod)" | sed "s/^/with the key: /"
wait_log "$W/opensm.log" "num:256"
grep -m1 -o "num:256.*" "$W/opensm.log" | sed "s/^/opensm: /"
stop_opensm

SMP_MKEY=$KEY "$TOOLS/smp_set" 0,1,7,1 0x15 1 "$(portinfo_with 2)" >/dev/null; echo "lease set rc=$?"
smpquery -D -t 300 -y $KEY portinfo 0,1,7,1 | grep -E "^MkeyLeasePeriod" | sed "s/^/with the key: /"
start=$(date +%s%N)
n=0
until smpquery -D -t 300 portinfo 0,1,7,1 >"$W/pi" 2>/dev/null || [ $n -ge 40 ]; do
	n=$((n + 1))
	timeout 0.2 tail -f /dev/null
done
[ -s "$W/pi" ] && echo "after the lease: answered without the key after $n tries, $(( ($(date +%s%N) - start) / 1000000 )) ms"'
expect_rc 0 "the run"
expect_line "set rc=0" "PortInfo Set with an M_Key, protect bits 2"
expect_line "without the key rc=" "smpquery without the key"
grep -q "without the key rc=0" "$WORK/out" && fail "smpquery without the key was answered" ||
	pass "gets no answer (dropped)"
expect_line "with the key: MkeyLeasePeriod:.................0" "smpquery -y reads the port"
expect_match "^with the key: MkeyViolations:[.]+[1-9]" "the violation is counted"
expect_match "^opensm: num:256 \(Bad M_Key\) Producer:1 \(Channel Adapter\) from LID:" "opensm received Trap 256"
expect_line "lease set rc=0" "a Set bearing the key"
expect_line "with the key: MkeyLeasePeriod:.................2" "sets a 2 s lease"
ms=$(sed -n "s/^after the lease: answered without the key after [1-9][0-9]* tries, \([0-9]*\) ms$/\1/p" "$WORK/out")
if [ -n "$ms" ] && [ "$ms" -ge 1800 ]; then
	pass "the lease ran out: protection off, answered without the key after $ms ms"
else
	fail "after the lease: ${ms:-not answered, or at once}"
fi
finish
