#!/bin/bash
# Verbs, part 1: libibverbs sees every attached CA, with the state the SM
# set. Unmodified ibv_devices and ibv_devinfo, against ibstat and smpquery
# field by field; the async events a verbs program gets, in order, as
# opensm, `ibemu ctl` and SMP Sets change the ports; ibv_query_pkey and
# ibv_query_gid after P_KeyTable and GUIDInfo Sets; the calls the
# provider refuses, with the errno of each; fault rules do not reach
# ibv_query_port; the netlink trap.
. "$(dirname "$0")/lib.sh"
export IBEMU W="$WORK" VW="$TOOLS/verbs_watch" CMP="$(dirname "$0")/verbs_cmp.py"

cat >"$WORK/run.sh" <<'SCRIPT'
set -u
. "$INSIDE"
ibv_devices
echo "before: $(ibv_devinfo -d ibemu0 | grep -E 'state|port_lid' | awk '{$1=$1};1' | tr '\n' ';')"
"$VW" events ibemu0 13 90 >"$W/events.out" &
wp=$!
wait_log "$W/events.out" ready
start_opensm
python3 "$CMP" ibemu0 1 2
"$IBEMU" ctl link down host1/1 >/dev/null
wait_log "$W/events.out" "port error"
"$IBEMU" ctl link up host1/1 >/dev/null
wait_log "$W/events.out" "port active" 3
"$IBEMU" ctl lid host1/2 0x40 >/dev/null
wait_log "$W/events.out" "LID change" 3
stop_opensm
# P_KeyTable block 0 and GUIDInfo block 0 of port 1, as an SM sets them.
"$TOOLS/smp_set" 0 0x16 0 "ff ff 80 01" >/dev/null
"$TOOLS/smp_set" 0 0x14 0 "00 00 00 00 00 00 00 00 00 11 22 33 44 55 66 77" >/dev/null
wait $wp
echo "watcher rc $?"
"$VW" tables ibemu0 1
"$VW" refused ibemu0
"$IBEMU" ctl fault add drop >/dev/null
echo "under a drop-all rule: $(ibv_devinfo -d ibemu0 | grep -c PORT_ACTIVE) ports active"
smpquery -D nodedesc 0,1 >/dev/null 2>&1 || echo "while SMPs time out"
# The RDMA netlink family without the preloaded library (which answers
# it: rdma-netlink.sh): the seccomp trap's refusal.
IBEMU_FAST_PATH=0 python3 -c '
import socket
for t, n in ((3, "raw"), (1, "stream")):
    try:
        socket.socket(16, t, 20).close(); print("netlink rdma", n, "opened")
    except OSError as e:
        print("netlink rdma", n, "errno", e.errno)'
SCRIPT
ibemu_run -- bash "$WORK/run.sh"
expect_rc 0 "the run"
expect_match "ibemu0[[:space:]]+0002c90300000100" "ibv_devices lists ibemu0 with host1's node GUID"
expect_line "before: state: PORT_INIT (2);port_lid: 0;state: PORT_INIT (2);port_lid: 0;" \
	"before an SM both ports are PORT_INIT with LID 0"
n=$(grep -c ' same ' "$WORK/out")
[ "$n" -eq 30 ] && pass "ibv_devinfo -v agrees with ibstat and smpquery on 15 fields of both ports" ||
	fail "$n fields agree, want 30: $(grep DIFF "$WORK/out")"
expect_no_line "DIFF" "no field differs"
expect_line "port 1 state same PORT_ACTIVE" "PORT_ACTIVE after SUBNET UP"
expect_line "port 1 IsSM yes" "IsSM on opensm's port"
expect_line "port 2 IsSM no" "and not on the other"
expect_line "port 1 subnet_timeout same 18" "subnet_timeout as opensm set it"
expect_line "watcher rc 0" "the verbs program got all 13 events"
grep '^port 1 ' "$WORK/events.out" | cut -d' ' -f3- >"$WORK/p1"
printf '%s\n' "LID change" "SM change" "client reregistration" "port active" "port error" \
	"port active" "P_Key change" "GID table change" >"$WORK/p1.want"
expect_same "$WORK/p1.want" "$WORK/p1" "port 1's events in order: opensm, link down/up, P_Key and GUIDInfo Sets"
grep '^port 2 ' "$WORK/events.out" | cut -d' ' -f3- >"$WORK/p2"
printf '%s\n' "LID change" "SM change" "client reregistration" "port active" "LID change" >"$WORK/p2.want"
expect_same "$WORK/p2.want" "$WORK/p2" "port 2's events in order: opensm, ibemu ctl lid"
expect_line "pkey 1 0x8001" "ibv_query_pkey follows the P_KeyTable Set"
expect_line "gid 1 fe80::11:2233:4455:6677" "ibv_query_gid follows the GUIDInfo Set"
expect_line "gid 0 fe80::2:c903:0:101" "GID 0 is the prefix and the port GUID"
for v in alloc_pd create_cq create_comp_channel reg_mr create_qp destroy_qp destroy_cq; do
	expect_line "$v: ok" "$v works"
