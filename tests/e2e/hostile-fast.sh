#!/bin/bash
# Issue #35: what a careless or hostile client of the fast path does to
# the emulator and to the program the library is loaded in. Each check
# failed before its fix:
# - a read blocked in one thread while another closes the fd gets the MAD
#   sent after the close, as the kernel's read (it holds the file);
# - fds closed behind the library's back (syscall(SYS_close), fclose of an
#   fdopen, a loop closing every fd) leave no entry that captures the next
#   file given the number: its bytes reach it, not the fabric;
# - a vfork child's close leaves the parent's fd working;
# - the slot the emulator maps cannot be shrunk or grown by the client
#   (once: SIGBUS killed the emulator), nor a verbs context's ring;
# - a request with two fds beside it leaks neither, 1,000 times over;
# - 80 messages of 16 MiB to a file that reads none: 64 are kept (the
#   1 GiB limit on unread bytes per file), on the fast path as over FUSE;
# - an attached host may hold 1,024 channels, then hears EMFILE;
# - an emulator out of fds does not spin on its listening sockets: it
#   says so once, waits, and serves again once fds are free;
# - umadN and issmN are 0600 in namespace mode as ib_umad makes them, and
#   another user in the run is refused them (uverbsN stays everyone's).
. "$(dirname "$0")/lib.sh"
# This test is about the fast path: on even in CI's FUSE-only pass.
unset IBEMU_FAST_PATH

ibemu_run -- sh -c 'ls -l /dev/infiniband/umad0 /dev/infiniband/issm0 | cut -c1-10 | sed "s/^/mode: /"
	su nobody -s /bin/sh -c "cat /dev/infiniband/umad0 /dev/infiniband/issm0; ibv_devices | grep -c ibemu0"'
cat "$WORK/log" >>"$WORK/out"
[ "$(grep -c "^mode: -rw-------" "$WORK/out")" = 2 ] && pass "umad0 and issm0 are 0600" ||
	fail "modes: $(grep mode: "$WORK/out")"
expect_line "cat: /dev/infiniband/umad0: Permission denied" "another user is refused umad0 (fast path and FUSE)"
expect_line "cat: /dev/infiniband/issm0: Permission denied" "and issm0"
expect_match "^1$" "the verbs device is still everyone's"

P="$TOOLS/umad_paths"
ibemu_run --configured -- bash -c 'for c in close-read behind vfork; do
	TMPDIR="$2" timeout 20 "$1" $c || echo "$c rc=$?"; done' _ "$P" "$WORK"
expect_rc 0 "the library cases ran"
expect_no_line "rc=" "every case exited 0"
expect_line "close-read: the read blocked before close got the Get sent after it" \
	"a read blocked across another thread's close gets the next MAD"
expect_line "behind: after syscall(SYS_close): write 320, the file holds 320 bytes, it is a regular file" \
	"syscall(SYS_close), then a file at that number: its bytes reach it"
expect_line "behind: after fclose(fdopen()): write 320, the file holds 320 bytes, it is a regular file" \
	"fclose(fdopen()), the same"
[ "$(grep -c "after closing every fd: write 320, the file holds 320 bytes" "$WORK/out")" = 5 ] &&
	pass "every fd closed by syscall, five files at the numbers: all get their bytes" ||
	fail "a file at a closed channel's number lost its bytes"
expect_line "behind: a new open works after that (fast)" "and a new open of umad0 still works"
expect_line "vfork: the parent's fd works after the child closed its copy (fast)" \
	"a vfork child's close leaves the parent's fd alone"

# The slot and the fds, as a raw client: the emulator's fd count is read
# from outside the run (it has a pid namespace of its own).
cat >"$WORK/raw.py" <<'PY'
import array, mmap, os, socket, struct, subprocess, sys, time
from fast_proto import ATTACH, OPEN, REQ, RING, RING_ASK, SLOT, SYSFS_READ, VDIRECT, VINBOX, VRING, ask, chan
work = sys.argv[1]
def step(name):
    open(os.path.join(work, name), "w").close()
    while not os.path.exists(os.path.join(work, name + "-seen")):
        time.sleep(0.01)     # polling a file the test writes, with its own deadline
s = chan()
ret, data = ask(s, OPEN, 2, b"umad0")
def resize(name, fd, grown):
    """Shrink, then grow, a memfd the emulator maps: each says what came."""
    for what, size in (("shrink", 0), ("grow", grown)):
        try:
            os.ftruncate(fd, size)
            print("%s %s: done" % (name, what))
        except OSError as e:
            print("%s %s: %s" % (name, what, os.strerror(e.errno)))
