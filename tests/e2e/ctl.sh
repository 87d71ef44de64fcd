#!/bin/bash
# The control plane: `ibemu ctl` finds its emulator from inside `ibemu run`;
# status and --json; bad input (unknown command, bad node, malformed rule)
# gets an error and changes nothing; `dump` writes a topology that loads
# back to the same fabric; other users are refused; the same seed replays
# the same faults and another seed does not.
. "$(dirname "$0")/lib.sh"
export IBEMU TOOLS

export W="$WORK"
ibemu_run --seed 42 -- bash -c '
c() { "$IBEMU" ctl "$@"; }
c status; c --json status; c seed
before=$(c fault list; c dump)
c bogus; echo "bogus rc=$?"
c link down nosuch/1; echo "badnode rc=$?"
c link down leaf1/99; echo "badport rc=$?"
c fault add explode; echo "badaction rc=$?"
c fault add drop --prob 2; echo "badprob rc=$?"
c fault add delay; echo "nodelay rc=$?"
c fault del 7; echo "nodel rc=$?"
c lid host1/1 0xc000; echo "multicast lid rc=$?"
c lid host1/1 5 8; echo "lmc 8 rc=$?"
c fault add drop --port 300; echo "port 300 rc=$?"
c fault add drop --count -1; echo "count -1 rc=$?"
c fault add delay 99999999999; echo "huge delay rc=$?"
c fault add drop --dr --lid; echo "dr and lid rc=$?"
c fault add drop --attr NoSuchAttr; echo "bad attr rc=$?"
c fault add drop --frobnicate 1; echo "unknown option rc=$?"
c fault add drop --node; echo "option without value rc=$?"
c counters host1/1 set LinkDownedCounter 0x100000000; echo "counter too big rc=$?"
c lid host1/0 5; echo "CA port 0 rc=$?"
after=$(c fault list; c dump)
[ "$before" = "$after" ] && echo "unchanged after bad input"
c dump >"$W/dump.net"
c port disable leaf1/1 >/dev/null; echo "disabled: $(cat /sys/class/infiniband/ibemu0/ports/1/phys_state) / $(c port leaf1/1)"
c port enable leaf1/1 >/dev/null; echo "enabled: $(cat /sys/class/infiniband/ibemu0/ports/1/phys_state)"
c guid host3 0x1234 >/dev/null; smpquery -D nodeinfo 0,1,7,1 | grep "^Guid"
c lid host1/1 9 >/dev/null; ibstat ibemu0 1 | grep "Base lid"
c fault add drop --node host4 --tid 0x42 >/dev/null
echo "tid rule: $("$TOOLS/umad_timeout" 200 0 0,1,7,2)"
smpquery -D nodedesc 0,1,7,2 | sed "s/^/other tids: /"
su nobody -s /bin/sh -c "$IBEMU ctl status" 2>&1; echo "other user rc=$?"'
expect_line "6 nodes (2 switches, 4 CAs), 7 links" "status"
expect_match "; seed 42; peak RSS [0-9]+\.[0-9] MB, RSS [0-9]+\.[0-9] MB; [0-9]+ fds open$" \
	"status's text has what --json has (one table: ctl/ctl_show.c)"
expect_line '"seed":42' "status --json"
expect_line "bogus rc=1" "unknown command refused"
expect_line "badnode rc=1" "bad node refused"
expect_line "badport rc=1" "bad port refused"
expect_line "badaction rc=1" "bad action refused"
expect_line "badprob rc=1" "bad probability refused"
expect_line "nodelay rc=1" "delay without a value refused"
expect_line "nodel rc=1" "deleting a missing rule refused"
for what in "multicast lid" "lmc 8" "port 300" "count -1" "huge delay" "dr and lid" "bad attr" \
	"unknown option" "option without value" "counter too big" "CA port 0"; do
	expect_line "$what rc=1" "out of range or malformed: $what"
done
grep -q 'error: "0xc000" is not a unicast LID (0 to 49151)' "$WORK/log" && pass "a range error names the range" ||
	fail "range error text"
expect_line "unchanged after bad input" "bad input changed nothing"
grep -q 'unknown command "bogus"' "$WORK/log" && pass "errors say what is wrong" || fail "error text"
expect_line "other user rc=1" "another user is refused"
expect_line "disabled: 2: Polling / leaf1/1 guid 0x0002c90200000100 state DOWN phys Disabled" "port disable: Disabled here, Polling at host1"
expect_line "enabled: 5: LinkUp" "port enable retrains the link"
expect_line "Guid:............................0x0000000000001234" "a changed GUID shows in NodeInfo"
expect_line "Base lid: 9" "a changed LID shows in sysfs"
expect_line "tid rule: status=110" "a rule on one TID drops it"
expect_line "other tids: Node Description:.....................host4 HCA-1" "and lets other TIDs through"

