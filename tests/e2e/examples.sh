#!/bin/bash
# The files under examples/ keep working: the libibumad C program (also
# linked statically), the Python program that drives the device without
# libibumad, the opensm fault walk-through, and the scenario example.
. "$(dirname "$0")/lib.sh"
EX="$(cd "$(dirname "$0")/../../examples" && pwd)"
BIN=$(dirname "$IBEMU")

ibemu_run -- sh -c "'$BIN/examples/nodeinfo' 0,1,7,1; '$BIN/examples/nodeinfo-static' 0,1; python3 '$EX/umad_nodeinfo.py' 0,1,7,2"
expect_rc 0 "the C and Python examples"
expect_line "CA node GUID 0x0002c90300000105, 1 ports, SMP arrived on port 1" "nodeinfo: host3 three hops away"
expect_line "Switch node GUID 0x0002c90200000100, 8 ports, SMP arrived on port 1" "the static binary reaches leaf1"
expect_line "CA node GUID 0x0002c90300000107, 1 ports (from Python, no libibumad)" "Python drives the device itself"

ibemu_run -- bash "$EX/opensm-faults.sh"
expect_rc 0 "examples/opensm-faults.sh (ibemu found on the run's PATH)"
grep -q "integer expression" "$WORK/log" && fail "opensm-faults.sh: a test on an empty count" ||
	pass "opensm-faults.sh says nothing on stderr about its counts"
expect_line "== SUBNET UP: 7 NodeRecords" "opensm came up"
expect_line "== cable out: 6 NodeRecords" "a pulled cable shows in the SA"
expect_line "== cable back: 7 NodeRecords" "and its return"
expect_line "SymbolErrorCounter == 500" "ibqueryerrors shows the injected counter"

# The first step pulls host1's first cable for 500 ms; polling the state could
# miss that window on a loaded machine, the LinkDownedCounter it leaves cannot.
# perfquery asks host1's PMA through its second port, whose cable stays in.
ibemu_run --configured --scenario "$EX/link-flap.scn" -- bash -c '
downs() { perfquery -P 2 $(cat /sys/class/infiniband/ibemu0/ports/2/lid) 1 | sed -n "s/^LinkDownedCounter:\.*//p"; }
n=0; until [ "$(downs)" -ge 1 ] 2>/dev/null || [ $n -ge 300 ]; do n=$((n + 1)); timeout 0.05 tail -f /dev/null; done
echo "flap: link downed $(downs) time(s), state now $(cat /sys/class/infiniband/ibemu0/ports/1/state)"'
expect_rc 0 "examples/link-flap.scn loads and runs"
expect_match "^flap: link downed [12] time\\(s\\), state now [12]: " "its first step pulled host1's cable"
# The CI example: the script action.yml runs keeps the event log, the
# capture and opensm's log, and exits with the command's status.
(cd "$WORK" && IBEMU="$IBEMU" IBEMU_OPENSM=true IBEMU_ARTIFACTS=art \
	IBEMU_RUN='saquery | grep -c "NodeRecord dump"; ibemu ctl link down host4/1; exit 3' \
	"$EX/ci/run-on-fabric.sh") >"$WORK/out" 2>&1
RC=$?
expect_rc 3 "examples/ci/run-on-fabric.sh exits with the command's status"
expect_line "7" "opensm was up before the command (7 NodeRecords)"
grep -q "link down host4/1" "$WORK/art/events.txt" && pass "the event log is kept" || fail "no events.txt"
[ "$(tshark -r "$WORK/art/fabric.pcap" 2>/dev/null | grep -c 'SubnGet(NodeInfo)')" -ge 6 ] &&
	pass "and a capture tshark reads" || fail "no capture of the sweep"
