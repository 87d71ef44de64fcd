#!/bin/bash
# The README's examples run as written. Every ```sh block runs with bash -e
# in a scratch directory that holds the files the examples name (mynet.topo,
# my_umad_tool.py), with ibemu on PATH; a block after
# `<!-- test: inside ibemu run ARGS -->` runs inside such a run; one after
# `<!-- test: not run: WHY -->` is listed with its reason (each of those is
# covered elsewhere: .ci/run, the CUSE VM tier, bench-smoke).
. "$(dirname "$0")/lib.sh"
README="$(cd "$(dirname "$0")/../.." && pwd)/README.md"
EX="$(cd "$(dirname "$0")/../../examples" && pwd)"
BIN=$(cd "$(dirname "$IBEMU")" && pwd)
export PATH="$BIN:$PATH"

mkdir -p "$WORK/blocks" "$WORK/scratch"
python3 - "$README" "$WORK/blocks" <<'PY'
# Each ```sh block to N.sh, and to N.how its line and the directive on the
# line just before its fence ("top" when none).
import re, sys
lines = open(sys.argv[1]).read().split("\n")
n, i = 0, 0
while i < len(lines):
    if lines[i].startswith("```"):
        lang, start = lines[i][3:], i + 1
        j = i + 1
        while lines[j] != "```":
            j += 1
        if lang == "sh":
            m = re.match(r"<!-- test: (.*) -->$", lines[i - 1])
            n += 1
            open(f"{sys.argv[2]}/{n:02d}.sh", "w").write("\n".join(lines[i + 1:j]) + "\n")
            open(f"{sys.argv[2]}/{n:02d}.how", "w").write(f"{start}\t{m.group(1) if m else 'top'}\n")
        i = j
    i += 1
PY

# The user's own files the examples name.
cat >"$WORK/scratch/mynet.topo" <<'NET'
Switch 8 "sw"
[1] "H-0002c90300001234"[1]
[2] "other"[1]

Ca 1 "H-0002c90300001234"

Ca 1 "other"
NET
cp "$EX/umad_nodeinfo.py" "$WORK/scratch/my_umad_tool.py"
mkdir -p "$WORK/scratch/examples/ci" && cp "$EX/ci/mpi_ring.c" "$WORK/scratch/examples/ci/"
mkdir -p "$WORK/scratch/topologies" && cp "$EX/../topologies/ib-and-roce.net" "$WORK/scratch/topologies/"
# The virtual cluster's MPI examples run as root here, as a newcomer who
# copies them as root would (issue #47): they say --allow-run-as-root.
osm_before=$([ -e /tmp/osm ] && echo yes)

# As a user runs them: with the fast path's library, on by default (CI's
# FUSE-only pass turns it off for the other tests; `rdma link add` needs
# it, as netlink is its to answer).
unset IBEMU_FAST_PATH
ran=0 notrun=0
for b in "$WORK"/blocks/*.sh; do
	IFS=$'\t' read -r line how <"${b%.sh}.how"
	case "$how" in
	"not run: "*)
		echo "README.md:$line: ${how}"
		notrun=$((notrun + 1))
		continue ;;
	top) (cd "$WORK/scratch" && timeout 300 bash -e "$b") >"$WORK/out" 2>&1; RC=$? ;;
	"inside ibemu run"*)
		(cd "$WORK/scratch" && timeout 300 ibemu run ${how#inside ibemu run} -- bash -e "$b") >"$WORK/out" 2>&1; RC=$? ;;
	*) fail "README.md:$line: unknown test directive '$how'"; continue ;;
	esac
	ran=$((ran + 1))
	cp "$WORK/out" "${b%.sh}.out"
	expect_rc 0 "README.md:$line runs as written ($(head -c 60 "$b" | head -1))"
done
[ "$osm_before" ] || rm -rf /tmp/osm
[ $ran -ge 6 ] && pass "$ran README blocks ran, $notrun not run (reasons above)" ||
	fail "only $ran README blocks found to run"

# What some of them print, checked: the first examples and the SM's.
cat "$(grep -l "smpquery -D nodedesc 0,1,7,1" "$WORK"/blocks/*.sh | sed 's/sh$/out/')" >"$WORK/out"
expect_match "^Node Description:\.*host3 HCA-1$" "the run examples reach host3 three hops away"
expect_match "^Ca.*\"H-0002c90300001234\"" "and map the user's own topology"
cat "$(grep -l "saquery -p" "$WORK"/blocks/*.sh | sed 's/sh$/out/')" >"$WORK/out"
[ "$(grep -c "^PathRecord dump" "$WORK/out")" -ge 36 ] &&
	pass "the SM example's saquery -p prints PathRecords" || fail "saquery -p printed no PathRecords"
expect_line 'OSMTEST: TEST "Create Inventory" PASS' "and osmtest passes"
finish
