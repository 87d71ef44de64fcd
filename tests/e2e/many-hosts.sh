#!/bin/bash
# Many hosts, on one machine (issue #17, docs/many-hosts.md): host A is an
# `ibemu run` that owns the fabric and runs opensm; host B is another
# `ibemu run --remote A --attach host2`, with mount and PID namespaces of
# its own, whose HCA is host2. Unmodified ibstat, smpquery, saquery,
# ibnetdiscover and ibping on B see A's fabric through B's own sysfs and
# umad files; ibping crosses from B to a server on A. A node serves one
# host at a time; `ibemu ctl status` on A lists B; B gone (even SIGKILLed)
# detaches its node; A gone ends B's command.
. "$(dirname "$0")/lib.sh"
# The library as by default (the CI pass without it would make every
# program of B take the FUSE files, which are tested by name below).
unset IBEMU_FAST_PATH

A="e2e-mh-$$"
ctl() { "$IBEMU" ctl --name "$A" "$@"; }
# A: opensm, and an ibping server on host1 (ibemu0, LID from the SM).
"$IBEMU" run -v --name "$A" --remote-group nogroup -- bash -c '
OSM_CACHE_DIR=$0 opensm -f "$0/osm.log" >/dev/null 2>&1 &
"$IBEMU" ctl wait sm-up >/dev/null || echo "no SUBNET UP"
ibping -S -C ibemu0 >/dev/null 2>&1 &
ibnetdiscover -l | sort >"$0/a-nodes"
saquery | grep -c "NodeRecord dump" >"$0/a-records"
echo "$IBEMU_FAST" >"$0/a-fast"
echo up >"$0/a-up"
tail -f /dev/null' "$WORK" >"$WORK/a.out" 2>"$WORK/a.log" &
APID=$!
if ! wait_for 60 test -s "$WORK/a-up"; then
	fail "host A did not come up"; kill $APID; finish
fi
LID1=$(ctl port host1/1 | sed -n 's/.* lid \([0-9]*\) .*/\1/p')
LID2=$(ctl port host2/1 | sed -n 's/.* lid \([0-9]*\) .*/\1/p')

# B holds umad0 open, after an ioctl (the library asks for a slot then),
# until told to let go.
cat >"$WORK/hold.py" <<'PY'
import fcntl, os, sys, time
fd = os.open("/dev/infiniband/umad0", os.O_RDWR)
fcntl.ioctl(fd, 0x1b03)         # IB_USER_MAD_ENABLE_PKEY
open(sys.argv[1] + "/b-held", "w").close()
end = time.monotonic() + 10
while not os.path.exists(sys.argv[1] + "/b-release") and time.monotonic() < end:
    time.sleep(0.05)