done
for v in "create_cq 0" "reg_mr remote write only" "create_ah dlid 0" "create_qp 99 SGEs" \
	"post_send in Reset" "modify_qp Reset to RTR" "modify_qp Init without a port" \
	"modify_qp Init port 9" "query_port 99"; do
	expect_line "$v: Invalid argument" "$v is EINVAL"
done
expect_line "create_qp raw packet: Operation not supported" "a raw packet QP is EOPNOTSUPP (RC, UC and UD only)"
expect_line "destroy_cq in use: Device or resource busy" "a CQ a QP uses is EBUSY to destroy"
expect_line "under a drop-all rule: 2 ports active" "fault rules do not reach ibv_query_port"
expect_line "while SMPs time out" "while they drop SMPs"
# Without the trap this kernel says ESOCKTNOSUPPORT (94) for a stream
# socket: the filter answers before the kernel looks at the type.
expect_line "netlink rdma raw errno 93" "without the library, RDMA netlink is EPROTONOSUPPORT"
expect_line "netlink rdma stream errno 93" "from the netlink trap, not the kernel"
python3 -c 'import socket; socket.socket(16, 1, 20)' 2>&1 | grep -q "Errno 94" &&
	pass "outside the run the kernel says errno 94" || fail "outside the run: not errno 94"

# An empty CQ costs a load, as on an HCA (programs such as UCX poll every
# device they opened): 100000 empty polls make at most one system call
# per 1024 (the provider's sched_yield now and then), not one each.
# (LeakSanitizer cannot run under ptrace: off for the traced program.)
ibemu_run --configured -a host1 -- env ASAN_OPTIONS="$(asan_no_leaks)" \
	strace -f -c -e trace=sched_yield,futex "$VW" idle-poll ibemu0 100000
expect_rc 0 "idle polls under strace"
expect_line "polled 100000, found 0" "100000 polls of an empty CQ"
yields=$(awk '$NF == "sched_yield" { print $4 }' "$WORK/log")
[ -n "$yields" ] && [ "$yields" -le 100 ] &&
	pass "empty polls: $yields sched_yield calls for 100000" ||
	fail "empty polls: '$yields' sched_yield calls for 100000, want at most 100"

# The data path over the fast socket (docs/verbs.md "The fast path"):
# packets out as FAST_WRITE requests (sendmsg), in through the receive
# ring that the polling client reads itself: no VERBS_IOC_SEND ioctl and
# no read of the FUSE file per packet. With the direct path ("The direct
# path") not even that: the packets go into the peer's inbox, no system
# call each way. With the fast path off, the FUSE file carries them (its
# ioctls).
cat >"$WORK/dp.sh" <<'SH'
ibv_ud_pingpong -d ibemu1 -p 18608 -n 200 >/dev/null 2>&1 &
n=0; until ss -ltn "sport = :18608" | grep -q LISTEN || [ $n -ge 400 ]; do n=$((n + 1)); timeout 0.05 tail -f /dev/null; done
strace -f -c -e trace=ioctl,sendmsg,read -o "$W/dp.strace" ibv_ud_pingpong -d ibemu0 -p 18608 -n 200 localhost | tail -1
wait
awk '$NF ~ /^(ioctl|sendmsg|read)$/ { print "calls", $NF, $4 }' "$W/dp.strace"
SH
for mode in direct 1 0; do
	fast=$mode direct=0
	[ $mode = direct ] && fast=1 direct=1
	IBEMU_DIRECT=$direct IBEMU_FAST_PATH=$fast ibemu_run --configured -a host1 -a host3 -- \
		env W="$WORK" bash "$WORK/dp.sh"
	expect_match "^200 iters in" "ibv_ud_pingpong, fast path $mode"
	ioc=$(awk '$2 == "ioctl" { print $3 }' "$WORK/out"); snd=$(awk '$2 == "sendmsg" { print $3 }' "$WORK/out")
	if [ $mode = direct ]; then
		[ "${snd:-0}" -lt 50 ] && [ "${ioc:-0}" -lt 20 ] &&
			pass "direct path: ${snd:-0} sendmsg, ${ioc:-0} ioctls for 200 packets out" ||
			fail "direct path: '$snd' sendmsg, '$ioc' ioctls for 200 packets out"
	elif [ $mode = 1 ]; then
		[ "${snd:-0}" -ge 200 ] && [ "${ioc:-0}" -lt 20 ] &&
			pass "fast path, IBEMU_DIRECT=0: $snd sendmsg, ${ioc:-0} ioctls for 200 packets out" ||
			fail "fast path, IBEMU_DIRECT=0: '$snd' sendmsg, '$ioc' ioctls"
	else
		[ "${ioc:-0}" -ge 200 ] && pass "FUSE only: $ioc ioctls for 200 packets out" ||
			fail "FUSE only: '$ioc' ioctls"
	fi
