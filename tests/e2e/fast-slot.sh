#!/bin/bash
# The fast path's slot (docs/fast-path.md "The slot", abi/fast_wire.h):
# writes and ioctls in memory the emulator maps too. The protocol as a raw
# client sees it (FAST_SLOT, a request and its answer there, FAST_RING,
# what is refused), then the library's waits: a write made while the
# emulator is stopped sleeps on the slot's futex and completes once it
# continues; one made while it is stopped and then killed fails with EIO
# instead of hanging.
. "$(dirname "$0")/lib.sh"
# This test is about the fast path: on even in CI's FUSE-only pass.
unset IBEMU_FAST_PATH

cat >"$WORK/slot.py" <<'PY'
import mmap, os, socket, struct, time
from fast_proto import IOCTL, OPEN, REQ, RING, SLOT, WRITE, ask, chan
ENABLE_PKEY, REGISTER_AGENT = 0x1b03, 0xc01c1b01
seq = 0
# struct fast_slot: req_seq, ans_seq, looking, sleeping at 0..15; req at
# 16; in_len at 40; rep at 48; out at 64; in at 128.
def slot_call(s, m, op, arg=0, payload=b"", in_len=None, flags=0):
    global seq
    seq += 1
    m[16:40] = struct.pack(REQ, 1, op, flags, 0, arg)
    m[40:44] = struct.pack("=I", len(payload) if in_len is None else in_len)
    m[128:128 + len(payload)] = payload
    m[0:4] = struct.pack("=I", seq)
    ring = struct.unpack("=I", m[8:12])[0] == 0
    late = False
    start = time.monotonic()
    while struct.unpack("=I", m[4:8])[0] != seq:
        # Python has no barrier between the store and the load of
        # looking: ring once more after a while (a late ring is harmless).
        waited = time.monotonic() - start
        if ring or (waited > 0.1 and not late):
            s.send(struct.pack(REQ, 1, RING, 0, 0, 0))
            late = late or not ring
            ring = False
        if waited > 5:
            return "no answer"
    ret, out_len, _ = struct.unpack("=qII", m[48:64])
    return ret, bytes(m[64:64 + out_len])
s = chan()
print("slot before open:", ask(s, SLOT)[0])
ret, data = ask(s, OPEN, 2, b"umad0")
ret, memfd = ask(s, SLOT)
print("slot:", ret, "memfd" if memfd is not None else "no fd", os.fstat(memfd).st_size)
print("second slot:", ask(s, SLOT)[0])
m = mmap.mmap(memfd, 4096)
print("ENABLE_PKEY in the slot:", slot_call(s, m, IOCTL, ENABLE_PKEY)[0])
reg = struct.pack("=I16sBBB3sBx", 0, b"\0" * 16, 0, 0x81, 1, b"\0" * 3, 0)  # QP0, DR SMPs
ret, out = slot_call(s, m, IOCTL, REGISTER_AGENT, reg)
print("REGISTER_AGENT in the slot:", ret, len(out))
agent = struct.unpack("=I", out[:4])[0]
hdr = struct.pack("=IIIIIIIHBBBBBB16sIH6x", agent, 0, 1000, 0, 0, 0, 0, 0xffff, 0, 0, 0, 0, 0, 0,
                  b"\0" * 16, 0, 0)
mad = bytearray(256)
mad[0:4] = bytes([1, 0x81, 1, 1])       # SubnGet, directed route
mad[8:16] = struct.pack(">Q", 7)
mad[17] = 0x11                          # NodeInfo
mad[32:36] = b"\xff" * 4                # DrSLID, DrDLID
print("SMP written in the slot:", slot_call(s, m, WRITE, 320, hdr + bytes(mad))[0])
data_sock = socket.socket(fileno=data)
data_sock.settimeout(5)
pkt = data_sock.recv(4096)
guid = struct.unpack(">Q", pkt[8 + 64 + 64 + 12:8 + 64 + 64 + 20])[0]
print("its answer on the data socket: method 0x%02x, node GUID 0x%016x" % (pkt[8 + 64 + 3], guid))
print("short write in the slot:", slot_call(s, m, WRITE, 10, b"0123456789")[0])
print("in_len past the slot:", slot_call(s, m, WRITE, 5000, b"", in_len=5000)[0])
print("FAST_OPEN in the slot:", slot_call(s, m, OPEN, 2, b"umad0")[0])
print("FAST_F_MEMFD in the slot:", slot_call(s, m, WRITE, 10, b"0123456789", flags=1)[0])
s.send(struct.pack(REQ, 1, RING, 0, 0, 0))
print("after a ring, the channel's next answer:", ask(s, WRITE, 10, b"0123456789")[0])
os.system("ibemu ctl status")
PY