grep -q "SUBNET UP" "$WORK/art/opensm.log" && pass "and opensm's log" || fail "no opensm.log"
# The MPI step of the GitHub Actions example, as written there: its args
# and run through the same script, from the top of the tree (Open MPI's
# mpicc and mpirun under the generic names, as on a runner with only it).
python3 - "$EX/ci/github-actions.yml" >"$WORK/step" <<'PY'
import sys, yaml
for job in yaml.safe_load(open(sys.argv[1]))["jobs"].values():
    for step in job["steps"]:
        w = step.get("with", {})
        if "--hosts" in w.get("args", ""):
            print(w["args"]); print(w["run"], end="")
PY
mkdir -p "$WORK/mpibin"
ln -sf "$(command -v mpicc.openmpi)" "$WORK/mpibin/mpicc"
ln -sf "$(command -v mpirun.openmpi)" "$WORK/mpibin/mpirun"
(cd "$EX/.." && PATH="$WORK/mpibin:$PATH" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
	IBEMU="$IBEMU" IBEMU_OPENSM=true IBEMU_ARTIFACTS="$WORK/art-mpi" IBEMU_ARGS="$(head -1 "$WORK/step")" \
	IBEMU_RUN="cd $WORK && $(tail -n +2 "$WORK/step" | sed "s|examples/|$EX/|")" \
	"$EX/ci/run-on-fabric.sh") >"$WORK/out" 2>&1
RC=$?
expect_rc 0 "the example's MPI job over four hosts"
expect_line "rank 3 of 4 on host4" "its ranks on the four hosts"
expect_line "ring: token 600 after 100 laps, right" "and the token went round right"
# The RoCE example's step, as written there, through the same script with
# the action's roce input; and roce with opensm refused.
python3 - "$EX/ci/github-actions-roce.yml" >"$WORK/step" <<'PY'
import sys, yaml
for job in yaml.safe_load(open(sys.argv[1]))["jobs"].values():
    for step in job["steps"]:
        w = step.get("with", {})
        if w.get("roce"):
            print(w["args"]); print(w["run"], end="")
PY
(cd "$EX/.." && IBEMU="$IBEMU" IBEMU_ROCE=true IBEMU_ARTIFACTS="$WORK/art-roce" \
	IBEMU_ARGS="$(head -1 "$WORK/step")" IBEMU_RUN="$(tail -n +2 "$WORK/step")" \
	"$EX/ci/run-on-fabric.sh") >"$WORK/out" 2>&1
RC=$?
expect_rc 0 "the RoCE example's step"
expect_match "link_layer:[[:space:]]*Ethernet" "its HCA is a RoCE port"
[ "$(grep -c "rdma-ping-" "$WORK/out")" -eq 10 ] && pass "its rping client got 10 answers" ||
	fail "the RoCE example's rping: $(grep -c "rdma-ping-" "$WORK/out") answers, not 10"
[ "$(tshark -r "$WORK/art-roce/fabric.pcap" -Y 'udp.dstport == 4791' 2>/dev/null | wc -l)" -ge 40 ] &&
	pass "its capture holds RoCE v2 frames" || fail "no RoCE v2 frames in the RoCE example's capture"
(cd "$WORK" && IBEMU="$IBEMU" IBEMU_ROCE=true IBEMU_OPENSM=true IBEMU_RUN=true \
	"$EX/ci/run-on-fabric.sh") >"$WORK/out" 2>&1
RC=$?
expect_rc 2 "roce and opensm together refused"
expect_line "ibemu: roce and opensm: RoCE ports have no subnet manager; leave opensm out" "saying why"
# action.yml runs files that exist and uses only the inputs it declares.
python3 - "$EX/../action.yml" >"$WORK/out" 2>&1 <<'PY'
import os, re, sys, yaml
path = sys.argv[1]
a = yaml.safe_load(open(path))
root = os.path.dirname(path)
text = open(path).read()
for f in re.findall(r"GITHUB_ACTION_PATH/([\w./-]+)", text):
    assert os.path.exists(os.path.join(root, f)), "missing " + f
for i in re.findall(r"inputs\.(\w+)", text):
    assert i in a["inputs"], "undeclared input " + i
assert a["runs"]["using"] == "composite"
print("action.yml ok")
PY
expect_line "action.yml ok" "action.yml: its files exist, its inputs are declared"
finish
