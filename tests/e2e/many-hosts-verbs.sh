#!/bin/bash
# Verbs on an attached host (issue #17, docs/many-hosts.md "Verbs on an
# attached host"): host A is an `ibemu run` with opensm and verbs servers
# on host1; host B is `ibemu run --remote A --attach host2`. Unmodified
# ibv_devices and ibv_devinfo on B show host2 Active with the LID opensm
# gave it; ibv_rc_pingpong (with a completion channel, made on B) and
# ibv_ud_pingpong cross from B to A; B's verbs program gets the async
# events of its port when A's control plane takes the link down and up;
# A gone, a read blocked on B's verbs event file gets EIO.
. "$(dirname "$0")/lib.sh"
unset IBEMU_FAST_PATH

A="e2e-mhv-$$"
export W="$WORK"
# A: opensm; an RC server with events (-e) and a UD server on host1.
# Both runs keep the machine's network: the pingpongs exchange their
# addresses over its loopback (each run has a network of its own else).
"$IBEMU" run -v --name "$A" --host-network -- bash -c '
. "$INSIDE"
start_opensm
timeout 60 ibv_rc_pingpong -d ibemu0 -g 0 -e -n 20 -p 18611 >"$W/a-rc" 2>&1 &
timeout 60 ibv_ud_pingpong -d ibemu0 -g 0 -n 20 -p 18612 >"$W/a-ud" 2>&1 &
wait_listen 18611; wait_listen 18612
echo "$IBEMU_FAST" >"$W/a-fast"
echo up >"$W/a-up"
wait; echo "A servers done" >"$W/a-done"
tail -f /dev/null' >"$WORK/a.out" 2>"$WORK/a.log" &
APID=$!
if ! wait_for 60 test -s "$WORK/a-up"; then
	fail "host A did not come up"; cat "$WORK/a.out" "$WORK/a.log"; kill $APID; finish
fi
LID2=$("$IBEMU" ctl --name "$A" port host2/1 | sed -n 's/.* lid \([0-9]*\) .*/\1/p')

# The owner's side, spoken raw: host3 attached by a client of the fast
# path's messages (verbs_fwd_proto.py), detached when it ends.
IBEMU_FAST=$(cat "$WORK/a-fast") PYTHONPATH="$(dirname "$0")" \
	timeout 30 python3 "$(dirname "$0")/verbs_fwd_proto.py" host3 >"$WORK/out" 2>&1
expect_line "attach: 0 " "a raw client attaches host3"
expect_line "list old: ret 0, verbs class False, files []" \
	"FAST_SYSFS_LIST without FAST_LIST_VERBS: no verbs files (an older host's mirror)"
expect_line "list verbs: ret 0, verbs class True, files ['c dev/uverbs0', 'c infiniband_verbs/uverbs0/ibemu_cmd', 'e infiniband_verbs/uverbs0/ibemu_events']" \
	"with it: the command files and the event file"
expect_line "open cmd: 0 data socket" "FAST_OPEN of a command file by its path: a data socket"
expect_line "qp create: 0 qpn >= 0x40" "VERBS_IOC_QP_CREATE there: a QP number of A's"
expect_line "comp channel command: Operation not supported" \
	"a uverbs command (CREATE_COMP_CHANNEL) is the attached host's, not A's"
expect_line "upcall done: Inappropriate ioctl for device" "so is VERBS_IOC_UPCALL_DONE"
expect_line "open attribute: No such file or directory" "an attribute is no file to open"