done

# The limits ibv_devinfo -v says are the ones kept: one past each is
# ENOMEM (QPs by the daemon for the device, the rest per context), and
# freeing one makes room again.
ibemu_run --configured -a host1 -- sh -c "ibv_devinfo -v -d ibemu0; \"$VW\" limits ibemu0"
expect_rc 0 "the limits run"
for l in "max_qp:				1024" "max_cq:				1024" "max_mr:				4096" \
	"max_pd:				1024" "max_ah:				4096" "max_srq:			1024" \
	"max_srq_wr:			4096" "max_srq_sge:			16" "atomic_cap:			ATOMIC_HCA (1)" \
	"max_mw:				4096"; do
	expect_line "	$l" "ibv_devinfo -v: ${l%%:*} ${l##*[[:space:]]}"
done
expect_line "					RC_RNR_NAK_GEN" "ibv_devinfo -v: RC_RNR_NAK_GEN (SENDs with no receive WR are RNR NAKed)"
for l in "qp: 1024 made of 1024" "pd: 1023 made of 1023" "mr: 4096 made of 4096" \
	"cq: 1023 made of 1023" "ah: 4096 made of 4096" "srq: 1024 made of 1024" \
	"mw: 4096 made of 4096"; do
	expect_line "$l, next Cannot allocate memory, again after a free" \
		"${l%%:*}: the limit made, one past it ENOMEM, room again after a free"
done

# Memory windows (verbs/mw.c): type 1 bound by ibv_bind_mw, type 2 by a
# BIND_MW WR, remote access checked against the window (range, rights,
# the QP a type 2 was bound through), SEND with Invalidate and
# LOCAL_INV, a region without MW_BIND refused; then the flows of
# rdma-core's own tests (rights with LOCAL_WRITE, ibv_wr_bind_mw, the
# key byte of a bind's R_Key, zero-based, dealloc while bound), which
# all ended in a bind error before (issue #49).
ibemu_run --configured -a host1 -- sh -c "ibv_devinfo -v -d ibemu0 | grep -E 'MEM_WINDOW|max_mw'; \"$TOOLS/verbs_mw\" ibemu0"
expect_rc 0 "the memory windows run"
for l in "					MEM_WINDOW" "					MEM_WINDOW_TYPE_2B" "	max_mw:				4096" \
	"alloc_mw type 3: Invalid argument" "bind_mw type 1 completion: success, rkey incremented" \
	"write in the type 1 window: success" "the window's memory: \"through the window\"" \
	"read in a write-only window: remote access error" \
	"write past the type 1 window: remote access error" "bind type 2: success" \
	"read in the type 2 window: success" "send with invalidate: success" \
	"its receive: success, with invalidate, rkey named" \
	"read in the invalidated window: remote access error" \
	"read through the QP that bound it: success" "local invalidate: success" \
	"read after the local invalidate: remote access error" \
	"read through a QP that did not bind it: remote access error" \
	"its completion: memory management operation error" \
	"ordinary type 1 bind completion: success" "ordinary write through type 1: success" \
	"ordinary type 1 unbind completion: success" \
	"ordinary write after the unbind: remote access error" \
	"ordinary wr_bind_mw completion: success" "ordinary write through type 2: success" \
	"ordinary wr_local_inv completion: success" \
	"ordinary write after wr_local_inv: remote access error" \
	"bind type 2, an R_Key of another index: success" \
	"the window's R_Key: its index, the WR's key byte" "write through it: success" \
	"bind type 2 zero-based: success" "read at 0 of the zero-based window: success" \
	"what it read: \"zero based\"" "read past its end: remote access error" \
	"zero-based type 1: memory management operation error" \
	"type 2 of length 0: memory management operation error" "type 2 bound: success" \
	"type 2 bound again: memory management operation error" \
	"write before the dealloc: success" "write after the dealloc: remote access error"; do
	expect_line "$l" "memory windows: $l"
done

# Importing (verbs/import.c, issue #49): a context on a duplicate of
# another's command fd, its PD and region by handle, RDMA into and out of
# the imported region from a QP of the imported context; what import
# refuses; the PD busy while a QP is on it through its import.
ibemu_run --configured -a host1 -- "$TOOLS/verbs_import" ibemu0
expect_rc 0 "the import run"
for l in "import device: ok" "import pd: handle same" "import mr: keys same" \
	"import pd of no handle: Invalid argument" "import mr of no handle: Invalid argument" \
	"rdma write to the imported region: success, there" \
	"send from the imported region: success, received success, the data" \
	"dealloc pd in use through its import: Device or resource busy" "close imported: ok" \
	"dereg mr: ok" "dealloc pd: ok" "import of /dev/null: No such device" \
	"import of a file: Invalid argument" \
	"import of the device node: Operation not supported"; do
	expect_line "$l" "import: $l"
