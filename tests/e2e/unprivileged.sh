#!/bin/bash
# `ibemu run` as an unprivileged user: a user namespace plus the FUSE mount
# inside it. Distributions ship /dev/fuse as 0666; where it is not, the test
# gives `nobody` a 0666 node for the same device in a private mount
# namespace, so the host is left untouched. Without access, ibemu must say
# why in one line.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "this test starts as root to become an unprivileged user"
	fail "not root"
	finish
	exit 1
fi
chmod 755 "$WORK"
cp "$IBEMU" "$WORK/ibemu"
chmod 755 "$WORK/ibemu"
# The verbs provider beside the binary, where a build tree has it.
provider="$(dirname "$IBEMU")/verbs/libibemu-rdmav34.so"
if [ -f "$provider" ]; then
	mkdir -m 755 "$WORK/verbs"
	cp "$provider" "$WORK/verbs/"
fi

# as_nobody MODE COMMAND: run COMMAND as nobody, with /dev/fuse replaced (in
# a private mount namespace only) by a node of the same device with MODE.
as_nobody() {
	unshare -m sh -c "
		mkdir -p '$WORK/dev' && mount -t tmpfs tmpfs '$WORK/dev' &&
		mknod '$WORK/dev/fuse' c 10 229 && chmod $1 '$WORK/dev/fuse' &&
		mount --bind '$WORK/dev/fuse' /dev/fuse &&
		su nobody -s /bin/sh -c 'cd / && $2'" >"$WORK/out" 2>&1
	RC=$?
}

# No access to /dev/fuse: one clear line, non-zero status.
as_nobody 600 "$WORK/ibemu run -- true"
expect_rc 1 "refused without /dev/fuse access"
expect_line "ibemu: cannot open /dev/fuse: Permission denied" "says why in one line"

as_nobody 666 "timeout 60 $WORK/ibemu run -- sh -c \"id -un; ibstat -l; smpquery -D nodedesc 0,1,7,1\""
expect_rc 0 "ibemu run as nobody"
expect_line "root" "root inside the user namespace"
expect_line "ibemu0" "ibstat sees the device"
expect_line "Node Description:.....................host3 HCA-1" "SMPs go through the fabric"
# Where /run has mounts below it, the user namespace holds them locked:
# no overlay there (issue #47). One line says what fails and what to do.
if grep -q ' /run/' /proc/self/mountinfo; then
	expect_line "ibemu: warning: /run stays the machine's in this run: the kernel lays no overlay on a directory with mounts below it in a user namespace: writes there (ibacm's socket, pid files) fail with EACCES; run ibemu as root (sudo) for a private one" \
		"a normal user's /run, with mounts below it: one line says what fails and what to do"
else
	expect_no_line "stays the machine's" "a normal user's /run, with no mounts below it: private"
fi

# --ipoib as nobody: the network namespace is the user namespace's, and
# so are the interfaces and the sysfs that shows them.
as_nobody 666 "timeout 60 $WORK/ibemu run --ipoib --configured --attach host1 -- sh -c \"ip -br addr; ls /sys/class/net\""
expect_rc 0 "ibemu run --ipoib as nobody"
expect_match "^ib1 +[A-Z]+ +10\.2\.0\.3/16" "the run's interfaces, as nobody"

# --hosts as nobody: the hosts' namespaces, veths and bridge are the
# user namespace's; a host sees its own HCA and reaches another's
# address by name (ibv_rc_pingpong's TCP exchange, then RC through the
# fabric).
cat >"$WORK/hosts.sh" <<'SH'
ssh host2 ibv_devices | grep ibemu0
ssh host2 ibv_rc_pingpong -n 5 >/dev/null &
n=0
until ibv_rc_pingpong -n 5 host2 2>/dev/null | grep -q iters || [ $n -ge 50 ]; do
	n=$((n + 1)); timeout 0.1 tail -f /dev/null	# until host2's server listens
done
echo "tries $n"
wait
SH
chmod 644 "$WORK/hosts.sh"
as_nobody 666 "timeout 60 $WORK/ibemu run --configured --hosts host1,host2 -- sh $WORK/hosts.sh"
expect_rc 0 "ibemu run --hosts as nobody"
expect_line "ibemu0          	0002c90300000103" "host2 sees its HCA, as nobody"
expect_match "^tries ([0-9]|[1-4][0-9])$" "ibv_rc_pingpong from host1 to host2 by name, as nobody"

