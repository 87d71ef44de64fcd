#!/bin/bash
# Issue #47, 4: nothing a run's programs send to an emulated port's
# address leaves through the machine's interfaces. The "machine" is a
# network namespace of this test whose LAN (a veth) leads to another,
# where something listens on 10.1.0.5:7777 (host3's address in the
# default fabric) and counts who connects. A run there has a network of
# its own by default: a kernel TCP connect to 10.1.0.5 (what
# librspreload falls back to) reaches nobody on the LAN. With
# --host-network the run keeps the machine's network and the ports'
# addresses are loopback ones (127.1.0.3 ...): rping connects over them,
# and a TCP connect to them stays on the machine too. An address a port
# may not have there is refused with its file and line.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null; then
	fail "needs root and ip(8) to make the test's namespaces"
	finish
fi
M=ibemu-m-$$ L=ibemu-lan-$$
cleanup() { ip netns del "$M" 2>/dev/null; ip netns del "$L" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
ip netns add "$M" && ip netns add "$L" &&
	ip link add v0 netns "$M" type veth peer name v1 netns "$L" &&
	ip -n "$M" addr add 10.1.0.1/16 dev v0 && ip -n "$M" link set v0 up &&
	ip -n "$M" link set lo up &&
	ip -n "$L" addr add 10.1.0.5/16 dev v1 && ip -n "$L" link set v1 up &&
	ip -n "$L" link set lo up || { fail "cannot make the test's namespaces"; finish; }

# The LAN's listener: a line per connection it accepted.
cat >"$WORK/listen.py" <<'PY'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 7777))
s.listen(16)
open(sys.argv[1] + ".up", "w").close()
while True:
    c, a = s.accept()
    with open(sys.argv[1], "a") as f:
        f.write("connection from %s\n" % a[0])
    c.close()
PY
ip netns exec "$L" /usr/bin/python3 -S "$WORK/listen.py" "$WORK/lan" &
lan=$!
wait_for 10 test -e "$WORK/lan.up" || fail "the LAN's listener did not start"
# A probe that the LAN is there: from the machine itself it answers.
ip netns exec "$M" /usr/bin/python3 -S -c 'import socket; socket.create_connection(("10.1.0.5", 7777), 3)' &&
	wait_for 10 grep -q "connection from 10.1.0.1" "$WORK/lan" &&
	pass "the machine reaches the LAN's 10.1.0.5:7777" || fail "the LAN is not reachable from the machine"
: >"$WORK/lan"

cat >"$WORK/connect.py" <<'PY'
import socket, sys
try:
    socket.create_connection((sys.argv[1], 7777), 3).close()
    print("connect %s: connected" % sys.argv[1])
except OSError as e:
    print("connect %s: %s" % (sys.argv[1], e.strerror or e))
PY
export PY="$WORK/connect.py" W="$WORK"

# The default: the run's own network.
ip netns exec "$M" timeout 120 "$IBEMU" run -- sh -c '
	ip -o -4 addr show ib0 | awk "{print \"ib0:\", \$4}"
	/usr/bin/python3 -S "$PY" 10.1.0.5' >"$WORK/out" 2>"$WORK/log"
RC=$?
expect_rc 0 "ibemu run, its own network"
expect_line "ib0: 10.1.0.3/16" "ib0 carries host1's address"
expect_no_line "connect 10.1.0.5: connected" "a TCP connect to host3's address reaches nobody"
[ ! -s "$WORK/lan" ] && pass "nothing reached the machine's LAN" ||
	fail "the LAN saw: $(cat "$WORK/lan")"

# --host-network: the machine's network, the ports' addresses loopback.
ip netns exec "$M" timeout 120 "$IBEMU" run --host-network --configured -a host1 -a host3 -- sh -c '
	"$IBEMU" ctl port host3/1 | sed -n "s/^addr /host3 addr: /p"
	ip -o -4 addr show v0 | awk "{print \"v0:\", \$4}"
	timeout 60 rping -s -a 127.1.0.5 -C 3 -V >"$W/srv" 2>&1 &
	until "$IBEMU" ctl status | grep -q "rdma_cm: listening on 127.1.0.5"; do sleep 0.1; done
	timeout 60 rping -c -a 127.1.0.5 -C 3 -V -v | grep -c "ping data" | sed "s/^/rping lines: /"
	wait
	/usr/bin/python3 -S "$PY" 127.1.0.5' >"$WORK/out" 2>"$WORK/log"
RC=$?
expect_rc 0 "ibemu run --host-network"
expect_line "v0: 10.1.0.1/16" "the machine's interfaces are there"
expect_line "host3 addr: 127.1.0.5" "a port's address is a loopback one"
expect_line "rping lines: 3" "rping over the loopback addresses (3 pings, data checked)"
expect_no_line "connect 127.1.0.5: connected" "a TCP connect to one finds nobody"
[ ! -s "$WORK/lan" ] && pass "and nothing reached the LAN" || fail "the LAN saw: $(cat "$WORK/lan")"

# An address that would route off the machine: refused, file and line.
printf 'Switch 2 "sw"\n[1] "a"[1]\n\nCa 1 "a"\n[1] "sw"[1] addr=10.9.0.1\n' >"$WORK/a.net"
"$IBEMU" run --host-network --topology "$WORK/a.net" -- true >"$WORK/out" 2>&1
RC=$?
expect_rc 1 "--host-network with a routed address in the topology"
expect_line "$WORK/a.net:5: addr=10.9.0.1: on this machine's network (--host-network, CUSE mode) a port's address is in 127.0.0.0/8, which never leaves it" \
	"says which line and why"
"$IBEMU" run --host-network --hosts host1,host2 -- true >"$WORK/out" 2>&1
RC=$?
expect_rc 2 "--host-network with --hosts"
expect_line "ibemu run: --host-network keeps this machine's network: not with --hosts (each host has a network of its own)" \
	"says why in one line"

kill "$lan" 2>/dev/null
wait "$lan" 2>/dev/null
finish
