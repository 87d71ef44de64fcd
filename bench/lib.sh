# Shared by the bench scripts (sourced): a work directory cleaned up on
# exit, a generated fabric, ibsim and an ibemu run started side by side on
# it, and the medians they are compared by.
set -u
IBEMU=${IBEMU:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/ibemu}
PRE=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
W=$(mktemp -d)
SIM=
trap 'touch "$W/done"; [ -z "$SIM" ] || kill $SIM 2>/dev/null; wait; rm -rf "$W"' EXIT

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

# wait_for TENTHS CMD...: until CMD succeeds, TENTHS tenths of a second at
# most (each wait a sleeping `tail`, not a busy loop).
wait_for() {
	local i=0 n=$1
	shift
	until "$@" || [ $i -ge "$n" ]; do
		i=$((i + 1)); timeout 0.1 tail -f /dev/null
	done
}

# core_rtt: the round trip of a cache line between CPU 0 and CPU 1 now,
# in ns (bench/core_rtt.c; empty with one CPU). The host of a VM moves
# its vCPUs near or far apart over minutes, and every figure between two
# pinned ends follows: say it beside each round, compare rounds alike.
core_rtt() {
	[ "$(nproc)" -ge 2 ] || return 0
	[ -x "$W/core_rtt" ] || gcc -O2 -pthread -o "$W/core_rtt" \
		"$(dirname "${BASH_SOURCE[0]}")/core_rtt.c" || return 0
	"$W/core_rtt"
}

# vmhwm PID: its peak resident set (VmHWM) so far, "12.3 MB".
vmhwm() { awk '/VmHWM/ { printf "%.1f MB", $2 / 1024 }' "/proc/$1/status"; }
# emu_vmhwm [ctl options]: the emulator's, from `ibemu ctl status` (inside a
# run the daemon's /proc entry is out of sight: the run has its own PID
# namespace).
emu_vmhwm() {
	"$IBEMU" ctl "$@" --json status | sed -n 's/.*"peak_rss_kb" *: *\([0-9]*\).*/\1/p' |
		awk '{ printf "%.1f MB", $1 / 1024 }'
}

# gen_fabric GENERATOR ARGS...: $W/net, its first CA in $HCA; prints a
# line saying what it is.
# Every link is given ibsim's default speed (s=1: SDR) so that both
# emulators present the same fabric: with ibemu's default QDR links and
# Mellanox device ids, ibnetdiscover and opensm also ask every port for
# MlnxExtPortInfo (the FDR10 check), half as many SMPs again. LINKS=default
# keeps ibemu's defaults.
gen_fabric() {
	local opt='s/^\(\[[0-9]*\][^#]*"\[[0-9]*\]\)$/\1 s=1/'
	[ "${LINKS:-}" = default ] && opt=
	"$IBEMU" topo gen "$@" | sed "$opt" >"$W/net"
	HCA=$(grep -m1 '^Ca' "$W/net" | sed 's/^Ca[^"]*"\([^"]*\)".*/\1/')
	echo "fabric: topo gen $* ($(grep -c '^\(Ca\|Switch\)' "$W/net") nodes), both attached at $HCA${ROUNDS:+, $ROUNDS rounds}"
}

# start_ibsim NAME NET HCA: ibsim sized for NET, console off, in the
# background ($SIM); clients attach at HCA by SIM_HOST. Returns once its
# socket is there (10 min at most: ibsim parses the file first, with
# linear searches). Past 30,000 nodes its switches' LFTs are made
# 48 K LIDs long (-L; Debian's ibsim 0.10 has 30,720 by default, and the
# unicast LIDs end at 0xBFFF): opensm's LIDs must fit.
start_ibsim() {
	local n lft=
	n=$(grep -cE '^(Ca|Hca|Switch)' "$2")
	[ "$n" -le 30000 ] || lft="-L 49152"
	export IBSIM_SOCKNAME=$1 SIM_HOST=$3
	ibsim -s -n -N $((n + 16)) -S "$(grep -c '^Switch' "$2")" -P $((n * 40)) $lft "$2" \
		>"$W/ibsim.log" 2>&1 &
	SIM=$!
	wait_for 6000 grep -q "@$1:" /proc/net/unix
}

# start_ibemu NAME NET HCA: an ibemu run on NET attached at HCA that waits
# until the script ends, joined with `ibemu exec --name NAME`; returns once
# its control socket answers (60 s at most).
start_ibemu() {
	"$IBEMU" run --name "$1" --topology "$2" --attach "$3" -- bash -c \
		"n=0; until [ -e '$W/done' ] || [ \$n -ge 36000 ]; do n=\$((n+1)); timeout 0.1 tail -f /dev/null; done" &
	wait_for 600 "$IBEMU" ctl --name "$1" status >/dev/null 2>&1
}

# peak_rss NAME: the peak resident set (VmHWM) so far of ibsim ($SIM) and
# of the ibemu run NAME.
peak_rss() {
	echo "ibsim $(vmhwm $SIM), ibemu $(emu_vmhwm --name "$1")"
}

# report UNIT: the medians of $W/sim.ms, $W/emu.ms (ibemu as programs get
# it: the fast path) and $W/fuse.ms (ibemu with --no-fast-path) if there,
# every figure, the ratios to ibsim.
report() {
	local sim emu fuse
	sim=$(median <"$W/sim.ms"); emu=$(median <"$W/emu.ms")
	echo "ibsim  median ${sim} $1  (all: $(tr '\n' ' ' <"$W/sim.ms"))"
	echo "ibemu  median ${emu} $1  (all: $(tr '\n' ' ' <"$W/emu.ms"))"
	if [ -s "$W/fuse.ms" ]; then
		fuse=$(median <"$W/fuse.ms")
		echo "ibemu FUSE only  median ${fuse} $1  (all: $(tr '\n' ' ' <"$W/fuse.ms"))"
	fi
	awk -v e="$emu" -v s="$sim" 'BEGIN { if (s > 0) printf "ratio ibemu/ibsim: %.2f\n", e / s }'
	[ -z "${fuse:-}" ] ||
		awk -v e="$fuse" -v s="$sim" 'BEGIN { if (s > 0) printf "ratio ibemu FUSE only/ibsim: %.2f\n", e / s }'
}