(ibemu_run --remote "$A" --attach host2 --host-network -- bash -c '
. "$INSIDE"
ls -l /dev/infiniband/uverbs0 | cut -c1 | sed "s/^/uverbs0 type: /"
cat /sys/class/infiniband_verbs/uverbs0/ibdev | sed "s/^/ibdev: /"
ibv_devices | sed -n "s/^[[:space:]]*\(ibemu[0-9]*\)[[:space:]]*\([0-9a-f]*\)$/devices: \1 \2/p"
ibv_devinfo -d ibemu0 | sed -n "s/^[[:space:]]*\(state\|port_lid\|sm_lid\|node_guid\):[[:space:]]*/devinfo \1: /p"
ibv_rc_pingpong -d ibemu0 -g 0 -e -n 20 -p 18611 127.0.0.1 >"$W/b-rc" 2>&1; echo "rc client: $?"
ibv_ud_pingpong -d ibemu0 -g 0 -n 20 -p 18612 127.0.0.1 >"$W/b-ud" 2>&1; echo "ud client: $?"
# Port events: A steers the link (through this host'"'"'s IBEMU_CTL).
"$TOOLS/verbs_watch" events ibemu0 3 60 >"$W/b-events" &
wp=$!
wait_log "$W/b-events" ready
ups=$(log_count "$W/opensm.log" "SUBNET UP")
"$IBEMU" ctl link down host2/1 >/dev/null
wait_log "$W/b-events" "port error"
# Up again only once opensm has swept with it down (the switch traps the
# change): the port is a new one then, reregistered. Before, the link came
# back before the sweep on a loaded machine, and no reregistration came.
wait_ups $((ups + 1))
"$IBEMU" ctl link up host2/1 >/dev/null
wait $wp; echo "watcher: $?"
sed "s/^/event: /" "$W/b-events"
ibv_devinfo -d ibemu0 | sed -n "s/^[[:space:]]*state:[[:space:]]*/after: state /p"
# A read blocked on the event file when A goes (SIGTERM, which the run
# sends its command then, ignored: the read'"'"'s end is what is checked).
python3 -c "
import os, signal, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
fd = os.open(\"/sys/class/infiniband_verbs/uverbs0/ibemu_events\", os.O_RDONLY)
open(sys.argv[1] + \"/b-reading\", \"w\").close()
try:
    os.read(fd, 16)
    print(\"blocked read: returned\", flush=True)
except OSError as e:
    print(\"blocked read:\", e.strerror, flush=True)
" "$W"
exec tail -f /dev/null	# until the run ends it (A gone)'
echo "$RC" >"$WORK/b-status") &
BPID=$!
if wait_for 90 test -e "$WORK/b-reading"; then
	kill $APID
	wait $APID
	pass "A's verbs servers and the reader on B ran"
else
	fail "B's reader never started"
	kill $APID
fi
wait $BPID
RC=$(cat "$WORK/b-status")
expect_rc 143 "B's run ends its command when A goes (SIGTERM)"
grep -q "the emulator this host is attached to has gone" "$WORK/log" && pass "and says why" ||
	fail "B said: $(cat "$WORK/log")"
cat "$WORK/a-rc" "$WORK/a-ud" >"$WORK/a-servers"
expect_line "uverbs0 type: c" "B's /dev/infiniband/uverbs0 is a character device"
expect_line "ibdev: ibemu0" "B's sysfs names its verbs device ibemu0"
expect_line "devices: ibemu0 0002c90300000103" "ibv_devices on B: host2's HCA"
expect_line "devinfo node_guid: 0002:c903:0000:0103" "ibv_devinfo on B: host2's node GUID"
expect_line "devinfo state: PORT_ACTIVE (4)" "ibv_devinfo on B: the port Active, as opensm on A set it"
expect_line "devinfo port_lid: $LID2" "ibv_devinfo on B: the LID opensm gave host2 ($LID2)"
expect_line "devinfo sm_lid: 1" "ibv_devinfo on B: the SM's LID"
expect_line "rc client: 0" "ibv_rc_pingpong -e from B to A: 20 round trips"
expect_line "ud client: 0" "ibv_ud_pingpong from B to A: 20 round trips"
# What the pingpongs printed, both ends (then B's output again).
cp "$WORK/out" "$WORK/b-out"
cat "$WORK/b-rc" "$WORK/b-ud" "$WORK/a-servers" >"$WORK/out"
expect_match "remote address: +LID 0x0001, QPN" "B's pingpongs' peer is host1 (LID 1)"
expect_match "remote address: +LID 0x$(printf %04x "$LID2"), QPN" "A's servers' peer is host2"
expect_match "^20 iters in" "the iterations done"
cp "$WORK/b-out" "$WORK/out"
expect_line "watcher: 0" "B's verbs program got its port's three events"
grep "^event: port" "$WORK/out" >"$WORK/events"
printf 'event: port 1 %s\n' "port error" "client reregistration" "port active" >"$WORK/events.want"
expect_same "$WORK/events.want" "$WORK/events" \
	"B's async events: PORT_ERR (A took host2's link down), then opensm's reregistration and PORT_ACTIVE"
expect_line "after: state PORT_ACTIVE (4)" "ibv_devinfo on B after: Active"
expect_line "blocked read: Input/output error" "a read blocked on B's event file gets EIO when A goes"
finish
