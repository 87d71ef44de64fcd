#!/bin/bash
# Issue #39's benchmark: the emulated verbs data path against a TCP socket
# over loopback, in one run, interleaved, medians of ROUNDS rounds. Two
# HCAs two switch hops apart (host1 = ibemu0, host3 = ibemu1 of the
# default fabric, --configured). qperf measures both sides the same way:
# rc_lat, rc_rdma_write_lat against tcp_lat, ud_lat against udp_lat,
# rc_bw, rc_rdma_write_bw, rc_rdma_read_bw against tcp_bw (ratios: at
# most 1.0 for latency, at least 1.0 for bandwidth are the targets);
# beside them perftest's ib_write_bw with 64 KiB messages, ibv_rc_pingpong
# polling and with a completion channel (-e), and ucx_perftest am_lat
# (a UCT test) over rc_verbs: its median latency.
#
#   bench/verbs-vs-tcp.sh [ROUNDS] [SECONDS_PER_TEST (whole seconds, qperf -t)]
ROUNDS=${1:-5}
SECS=${2:-2}
. "$(dirname "$0")/lib.sh"

cat >"$W/round.sh" <<'SCRIPT'
Q=19767 P=18790
# The two ends on two CPUs: a run shorter than the scheduler's balancing
# (2,000 round trips of 1 us) otherwise stays where it started, often both
# ends on one CPU, and then times a context switch per message
# (docs/performance.md, "One table per kind of device file").
ON0= ON1=
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then ON0="taskset -c 0" ON1="taskset -c 1"; fi
listen_on() { until ss -ltn "sport = :$1" | grep -q LISTEN; do timeout 0.05 tail -f /dev/null; done; }
qperf --listen_port $Q >/dev/null 2>&1 &
q=$!
listen_on $Q
# q TEST [OPTIONS]: one qperf test, "TEST VALUE UNIT"
q() {
	local t=$1
	shift
	timeout 120 qperf -lp $Q -t "$SECS" "$@" localhost "$t" 2>&1 |
		awk -v t="$t" '/latency *=|bw *=/ { print t, $(NF - 1), $NF }'
}
for t in tcp_lat udp_lat tcp_bw; do q $t; done
for t in rc_lat rc_rdma_write_lat ud_lat rc_bw rc_rdma_write_bw rc_rdma_read_bw; do
	q $t -li ibemu0:1 -ri ibemu1:1
done
kill $q
# pair NAME SERVER... -- CLIENT...: a server on ibemu1, its client on ibemu0
pair() {
	local name=$1 s
	shift
	P=$((P + 1))
	timeout 120 $ON1 "$@" -d ibemu1 -p $P >"$W/srv" 2>&1 &
	s=$!
	listen_on $P
	timeout 120 $ON0 "$@" -d ibemu0 -p $P localhost 2>&1 | sed "s/^/$name /"
	wait $s
}
pair pp-poll ibv_rc_pingpong -s 64 -n 2000 | grep usec
pair pp-event ibv_rc_pingpong -e -s 64 -n 2000 | grep usec
pair write-bw ib_write_bw -s 65536 -n 2000 -F --report_gbits | awk '$1 == "write-bw" && $2 == 65536'
timeout 120 $ON1 ucx_perftest -p $((P + 1)) -t am_lat -x rc_verbs -d ibemu1:1 -n 2000 >/dev/null 2>&1 &
s=$!
listen_on $((P + 1))
timeout 120 $ON0 ucx_perftest -p $((P + 1)) -t am_lat -x rc_verbs -d ibemu0:1 -n 2000 localhost 2>&1 |
	awk '$1 == "Final:" { print "ucx-am-lat", $3 }'
wait $s
SCRIPT
for r in $(seq "$ROUNDS"); do
	before=$(core_rtt)
	SECS=$SECS W=$W "$IBEMU" run -c -a host1 -a host3 -- bash "$W/round.sh" >>"$W/rounds" 2>&1
	echo "core-rtt $before $(core_rtt)" >>"$W/rounds"
done
# us TEST / mbs TEST: the medians in one unit
us() { awk -v t="$1" '$1 == t { v = $2; if ($3 == "ms") v *= 1000; if ($3 == "ns") v /= 1000; print v }' "$W/rounds" | median; }
mbs() { awk -v t="$1" '$1 == t { v = $2; if ($3 ~ /^GB/) v *= 1000; if ($3 ~ /^KB/) v /= 1000; print v }' "$W/rounds" | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f", a / b }'; }
echo "rounds: $ROUNDS, qperf -t $SECS; host1 and host3 (two hops), --configured"
printf "%-20s %12s %12s %8s\n" test ibemu tcp/udp ratio
for t in rc_lat rc_rdma_write_lat ud_lat; do
	base=tcp_lat; [ $t = ud_lat ] && base=udp_lat
	printf "%-20s %9s us %9s us %8s\n" $t "$(us $t)" "$(us $base)" "$(ratio "$(us $t)" "$(us $base)")"
done
for t in rc_bw rc_rdma_write_bw rc_rdma_read_bw; do
	printf "%-20s %7s MB/s %7s MB/s %8s\n" $t "$(mbs $t)" "$(mbs tcp_bw)" "$(ratio "$(mbs $t)" "$(mbs tcp_bw)")"
done
echo "ib_write_bw 64 KiB: median $(awk '$1 == "write-bw" { print $5 }' "$W/rounds" | median) Gbit/s"
echo "ibv_rc_pingpong 64 B polling: median $(awk '$1 == "pp-poll" && /usec/ { print $(NF - 1) }' "$W/rounds" | median) us/iter"
echo "ibv_rc_pingpong 64 B -e: median $(awk '$1 == "pp-event" && /usec/ { print $(NF - 1) }' "$W/rounds" | median) us/iter"
echo "ucx_perftest am_lat rc_verbs: median $(awk '$1 == "ucx-am-lat" { print $2 }' "$W/rounds" | median) us"
# The CPUs' distance, before and after each round (lib.sh core_rtt).
echo "cpu 0-1 cache-line round trip, ns (before/after each round): $(awk '$1 == "core-rtt" { printf "%s%s/%s", n++ ? ", " : "", $2, $3 }' "$W/rounds")"