grep -q 'error: no port "host1/0": host1 is a CA, whose ports are 1..2' "$WORK/log" &&
	pass "a CA's port 0 is no port" || fail "CA port 0 text"

# fault list shows every field a rule was given (issue #35), by name for
# --class data; at most 256 rules, then one line.
ibemu_run -- sh -c 'c() { "$IBEMU" ctl "$@"; }
	c fault add drop --class data --slid 1 --dlid 3 --after 60000 --before 90000 >/dev/null
	c fault add delay 5 --jitter 2 --dir resp --mod 0x10 --tid 7 --dr >/dev/null
	c fault list
	i=2; while [ $i -lt 256 ]; do c fault add drop --class smp >/dev/null; i=$((i + 1)); done
	c fault add drop --class smp; echo "rule 257 rc=$?"'
expect_match "^1 drop 0 node \* port -1 class data method -1 attr -1 slid 1 dlid 3 after \+[0-9]+ ms before \+[0-9]+ ms prob 1 " \
	"fault list: --class data by name, --slid, --dlid, the window"
expect_line "2 delay 5 node * port -1 class -1 method -1 attr -1 mod 0x10 dir resp route dr tid 0x7 jitter 2 prob 1 " \
	"fault list: --mod, --dir, --dr, --tid, --jitter"
expect_line "rule 257 rc=1" "the 257th rule is refused"
grep -q "error: 256 fault rules, the limit: delete one first (fault del ID)" "$WORK/log" &&
	pass "in one line naming the limit" || fail "no line for the rule limit"

# --attr by name: libibumad's names for the rule's class (or for the SM,
# SA, PMA and CM classes), blanks not counting, plus the PMA's and short
# ones; a name of another class is refused, saying which class.
ibemu_run -- sh -c 'c() { "$IBEMU" ctl "$@"; }
	c fault add drop --class cm --attr ConnectRequest >/dev/null
	c fault add drop --class sa --attr PortInfoRecord >/dev/null
	c fault add drop --class dr --attr "Class Port Info" >/dev/null
	c fault add drop --class perf --attr PortCountersExtended >/dev/null
	c fault add drop --attr SMInfo >/dev/null
	c fault add drop --attr LFT >/dev/null
	c fault list | cut -d" " -f1,8-13
	c fault add drop --class sa --attr PortInfo; echo "sa PortInfo rc=$?"'
for want in "1 class 7 method -1 attr 16" "2 class 3 method -1 attr 18" "3 class 129 method -1 attr 1" \
	"4 class 4 method -1 attr 29" "5 class -1 method -1 attr 32" "6 class -1 method -1 attr 25"; do
	expect_line "$want" "--attr by name: $want"
done
expect_line "sa PortInfo rc=1" "an SM attribute name is refused for the SA class"
grep -q 'error: --attr: no attribute "PortInfo" in class SubnAdm (0x03); a name as libibumad spells it, such as NodeRecord' \
	"$WORK/log" && pass "the refusal names the class" || fail "--attr refusal text"

# The dump loads back to the same fabric: ibnetdiscover agrees exactly.
ibemu_run -- ibnetdiscover
grep -v '^#' "$WORK/out" >"$WORK/a"
ibemu_run --topology "$WORK/dump.net" -- ibnetdiscover
grep -v '^#' "$WORK/out" >"$WORK/b"
expect_same "$WORK/a" "$WORK/b" "a dump loads back to the same fabric"

# Replay: a 50% drop rule under the same workload, three seeds. Over the
# FUSE files, where libibmad's poll costs round trips and the emulator's
# timeout report always comes first, so smpquery retries every drop. On
# the fast path, as on hardware, its poll (armed with the send's own
# timeout) may expire first and smpquery gives up without a retry, so the
# number of requests that meet the rule depends on timing
# (docs/fast-path.md, "Timeouts").
replay() {
	ibemu_run --no-fast-path --seed "$1" -- bash -c '
	"$IBEMU" ctl fault add drop --prob 0.5 --attr NodeDescription >/dev/null
	for i in 1 2 3 4 5 6 7 8; do smpquery -t 100 -D nodedesc 0,1 >/dev/null 2>&1; done
	"$IBEMU" ctl events'
	grep '^[0-9]* rule' "$WORK/out" >"$WORK/events.$2"
}
replay 7 a
replay 7 b
replay 8 c
[ -s "$WORK/events.a" ] && pass "probabilistic drops happened ($(wc -l <"$WORK/events.a"))" || fail "no drops"
expect_same "$WORK/events.a" "$WORK/events.b" "the same seed gives the same faults"
if cmp -s "$WORK/events.a" "$WORK/events.c"; then fail "another seed gave the same faults"; else pass "another seed gives other faults"; fi
finish