# RLIMIT_MEMLOCK holds for a normal user, as the kernel's ib_umem_get
# holds it without CAP_IPC_LOCK (root in the run's user namespace has no
# such capability where the kernel looks).
cp "$TOOLS/verbs_watch" "$WORK/" && chmod 755 "$WORK/verbs_watch"	# the build tree may be closed to nobody
as_nobody 666 "ulimit -l 64 && timeout 60 $WORK/ibemu run --configured --attach host1 -- $WORK/verbs_watch pin ibemu0 64"
expect_rc 0 "ibv_reg_mr as nobody"
expect_line "big: Cannot allocate memory" "64 MiB past a 64 KiB RLIMIT_MEMLOCK: ENOMEM"
expect_line "a page of it: ok" "a page within it: taken"

# A run inside a run (issue #35 item 14): its sockets go beside the outer
# run's, which inside the user namespace is a directory of its own user.
as_nobody 666 "timeout 60 $WORK/ibemu run -- $WORK/ibemu run --attach host2 -- sh -c \"ibstat -l; ibemu ctl status\""
expect_rc 0 "ibemu run inside ibemu run, as nobody"
expect_match "^6 nodes \(2 switches, 4 CAs\)" "the inner run's ctl reaches its emulator"

# --remote-group as a normal user (issue #35 item 13): the fast socket is
# made before the user namespace, where the user's groups are theirs.
echo 'stat -c "socket: %A" "$IBEMU_FAST"' >"$WORK/rg.sh"
as_nobody 666 "timeout 60 $WORK/ibemu run --remote-group nogroup -- sh $WORK/rg.sh"
expect_rc 0 "ibemu run --remote-group nogroup as nobody"
expect_line "socket: srw-rw----" "its fast socket is 0660, for the group"

# Root can steer a normal user's emulator (whose user namespace shows root
# as the overflow uid); another user cannot reach its socket at all.
sock=/tmp/ibemu-65534/unpriv-$$.sock
rm -f "$WORK/done"
as_nobody 666 "timeout 60 $WORK/ibemu run --name unpriv-$$ -- sh -c \"until [ -e $WORK/done ]; do sleep 0.1; done\"" &
bg=$!
if wait_for 30 test -S "$sock"; then
	"$IBEMU" ctl --socket "$sock" status >"$WORK/ctl" 2>&1
	grep -qE "^6 nodes \(2 switches, 4 CAs\)" "$WORK/ctl" &&
		pass "root's ctl is let in" || fail "root's ctl: $(cat "$WORK/ctl")"
	su daemon -s /bin/sh -c "$WORK/ibemu ctl --socket $sock status" >"$WORK/ctl" 2>&1
	rc=$?
	[ $rc -ne 0 ] && grep -q "Permission denied" "$WORK/ctl" &&
		pass "another user is kept out" || fail "another user: rc $rc: $(cat "$WORK/ctl")"
else
	fail "nobody's emulator made no socket"
fi
touch "$WORK/done"
wait $bg
expect_no_line "ibemu[ctl]: warning: control socket: refused a client of uid 65534" "root was not refused"

# Where the system turns user namespaces off, ibemu says so and what to do
# in one line (not a bare "cannot write uid_map"). Made real here: in a user
# namespace that maps uids 0..65535 to themselves and whose
# user.max_user_namespaces is 0, nobody cannot make one.
cat >"$WORK/userns.py" <<'PY'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
r, w = os.pipe()
r2, w2 = os.pipe()
pid = os.fork()
if pid == 0:
    if libc.unshare(0x10000000) != 0:       # CLONE_NEWUSER
        sys.exit("unshare: %s" % os.strerror(ctypes.get_errno()))
    os.write(w, b"x"); os.read(r2, 1)
    os.execvp(sys.argv[1], sys.argv[1:])
os.read(r, 1)
for f, text in (("uid_map", "0 0 65536"), ("gid_map", "0 0 65536")):
    with open("/proc/%d/%s" % (pid, f), "w") as m:
        m.write(text)
os.write(w2, b"x")
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
PY
python3 "$WORK/userns.py" sh -c "echo 0 >/proc/sys/user/max_user_namespaces &&
	setpriv --reuid=65534 --regid=65534 --clear-groups $WORK/ibemu run -- true" >"$WORK/out" 2>&1
