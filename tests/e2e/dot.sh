#!/bin/bash
# `ibemu topo dot` and `ibemu ctl dump --dot`: the README's picture is
# docs/default-fabric.png, rendered by Graphviz from docs/default-fabric.dot,
# which must be exactly what `ibemu topo dot topologies/default.net` writes.
# The live view marks a pulled cable, LIDs and nodes with fault rules.
. "$(dirname "$0")/lib.sh"
DOCS="$(cd "$(dirname "$0")/../../docs" && pwd)"

"$IBEMU" topo dot "$TOPOLOGIES/default.net" >"$WORK/out"
expect_same "$DOCS/default-fabric.dot" "$WORK/out" "the committed DOT is the command's output"
dot -Tsvg "$WORK/out" >"$WORK/svg" 2>"$WORK/log" && pass "Graphviz renders it" || fail "dot rejected the graph"
[ "$(grep -c -- ' -- ' "$WORK/out")" = 7 ] && pass "seven cables, one edge each" || fail "edges"

ibemu_run --configured -- bash -c '
"$IBEMU" ctl link down leaf1/2 >/dev/null
"$IBEMU" ctl fault add drop --node host3 >/dev/null
"$IBEMU" ctl dump --dot'
expect_line '"leaf1" -- "host2" [taillabel="2", headlabel="1", label="4x QDR", color=red, style=dotted];' "a pulled cable is red and dotted"
expect_line '"host3" [shape=ellipse, label="host3 HCA-1\nport 1: LID 6\n1 fault rule", color=orange, penwidth=2];' "LIDs and the fault target show"
dot -Tsvg "$WORK/out" >/dev/null 2>&1 && pass "the live graph renders" || fail "live graph"
finish
