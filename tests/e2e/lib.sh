# Shared helpers for the end-to-end tests. Each test script sources this,
# runs real tools inside `ibemu run`, and compares what they print with what
# the topology says. On failure it prints what was expected, what came,
# and the emulator's log, then exits 1. No sleeps: every wait has a bound.

set -u
: "${IBEMU:?IBEMU must point at the ibemu binary}"
: "${TOOLS:?}" "${TOPOLOGIES:?}"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
TESTNAME=$(basename "$0" .sh)
FAILS=0
PASSES=0

# Sourced by scripts that run inside `ibemu run` (they get W=$WORK).
INSIDE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/inside.sh"
export INSIDE

# ibemu_run [ibemu run options] -- command...: output in $WORK/out, log in $WORK/log
ibemu_run() {
	timeout 120 "$IBEMU" run -v "$@" >"$WORK/out" 2>"$WORK/log"
	RC=$?
	return 0
}

# wait_for SECONDS COMMAND...: until COMMAND (a function, too) succeeds,
# polled every 0.1 s, at most SECONDS; fails when time ran out.
wait_for() {
	local n=0 max=$(($1 * 10))
	shift
	until "$@"; do
		[ $n -ge $max ] && return 1
		n=$((n + 1))
		timeout 0.1 tail -f /dev/null
	done
	return 0	# not the status of the last pause (124)
}

# asan_no_leaks: ASAN_OPTIONS with LeakSanitizer off, for a program it
# cannot check (under ptrace, in the VM).
asan_no_leaks() { echo "${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"; }

# vm_tier SCRIPT: tests/vm/SCRIPT IBEMU BUILDDIR SRCDIR, run inside the
# qemu VM that boots Debian's stock kernel (tests/vm/run-in-vm: 125 with
# the reason when the VM cannot start); its output in $WORK/out and
# $WORK/log, its status in RC. Where apt has no such kernel and none is
# cached (Ubuntu: linux-image-generic splits its modules differently),
# the test is skipped (exit 77, a SKIP, never a pass).
vm_tier() {
	if ! apt-cache show linux-image-amd64 >/dev/null 2>&1 &&
	   [ ! -f "${IBEMU_VM_CACHE:-/var/cache/ibemu-vm}/stamp" ]; then
		echo "SKIP: the CUSE tier boots Debian's linux-image-amd64, which this system's apt does not have"
		exit 77
	fi
	# In a sanitizer build, no leak check in the VM: with it, an
	# emulator given SIGINT while loading a 2,214-node fabric was still
	# there after the tier's 180 s wait (qemu's TCG: no usable KVM here),
	# and not without it. The FUSE pass checks all but the CUSE code.
	ASAN_OPTIONS=$(asan_no_leaks) timeout 900 "$VMDIR/run-in-vm" --timeout 600 -- bash "$VMDIR/$1" "$IBEMU" \
		"$(dirname "$IBEMU")" "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)" \
		>"$WORK/out" 2>"$WORK/log"
	RC=$?
}

fail() {
	echo "FAIL: $TESTNAME: $*"
	# All of a short output; the ends of a long one (a failing step's
	# lines are often near its end).
	echo "---- output ----"
	if [ "$(wc -l 2>/dev/null <"$WORK/out" || echo 0)" -le 200 ]; then
		cat "$WORK/out" 2>/dev/null
	else
		head -60 "$WORK/out"; echo "[...]"; tail -140 "$WORK/out"
	fi
	echo "---- ibemu log ----"; tail -30 "$WORK/log" 2>/dev/null
	FAILS=$((FAILS + 1))
}

pass() {
	echo "ok: $*"
	PASSES=$((PASSES + 1))
}

# expect_rc WANT what
expect_rc() {
	if [ "$RC" -eq "$1" ]; then pass "$2 (rc $RC)"; else fail "$2: rc $RC, want $1"; fi
}

# expect_line 'fixed string' what: the output has a line containing it
expect_line() {
	if grep -qF -- "$1" "$WORK/out"; then pass "$2"; else fail "$2: no line with '$1'"; fi
}

# expect_match ERE what: some line of the output matches the extended regex.
expect_match() {
	if grep -qE -- "$1" "$WORK/out"; then pass "$2"; else fail "$2: no line matching '$1'"; fi
}

expect_no_line() {
	if grep -qF -- "$1" "$WORK/out"; then fail "$2: unexpected '$1'"; else pass "$2"; fi
}

# expect_same FILE_A FILE_B what
expect_same() {
	if diff -u "$1" "$2" >"$WORK/diff"; then pass "$3"; else
		fail "$3: differs"; cat "$WORK/diff"; fi
}