ibemu_run -- env PYTHONPATH="$(cd "$(dirname "$0")" && pwd)" python3 "$WORK/slot.py"
expect_rc 0 "the protocol script ran"
expect_line "slot before open: -9" "FAST_SLOT on a channel with no file: EBADF"
expect_line "slot: 0 memfd 4096" "FAST_SLOT passes a memfd of FAST_SLOT_BYTES"
expect_line "second slot: -16" "one slot per channel: EBUSY"
expect_line "ENABLE_PKEY in the slot: 0" "an ioctl in the slot"
expect_line "REGISTER_AGENT in the slot: 0 28" "an ioctl with output in the slot: its 28 bytes back"
expect_line "SMP written in the slot: 320" "a write in the slot: the count"
expect_line "its answer on the data socket: method 0x81, node GUID 0x0002c90300000100" \
	"... and the SMP's answer on the data socket: host1's NodeInfo"
expect_line "short write in the slot: -22" "the umad core's EINVAL, in the slot"
expect_line "in_len past the slot: -22" "in_len past FAST_SLOT_IN_MAX: EINVAL"
expect_line "FAST_OPEN in the slot: -22" "only writes and ioctls in the slot: EINVAL"
expect_line "FAST_F_MEMFD in the slot: -22" "no memfd in the slot: EINVAL"
expect_line "after a ring, the channel's next answer: -22" "FAST_RING is never answered on the channel"
expect_match "^umad0: pid [0-9]+ \(python3\) through fast, shared memory$" "ctl status names the slot"

# The library's waits, from a client outside the run (so that it outlives
# the emulator): it opens umad0 with the library and $IBEMU_FAST, then
# makes an ioctl each time it is told to.
cat >"$WORK/client.py" <<'PY'
import fcntl, os, sys
fd = os.open("/dev/infiniband/umad0", os.O_RDWR)
print("opened", os.readlink("/proc/self/fd/%d" % fd)[:7], flush=True)
for line in sys.stdin:
    try:
        print("ioctl:", fcntl.ioctl(fd, 0x1b03), flush=True)
    except OSError as e:
        print("ioctl:", os.strerror(e.errno), flush=True)
PY
NAME="e2e-slot-$$"
"$IBEMU" run --name "$NAME" -- bash -c "echo \"\$LD_PRELOAD \$IBEMU_FAST\" >'$WORK/env'
	n=0; until [ -e '$WORK/done' ] || [ \$n -ge 600 ]; do n=\$((n + 1)); timeout 0.1 tail -f /dev/null; done" \
	>"$WORK/run" 2>&1 &
RUN=$!
wait_for 10 test -s "$WORK/env" || fail "the run did not start"
read -r LIB FAST <"$WORK/env"
if [ -z "$LIB" ] || [ -z "$FAST" ]; then
	fail "the run has no fast path: LD_PRELOAD '$LIB' IBEMU_FAST '$FAST'"
	touch "$WORK/done"; wait $RUN; finish; exit
fi
EMU=$("$IBEMU" ctl --name "$NAME" pid)
mkfifo "$WORK/in"
LD_PRELOAD=$LIB IBEMU_FAST=$FAST python3 "$WORK/client.py" <"$WORK/in" >"$WORK/out" 2>&1 &
CLIENT=$!
exec 3>"$WORK/in"
said() { grep -c "^$1" "$WORK/out"; }
said_times() { [ "$(said "$1")" = "$2" ]; }
wait_for 10 said_times opened 1
expect_line "opened socket:" "the outside client opened umad0 on the fast path"
echo >&3
wait_for 10 said_times ioctl: 1
expect_line "ioctl: 0" "its first ioctl (the slot is taken then)"

# In a futex wait (syscall 202) with nothing answered yet.
in_futex() { [ "$(cut -d' ' -f1 "/proc/$CLIENT/syscall" 2>/dev/null)" = 202 ] && [ "$(said ioctl:)" = "$1" ]; }
kill -STOP "$EMU"
echo >&3
if wait_for 10 in_futex 1; then pass "stopped emulator: the ioctl sleeps on the slot"; else
	fail "not asleep in futex: $(cat /proc/$CLIENT/syscall 2>&1)"; fi
kill -CONT "$EMU"
wait_for 10 said_times ioctl: 2
[ "$(grep -c '^ioctl: 0$' "$WORK/out")" = 2 ] && pass "continued: it is woken with its answer" ||
	fail "no second answer"

kill -STOP "$EMU"
echo >&3
wait_for 10 in_futex 2 || fail "not asleep before the kill"
kill -9 "$EMU"
if wait_for 10 said_times ioctl: 3; then pass "killed: the sleeping ioctl ends"; else
	fail "the client still waits after the emulator was killed"; fi
expect_line "ioctl: Input/output error" "... with EIO, as a removed device's"
exec 3>&-
wait $CLIENT
touch "$WORK/done"
{ wait $RUN; } 2>/dev/null	# killed, as meant
rm -f "$FAST" "${FAST%.fast}.sock"	# what a killed emulator leaves
finish
