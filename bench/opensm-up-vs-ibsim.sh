#!/bin/bash
# opensm from start to its first SUBNET UP (one full sweep: discovery, LIDs,
# routing, LFT and port programming), under ibsim (libumad2sim) and under
# ibemu (the fast path, and FUSE only), on the same generated fabric and
# HCA; interleaved rounds, medians.
# Beside each, the CPU opensm's own threads had used by then: on two
# CPUs, what the emulator's answers share the machine with.
# Then, with that opensm still up, `saquery` of all NodeRecords (an RMPP
# transfer of one record per node), and the peak resident memory of each
# emulator.
#
#   bench/opensm-up-vs-ibsim.sh [ROUNDS] [GENERATOR ARGS...]
#   bench/opensm-up-vs-ibsim.sh 3 fattree 36        # 648 HCAs, 54 switches
#   HOW=emu bench/opensm-up-vs-ibsim.sh 1 fattree3 64 44   # 45,056 HCAs
# HOW names the ibemu rounds: "emu fuse" (default), "emu" (fast path only:
# the big fabrics, where the FUSE round would take as long again).
# UP_S: how long to wait for SUBNET UP, 300 s by default.
ROUNDS=${1:-3}; shift || true
GEN=${*:-fattree 36}
. "$(dirname "$0")/lib.sh"
NAME=osmup-$$
gen_fabric $GEN

# up_ms LOG CMD...: run opensm (CMD) until LOG says SUBNET UP (at most
# $UP_S s), then time `saquery` (NodeRecords), then stop opensm; print the
# milliseconds from opensm's first log line to SUBNET UP, by its own
# timestamps (a tight polling loop here would take CPU from both), those
# of saquery (-1 if it failed), how many records it printed (ibsim has
# no RMPP: libumad2sim passes one 256-byte MAD, so its saquery prints the
# first segment's record and stops, which is why its time is no measure)
# and the ms of CPU opensm's threads had run when SUBNET UP was seen (their
# schedstat, read up to a 0.1 s look late, when opensm is idle).
up_ms() {
	local log=$1 s n osm cpu
	shift
	: >"$log"
	"$@" >/dev/null 2>&1 &
	osm=$!
	wait_for $((${UP_S:-300} * 10)) grep -q "SUBNET UP" "$log"
	cpu=$(cat /proc/$osm/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d", s / 1e6 }')
	# "Nov 22 20:10:01 496691 [...] 0x80 -> ...": seconds of the day, µs.
	awk '{ split($3, t, ":"); us = ((t[1] * 60 + t[2]) * 60 + t[3]) * 1e6 + $4 }
		NR == 1 { first = us } /SUBNET UP/ { printf "%d ", (us - first) / 1000; exit }' "$log"
	s=$(date +%s%N)
	n=$(saquery 2>/dev/null | grep -c '^NodeRecord')
	if [ "$n" -gt 0 ]; then
		echo "$(( ($(date +%s%N) - s) / 1000000 )) $n $cpu"
	else
		echo "-1 0 $cpu"
	fi
	kill $osm 2>/dev/null; wait $osm 2>/dev/null
}
for r in $(seq "$ROUNDS"); do
	# A fresh ibsim each round: its fabric keeps what the last opensm set.
	start_ibsim "$NAME-$r" "$W/net" "$HCA"
	mkdir -p "$W/c1" "$W/c2"
	(cd "$W" && LD_PRELOAD=$PRE up_ms "$W/sim.osm" env OSM_CACHE_DIR="$W/c1" \
		opensm -d2 -f "$W/sim.osm") >>"$W/sim.both"
	sim_rss=$(vmhwm $SIM)
	kill $SIM; wait $SIM 2>/dev/null
	for how in ${HOW:-emu fuse}; do
		rm -rf "$W/c2"; mkdir -p "$W/c2"
		opt=; [ $how = fuse ] && opt=--no-fast-path
		"$IBEMU" run $opt --topology "$W/net" --attach "$HCA" -- bash -c "UP_S=${UP_S:-300}; $(declare -f up_ms wait_for emu_vmhwm);
			up_ms '$W/emu.osm' env OSM_CACHE_DIR='$W/c2' opensm -d2 -f '$W/emu.osm';
			IBEMU='$IBEMU' emu_vmhwm >'$W/emu.rss'" >>"$W/$how.both"
	done
	rm -rf "$W/c1"
done
for f in 1 2; do
	for how in sim emu fuse; do cut -d' ' -f$f "$W/$how.both" >"$W/$how.ms"; done
	[ $f = 1 ] && report "ms to SUBNET UP" || report "ms for saquery NodeRecords"
done
for how in sim emu fuse; do
	[ -s "$W/$how.both" ] || continue
	echo "opensm's CPU at SUBNET UP under $how: median $(cut -d' ' -f4 "$W/$how.both" | median) ms" \
		"(all: $(cut -d' ' -f4 "$W/$how.both" | tr '\n' ' '))"
done
echo "NodeRecords saquery printed (last round, of $(grep -c '^\(Ca\|Switch\)' "$W/net") nodes):" \
	"ibsim $(tail -n1 "$W/sim.both" | cut -d' ' -f3)," \
	"ibemu $(tail -n1 "$W/emu.both" | cut -d' ' -f3)"
echo "peak RSS (last round): ibsim $sim_rss, ibemu $(cat "$W/emu.rss")"
