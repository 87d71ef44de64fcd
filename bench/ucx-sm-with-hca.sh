#!/bin/bash
# What an open ibemu HCA costs a program whose traffic is elsewhere: UCX's
# progress polls every interface it opened, so ucx_perftest tag_lat
# between two processes of one run over shared memory is measured with
# posix alone and with ibemu0's rc_verbs/ud_verbs open beside it (the
# traffic stays on posix), interleaved, medians of ROUNDS (#38: no
# slower).
#
#   bench/ucx-sm-with-hca.sh [ROUNDS] [ITERS]
ROUNDS=${1:-5}
ITERS=${2:-200000}
. "$(dirname "$0")/lib.sh"

cat >"$W/round.sh" <<'SCRIPT'
# lat TLS DEVICES: tag_lat's typical latency, in us
lat() {
	UCX_TLS=$1 UCX_NET_DEVICES=$2 timeout 120 ucx_perftest -t tag_lat -n "$ITERS" -p 13400 \
		>/dev/null 2>&1 &
	s=$!
	until ss -ltn "sport = :13400" | grep -q LISTEN; do timeout 0.05 tail -f /dev/null; done
	UCX_TLS=$1 UCX_NET_DEVICES=$2 timeout 120 ucx_perftest -t tag_lat -n "$ITERS" -p 13400 \
		localhost 2>&1 | awk '/^Final:/ { print $3 }'
	wait $s
}
for r in $(seq "$ROUNDS"); do
	echo "posix $(lat posix,self all)"
	echo "hca $(lat posix,self,rc_verbs,ud_verbs ibemu0:1)"
done
SCRIPT
ROUNDS=$ROUNDS ITERS=$ITERS "$IBEMU" run -c -a host1 -- bash "$W/round.sh" >"$W/rounds" 2>&1
m() { awk -v k="$1" '$1 == k { print $2 }' "$W/rounds" | median; }
p=$(m posix) h=$(m hca)
echo "rounds: $ROUNDS, $ITERS iterations each"
echo "tag_lat over posix: median $p us; with ibemu0 open: median $h us; ratio $(awk -v a="$h" -v b="$p" 'BEGIN { printf "%.2f", a / b }')"
