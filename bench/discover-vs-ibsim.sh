#!/bin/bash
# ibnetdiscover on the same fabric under ibsim (ibsim-utils + libumad2sim)
# and under ibemu, interleaved, attached at the same HCA, several rounds;
# prints the median wall time of each and the ratio ibemu / ibsim.
# Both simulators are started first: this times discovery only.
#
#   bench/discover-vs-ibsim.sh [ROUNDS] [GENERATOR ARGS...]
#   bench/discover-vs-ibsim.sh 5 fattree3 36 6      # the 1944-HCA fat tree
set -u
ROUNDS=${1:-5}; shift || true
GEN=${*:-fattree 36}
IBEMU=${IBEMU:-$(cd "$(dirname "$0")/.." && pwd)/ibemu}
W=$(mktemp -d)
NAME=bench-$$
trap 'touch "$W/done"; kill $SIM 2>/dev/null; wait; rm -rf "$W"' EXIT

"$IBEMU" topo gen $GEN >"$W/net"
HCA=$(grep -m1 '^Ca' "$W/net" | sed 's/^Ca[^"]*"\([^"]*\)".*/\1/')
nodes=$(grep -c '^\(Ca\|Switch\)' "$W/net")
echo "fabric: topo gen $GEN ($nodes nodes), both attached at $HCA, $ROUNDS rounds"

# ibsim: sized for the fabric, console off; clients attach by SIM_HOST.
export IBSIM_SOCKNAME=$NAME SIM_HOST=$HCA
ibsim -s -n -N $((nodes + 16)) -S $(grep -c '^Switch' "$W/net") -P $((nodes * 40)) "$W/net" \
	>"$W/ibsim.log" 2>&1 &
SIM=$!
# ibemu: a run that waits, joined with `ibemu exec` for each round.
"$IBEMU" run --name "$NAME" --topology "$W/net" --attach "$HCA" -- bash -c \
	"n=0; until [ -e '$W/done' ] || [ \$n -ge 36000 ]; do n=\$((n+1)); timeout 0.1 tail -f /dev/null; done" &
n=0
until { grep -q "@$NAME:ctl" /proc/net/unix && "$IBEMU" ctl --name "$NAME" status >/dev/null 2>&1; } ||
	[ $n -ge 600 ]; do n=$((n + 1)); timeout 0.1 tail -f /dev/null; done

ms() { local s=$(date +%s%N); "$@" >/dev/null 2>&1; echo $(( ($(date +%s%N) - s) / 1000000 )); }
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
for r in $(seq "$ROUNDS"); do
	(cd "$W" && ms env LD_PRELOAD=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so ibnetdiscover) >>"$W/sim.ms"
	ms "$IBEMU" exec --name "$NAME" -- ibnetdiscover >>"$W/emu.ms"
done
sim=$(median <"$W/sim.ms"); emu=$(median <"$W/emu.ms")
echo "ibsim  median ${sim} ms  (all: $(tr '\n' ' ' <"$W/sim.ms"))"
echo "ibemu  median ${emu} ms  (all: $(tr '\n' ' ' <"$W/emu.ms"))"
awk -v e="$emu" -v s="$sim" 'BEGIN { if (s > 0) printf "ratio ibemu/ibsim: %.2f\n", e / s }'
