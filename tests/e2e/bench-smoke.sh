#!/bin/bash
# The benchmarks of bench/ still run and print figures (a smoke run: one
# short round each, its numbers are not judged; docs/performance.md has the
# real runs). Catches a benchmark broken by a change before someone needs it.
. "$(dirname "$0")/lib.sh"
BENCH="$(cd "$(dirname "$0")/../../bench" && pwd)"

gcc -O2 -o "$WORK/floor" "$BENCH/transport_floor.c" $(pkg-config --cflags --libs fuse3) -lpthread \
	>"$WORK/out" 2>&1
RC=$?
expect_rc 0 "transport_floor builds"
for mode in socket ioctl fuse; do
	timeout 60 "$WORK/floor" $mode 0.2 2 2 >"$WORK/out" 2>&1
	RC=$?
	expect_rc 0 "transport_floor $mode, 2 clients, 2 server threads"
	expect_match "^$mode, 2 clients: [1-9][0-9]*/s, p50 [0-9.]+ us" "it prints the $mode rate"
done

timeout 120 bash "$BENCH/smp-rate-vs-ibsim.sh" 1 0.2 2 >"$WORK/out" 2>&1
RC=$?
expect_rc 0 "smp-rate-vs-ibsim.sh runs"
for row in "local, 1 client" "3hops, 1 client" "local, 2 clients" "3hops, 2 clients"; do
	expect_match "^$row( +[1-9][0-9]*){5}( +[0-9.]+){3}$" "smp-rate row '$row': five rates and three ratios"
done

timeout 120 bash "$BENCH/discover-vs-ibsim.sh" 1 fattree 4 >"$WORK/out" 2>&1
RC=$?
expect_rc 0 "discover-vs-ibsim.sh runs"
expect_match "^ratio ibemu/ibsim: [0-9.]+$" "discovery ratio"
expect_match "^ratio ibemu FUSE only/ibsim: [0-9.]+$" "and with the FUSE files only"
expect_match "^ibnetdiscover's own CPU under emu: median [0-9]+ ms \(all: [0-9]+ \)$" \
	"ibnetdiscover's own CPU beside its time"
expect_match "^peak RSS: ibsim [0-9.]+ MB, ibemu [0-9.]+ MB$" "peak RSS of both"

timeout 120 bash "$BENCH/opensm-up-vs-ibsim.sh" 1 fattree 4 >"$WORK/out" 2>&1
RC=$?
expect_rc 0 "opensm-up-vs-ibsim.sh runs"
expect_match "^ibemu  median [0-9]+ ms to SUBNET UP" "opensm to SUBNET UP under ibemu"
expect_match "^ibsim  median [0-9]+ ms for saquery NodeRecords" "saquery NodeRecords under ibsim"
expect_match "^ibemu  median [0-9]+ ms for saquery NodeRecords" "saquery NodeRecords under ibemu"
expect_match "^ibemu FUSE only  median [0-9]+ ms to SUBNET UP" "and with the FUSE files only"
expect_match "^opensm's CPU at SUBNET UP under sim: median [1-9][0-9]* ms" "opensm's CPU at SUBNET UP"
expect_match "^NodeRecords saquery printed \(last round, of 14 nodes\): ibsim [0-9]+, ibemu 14$" \
	"how many records each saquery printed: all of them under ibemu"
expect_match "^peak RSS \(last round\): ibsim [0-9.]+ MB, ibemu [0-9.]+ MB$" "peak RSS of both"
if [ -x "$(dirname "$IBEMU")/verbs/libibemu-rdmav34.so" ]; then
	timeout 120 bash "$BENCH/verbs-pingpong.sh" 1 100 >"$WORK/out" 2>&1
	RC=$?
	expect_rc 0 "verbs-pingpong.sh runs"
	expect_match "^rc_pingpong 64 B: median [0-9.]+ us/iter$" "RC latency"
	expect_match "^ud_pingpong 64 B: median [0-9.]+ us/iter$" "UD latency"
	expect_match "^rc_pingpong 64 KiB: median [0-9.]+ Mbit/s$" "RC bandwidth"
	timeout 120 bash "$BENCH/verbs-vs-tcp.sh" 1 1 >"$WORK/out" 2>&1
	RC=$?
	expect_rc 0 "verbs-vs-tcp.sh runs"
	for t in rc_lat rc_rdma_write_lat ud_lat; do
		expect_match "^$t +[0-9.]+ us +[0-9.]+ us +[0-9.]+$" "$t against a socket's, with the ratio"
	done
	for t in rc_bw rc_rdma_write_bw rc_rdma_read_bw; do
		expect_match "^$t +[0-9.]+ MB/s +[0-9.]+ MB/s +[0-9.]+$" "$t against tcp_bw, with the ratio"
	done
	expect_match "^ib_write_bw 64 KiB: median [0-9.]+ Gbit/s$" "ib_write_bw"
	expect_match "^ibv_rc_pingpong 64 B -e: median [0-9.]+ us/iter$" "ibv_rc_pingpong -e"
	expect_match "^ucx_perftest am_lat rc_verbs: median [0-9.]+ us$" "ucx_perftest am_lat"
	# The CPUs' distance beside each round (bench/core_rtt.c), where
	# there are two.
	if [ "$(nproc)" -ge 2 ]; then
		expect_match "^cpu 0-1 cache-line round trip, ns \(before/after each round\): [0-9]+/[0-9]+$" \
			"the cache line's round trip between CPU 0 and 1, before and after the round"
	fi
	timeout 120 bash "$BENCH/ipoib-vs-tcp.sh" 1 1 >"$WORK/out" 2>&1
	RC=$?
	expect_rc 0 "ipoib-vs-tcp.sh runs"
	for mode in datagram connected; do
		expect_match "^TCP bandwidth, Mbit/s \(median of 1\): loopback [0-9.]+, IPoIB $mode mode [0-9.]+: ratio [0-9.]+$" \
			"iperf3 over IPoIB ($mode mode) against loopback"
		expect_match "^ping round trip, us \(median of 1\): loopback [0-9.]+, IPoIB $mode mode [0-9.]+: ratio [0-9.]+$" \
			"ping over IPoIB ($mode mode) against loopback"
	done
fi
finish
