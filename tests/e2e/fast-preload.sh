#!/bin/bash
# The fast path's library (preload/, docs/fast-path.md): `ibemu run` and
# `ibemu exec` preload it, and unmodified programs open the umad files over
# the emulator's socket with the answers the FUSE files give. A client of
# plain syscalls (tests/tools/umad_paths) checks fork, exec, dup, close,
# threads, signals, O_NONBLOCK, poll, short reads and the calls the kernel
# answers before ib_umad on it; a FUSE client and a
# preloaded one talk through the fabric; a static client runs beside a
# preloaded opensm; an ASan-built client runs preloaded; opting out works.
. "$(dirname "$0")/lib.sh"
# This test is about the fast path: on even in CI's FUSE-only pass.
unset IBEMU_FAST_PATH

P="$TOOLS/umad_paths"
ibemu_run -- bash -c '
for c in path fork exec exec-fuse eintr dup close threads nonblock short calls; do
	timeout 20 "$1" $c || echo "$c rc=$?"
done
IBEMU_FAST_POLL_LOOK_US=600000 timeout 20 "$1" poll || echo "poll rc=$?"
timeout 20 "$1"_asan path || echo "asan rc=$?"
echo "preload: $LD_PRELOAD"' _ "$P"
expect_rc 0 "the cases ran"
expect_no_line "rc=" "every case exited 0"
expect_line "path: fast" "a preloaded open of umad0 takes the fast path"
expect_match "^preload: .*/libibemu-fast.so$" "ibemu run puts the library in LD_PRELOAD"
expect_line "fork: child round trip on the inherited fd (fast)" "fork: the child uses the parent's fd"
expect_line "fork: parent round trip after the child (fast)" "fork: and the parent keeps it"
expect_line "exec: round trip on the inherited fd (fast)" "exec: the new program uses an fd left open"
expect_line "exec: the O_CLOEXEC fd was closed" "exec: close-on-exec honoured"
expect_line "exec-fuse: before exec (fast)" "exec to a program without the library..."
expect_line "path: fuse" "... which opens umad0 through FUSE"
expect_line "eintr: a blocked read ended by a signal: EINTR" "a signal ends a blocked read: EINTR"
expect_line "eintr: with SA_RESTART the read went on to the answer" "SA_RESTART restarts it, as ib_umad's"
expect_line "dup: round trips on dup2's and F_DUPFD_CLOEXEC's fds after closing the others (fast)" "dup2 and F_DUPFD_CLOEXEC"
expect_line "close: a second agent for the same methods: EINVAL" "one agent per method"
expect_line "close: registered at once after the first file's close" "close releases the agents before it returns"
expect_line "close: 50 more rounds" "every time"
expect_line "threads: 400 answers for 4 threads' 400 requests" "four threads on one fd"
expect_line "nonblock: an empty queue: EAGAIN" "O_NONBLOCK: EAGAIN"
expect_line "nonblock: poll says writable, not readable" "poll: POLLOUT only when nothing is queued"
expect_line "nonblock: epoll saw the answer" "epoll works on the fd"
# The library's poll looks a while before it sleeps (docs/fast-path.md
# "Waiting"); made 0.6 s long here, it must still act as the kernel's.
expect_line "poll: signals while it waited: EINTR, with SA_RESTART too (fast)" "a signal while poll looks ends it: EINTR"
expect_line "poll: nothing queued: 0 once its 200 ms are up" "poll's timeout counts the look"
expect_line "poll: the answer came" "poll sees the answer"
expect_line "poll: a pipe beside it was seen ready" "poll sees another fd in the same call"
expect_line "short: a read shorter than any header: EINVAL" "a read shorter than a header: EINVAL"
expect_line "short: a read shorter than the MAD: EINVAL" "a read shorter than the packet: EINVAL"
expect_line "short: the packet was kept for the next read" "the packet stays queued"
# The three calls the FUSE kernel answers itself (README, Robustness) are
# the kernel's here, with the three it answers for every file.
expect_line "calls: write0 EINVAL" "a zero-byte write: EINVAL, as ib_umad_write"
expect_line "calls: ioctl-null ENOTTY" "an unknown ioctl with a NULL argument: ENOTTY"
expect_line "calls: mmap-private ENODEV" "MAP_PRIVATE: ENODEV"
expect_line "calls: mmap-shared ENODEV" "MAP_SHARED: ENODEV"
expect_line "calls: lseek ESPIPE" "lseek: ESPIPE"
expect_line "calls: ftruncate EINVAL" "ftruncate: EINVAL"
[ "$(grep -c '^path: fast$' "$WORK/out")" = 2 ] && pass "the ASan-built client runs preloaded, on the fast path" ||
	fail "ASan-built client: $(cat "$WORK/out" | tail -3)"

# A FUSE client and a preloaded one, through the fabric: opensm without the
# library answers saquery with it; ctl status says who came which way.
cat >"$WORK/mixed.sh" <<'SCRIPT'
set -u
W=$1
. "$INSIDE"
IBEMU_FAST_PATH=0 start_opensm
echo "NodeRecords $(saquery | grep -c 'NodeRecord dump')"
"$IBEMU" ctl status | grep '^umad'
stop_opensm
rm -rf "$W/cache" "$W/opensm.log"
start_opensm
"$STATIC" 0,1
ldd "$STATIC" 2>&1 | grep -o 'not a dynamic executable'
"$IBEMU" ctl status | grep '^umad'
echo "NodeRecords $(saquery | grep -c 'NodeRecord dump')"
stop_opensm
SCRIPT
STATIC="$(dirname "$IBEMU")/examples/nodeinfo-static" ibemu_run -- bash "$WORK/mixed.sh" "$WORK"
expect_rc 0 "the mixed run"
[ "$(grep -c '^NodeRecords 7$' "$WORK/out")" = 2 ] && pass "saquery (fast) gets every NodeRecord from opensm on FUSE, and on the fast path" ||
	fail "NodeRecords: $(grep NodeRecords "$WORK/out")"
expect_match "^umad0: pid [0-9]+ \(opensm\) through fuse$" "ctl status: opensm without the library came through FUSE"
expect_match "^umad0: pid [0-9]+ \(opensm\) through fast, shared memory$" "ctl status: preloaded opensm through the fast path, writes in shared memory"
expect_line "not a dynamic executable" "the static client is static"
expect_line "Switch node GUID 0x0002c90200000100, 8 ports, SMP arrived on port 1" "a static client (FUSE) beside a preloaded opensm gets its answer"

# Opting out: the flag, the variable, and exec's flag.
ibemu_run --no-fast-path -- "$P" path
expect_line "path: fuse" "run --no-fast-path: FUSE"
IBEMU_FAST_PATH=0 ibemu_run -- "$P" path
expect_line "path: fuse" "IBEMU_FAST_PATH=0: FUSE"
ibemu_run --name fpx -- bash -c '
"$IBEMU" exec --name fpx -- "$1" path
"$IBEMU" exec --name fpx --no-fast-path -- "$1" path' _ "$P"
[ "$(tr '\n' ' ' <"$WORK/out")" = "path: fast path: fuse " ] && pass "ibemu exec: fast path by default, FUSE with --no-fast-path" ||
	fail "exec: $(tr '\n' ' ' <"$WORK/out")"
finish
