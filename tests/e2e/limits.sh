#!/bin/bash
# Limits, and the errors past them: a fabric needing more than the 49151
# unicast LIDs is refused by --configured (one line, nothing started); the
# control socket serves 64 clients at once and tells the 65th so, refuses a
# request over 64 KiB, and serves again once they are gone. (Agents per
# file, 32, and the rest are unit-tested: test_umad, test_topo.)
. "$(dirname "$0")/lib.sh"

"$IBEMU" topo gen torus 160 160 >"$WORK/big.net"
"$IBEMU" run --configured --topology "$WORK/big.net" -- echo started >"$WORK/out" 2>&1
RC=$?
expect_rc 1 "--configured over the LID space"
expect_line "ibemu: --configured: this fabric has 51200 switches and cabled CA ports, more than the 49151 unicast LIDs (1..0xbfff)" \
	"says why in one line"
expect_no_line "started" "and runs nothing"

ibemu_run -- python3 -c '
import os, socket, subprocess
path = os.environ["IBEMU_CTL"]
ibemu = os.environ["IBEMU"]
def ctl(*args):
    r = subprocess.run([ibemu, "ctl", *args], capture_output=True, text=True)
    return (r.stdout + r.stderr).strip().splitlines()[0]
held = []
for i in range(64):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    held.append(s)
print("65th client:", ctl("status"))
for s in held:
    s.close()
# The server sees the 64 go when its loop gets to them: wait, bounded.
for i in range(100):
    if ctl("seed").isdigit():
        break
print("afterwards:", ctl("seed").isdigit())
big = socket.socket(socket.AF_UNIX)
big.connect(path)
try:
    big.sendall(b"x" * 70000)
except (BrokenPipeError, ConnectionResetError):
    pass	# the server may close before taking it all
answer = b""
while True:	# the answer may come in pieces; the server closes after it
    try:
        piece = big.recv(4096)
    except ConnectionResetError:
        break
    if not piece:
        break
    answer += piece
print("long request:", answer.decode().strip())
big.close()
'
expect_rc 0 "the ctl limits run"
expect_line "65th client: error: too many control clients" "the 65th control client is told"
expect_line "long request: " "a request over 64 KiB"
grep -q "long request: .*request too long" "$WORK/out" && pass "is refused as too long" || fail "long request answer"
expect_line "afterwards: True" "and the socket serves again"
finish
