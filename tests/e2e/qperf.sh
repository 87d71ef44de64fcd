#!/bin/bash
# qperf (#38): every rc_*, uc_* and ud_* test it has, once, then
# each RC bandwidth test 10 times in a row, none failing: rc_bw,
# rc_bi_bw and rc_rdma_read_bw failed 5 of 12 runs when the daemon
# dropped what a receiver had no room for and requesters had no window
# (10 rounds miss such a failure rate once in 200 suites), and rc_bi_bw
# 5 of 5 before RC requesters kept one (verbs/rc.c).
. "$(dirname "$0")/lib.sh"

cat >"$WORK/q.sh" <<'SCRIPT'
. "$INSIDE"
qperf --listen_port 19766 >"$W/qperf-s.out" 2>&1 &
q=$!
wait_listen 19766
# one TEST: its status and what it printed, on one line
one() {
	timeout 60 qperf -lp 19766 -t 1 -li ibemu0:1 -ri ibemu1:1 localhost "$1" >"$W/q.out" 2>&1
	echo "qperf $2$1 | $? | $(tr -s ' \n' ' ' <"$W/q.out")"
}
# xrc_*: Debian's qperf lists them and says "bad test" (built without XRC).
for t in $(qperf --help tests | awk '$1 ~ /^(rc|uc|ud|ver_rc)_/ { print $1 }'); do
	one $t
done
for r in $(seq 10); do
	for t in rc_bw rc_bi_bw rc_rdma_read_bw rc_rdma_write_bw; do
		one $t "round "
	done
done
kill $q
SCRIPT
timeout 600 "$IBEMU" run -c -a host1 -a host3 -- env W="$WORK" bash "$WORK/q.sh" >"$WORK/out" 2>"$WORK/log"
RC=$?
expect_rc 0 "the run"
n=$(grep -cE '^qperf [a-z_]+ \|' "$WORK/out")
[ "$n" -ge 21 ] && pass "qperf lists $n rc_, uc_, ud_ and ver_rc_ tests" ||
	fail "qperf ran $n tests, want its 21 or more"
while IFS= read -r line; do
	case "$line" in
	"qperf "*" | 0 | "*[0-9]" "[KMG]*"/sec "*|"qperf "*" | 0 | "*" latency = "[0-9]*" "[um]"s ")
		pass "${line%% | *}: ${line##* | }" ;;
	*) fail "$line" ;;
	esac
done < <(grep -E '^qperf [a-z_]+ \|' "$WORK/out")
for t in rc_bw rc_bi_bw rc_rdma_read_bw rc_rdma_write_bw; do
	n=$(grep -cE "^qperf round $t \| 0 \| $t: bw = [0-9.]+ [MG]B/sec $" "$WORK/out")
	[ "$n" = 10 ] && pass "qperf $t: 10 rounds in a row without an error" ||
		fail "qperf $t: $n of 10 rounds without an error: $(grep "^qperf round $t " "$WORK/out" | grep -v "bw = " | head -2)"
done
finish
