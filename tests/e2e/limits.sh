#!/bin/bash
# Limits, and the errors past them: a fabric needing more than the 49151
# unicast LIDs is refused by --configured (one line, nothing started); the
# control socket serves 64 clients at once and tells the 65th so, refuses a
# request over 64 KiB, and serves again once they are gone; 64 clients that
# connect and say nothing are closed after 10 s; `ibemu ctl` on a stopped
# emulator gives up after its --timeout and says so; answers of any size
# come whole (a 2,214-node dump was cut at the first EAGAIN, exit 0).
# (Agents per file, 32, and the rest are unit-tested: test_umad, test_topo.)
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
def connect64():
    held = []
    for i in range(64):
        s = socket.socket(socket.AF_UNIX)
        s.connect(path)
        held.append(s)
    return held
held = connect64()
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
status, rest = answer[:1], answer[1:].decode()
length, text = rest.split("\n", 1)
print("long request:", status.decode(), int(length) == len(text), text.strip())
big.close()
# Idle clients: closed after 10 s, then the socket serves again.
held = connect64()
print("while idle:", ctl("status"))
for s in held:
    s.settimeout(15)
    s.recv(1)	# EOF when the server closes it
print("idle ones closed:", ctl("seed").isdigit())
'
expect_rc 0 "the ctl limits run"
expect_line "65th client: error: too many control clients" "the 65th control client is told"
expect_line "long request: " "a request over 64 KiB"
expect_line "afterwards: True" "and the socket serves again"
expect_line "long request: 1 True error: request too long" "is refused as too long, the answer framed"
expect_line "while idle: error: too many control clients" "64 idle clients fill the socket"
expect_line "idle ones closed: True" "until the server closes them after 10 s"

# A stopped emulator: ctl waits --timeout, then says so.
NAME="e2e-limits-$$"
"$IBEMU" run --name "$NAME" -- sh -c 'until [ -e "$0" ]; do timeout 0.1 tail -f /dev/null; done' "$WORK/done" >/dev/null 2>&1 &
RUN=$!
wait_for 10 "$IBEMU" ctl --name "$NAME" seed >/dev/null 2>&1
p=$("$IBEMU" ctl --name "$NAME" pid)
kill -STOP "$p"
"$IBEMU" ctl --name "$NAME" --timeout 1 status >"$WORK/out" 2>&1; echo "rc=$?" >>"$WORK/out"
kill -CONT "$p"
"$IBEMU" ctl --name "$NAME" seed >/dev/null && echo "after CONT: answers" >>"$WORK/out"
touch "$WORK/done"; wait $RUN
expect_match "no answer from the emulator at .* within 1 s" "ctl on a stopped emulator times out, and says so"
expect_line "rc=1" "with exit status 1"
expect_line "after CONT: answers" "and the emulator answers once continued"

# Big answers, read slowly: whole or an error, never cut with status 0.
export W="$WORK"
"$IBEMU" topo gen fattree3 36 6 >"$WORK/big3.net"
ibemu_run --topology "$WORK/big3.net" -- sh -c '
"$IBEMU" ctl dump >"$W/dump.net"; echo "dump rc=$?"
"$IBEMU" ctl dump --dot | tail -1; "$IBEMU" ctl nodes --json | python3 -c "import json,sys; print(\"json nodes\", len(json.load(sys.stdin)))"
"$IBEMU" ctl dump | (timeout 0.5 tail -f /dev/null; wc -c) '
expect_line "dump rc=0" "dump of 2,214 nodes"
"$IBEMU" topo check "$WORK/dump.net" >"$WORK/check" 2>&1
grep -q "2214 nodes" "$WORK/check" && pass "the whole dump loads back (2214 nodes)" || { fail "dump cut: $(cat "$WORK/check")"; }
expect_line "}" "dump --dot ends with its closing brace"
expect_line "json nodes 2214" "nodes --json parses, all 2214 nodes"
expect_match "^ *$(wc -c <"$WORK/dump.net")\$" "a reader that waits before reading gets every byte"
finish