ret, memfd = ask(s, SLOT)
resize("slot", memfd, 1 << 20)
# A verbs context's receive ring (abi/verbs_ring.h): sealed the same way.
v = chan()
ret, vdata = ask(v, OPEN, 2, b"infiniband_verbs/uverbs0/ibemu_cmd")
ret, ring = ask(v, VRING, 1)
print("verbs ring of no version: ret %d, memfd %s" % (ret, ring is not None))
ret, ring = ask(v, VRING, RING_ASK)
print("verbs ring: ret %d, memfd %s" % (ret, ring is not None))
resize("ring", ring, 1 << 22)
# The direct path's requests (abi/verbs_inbox.h) with what no provider sends.
print("vdirect short: %d" % ask(v, VDIRECT, 0, b"abc")[0])
print("vdirect garbage: %d" % ask(v, VDIRECT, 0, b"\xff" * 256)[0])
print("vinbox none: %d %d" % (ask(v, VINBOX, 0, struct.pack("=Q", 0))[0],
                              ask(v, VINBOX, 1, struct.pack("=Q", 999))[0]))
print("vinbox bad: %d" % ask(v, VINBOX, 7, struct.pack("=Q", 0))[0])
# Sysfs attributes by path: a write-only one (no show) reads EACCES.
for a in ("create_child", "mode"):
    print("sysfs read %s: %d" % (a, ask(s, SYSFS_READ, 0,
                                       b"infiniband/ibemu0/device/net/ib0/" + a.encode())[0]))
m = mmap.mmap(memfd, 4096)
m[0:4] = struct.pack("=I", 1)
s.send(struct.pack(REQ, 1, RING, 0, 0, 0))
print("ctl status after the ring: rc", subprocess.run(["ibemu", "ctl", "status"],
                                                       capture_output=True).returncode, flush=True)
step("before")
r, w = os.pipe()
for i in range(1000):
    c = chan()
    c.sendmsg([struct.pack(REQ, 1, ATTACH, 0, 0, 0)],
              [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [r, w]))])
    c.recv(4096)
    c.close()
step("after")
PY
NAME="e2e-hostile-$$"
timeout 120 "$IBEMU" run --name "$NAME" -- env PYTHONPATH="$(cd "$(dirname "$0")" && pwd)" \
	python3 "$WORK/raw.py" "$WORK" >"$WORK/out" 2>"$WORK/log" &
RUN=$!
fds() { ls "/proc/$("$IBEMU" ctl --name "$NAME" pid)/fd" | wc -l; }
if wait_for 20 test -e "$WORK/before"; then
	before=$(fds); touch "$WORK/before-seen"
	wait_for 60 test -e "$WORK/after" || fail "the 1,000 requests did not end"
	after=$(fds); touch "$WORK/after-seen"
else
	fail "the raw client did not get to its requests"; before=0 after=x
fi
wait $RUN; RC=$?
expect_rc 0 "the raw client ran"
expect_line "slot shrink: Operation not permitted" "the slot's memfd cannot shrink (sealed)"
expect_line "slot grow: Operation not permitted" "nor grow"
expect_line "verbs ring of no version: ret -93, memfd False" \
	"FAST_VRING from a provider of another ring layout: EPROTONOSUPPORT, no ring"
expect_line "verbs ring: ret 0, memfd True" "a verbs context's ring, by FAST_VRING"
expect_line "ring shrink: Operation not permitted" "its memfd cannot shrink (sealed)"
expect_line "ring grow: Operation not permitted" "nor grow"
expect_line "vdirect short: -22" "FAST_VDIRECT with less than a packet header: EINVAL"
expect_line "vdirect garbage: -11" "with a header no context may send: EAGAIN (through the daemon)"
expect_line "vinbox none: -2 -2" "FAST_VINBOX of no inbox, of another's it was not given: ENOENT"
expect_line "vinbox bad: -22" "FAST_VINBOX of neither the memfd nor the eventfd: EINVAL"
expect_line "sysfs read create_child: -13" "FAST_SYSFS_READ of a write-only attribute: EACCES"
expect_line "sysfs read mode: 9" "and of a readable one its text (datagram)"
expect_line "ctl status after the ring: rc 0" "the emulator answers after the client rang"
[ "$after" = "$before" ] && pass "1,000 requests with two fds each: the emulator's fds $before -> $after" ||
	fail "the emulator's fds went $before -> $after"

# What a file holds unread: 80 x 16 MiB to a file that reads none.
cat >"$WORK/flood.sh" <<'SH'
lid=$(($(cat /sys/class/infiniband/ibemu0/ports/1/lid)))
"$TOOLS/umad_big" sink ibemu0 >"$W/sink" & s=$!
n=0; until grep -q ready "$W/sink" || [ $n -ge 100 ]; do n=$((n + 1)); timeout 0.1 tail -f /dev/null; done
"$TOOLS/umad_big" flood ibemu0 $lid 80 16777216
wait $s; cat "$W/sink"
SH
for how in fast fuse; do
	[ $how = fuse ] && export IBEMU_FAST_PATH=0
	ibemu_run --configured -- env W="$WORK" TOOLS="$TOOLS" bash "$WORK/flood.sh"
	expect_line "flood: sent 80 of 16777216 bytes" "$how: 80 messages of 16 MiB sent"
	expect_line "sink: 64 messages unread" "$how: the file kept 64 of them (1 GiB)"
