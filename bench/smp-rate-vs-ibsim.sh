#!/bin/bash
# SMP round trips per second, ibemu next to ibsim: bench/smp_ping (plain
# libibumad, DR NodeInfo one at a time) under libumad2sim + ibsim and under
# ibemu, on the same fabric and HCA; one client, then CLIENTS at once
# (their sum). Interleaved rounds; medians. Local SMPs (0 hops) and SMPs
# three hops away (0,1,3,1: Hca1, Switch1, Switch2, Hca2 in the ibsim
# example fabric topologies/ibsim-2sw2path4hca.net).
#
#   bench/smp-rate-vs-ibsim.sh [ROUNDS] [SECONDS] [CLIENTS]
ROUNDS=${1:-3} SECS=${2:-2} CLIENTS=${3:-8}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
NET=$HERE/../topologies/ibsim-2sw2path4hca.net
NAME=smprate-$$
HCA=Hca1
gcc -O2 -o "$W/smp_ping" "$HERE/smp_ping.c" -libumad || exit 1
start_ibsim "$NAME" "$NET" "$HCA"
start_ibemu "$NAME" "$NET" "$HCA"
rate() { sed -n 's/.*: \([0-9]*\)\/s.*/\1/p'; }
many() {	# many PREFIX...: CLIENTS copies at once, the sum of their rates
	for c in $(seq "$CLIENTS"); do "$@" & done | rate | awk '{s += $1} END {print s}'
}
for r in $(seq "$ROUNDS"); do
	for hops in "" "1 3 1"; do
		key=${hops:+3hops}; key=${key:-local}
		(cd "$W" && LD_PRELOAD=$PRE "$W/smp_ping" "$SECS" $hops) | rate >>"$W/sim.$key"
		"$IBEMU" exec --name "$NAME" -- "$W/smp_ping" "$SECS" $hops | rate >>"$W/emu.$key"
		(cd "$W" && many env LD_PRELOAD=$PRE "$W/smp_ping" "$SECS" $hops) >>"$W/sim.$key.many"
		many "$IBEMU" exec --name "$NAME" -- "$W/smp_ping" "$SECS" $hops >>"$W/emu.$key.many"
	done
done
printf "%-28s %10s %10s %8s\n" "SMP round trips/s" ibsim ibemu "ibemu/ibsim"
for k in local 3hops local.many 3hops.many; do
	s=$(median <"$W/sim.$k"); e=$(median <"$W/emu.$k")
	label=$k; [ "${k%.many}" != "$k" ] && label="${k%.many}, $CLIENTS clients"
	awk -v l="$label" -v s="$s" -v e="$e" 'BEGIN { printf "%-28s %10d %10d %8.2f\n", l, s, e, s ? e / s : 0 }'
done