RC=$?
expect_rc 1 "refused where user namespaces are off"
expect_line "ibemu: user namespaces are turned off (user.max_user_namespaces = 0): run ibemu with sudo, or allow them: sudo sysctl user.max_user_namespaces=10000: cannot create a user namespace" "says so and what to do, in one line"
[ "$(wc -l <"$WORK/out")" -eq 1 ] && pass "and nothing else" || fail "more than one line"

# Ubuntu 23.10+ restrict them by AppArmor instead: its sysctl is shown here
# by a file on a tmpfs over /proc/sys/kernel (this kernel has no such
# switch), with namespaces off as above so that making one fails.
unshare -m sh -c "mount -t tmpfs tmpfs /proc/sys/kernel &&
	echo 1 >/proc/sys/kernel/apparmor_restrict_unprivileged_userns &&
	python3 '$WORK/userns.py' sh -c 'echo 0 >/proc/sys/user/max_user_namespaces &&
	setpriv --reuid=65534 --regid=65534 --clear-groups $WORK/ibemu run -- true'" >"$WORK/out" 2>&1
RC=$?
expect_rc 1 "refused where AppArmor restricts user namespaces"
expect_line "ibemu: AppArmor restricts unprivileged user namespaces here (kernel.apparmor_restrict_unprivileged_userns = 1): run ibemu with sudo, or allow them: sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0: cannot create a user namespace" "says to use sudo or the sysctl, in one line"
[ "$(wc -l <"$WORK/out")" -eq 1 ] && pass "and nothing else" || fail "more than one line"

# --remote-group in a normal user's run (issue #47, 2): its user namespace
# shows every peer from outside as the overflow uid, root and a member of
# the group alike, so on a socket the group may open such a peer is a
# guest: it may attach hosts, not open the owner's files or steer the
# fabric. The owner: daemon, a member of nogroup; the member: nobody, the
# socket bind-mounted where nobody reaches it (as in many-hosts.sh).
mkdir -m 777 "$WORK/o"
mkdir -m 755 "$WORK/g" && touch "$WORK/g/sock"
unshare -m sh -c "
	mkdir -p '$WORK/dev' && mount -t tmpfs tmpfs '$WORK/dev' &&
	mknod '$WORK/dev/fuse' c 10 229 && chmod 666 '$WORK/dev/fuse' &&
	mount --bind '$WORK/dev/fuse' /dev/fuse && cd / &&
	setpriv --reuid=daemon --regid=daemon --groups=nogroup env -u XDG_RUNTIME_DIR HOME=/ \
	timeout 60 $WORK/ibemu run --remote-group nogroup -- sh -c \
	'echo \$IBEMU_FAST >$WORK/o/fast; until [ -e $WORK/o/done ]; do sleep 0.1; done'" \
	>"$WORK/owner" 2>&1 &
bg=$!
if wait_for 30 test -s "$WORK/o/fast"; then
	unshare --mount --propagation private sh -c "mount --bind \"\$1\" '$WORK/g/sock' &&
		su nobody -s /bin/sh -c \"cd / && /usr/bin/python3 -S -c '
import socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.send(struct.pack(\\\"=IIIIQ\\\", 1, 1, 0, 0, 2) + b\\\"umad0\\\")  # FAST_OPEN umad0, O_RDWR
print(\\\"member FAST_OPEN:\\\", struct.unpack(\\\"=q\\\", s.recv(64)[:8])[0])' $WORK/g/sock;
		$WORK/ibemu ctl --socket $WORK/g/sock link down host3/1 2>&1 | sed 's/^/member: /'\"" \
		_ "$(cat "$WORK/o/fast")" >"$WORK/out" 2>&1
else
	echo "no fast socket: $(cat "$WORK/owner")" >"$WORK/out"
fi
touch "$WORK/o/done"
wait $bg
expect_line "member FAST_OPEN: -13" "a member of the group may not open a normal user's umad0 (EACCES)"
expect_match "^member: ibemu ctl: the emulator at .* refuses control to those who may only attach hosts" \
	"nor steer that user's fabric (one line)"

if [ -f "$provider" ]; then
	as_nobody 666 "timeout 60 $WORK/ibemu run -a host1 -a host2 --configured -- sh -c \"ibv_devices; ibv_devinfo -d ibemu1\""
	expect_rc 0 "verbs as nobody"
	expect_match "ibemu1[[:space:]]+0002c90300000103" "ibv_devices lists the second CA"
	expect_line "PORT_ACTIVE" "ibv_devinfo -d ibemu1 reads its port"
fi
finish
