#!/bin/bash
# The verbs data path between two attached CAs (host1 = ibemu0 and host3 =
# ibemu1 of the default fabric, --configured: two switch hops): latency of
# ibv_rc_pingpong and ibv_ud_pingpong with small messages, and the
# bandwidth of ibv_rc_pingpong with 64 KiB ones (ib_send_bw-style: one
# message each way per iteration, at MTU 1024); medians of ROUNDS rounds.
# With `roce`, the same over RoCE ports (--roce, RoCE v2 GID 3: every
# packet with its GRH, docs/roce.md).
#
#   bench/verbs-pingpong.sh [ROUNDS] [ITERS] [roce]
ROUNDS=${1:-5}
# 20,000: a pingpong's first thousands of round trips pay for its start
# (the direct path's grants asked of the daemon, first touches of the
# rings): at 2,000 that start was half of what the median showed, and
# moved it by microseconds between rounds (docs/performance.md).
ITERS=${2:-20000}
MODE=-c GID=
if [ "${3:-}" = roce ]; then MODE=--roce GID="-g 3"; fi
. "$(dirname "$0")/lib.sh"

cat >"$W/round.sh" <<'SCRIPT'
port=18700
# The two ends on two CPUs: a run shorter than the scheduler's balancing
# (20,000 round trips of 1-3 us) otherwise stays where it started, often both
# ends on one CPU, and then times a context switch per message
# (docs/performance.md, "One table per kind of device file").
ON0= ON1=
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then ON0="taskset -c 0" ON1="taskset -c 1"; fi
# run NAME ARGS...: one pingpong, its client's last two lines
run() {
	local name=$1 s
	shift
	port=$((port + 1))
	timeout 120 $ON1 "$@" -d ibemu1 -p $port >/dev/null 2>&1 &
	s=$!
	until ss -ltn "sport = :$port" | grep -q LISTEN; do timeout 0.05 tail -f /dev/null; done
	timeout 120 $ON0 "$@" -d ibemu0 -p $port localhost 2>&1 | tail -2 | sed "s/^/$name /"
	wait $s
}
run rc-lat ibv_rc_pingpong $GID -s 64 -n "$ITERS"
run ud-lat ibv_ud_pingpong $GID -s 64 -n "$ITERS"
run rc-bw ibv_rc_pingpong $GID -s 65536 -n $((ITERS / 10))
SCRIPT
for r in $(seq "$ROUNDS"); do
	before=$(core_rtt)
	ITERS=$ITERS GID=$GID "$IBEMU" run $MODE -a host1 -a host3 -- bash "$W/round.sh" >>"$W/rounds" 2>&1
	echo "core-rtt $before $(core_rtt)" >>"$W/rounds"
done
lat() { awk -v n="$1" '$1 == n && /usec\/iter/ {print $(NF - 1)}' "$W/rounds" | median; }
bw() { awk -v n="$1" '$1 == n && /Mbit\/sec/ {print $(NF - 1)}' "$W/rounds" | median; }
echo "rounds: $ROUNDS, $ITERS iterations (bandwidth: $((ITERS / 10)) of 64 KiB)${GID:+, RoCE v2}"
echo "rc_pingpong 64 B: median $(lat rc-lat) us/iter"
echo "ud_pingpong 64 B: median $(lat ud-lat) us/iter"
echo "rc_pingpong 64 KiB: median $(bw rc-bw) Mbit/s"
# The CPUs' distance, before and after each round (lib.sh core_rtt).
echo "cpu 0-1 cache-line round trip, ns (before/after each round): $(awk '$1 == "core-rtt" { printf "%s%s/%s", n++ ? ", " : "", $2, $3 }' "$W/rounds")"
