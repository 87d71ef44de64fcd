#!/bin/bash
# ibnetdiscover on the same fabric under ibsim (ibsim-utils + libumad2sim)
# and under ibemu (the fast path, and FUSE only), interleaved, attached at
# the same HCA, several rounds; prints the median wall time of each and the
# ratios to ibsim.
# Both simulators are started first: this times discovery only. Then the
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

ms() { local s=$(date +%s%N); "$@" >/dev/null 2>&1; echo $(( ($(date +%s%N) - s) / 1000000 )); }
for r in $(seq "$ROUNDS"); do
	(cd "$W" && ms env LD_PRELOAD=$PRE ibnetdiscover) >>"$W/sim.ms"
	ms "$IBEMU" exec --name "$NAME" -- ibnetdiscover >>"$W/emu.ms"
	ms "$IBEMU" exec --name "$NAME" --no-fast-path -- ibnetdiscover >>"$W/fuse.ms"
done
report ms
echo "peak RSS: $(peak_rss "$NAME")"
