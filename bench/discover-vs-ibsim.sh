#!/bin/bash
# ibnetdiscover on the same fabric under ibsim (ibsim-utils + libumad2sim)
# and under ibemu (the fast path, and FUSE only), interleaved, attached at
# the same HCA, several rounds; prints the median wall time of each and the
# ratios to ibsim.
# Both simulators are started first: this times discovery only. Beside
# each wall time, ibnetdiscover's own CPU (user + system): what no
# emulator can take off it (at 50,176 HCAs nearly all of it). Then the
# peak resident memory of both emulators.
#
#   bench/discover-vs-ibsim.sh [ROUNDS] [GENERATOR ARGS...]
#   bench/discover-vs-ibsim.sh 5 fattree3 36 6      # the 1944-HCA fat tree
ROUNDS=${1:-5}; shift || true
GEN=${*:-fattree 36}
. "$(dirname "$0")/lib.sh"
NAME=bench-$$

gen_fabric $GEN
start_ibsim "$NAME" "$W/net" "$HCA"
start_ibemu "$NAME" "$W/net" "$HCA"

# ms WHO CMD...: CMD's wall time to $W/WHO.ms, its CPU (and its
# children's: `ibemu exec` waits for the tool) to $W/WHO.cpu, in ms.
ms() {
	local who=$1 TIMEFORMAT='%R %U %S'
	shift
	{ time "$@" >/dev/null 2>&1; } 2>&1 | awk -v w="$W/$who" '
		{ printf "%d\n", $1 * 1000 >>(w ".ms"); printf "%d\n", ($2 + $3) * 1000 >>(w ".cpu") }'
}
for r in $(seq "$ROUNDS"); do
	(cd "$W" && ms sim env LD_PRELOAD=$PRE ibnetdiscover)
	ms emu "$IBEMU" exec --name "$NAME" -- ibnetdiscover
	ms fuse "$IBEMU" exec --name "$NAME" --no-fast-path -- ibnetdiscover
done
report ms
for who in sim emu fuse; do
	echo "ibnetdiscover's own CPU under $who: median $(median <"$W/$who.cpu") ms (all: $(tr '\n' ' ' <"$W/$who.cpu"))"
done
echo "peak RSS: $(peak_rss "$NAME")"