PY
# B, attached: what its tools say of the fabric, and A's view meanwhile.
ibemu_run --remote "$A" --attach host2 -- bash -c '
ibstat ibemu0 1 | sed -n "s/^[[:space:]]*\(State\|Base lid\|SM lid\|Port GUID\): /ibstat \1: /p"
ls /dev/infiniband | tr "\n" " " | sed "s/^/devices: /"; echo
smpquery -D nodedesc 0 | sed "s/^/smpquery: /"
saquery | grep -c "NodeRecord dump" | sed "s/^/records: /"
ibnetdiscover -l | sort >"$0/b-nodes"
ibping -c 3 -t 1000 "$1" | grep -c "^Pong" | sed "s/^/pongs: /"
"$IBEMU" ctl --name "$2" status | sed "s/^/A says: /"
"$IBEMU" ctl --name "$2" status --json | python3 -c "import json, sys
for r in json.load(sys.stdin)[\"remotes\"]: print(\"json remote:\", r[\"nodes\"], len(r[\"files\"]), r[\"round_trip_ns\"] > 0)"
"$IBEMU" run --remote "$2" --attach host2 -- true 2>&1 | sed "s/^/again: /"
# ibemu ctl on B (IBEMU_CTL: the fast socket here, FAST_CTL) steers A.
echo "$IBEMU_CTL" | sed "s/^/B IBEMU_CTL: /"
"$IBEMU" ctl status | sed -n "s/^remote /B ctl: remote /p"
id=$("$IBEMU" ctl fault add delay 1 --node host4 --class 0x99 | sed -n "s/^fault \([0-9]*\) added$/\1/p")
"$IBEMU" ctl --name "$2" fault list | grep -c "^$id delay 1 node host4 " | sed "s/^/A faults: /"
"$IBEMU" ctl fault del "$id" >/dev/null && echo "B fault del: ok"
"$IBEMU" ctl --name "$2" fault list | grep -c "delay 1 node host4 " | sed "s/^/A faults after: /"
# Programs without the library: the FUSE files here forward each call to A.
IBEMU_FAST_PATH=0 smpquery -D nodedesc 0 | sed "s/^/fuse smpquery: /"
IBEMU_FAST_PATH=0 saquery | grep -c "NodeRecord dump" | sed "s/^/fuse records: /"
"$3" 0,1 | sed "s/^/static: /"
python3 "$4"	# issm: IsSM on host2 at A, waits and signals (issm_wait.py)
ldd "$3" 2>&1 | grep -o "not a dynamic executable" | sed "s/^/static: /"
python3 "$0/hold.py" "$0" &
n=0; until [ -e "$0/b-held" ] || [ $n -ge 100 ]; do n=$((n + 1)); timeout 0.1 tail -f /dev/null; done
"$IBEMU" ctl --name "$2" status | sed -n "s/^  umad/A with a file: umad/p"
touch "$0/b-release"; wait' "$WORK" "$LID1" "$A" "$(dirname "$IBEMU")/examples/nodeinfo-static" \
	"$(cd "$(dirname "$0")" && pwd)/issm_wait.py"
expect_rc 0 "host B ran its command"
expect_b_sees_a
expect_line "devices: issm0 rdma_cm umad0 uverbs0 " "B's /dev/infiniband: its one port's umad0 and issm0, its HCA's uverbs0, rdma_cm"
expect_line "smpquery: Node Description:.....................host2 HCA-1" "smpquery on B: the local node is host2"
expect_match "^A says: remote [^ ]*: uid [0-9]*, pid [0-9]*, round trip [0-9]+\.[0-9]{3} ms: host2$" \
	"A's ctl status lists B, the round trip B measured, and its node"
expect_line "json remote: host2 0 True" "and its --json (no file open at that moment; round_trip_ns)"
expect_line "again: ibemu: --remote $A: host2 is attached already, by " "a second attach of host2 is refused in one line"
expect_line "B IBEMU_CTL: /dev/.ibemu-fast" "B's IBEMU_CTL is its fast socket"
expect_match "^B ctl: remote [^ ]*: uid [0-9]*, pid [0-9]*, round trip [0-9]+\.[0-9]{3} ms: host2$" \
	"ibemu ctl status on B: A's status, with B's attachment"
expect_line "A faults: 1" "a fault rule added by ibemu ctl on B is A's"
expect_line "B fault del: ok" "B deletes it"
expect_line "A faults after: 0" "... and it is gone on A"
expect_line "fuse smpquery: Node Description:.....................host2 HCA-1" \
	"smpquery on B without the library: B's FUSE umad0 forwards to A"
expect_line "fuse records: $(cat "$WORK/a-records")" "saquery on B without the library (RMPP through the forwarded file)"
expect_match "^static: Switch node GUID 0x[0-9a-f]{16}, 8 ports, SMP arrived on port [0-9]+$" \
	"a static program on B: its SMP crosses to A's fabric and back"
expect_line "static: not a dynamic executable" "... and it is static"
expect_issm_wait "B's issm0 (forwarded to A)"
expect_match "^A with a file: umad0: pid [0-9]+ \(.*\) through fast$" \
	"B's open file on A: the fast path, no slot (another host's memory is not A's)"
grep -q "remote host .* attached host2" "$WORK/a.log" && pass "A logs the attach" || fail "no attach in A's log"

# Once B has ended, host2 is free again; a second host can take it.
detached() { ! ctl status | grep -q "^remote "; }
wait_for 5 detached && pass "B ended: A lists no remote host" || fail "still: $(ctl status)"
grep -q "remote host .* detached host2" "$WORK/a.log" && pass "A logs the detach" || fail "no detach in A's log"

# unix:PATH, from a container-like mount namespace that sees A's socket
# only where it is bind-mounted (A's socket directory hidden by a tmpfs).
FAST=$(cat "$WORK/a-fast")
touch "$WORK/sock"
unshare --mount --propagation private bash -c '
mount --bind "$1" "$2" && mount -t tmpfs none "$(dirname "$1")" || exit 99
ls "$(dirname "$1")" | wc -l | sed "s/^/hidden dir entries: /"
"$IBEMU" run --remote "unix:$2" --attach host4 -- ibstat ibemu0 1' _ "$FAST" "$WORK/sock" >"$WORK/out" 2>"$WORK/log"
RC=$?
expect_rc 0 "unix:PATH of a bind-mounted socket"
expect_line "hidden dir entries: 0" "(A's socket directory hidden there)"
expect_line "Port GUID: 0x0002c90300000108" "ibstat there: host4's port"
expect_line "State: Active" "Active"

# B SIGKILLed: the kernel closes its channel, and A detaches its node.
"$IBEMU" run --remote "$A" --attach host3 -- bash -c 'echo running; exec tail -f /dev/null' \
	>"$WORK/b2.out" 2>&1 &
B2=$!
attached() { ctl status | grep -q "^remote .*: host3$"; }
wait_for 10 grep -q running "$WORK/b2.out"	# set up: nothing half made
wait_for 10 attached && pass "host3 attached by another B" || fail "host3 not attached: $(ctl status)"
kill -9 $B2
wait $B2 2>/dev/null
if wait_for 5 detached; then pass "B SIGKILLed: host3 detached"; else fail "still attached: $(ctl status)"; fi

# --remote-group nogroup: A's fast socket is 0660 and nogroup's. nobody
# (of that group) attaches host3 through the bind-mounted socket, from a
# run of its own (a user namespace; /dev/fuse made usable there, as in
# unprivileged.sh), but may not open A's own files; daemon (not of it) is
# refused in one line.
ls -l "$FAST" | awk '{ print "socket:", $1, $4 }' >"$WORK/out"
expect_line "socket: srw-rw---- nogroup" "--remote-group: the fast socket is 0660, group nogroup"
mkdir -m 755 "$WORK/g" && touch "$WORK/g/sock" && chmod 711 "$WORK"
unshare --mount --propagation private bash -c '
mount --bind "$1" "$2/sock" && mknod "$2/fuse" c 10 229 && chmod 666 "$2/fuse" &&
	mount --bind "$2/fuse" /dev/fuse || exit 99
as() { setpriv --reuid="$1" --regid="$(id -g "$1")" --clear-groups env -u XDG_RUNTIME_DIR HOME=/ "${@:2}"; }
as nobody "$IBEMU" run --remote "unix:$2/sock" --attach host3 -- bash -c \
	"ibstat ibemu0 1; \"\$IBEMU\" ctl status" 2>&1 | sed "s/^/nobody: /"
as nobody /usr/bin/python3 -c "
import socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.send(struct.pack(\"=IIIIQ\", 1, 1, 0, 0, 2) + b\"umad0\")	# FAST_OPEN umad0, O_RDWR
print(\"guest FAST_OPEN:\", struct.unpack(\"=q\", s.recv(64)[:8])[0])" "$2/sock"
as daemon "$IBEMU" run --remote "unix:$2/sock" --attach host3 -- true 2>&1 | sed "s/^/daemon: /"
' _ "$FAST" "$WORK/g" >>"$WORK/out" 2>&1
expect_line "nobody: State: Active" "a member of the group attaches host3 (ibstat: Active)"
expect_line "nobody: Port GUID: 0x0002c90300000106" "(host3's port)"
expect_line "guest FAST_OPEN: -13" "but may not open A's own umad files (EACCES)"
expect_line "nobody: ibemu ctl: the emulator at /dev/.ibemu-fast refuses control to those who may only attach hosts (its owner and root may steer it)" \
	"nor steer A's fabric with ibemu ctl (one line)"
expect_match "^daemon: ibemu: --remote unix:.*: cannot reach the emulator at .*: Permission denied$" \
	"a user without access to the socket is refused"
[ "$(grep -c "^daemon:" "$WORK/out")" = 1 ] && pass "in one line" || fail "said: $(grep "^daemon:" "$WORK/out")"
chmod 700 "$WORK"
wait_for 5 detached || fail "host3 still attached: $(ctl status)"

# A gone: B's command is ended, and says why.
"$IBEMU" run --remote "$A" --attach host4 -- bash -c 'echo running; exec tail -f /dev/null' \
	>"$WORK/b3.out" 2>&1 &
B3=$!
wait_for 10 grep -q running "$WORK/b3.out"
attached4() { ctl status | grep -q "^remote .*: host4$"; }
wait_for 10 attached4 || fail "host4 not attached"
kill $APID
gone() { ! kill -0 $B3 2>/dev/null; }
if wait_for 10 gone; then pass "A ended: B's run ends too"; else fail "B still running"; kill -9 $B3; fi
grep -q "the emulator this host is attached to has gone" "$WORK/b3.out" && pass "and says why" ||
	fail "B said: $(cat "$WORK/b3.out")"
wait $APID 2>/dev/null

# Refusals, each one line: no such emulator, no --attach, options that
# belong to the owner.
ibemu_run --remote "nosuch-$$" --attach host2 -- true
expect_rc 1 "no such emulator"
grep -q "^ibemu: --remote nosuch-$$: cannot reach the emulator at .*nosuch-$$.fast: " "$WORK/log" &&
	pass "says where it looked, in one line" || fail "said: $(cat "$WORK/log")"
"$IBEMU" run --remote "$A" -- true 2>"$WORK/log"; RC=$?
expect_rc 1 "--remote without --attach"
"$IBEMU" run --remote "$A" --topology x.net --attach host2 -- true 2>"$WORK/log"; RC=$?
expect_rc 2 "--remote with the owner's options: bad usage"
finish
