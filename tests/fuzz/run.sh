#!/bin/bash
# run.sh BINDIR [--time SECONDS | --runs N] [TARGET...]: fuzz each target
# (default: all) from its seed corpus (tests/fuzz/corpus/TARGET, copied:
# the tree is not written), and print "TARGET: N runs, no crash" or the
# sanitizer's report with the crashing input saved in BINDIR. Exit 1 if any
# target crashed, leaked or timed out.
#   make check runs: --time 5 (tests/e2e/fuzz.sh)
#   the documented long run: --runs 10000000 (hours on two cores)
set -u
BIN=$1; shift
LIMIT=-max_total_time=5
case "${1:-}" in
--time) LIMIT=-max_total_time=$2; shift 2 ;;
--runs) LIMIT=-runs=$2; shift 2 ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
TARGETS=${*:-topo mad umad ctl fast verbs mux ucma inbox}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
rc=0
for t in $TARGETS; do
	mkdir -p "$WORK/$t"
	cp "$HERE/corpus/$t/"* "$WORK/$t/"
	# -max_len: umad sequences carry RMPP writes; a MAD is 257 bytes; text
	# inputs past 2 KiB find nothing new and slow every run down.
	case $t in umad | fast | verbs | mux | ucma) len=16384 ;; mad) len=512 ;; *) len=2048 ;; esac
	"$BIN/fuzz_$t" "$LIMIT" -max_len=$len -timeout=20 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$BIN/$t-" "$WORK/$t" >"$WORK/$t.log" 2>&1
	r=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$WORK/$t.log")
	if [ $r -eq 0 ]; then
		echo "$t: ${runs:-?} runs, no crash ($(grep -o 'cov: [0-9]*' "$WORK/$t.log" | tail -1))"
	else
		echo "$t: FAILED after ${runs:-?} runs (rc $r):"
		grep -E -A20 'ERROR|runtime error|SUMMARY|timeout|out-of-memory' "$WORK/$t.log" | head -40
		ls "$BIN/$t-"* 2>/dev/null | sed 's/^/  input: /'
		rc=1
	fi
done
exit $rc