done

# fork(): with ibv_fork_init a region registered after it is not in the
# child (libibverbs' MADV_DONTFORK: a touch is SIGSEGV); with or without,
# a child that exits takes nothing from the parent (whose RDMA WRITE
# after it lands), and a child's own context works.
ibemu_run --configured -a host1 -- sh -c "\"$TOOLS/verbs_fork\" ibemu0 init; \"$TOOLS/verbs_fork\" ibemu0 noinit"
expect_rc 0 "the fork run"
expect_line "fork_init: Success" "ibv_fork_init succeeds"
expect_line "a child that touches the region: killed by Segmentation fault" \
	"ibv_fork_init: the region is not in the child"
expect_line "a child that touches the region: exited 7" "without it: the child has a copy"
[ "$(grep -c '^a child with a context of its own: exited 9$' "$WORK/out")" = 2 ] &&
	pass "a forked child opens the device and uses a context of its own" ||
	fail "a forked child's own context: $(grep '^a child with' "$WORK/out")"
[ "$(grep -c '^the parent.s write: success, "after the fork"$' "$WORK/out")" = 2 ] &&
	pass "the parent's RDMA WRITE after its children exited lands, both ways" ||
	fail "the parent after the fork: $(grep '^the parent' "$WORK/out")"

# What the kernel refuses to pin (ib_umem_get): EFAULT for pages not
# mapped and for read-only pages a region may write; root (CAP_IPC_LOCK)
# pins past RLIMIT_MEMLOCK (unprivileged.sh: a normal user cannot).
ibemu_run --configured -a host1 -- sh -c "ulimit -l 1024; \"$VW\" pin ibemu0 64"
expect_rc 0 "the pinning run"
expect_line "unmapped: Bad address" "ibv_reg_mr on unmapped memory: EFAULT"
expect_line "read-only for reading: ok" "a read-only page for remote reads: taken"
expect_line "read-only for writing: Bad address" "a read-only page with LOCAL_WRITE: EFAULT"
expect_line "big: ok" "64 MiB past a 1 MiB RLIMIT_MEMLOCK: taken, with CAP_IPC_LOCK"

# Several CAs and link kinds: 1X SDR, 12X DDR, 4X EDR, ports Active
# without an SM (--configured); each device answers for its own node.
ibemu_run --configured -t "$TOPOLOGIES/ibsim-link-options.net" -a H2 -a H3 -a H4 -- \
	bash -c 'ibv_devices; for d in 0 1 2; do python3 "$CMP" ibemu$d 1; done'
expect_rc 0 "three attached CAs"
n=$(grep -c ' same ' "$WORK/out")
[ "$n" -eq 45 ] && pass "ibv_devinfo agrees with ibstat and smpquery on each of them" ||
	fail "$n fields agree, want 45: $(grep DIFF "$WORK/out")"
expect_match "ibemu2[[:space:]]+" "ibv_devices lists ibemu2"
expect_line "port 1 active_width same 1X" "1X"
expect_line "port 1 active_width same 12X" "12X"
expect_line "port 1 active_speed same 25.0 Gbps" "EDR (an extended speed)"

# A program that closes every fd from 3 up (the provider's too), then
# sends 20 batches and closes its device (issue #47): one line says so,
# and ibv_close_device returns, with the fast path and without.
for fp in 1 0; do
	IBEMU_FAST_PATH=$fp ibemu_run --configured -a host1 -- \
		env IBEMU_DIRECT=0 timeout 20 "$TOOLS/verbs_closefds" ibemu0
	expect_line "closefds: ibv_close_device returned" "fast path $fp: ibv_close_device returns after close_range"
	n=$(grep -c "refused" "$WORK/log")
	[ "$n" = 1 ] && pass "fast path $fp: one line for 20 batches" || fail "fast path $fp: $n lines"
done
# The provider's one switch for what it says (verbs/provider.c:ibemu_err).
ibemu_run --configured -a host1 -- \
	env IBEMU_DIRECT=0 IBEMU_VERBS_LOG=0 timeout 20 "$TOOLS/verbs_closefds" ibemu0
expect_line "closefds: ibv_close_device returned" "IBEMU_VERBS_LOG=0: the program runs as before"
n=$(grep -c "libibemu:" "$WORK/log")
[ "$n" = 0 ] && pass "IBEMU_VERBS_LOG=0: the provider says nothing" || fail "IBEMU_VERBS_LOG=0: $n lines"
finish