# #17's "Done when" on host B's output (many-hosts.sh, many-hosts-ssh.sh):
# ibstat shows host2 Active with the LID opensm on A gave it ($LID2),
# saquery and ibnetdiscover -l match A's ($WORK/a-records, a-nodes, b-nodes),
# ibping reaches A's host1 ($LID1).
expect_b_sees_a() {
	expect_line "ibstat State: Active" "B's ibstat: its HCA (host2) Active"
	expect_line "ibstat Base lid: $LID2" "with the LID opensm on A gave host2 ($LID2)"
	expect_line "ibstat Port GUID: 0x0002c90300000104" "and host2's port GUID"
	expect_line "records: $(cat "$WORK/a-records")" "saquery on B: as many NodeRecords as on A"
	[ "$(wc -l <"$WORK/a-nodes")" = 6 ] && pass "ibnetdiscover -l on A: the six nodes" ||
		fail "A's ibnetdiscover: $(cat "$WORK/a-nodes")"
	expect_same "$WORK/a-nodes" "$WORK/b-nodes" "ibnetdiscover -l on B lists A's fabric"
	expect_line "pongs: 3" "ibping from B to the server on A's host1 (LID $LID1)"
}

# What tests/e2e/issm_wait.py prints when issm behaves as the kernel's,
# in $WORK/out: @1 says whose issm0.
expect_issm_wait() {
	expect_line "issm before: IsSM 0" "$1: IsSM clear before"
	expect_line "issm held: IsSM 1" "$1: held, IsSM set in the port's cap_mask"
	expect_line "issm second: EAGAIN" "$1: a second non-blocking open: EAGAIN"
	expect_line "issm waiter blocked: True" "$1: a blocking open waits"
	expect_line "issm blocking open: got it, IsSM 1" "$1: ... until the holder closes"
	expect_line "issm blocking open: interrupted by a signal" "$1: a signal ends the wait"
	expect_line "issm after the interrupted wait: free" "$1: ... and leaves no waiter behind"
	expect_line "issm closed: IsSM 0" "$1: the last close clears IsSM"
}

finish() {
	# A sanitizer build's process that went wrong (an emulator, a
	# bridge, a tool) reports it in whichever log its stderr went to,
	# also where its exit status is not checked: any report fails.
	local rep
	rep=$(grep -rlaE 'ERROR: (Leak|Address)Sanitizer|runtime error:' "$WORK" 2>/dev/null | head -3)
	if [ -n "$rep" ]; then
		for f in $rep; do
			echo "FAIL: $TESTNAME: a sanitizer report in ${f#$WORK/}:"
			grep -aE -A12 'ERROR: (Leak|Address)Sanitizer|runtime error:' "$f" | head -40
		done
		FAILS=$((FAILS + 1))
	fi
	echo "$PASSES passed, $FAILS failed"
	[ "$FAILS" -eq 0 ]
}

# ibnetdiscover output on stdin -> one sorted line per cable,
# "descA[p] -- descB[q]" with the ends in order, by NodeDescription.
links_of() {
	awk '
	/^(Switch|Ca|Rt)[ \t]/ { n = split($0, q, "\""); desc = q[4]; next }
	/^\[/ {
		match($0, /^\[[0-9]+\]/); lp = substr($0, 2, RLENGTH - 2)
		n = split($0, q, "\"")
		rest = $0; sub(/^[^"]*"[^"]*"/, "", rest)
		match(rest, /^\[[0-9]+\]/); rp = substr(rest, 2, RLENGTH - 2)
		rdesc = q[4]
		a = desc "[" lp "]"; b = rdesc "[" rp "]"
		if (a < b) print a " -- " b; else print b " -- " a
	}' | sort -u
}

# sshd_prepare ADDR PIDFILE [KEY...]: what a test's own sshd (Debian's
# openssh-server) on ADDR:2222 needs, in $WORK: the keys host and user
# (user's authorized) and each other KEY, known_hosts for the client, and
# sshd_config, with the sanitizer pass's options (.ci/run) passed on to
# what sshd starts.
sshd_prepare() {
	local addr=$1 pid=$2 k v
	shift 2
	for k in host user "$@"; do ssh-keygen -q -t ed25519 -N '' -C "$k" -f "$WORK/$k" || fail "ssh-keygen"; done
	cp "$WORK/user.pub" "$WORK/authorized_keys"
	echo "[$addr]:2222 $(cut -d' ' -f1,2 "$WORK/host.pub")" >"$WORK/known_hosts"
	cat >"$WORK/sshd_config" <<CONF
Port 2222
ListenAddress $addr
HostKey $WORK/host
AuthorizedKeysFile $WORK/authorized_keys
PidFile $pid
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
CONF
	for v in ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS; do
		[ -n "${!v:-}" ] && echo "SetEnv $v=${!v}" >>"$WORK/sshd_config"
	done
}
