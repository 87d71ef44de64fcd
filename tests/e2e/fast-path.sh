#!/bin/bash
# The fast path's server (docs/fast-path.md, abi/fast_wire.h): inside
# `ibemu run`, $IBEMU_FAST is a SOCK_SEQPACKET socket where a client opens
# umad0, registers an agent, writes SMPs and reads the answers from its
# data socket. The same client through the FUSE file gets the same answer.
# Protocol errors get the errno the protocol names; a closed file is
# released before FAST_SYNC answers.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/proto.py" <<'PY'
import os, socket
from fast_proto import ask, attach, chan
s = chan()
print("bad version:", ask(s, 1, 0, b"umad0", version=9)[0])
print("write before open:", ask(s, 2, 4, b"abcd")[0])
print("no such device:", ask(s, 1, 2, b"umad9")[0])
print("not a device name:", ask(s, 1, 2, b"umad00")[0])
ret, data = ask(s, 1, 2, b"umad0")
print("open umad0:", ret, "data socket" if data is not None else "no data socket")
print("second open on one channel:", ask(s, 1, 2, b"umad0")[0])
print("write of a short header:", ask(s, 2, 10, b"0123456789")[0])
print("count unlike the payload:", ask(s, 2, 99, b"0123456789")[0])
other, ret, name = attach(data)
print("attach the data socket:", ret, name)
print("write on the attached channel:", ask(other, 2, 10, b"0123456789")[0])
r, w = os.pipe()
print("attach a pipe:", attach(w)[1])
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
print("attach another socket:", attach(a.fileno())[1])
os.close(data)
print("sync after close:", ask(s, 4)[0])
print("write after release:", ask(s, 2, 4, b"abcd")[0])
PY

export WORK E2E=$(cd "$(dirname "$0")" && pwd)
ibemu_run -- sh -c '
	"$TOOLS/fast_smp" fast 0.2; echo "fast rc=$?"
	IBEMU_FAST_PATH=0 "$TOOLS/fast_smp" fuse 0.2; echo "fuse rc=$?"
	PYTHONPATH=$E2E python3 "$WORK/proto.py"; echo "proto rc=$?"
	ibemu ctl status'
expect_line "fast rc=0" "an SMP round trip through the fast path"
[ "$(grep -c "^node type 1, node GUID 0x0002c90300000100$" "$WORK/out")" -eq 2 ] &&
	pass "both paths read host1's NodeInfo" || fail "NodeInfo differs or missing"
expect_match "^fast: [0-9]+ round trips" "the fast client counted its round trips"
expect_line "fuse rc=0" "the FUSE file beside it"
expect_line "proto rc=0" "the protocol script ran"
expect_line "bad version: -71" "another protocol version: EPROTO"
expect_line "write before open: -9" "a write before the open: EBADF"
expect_line "no such device: -2" "umad9: ENOENT"
expect_line "not a device name: -2" "umad00: ENOENT"
expect_line "open umad0: 0 data socket" "the open passes the data socket"
expect_line "second open on one channel: -16" "a channel holds one file: EBUSY"
expect_line "write of a short header: -22" "the umad core's EINVAL for a short write"
expect_line "count unlike the payload: -22" "a count unlike the payload: EINVAL"
expect_line "attach the data socket: 2 umad0" "FAST_ATTACH: the open's flags and the device's name"
expect_line "write on the attached channel: -22" "the attached channel serves the file"
expect_line "attach a pipe: -9" "FAST_ATTACH of a pipe: EBADF"
expect_line "attach another socket: -9" "FAST_ATTACH of a socket not ours: EBADF"
expect_line "sync after close: 0" "FAST_SYNC after the close"
expect_line "write after release: -9" "the file was released by then: EBADF"
finish