done
unset IBEMU_FAST_PATH

# An attached host's channels: 1,100 adoptions on one attachment.
cat >"$WORK/adopt.py" <<'PY'
import array, resource, socket, struct
from fast_proto import ADOPT, HOST, REQ, ask, chan
resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
h = chan()
print("host:", ask(h, HOST, 0, b"py\0host2\0")[0])
kept, answers = [], {}
for i in range(1100):
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    h.sendmsg([struct.pack(REQ, 1, ADOPT, 0, 0, 0)],
              [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [b.fileno()]))])
    ret = struct.unpack("=q", h.recv(4096)[:8])[0]
    answers[ret] = answers.get(ret, 0) + 1
    b.close()
    kept.append(a)
print("adoptions:", ", ".join("%d x %d" % (n, r) for r, n in sorted(answers.items(), reverse=True)))
PY
ibemu_run -- env PYTHONPATH="$(cd "$(dirname "$0")" && pwd)" python3 "$WORK/adopt.py"
expect_line "host: 0" "a raw client attaches host2"
expect_line "adoptions: 1024 x 0, 76 x -24" "1,024 channels adopted, the rest EMFILE"
grep -q "remote host py: 1024 channels, the limit: refusing more (EMFILE)" "$WORK/log" &&
	pass "the limit is said once in the log" || fail "no line for the channel limit"

# Out of fds: the emulator's limit lowered from outside, filled by a
# client's channels; then more clients knock.
cat >"$WORK/fill.py" <<'PY'
import os, socket, sys, time
work = sys.argv[1]
held = []
try:
    # Until the emulator's fds and then its backlog are full (a connect
    # that does not finish within a second).
    while len(held) < 200:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(1)
        s.connect(os.environ["IBEMU_FAST"])
        held.append(s)
except OSError:
    pass
open(os.path.join(work, "full"), "w").close()
while not os.path.exists(os.path.join(work, "free")):
    time.sleep(0.01)     # a file the test writes, with its own deadline
for s in held:
    s.close()
PY
NAME="e2e-fds-$$"
timeout 120 "$IBEMU" run -v --name "$NAME" -- bash -c 'until [ -e "$0/started" ]; do timeout 0.1 tail -f /dev/null; done
	python3 "$0/fill.py" "$0"
	"$IBEMU" ctl status >"$0/status-after" 2>&1; echo "ctl after: $?" >>"$0/status-after"' 	"$WORK" >"$WORK/out" 2>"$WORK/log" &
RUN=$!
emu_pid() { "$IBEMU" ctl --name "$NAME" pid 2>/dev/null; }
wait_for 20 emu_pid >/dev/null || fail "the emulator did not start"
EMU=$(emu_pid)
prlimit --pid "$EMU" --nofile=48:48
touch "$WORK/started"
if wait_for 30 test -e "$WORK/full"; then
	# Clients knocking at the full emulator: its CPU over a second.
	ticks() { awk '{ print $14 + $15 }' "/proc/$EMU/stat"; }
	knocks=""
	for i in 1 2 3; do timeout 2 "$IBEMU" ctl --name "$NAME" status >/dev/null 2>&1 & knocks="$knocks $!"; done
	t0=$(ticks); start=$(date +%s%N)
	timeout 1 tail -f /dev/null	# the interval measured, not a wait for anything
	t1=$(ticks); ms=$((($(date +%s%N) - start) / 1000000))
	cpu=$(( (t1 - t0) * 1000 / $(getconf CLK_TCK) * 100 / ms ))
	[ "$cpu" -lt 30 ] && pass "out of fds, clients knocking: the emulator uses ${cpu}% CPU" ||
		fail "out of fds the emulator spins: ${cpu}% CPU"
	wait $knocks
	touch "$WORK/free"
else
	fail "the client could not fill the emulator's fds"; touch "$WORK/free"
fi
wait $RUN
[ "$(grep -c "cannot accept a client: Too many open files; trying again every 100 ms" "$WORK/log")" -ge 1 ] &&
	pass "the log says why it does not accept" || fail "no line for the fd limit in the log"
[ "$(grep -c "cannot accept a client" "$WORK/log")" -le 2 ] &&
	pass "and says it once per socket" || fail "the fd-limit line repeats: $(grep -c "cannot accept" "$WORK/log")"
grep -q "ctl after: 0" "$WORK/status-after" && pass "fds free again: ctl status answers" ||
	fail "after the fds were freed: $(cat "$WORK/status-after")"
finish
