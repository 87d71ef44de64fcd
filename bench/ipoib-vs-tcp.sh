#!/bin/bash
# Issue #51's benchmark: TCP between two hosts of a virtual cluster over
# IPoIB on the wire (docs/ipoib.md) against TCP over loopback on one
# host, in one run, interleaved, medians of ROUNDS rounds: iperf3's
# receiver bandwidth (SECONDS each) and ping's average round trip (50
# pings 10 ms apart), in datagram mode and then in connected mode (both
# hosts' /sys/class/net/ib0/mode). host1 and host3 of the default
# fabric, two switch hops apart, --configured. Targets: bandwidth at
# least a third of loopback's, round trip within 3x.
#
#   bench/ipoib-vs-tcp.sh [ROUNDS] [SECONDS]
ROUNDS=${1:-5}
SECS=${2:-2}
. "$(dirname "$0")/lib.sh"
command -v iperf3 >/dev/null && command -v ping >/dev/null ||
	{ echo "bench: needs iperf3 and ping (./setup.sh --test)" >&2; exit 1; }

cat >"$W/round.sh" <<'SCRIPT'
PEER=$(ssh host3 ip -4 -o addr show ib0 | awk '{print $4}' | cut -d/ -f1)
up() { $1 ss -ltn "sport = :5201" | grep -q LISTEN; }
# bw WHERE ADDR: iperf3's receiver Mbit/s, its server on WHERE ("" or "ssh host3")
bw() {
	$1 iperf3 -s -1 >/dev/null 2>&1 &
	local s=$!
	until up "$1"; do timeout 0.05 tail -f /dev/null; done
	timeout 60 iperf3 -c "$2" -t "$SECS" -f m 2>&1 | awk '/receiver/ {print $(NF - 2)}'
	wait $s
}
rtt() { ping -c 50 -i 0.01 -q "$1" | awk -F/ '/^rtt/ {print $5 * 1000}'; }
echo "tcp-lo $(bw "" 127.0.0.1)"
echo "tcp-ipoib $(bw "ssh host3" "$PEER")"
echo "rtt-lo $(rtt 127.0.0.1)"
echo "rtt-ipoib $(rtt "$PEER")"
echo connected >/sys/class/net/ib0/mode
ssh host3 "echo connected > /sys/class/net/ib0/mode"
echo "tcp-ipoib-cm $(bw "ssh host3" "$PEER")"
echo "rtt-ipoib-cm $(rtt "$PEER")"
SCRIPT

for r in $(seq "$ROUNDS"); do
	SECS=$SECS timeout 300 "$IBEMU" run --configured --hosts host1,host3 -- bash "$W/round.sh" \
		>>"$W/all" 2>"$W/err" || { cat "$W/err" >&2; exit 1; }
done
m() { awk -v k="$1" '$1 == k {print $2}' "$W/all" | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
lo=$(m tcp-lo) rlo=$(m rtt-lo)
for mode in datagram connected; do
	[ $mode = datagram ] && k=ipoib || k=ipoib-cm
	ib=$(m tcp-$k) rib=$(m rtt-$k)
	printf 'TCP bandwidth, Mbit/s (median of %s): loopback %s, IPoIB %s mode %s: ratio %s\n' \
		"$ROUNDS" "$lo" $mode "$ib" "$(ratio "$ib" "$lo")"
	printf 'ping round trip, us (median of %s): loopback %s, IPoIB %s mode %s: ratio %s\n' \
		"$ROUNDS" "$rlo" $mode "$rib" "$(ratio "$rib" "$rlo")"
done
echo "rounds:"
sed 's/^/  /' "$W/all"
