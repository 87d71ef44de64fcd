#!/bin/bash
# Many hosts over ssh (issue #17, docs/many-hosts.md). Two "hosts" on this
# machine, each with network, mount and PID namespaces of its own, joined
# by a veth pair. Host A runs sshd (Debian's openssh-server, on that link,
# with a host key and a user key made here; `ibemu` on its PATH by a bind
# mount over /usr/local/bin) and an emulator with opensm and an ibping
# server. Host B reaches it only over the link, through the system's ssh:
# `ibemu run --remote ssh://root@A:2222/NAME --attach host2`, and its
# unmodified ibstat, saquery, ibnetdiscover and ibping see A's fabric.
# Killing B's ssh detaches B's node on A, B's blocked reader gets EIO and
# nothing is left running; a node attached already, and a key sshd does
# not know, are refused in one line.
. "$(dirname "$0")/lib.sh"
unset IBEMU_FAST_PATH XDG_RUNTIME_DIR	# sshd's sessions have none either

A="e2e-mhs-$$"
NA="ibemu-a-$$" NB="ibemu-b-$$" VA="iba$$" VB="ibb$$"
ADDR=10.231.0.1
APID= BPIDS=
cleanup() {
	# A's and B's namespaces die with their first process (--kill-child).
	[ -n "$APID" ] && kill $APID 2>/dev/null
	for p in $BPIDS; do kill $p 2>/dev/null; done
	ip netns del "$NA" 2>/dev/null
	ip netns del "$NB" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
ctl() { "$IBEMU" ctl --name "$A" "$@"; }
in_b() { ip netns exec "$NB" unshare --kill-child --mount --pid --fork --mount-proc --propagation private "$@"; }

# The link.
ip netns add "$NA" && ip netns add "$NB" &&
ip link add "$VA" type veth peer name "$VB" &&
ip link set "$VA" netns "$NA" && ip link set "$VB" netns "$NB" &&
ip -n "$NA" addr add $ADDR/24 dev "$VA" && ip -n "$NA" link set "$VA" up &&
ip -n "$NB" addr add 10.231.0.2/24 dev "$VB" && ip -n "$NB" link set "$VB" up &&
ip -n "$NA" link set lo up && ip -n "$NB" link set lo up ||
	{ fail "cannot make the two hosts' network namespaces"; finish; exit; }

# Keys: sshd's host key, B's user key (authorized on A), and one A does
# not know.
sshd_prepare "$ADDR" none stranger
SSH="ssh -F none -o IdentitiesOnly=yes -o GlobalKnownHostsFile=/dev/null -o UserKnownHostsFile=$WORK/known_hosts -o StrictHostKeyChecking=yes"
export IBEMU_SSH="$SSH -i $WORK/user"
WHERE="ssh://root@$ADDR:2222/$A"
mkdir -p "$WORK/bin" /run/sshd
ln -s "$(readlink -f "$IBEMU")" "$WORK/bin/ibemu"
mkfifo "$WORK/a-stop" "$WORK/b-go"

# Host A: sshd, and the emulator, whose command ends when told (a-stop).
ip netns exec "$NA" unshare --kill-child --mount --pid --fork --mount-proc --propagation private bash -c '
mount --bind "$0/bin" /usr/local/bin || exit 99
/usr/sbin/sshd -D -e -f "$0/sshd_config" 2>"$0/sshd.log" &
SSHD=$!
"$IBEMU" run -v --name "$1" -- bash -c '\''
OSM_CACHE_DIR=$0 opensm -f "$0/osm.log" >/dev/null 2>&1 &
"$IBEMU" ctl wait sm-up >/dev/null && echo "SUBNET UP" >"$0/a-sm"
ibping -S -C ibemu0 >/dev/null 2>&1 &
{ "$TOOLS/umad_big" server ibemu0 >"$0/big-srv" 2>&1
  "$TOOLS/umad_big" server ibemu0 >"$0/big-srv2" 2>&1; } &
ibnetdiscover -l | sort >"$0/a-nodes"
saquery | grep -c "NodeRecord dump" >"$0/a-records"
echo up >"$0/a-up"
read -r _ <"$0/a-stop"'\'' "$0" >"$0/a.out" 2>"$0/a.log"
kill $SSHD' "$WORK" "$A" &
APID=$!
on_a() { nsenter -t "$(pgrep -P $APID)" -m -n -p -- "$@"; }	# A's first process's
listening() { ip netns exec "$NA" ss -ltn | grep -q "$ADDR:2222"; }
if ! wait_for 60 test -s "$WORK/a-up" || ! wait_for 10 listening ||
	! wait_for 10 grep -q ready "$WORK/big-srv"; then
	fail "host A did not come up: $(cat "$WORK/sshd.log" "$WORK/a.log" 2>/dev/null)"; finish; exit
fi
grep -q "SUBNET UP" "$WORK/a-sm" && pass "host A: opensm reached SUBNET UP" || fail "no SUBNET UP on A"
LID1=$(ctl port host1/1 | sed -n 's/.* lid \([0-9]*\) .*/\1/p')
LID2=$(ctl port host2/1 | sed -n 's/.* lid \([0-9]*\) .*/\1/p')
LID3=$(ctl port host3/1 | sed -n 's/.* lid \([0-9]*\) .*/\1/p')

# Host B, attached over ssh. It waits (b-go) while A's side is looked at.
# --host-network: a second attach from inside it reaches A's sshd (an
# attached host's run has a network of its own otherwise, lo only).
in_b timeout 120 "$IBEMU" run -v --remote "$WHERE" --attach host2 --host-network -- bash -c '
ibstat ibemu0 1 | sed -n "s/^[[:space:]]*\(State\|Base lid\|Port GUID\): /ibstat \1: /p"
saquery | grep -c "NodeRecord dump" | sed "s/^/records: /"
ibnetdiscover -l | sort >"$0/b-nodes"
ibping -c 3 -t 1000 "$1" | grep -c "^Pong" | sed "s/^/pongs: /"
"$TOOLS/umad_big" client ibemu0 "$1" 8388609 2>&1 | sed "s/^/big: /"
IBEMU_FAST_PATH=0 saquery | grep -c "NodeRecord dump" | sed "s/^/fuse records: /"
IBEMU_FAST_PATH=0 "$TOOLS/umad_big" client ibemu0 "$1" 8388609 2>&1 | sed "s/^/fuse big: /"
python3 "$3"	# issm over ssh (issm_wait.py)
for c in fork exec close threads eintr; do
	timeout 20 "$TOOLS/umad_paths" $c 2>&1 | sed "s/^/paths: /"
done
"$IBEMU" run --remote "$2" --attach host2 -- true 2>&1 | sed "s/^/again: /"
"$IBEMU" ctl status | sed -n "s/^remote /B ctl: remote /p"
"$IBEMU" ctl dump >"$0/b-dump"
echo attached >"$0/b-attached"
read -r _ <"$0/b-go"' "$WORK" "$LID1" "$WHERE" "$(cd "$(dirname "$0")" && pwd)/issm_wait.py" \
	>"$WORK/out" 2>"$WORK/log" &
B1=$!
BPIDS="$B1"
if wait_for 60 test -s "$WORK/b-attached"; then
	ctl status >"$WORK/a-status"
	grep -qE "^remote [^ ]+: uid 0, pid [0-9]+, round trip [0-9]+\.[0-9]{3} ms: host2$" "$WORK/a-status" &&
		pass "ctl status on A lists B's attachment over ssh, with its round trip" ||
		fail "A's status: $(cat "$WORK/a-status")"
else
	fail "B did not attach"
fi
timeout 5 sh -c 'echo go >"$1"' _ "$WORK/b-go"
wait $B1
RC=$?
expect_rc 0 "host B's run over ssh"
expect_b_sees_a
# 8 MiB + 1 each way: a memfd beside the write and the packet, inline on
# the stream, one frame over the 4 MiB credit (lib/mux_wire.h).
expect_line "big: ok 8388609" "an 8 MiB RMPP message from B to A's host1 and back, byte for byte"
expect_line "fuse records: $(cat "$WORK/a-records")" "saquery on B without the library: the FUSE file forwards over ssh"
expect_line "fuse big: ok 8388609" "the 8 MiB message through the forwarded FUSE file, byte for byte"
expect_issm_wait "B's issm0 over ssh"
grep -q "served 8388609" "$WORK/big-srv" && pass "(A's server echoed it)" || fail "A's server: $(cat "$WORK/big-srv")"
# The fast path's cases (fast-preload.sh), each channel carried by ssh: a
# forked child's FAST_ATTACH passes the data socket back, named as the
# channel it is; a last close is answered after the release.
expect_line "paths: fork: child round trip on the inherited fd (fast)" "over ssh: a forked child uses its parent's fd"
expect_line "paths: fork: parent round trip after the child (fast)" "and the parent keeps it"
expect_line "paths: exec: round trip on the inherited fd (fast)" "an exec'd program uses an fd left open"
expect_line "paths: close: registered at once after the first file's close" "close(2) returns after the release"
expect_line "paths: threads: 400 answers for 4 threads' 400 requests" "four threads on one fd"
expect_line "paths: eintr: a blocked read ended by a signal: EINTR" "a signal ends a blocked read"
expect_match "^again: ibemu: --remote $WHERE: host2 is attached already, by [^ ]+$" \
	"a second attach of host2 over ssh is refused in one line"
[ "$(grep -c "^again:" "$WORK/out")" = 1 ] && pass "(one line)" || fail "said: $(grep "^again:" "$WORK/out")"
expect_match "^B ctl: remote [^ ]+: uid 0, pid [0-9]+, round trip [0-9]+\.[0-9]{3} ms: host2$" \
	"ibemu ctl status on B, over ssh: A's, with B's attachment"
ctl dump >"$WORK/a-dump"
[ -s "$WORK/a-dump" ] && cmp -s "$WORK/a-dump" "$WORK/b-dump" && pass "ibemu ctl dump on B: A's fabric, byte for byte" ||
	fail "dumps differ: $(cmp "$WORK/a-dump" "$WORK/b-dump" 2>&1)"
detached() { ! ctl status | grep -q "^remote "; }
wait_for 10 detached && pass "B ended: A lists no remote host" || fail "still: $(ctl status)"

# B's ssh killed: A detaches host3; a read blocked on B gets EIO; B's
# run ends; no bridge, no ssh left. An ibping server on host3 answers A
# before, and A's pings time out after.
in_b "$IBEMU" run --remote "$WHERE" --attach host3 -- bash -c '
ibping -S -C ibemu0 >/dev/null 2>&1 &
python3 -c "
import os, signal
signal.signal(signal.SIGTERM, signal.SIG_IGN)
fd = os.open(\"/dev/infiniband/umad0\", os.O_RDWR)
print(\"blocking\", flush=True)
try:
    os.read(fd, 256)
except OSError as e:
    print(\"read:\", e.strerror, flush=True)
"' >"$WORK/b2.out" 2>&1 &
B2=$!
BPIDS="$BPIDS $B2"
pong3() { on_a "$IBEMU" exec --name "$A" -- ibping -c 1 -t 300 "$LID3" 2>&1 | grep -q "^Pong"; }
wait_for 30 grep -q blocking "$WORK/b2.out" || fail "B's reader did not start: $(cat "$WORK/b2.out")"
if wait_for 10 pong3; then pass "A pings B's host3 through ssh"; else fail "no pong from host3"; fi
SSHPID=$(pgrep -f "^ssh .*ibemu bridge $A\$")
BRIDGE=$(pgrep -f "^ibemu bridge $A\$")
[ -n "$SSHPID" ] && [ -n "$BRIDGE" ] && pass "B's ssh (pid $SSHPID) and A's bridge (pid $BRIDGE) run" ||
	fail "ssh '$SSHPID', bridge '$BRIDGE'"
kill -9 $SSHPID
wait_for 10 detached && pass "B's ssh killed: A lists no remote host" || fail "still: $(ctl status)"
gone() { ! kill -0 $B2 2>/dev/null; }
wait_for 10 gone && pass "B's run ended" || fail "B's run still there"
grep -q "^read: Input/output error" "$WORK/b2.out" && pass "B's blocked read got EIO" ||
	fail "B's reader: $(cat "$WORK/b2.out")"
grep -q "has gone (.*); ending" "$WORK/b2.out" && pass "B said why it ended" || fail "B said: $(cat "$WORK/b2.out")"
no_bridge() { ! pgrep -f "^ibemu bridge $A\$" >/dev/null; }
wait_for 10 no_bridge && pass "A's bridge ended" || fail "bridge left: $(pgrep -af "bridge $A")"
pong3 && fail "host3 still answers A" || pass "A's ping to host3 times out now"
grep -q "remote host .* detached host3" "$WORK/a.log" && pass "A logs the detach" || fail "no detach in A's log"

# A key sshd does not know: refused, in one line (ssh's own words).
IBEMU_SSH="$SSH -i $WORK/stranger" in_b "$IBEMU" run --remote "$WHERE" --attach host4 -- true \
	>"$WORK/out" 2>"$WORK/log"
RC=$?
expect_rc 1 "an unknown key"
[ "$(wc -l <"$WORK/log")" = 1 ] && grep -q "^ibemu: --remote $WHERE: .*Permission denied (publickey)" "$WORK/log" &&
	pass "refused in one line: $(cat "$WORK/log")" || fail "said: $(cat "$WORK/log")"
# No emulator of that name there: the bridge's line, over ssh.
in_b "$IBEMU" run --remote "ssh://root@$ADDR:2222/nosuch-$$" --attach host4 -- true >"$WORK/out" 2>"$WORK/log"
RC=$?
expect_rc 1 "no such emulator on A"
grep -q "^ibemu: --remote ssh://.*: ibemu bridge on .*: cannot reach the emulator at .*nosuch-$$.fast: " "$WORK/log" &&
	pass "the bridge's own line, in one line" || fail "said: $(cat "$WORK/log")"

# A ends: nothing of A's or B's is left running.
timeout 5 sh -c 'echo stop >"$1"' _ "$WORK/a-stop"
a_gone() { ! kill -0 $APID 2>/dev/null; }
wait_for 10 a_gone && pass "A ended" || fail "A still running"
none_left() { ! pgrep -f "$A" >/dev/null; }
wait_for 10 none_left && pass "no process of A or B is left" || fail "left: $(pgrep -af "$A")"
finish
