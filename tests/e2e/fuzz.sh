#!/bin/bash
# A short fuzz of every libFuzzer target (tests/fuzz): built with clang,
# ASan and UBSan, each runs five seconds from its seed corpus, which holds
# the inputs of bugs found before (ctl/help-uaf: `ctl help` read freed
# memory), so a regression fails at once. The long run is documented in
# tests/fuzz/README.md.
. "$(dirname "$0")/lib.sh"
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
BIN=$(dirname "$IBEMU")
FUZZ="$BIN/tests/fuzz/bin"

"$SRC/tests/fuzz/build.sh" "$SRC" "$BIN" "$FUZZ" >"$WORK/out" 2>&1
RC=$?
expect_rc 0 "the fuzz targets build"
"$SRC/tests/fuzz/run.sh" "$FUZZ" --time 5 >"$WORK/out" 2>&1
RC=$?
expect_rc 0 "no crash, leak or sanitizer report"
for t in topo mad umad ctl verbs mux ucma inbox; do
	expect_match "^$t: [0-9]{4,} runs, no crash" "fuzz_$t ran thousands of inputs"
done
# Each of its inputs sets up sockets and a main loop: hundreds in 5 s.
expect_match "^fast: [0-9]{3,} runs, no crash" "fuzz_fast ran hundreds of inputs"
cat "$WORK/out"
finish
