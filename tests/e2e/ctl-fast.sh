#!/bin/bash
# `ibemu ctl` through the fast socket (FAST_CTL, abi/fast_wire.h): what
# `ibemu run --remote` gives its programs as IBEMU_CTL, where a container
# may see no other socket (many-hosts.sh checks it from host B). Here, on
# one host: the same answers as through the control socket, a dump far
# past one datagram (64 KiB each) byte for byte, a request longer than
# the server's old 4 KiB read, `ctl wait`, and what the protocol refuses.
. "$(dirname "$0")/lib.sh"
# This test is about the fast socket: on even in CI's FUSE-only pass.
unset IBEMU_FAST_PATH

cat >"$WORK/proto.py" <<'PY'
import socket, struct
from fast_proto import OPEN, ask, chan
CTL = 13
s = chan()
print("ctl after open:", ask(s, OPEN, 2, b"umad0")[0], ask(s, CTL)[0])
s = chan()
print("ctl:", ask(s, CTL)[0])
# 20,000 bytes of argument in one datagram: read whole, answered.
s.send(b"port\t" + b"x" * 20000 + b"\n")
ans = b""
while True:
    d = s.recv(65536)
    if not d:
        break
    ans += d
print("long request:", ans[:1].decode(), ans.split(b"\n", 1)[1][:40].decode())
PY

export WORK E2E=$(cd "$(dirname "$0")" && pwd)
ibemu_run --topology "$TOPOLOGIES/fattree-648.net" -- bash -c '
	"$IBEMU" ctl dump >"$WORK/dump"
	IBEMU_CTL=$IBEMU_FAST "$IBEMU" ctl dump >"$WORK/dump-fast"; echo "dump rc=$?"
	IBEMU_CTL=$IBEMU_FAST "$IBEMU" ctl status | sed -n "1s/^/status: /p"
	IBEMU_CTL=$IBEMU_FAST "$IBEMU" ctl wait active --timeout 1 2>&1 | sed "s/^/wait: /"
	IBEMU_CTL=$IBEMU_FAST "$IBEMU" ctl port nosuch/1 2>&1 | sed "s/^/bad: /"
	PYTHONPATH=$E2E python3 "$WORK/proto.py"; echo "proto rc=$?"'
expect_rc 0 "the run"
expect_line "dump rc=0" "ibemu ctl dump through the fast socket"
size=$(stat -c %s "$WORK/dump")
[ "$size" -gt 150000 ] && pass "the dump is $size bytes: many datagrams" || fail "dump only $size bytes"
cmp -s "$WORK/dump" "$WORK/dump-fast" && pass "... the same bytes as through the control socket" ||
	fail "dumps differ: $(cmp "$WORK/dump" "$WORK/dump-fast" 2>&1)"
expect_match "^status: 702 nodes" "status through the fast socket"
expect_match "^wait: ibemu ctl: wait active: not within 1 s" "ctl wait: asks again until its timeout"
expect_match "^bad: error: .*nosuch" "a command's error comes back as through the control socket"
expect_line "ctl after open: 0 -16" "FAST_CTL on a channel with a file: EBUSY"
expect_line "ctl: 0" "FAST_CTL on a new channel: 0"
expect_match "^long request: 1 error: " "a 20,000-byte request is read whole and answered"
expect_line "proto rc=0" "the raw client ran to its end"
finish
