#!/bin/bash
# SMP round trips per second, ibemu (the fast path, and FUSE only) next to
# ibsim and next to the bare transports they ride on. bench/smp_ping (plain libibumad, DR NodeInfo one
# at a time) runs under libumad2sim + ibsim and under ibemu on the same
# fabric and HCA; bench/transport_floor does the same write/poll/read
# against a FUSE file whose server answers at once, one thread looking for
# the next request for 50 µs as ibemu's does (ibemu's floor: three FUSE
# requests per round trip), and against a socketpair echo (ibsim's floor:
# one datagram each way). One client, then CLIENTS at once (their sum; ibsim
# takes at most 10 clients, the others fail to attach and count nothing).
# Interleaved rounds; medians. Local SMPs (0 hops) and SMPs three hops away
# (0,1,3,1: Hca1, Switch1, Switch2, Hca2 in the ibsim example fabric
# topologies/ibsim-2sw2path4hca.net). Needs root (the FUSE floor mounts).
#
#   bench/smp-rate-vs-ibsim.sh [ROUNDS] [SECONDS] [CLIENTS]
ROUNDS=${1:-3} SECS=${2:-2} CLIENTS=${3:-8}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
NET=$HERE/../topologies/ibsim-2sw2path4hca.net
NAME=smprate-$$
HCA=Hca1
gcc -O2 -o "$W/smp_ping" "$HERE/smp_ping.c" -libumad || exit 1
# shellcheck disable=SC2046
gcc -O2 -o "$W/floor" "$HERE/transport_floor.c" $(pkg-config --cflags --libs fuse3) -lpthread || exit 1
start_ibsim "$NAME" "$NET" "$HCA"
start_ibemu "$NAME" "$NET" "$HCA"
rate() { sed -n 's/.*: \([0-9]*\)\/s.*/\1/p'; }
many() {	# many PREFIX...: CLIENTS copies at once, the sum of their rates
	for c in $(seq "$CLIENTS"); do "$@" 2>/dev/null & done | rate | awk '{s += $1} END {print s}'
}
for r in $(seq "$ROUNDS"); do
	for n in 1 "$CLIENTS"; do
		"$W/floor" socket "$SECS" "$n" | rate >>"$W/socket.$n"
		"$W/floor" fuse "$SECS" "$n" 1 50 | rate >>"$W/fuse.$n"
	done
	for hops in "" "1 3 1"; do
		key=${hops:+3hops}; key=${key:-local}
		(cd "$W" && LD_PRELOAD=$PRE "$W/smp_ping" "$SECS" $hops) | rate >>"$W/sim.$key.1"
		"$IBEMU" exec --name "$NAME" -- "$W/smp_ping" "$SECS" $hops | rate >>"$W/emu.$key.1"
		"$IBEMU" exec --name "$NAME" --no-fast-path -- "$W/smp_ping" "$SECS" $hops | rate >>"$W/efuse.$key.1"
		(cd "$W" && many env LD_PRELOAD=$PRE "$W/smp_ping" "$SECS" $hops) >>"$W/sim.$key.$CLIENTS"
		many "$IBEMU" exec --name "$NAME" -- "$W/smp_ping" "$SECS" $hops >>"$W/emu.$key.$CLIENTS"
		many "$IBEMU" exec --name "$NAME" --no-fast-path -- "$W/smp_ping" "$SECS" $hops >>"$W/efuse.$key.$CLIENTS"
	done
done
printf "%-22s %9s %9s %9s %10s %10s %11s %11s %11s\n" "round trips/s" "socket" ibsim "FUSE x3" \
	"ibemu FUSE" "ibemu fast" "fast/ibsim" "FUSE/ibsim" "FUSE/floor"
for n in 1 "$CLIENTS"; do
	for k in local 3hops; do
		so=$(median <"$W/socket.$n"); fu=$(median <"$W/fuse.$n")
		s=$(median <"$W/sim.$k.$n"); e=$(median <"$W/emu.$k.$n"); ef=$(median <"$W/efuse.$k.$n")
		label="$k, $n client"; [ "$n" = 1 ] || label="${label}s"
		awk -v l="$label" -v so="$so" -v s="$s" -v fu="$fu" -v e="$e" -v ef="$ef" 'BEGIN {
			printf "%-22s %9d %9d %9d %10d %10d %11.2f %11.2f %11.2f\n", l, so, s, fu, ef, e,
				s ? e / s : 0, s ? ef / s : 0, fu ? ef / fu : 0 }'
	done
done
echo "ibemu fast: programs as ibemu run and exec start them (the fast path); ibemu FUSE: --no-fast-path"
echo "FUSE/floor: ibemu's FUSE rate over the bare three-request FUSE transport's (#16: keep it at 0.90-0.95)"
