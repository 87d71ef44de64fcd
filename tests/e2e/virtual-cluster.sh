#!/bin/bash
# `ibemu run --hosts`: a virtual cluster (docs/virtual-cluster.md). Each
# host sees itself as a cluster node: its hostname, only its HCA under
# /dev/infiniband and /sys/class/infiniband, its interface with its
# port's address, the other hosts by name; `ssh HOST` and `ibemu exec
# --host HOST` run commands there; verbs, rdma_cm and UCX cross the
# fabric between hosts, never the machine's shared memory.
. "$(dirname "$0")/lib.sh"
export W="$WORK"
HOSTS=host1,host2,host3,host4

# What each host sees, asked over the run's ssh.
cat >"$WORK/view1.sh" <<'EOF'
h=$(hostname)
echo "$h: devices $(ibv_devices | awk 'NR > 2 { printf "%s=%s ", $1, $2 }')"
echo "$h: dev $(ls /dev/infiniband | tr '\n' ' ')"
echo "$h: sys $(ls /sys/class/infiniband | tr '\n' ' ')"
echo "$h: net $(ip -br -4 addr | awk '{ sub(/@.*/, "", $1); print $1 "=" $3 }' | sort | tr '\n' ' ')"
echo "$h: uverbs0 $(stat -L -c %F /dev/infiniband/uverbs0)"
echo "$h: host3 is $(getent hosts host3 | awk '{ print $1 }')"
echo "$h: ipc $(readlink /proc/self/ns/ipc)"
EOF
cat >"$WORK/view.sh" <<'EOF'
for h in host1 host2 host3 host4; do ssh "$h" sh "$W/view1.sh"; done
echo "ssh to no host: $(ssh -x nosuch true 2>&1; echo "rc $?")"
# A launcher passes its environment on (MPICH's hydra all of it): a
# program on host2 with host1's $IBEMU_FAST still reaches host2's HCA.
echo "umad on host2 with host1's environment: $(ssh host2 "IBEMU_FAST=$IBEMU_FAST ibaddr")"
echo "exec: $(ibemu exec --host host3 -- hostname)"
echo "exec first: $(ibemu exec -- hostname)"
ibemu ctl hosts | cut -f1,4,5
ibemu ctl status | grep '^host '
EOF
ibemu_run --hosts "$HOSTS" -- sh "$WORK/view.sh"
expect_rc 0 "ibemu run --hosts with four hosts"
expect_line "host1: devices ibemu0=0002c90300000100 " "host1 sees its HCA only, as ibemu0"
expect_line "host2: devices ibemu0=0002c90300000103 " "host2 sees its HCA only, as ibemu0"
expect_line "host4: devices ibemu0=0002c90300000107 " "host4 sees its HCA only, as ibemu0"
expect_line "host1: dev issm0 issm1 rdma_cm umad0 umad1 uverbs0 " "host1's devices: both ports"
expect_line "host3: dev issm0 rdma_cm umad0 uverbs0 " "host3's devices: its port"
expect_line "host3: sys ibemu0 " "host3's sysfs: its HCA"
expect_line "host1: net ib0=10.1.0.3/16 ib1=10.2.0.3/16 lo=127.0.0.1/8 " "host1's interfaces: its ports' addresses"
expect_line "host2: net ib0=10.1.0.4/16 lo=127.0.0.1/8 " "host2's interface: its port's address only"
expect_line "host4: uverbs0 character special file" "uverbs0 is a character device on a host"
[ "$(grep -c ': host3 is 10.1.0.5$' "$WORK/out")" = 4 ] && pass "every host resolves host3 to its address" ||
	fail "host3's address"
[ "$(grep ': ipc ' "$WORK/out" | awk '{ print $3 }' | sort -u | wc -l)" = 4 ] &&
	pass "four IPC namespaces (UCX takes each host for a machine of its own)" || fail "IPC namespaces"
expect_line "ssh to no host: ssh: Could not resolve hostname nosuch: no such host in this run" "ssh to no host says so"
expect_line "rc 255" "... with ssh's status"
expect_match "^umad on host2 with host1's environment: GID fe80::2:c903:0:104 " "a program on host2 with host1's environment reaches host2's HCA"
expect_line "exec: host3" "ibemu exec --host inside the run"
expect_line "exec first: host1" "ibemu exec without --host: the first host"
expect_match "^host4	/dev/.ibemu/fast/host4	host4$" "ctl hosts: host4, its fast socket and node"
expect_match "^host host2: pid [0-9]+: host2$" "ctl status lists the hosts"

# Traffic between hosts, with opensm on host1: verbs, rdma_cm by
# hostname, UCX with no transport or device named. The hosts' networks
# are their own: the default ports collide with no other test's.
cat >"$WORK/traffic.sh" <<'EOF'
. "$INSIDE"
start_opensm
# wait_on HOST PORT: until something listens on TCP PORT on HOST
wait_on() { wait_until ssh "$1" ". $INSIDE; listening $2"; }
echo "host4 port: $(ssh host4 ibstat | grep -E 'State|Base lid' | tr -s ' \t' ' ' | tr '\n' ' ')"
timeout 60 ibemu exec --host host3 -- ibv_rc_pingpong -n 20 >"$W/pp.srv" 2>&1 &
srv=$!
wait_on host3 18515
echo "rc_pingpong: $(timeout 60 ibv_rc_pingpong -n 20 host3 2>&1 | tail -1) rc $?"
wait $srv
echo "rc_pingpong server: $(tail -1 "$W/pp.srv")"
timeout 60 ssh host4 rping -s -a host4 -C 10 -V >"$W/rp.srv" 2>&1 &
srv=$!
# rping listens through rdma_cm, which ibemu ctl status shows.
wait_until cm_listening 7174
timeout 60 rping -c -a host4 -C 10 -v -V >"$W/rp.cli" 2>&1
wait $srv
s=$?
# The client's pings, not its status: rping's own exit race
# ("rdma_get_cm_event: Bad file descriptor", rdma-core f3ae6534a).
c=$(grep -c '^ping data: rdma-ping-' "$W/rp.cli")
echo "rping: client pings $c server rc $s"
# Why, when it failed: what each said last.
[ "$c/$s" = 10/0 ] || { tail -5 "$W/rp.cli" | sed 's/^/rping client: /'; tail -5 "$W/rp.srv" | sed 's/^/rping server: /'; }
timeout 60 ssh host2 "UCX_LOG_LEVEL=info ucx_perftest -t tag_lat -n 2000" >"$W/ucx.srv" 2>&1 &
srv=$!
wait_on host2 13337
UCX_LOG_LEVEL=info timeout 60 ucx_perftest host2 -t tag_lat -n 2000 >"$W/ucx.cli" 2>&1
c=$?; wait $srv
echo "ucx_perftest: client rc $c server rc $?"
grep -h "ep_cfg" "$W/ucx.cli" "$W/ucx.srv" | sed 's/.*ep_cfg/ucx ep_cfg/'
EOF
ibemu_run --hosts "$HOSTS" -- bash "$WORK/traffic.sh"
expect_rc 0 "traffic between hosts"
expect_match "^host4 port: .*State: Active .*Base lid: [1-9]" "opensm on host1 brought host4's port up"
expect_match "^rc_pingpong: 20 iters in .* rc 0$" "ibv_rc_pingpong from host1 to host3 by name"
expect_match "^rc_pingpong server: 20 iters in" "... and its server on host3"
expect_line "rping: client pings 10 server rc 0" "rping from host1 to host4 by name (10 pings verified)"
expect_line "ucx_perftest: client rc 0 server rc 0" "ucx_perftest between host1 and host2"
if grep "^ucx ep_cfg" "$WORK/out" | grep -qE "(rc|ud)_verbs/ibemu0:1" &&
   ! grep "^ucx ep_cfg" "$WORK/out" | grep -qE "sysv|posix|cma|tcp|knem|xpmem"; then
	pass "UCX picks the emulated fabric between hosts, by itself"
else
	fail "UCX's lanes between hosts"
fi

# Nothing a host runs outlives the run: a process started on host2 by
# ssh is ended with it.
ibemu_run --hosts "$HOSTS" -- sh -c 'ssh host2 python3 -c "\"import time; time.sleep(600)\"" ibemu-vc-orphan & exit 0'
expect_rc 0 "a run that leaves a process on host2"
gone() { ! pgrep -f ibemu-vc-orphan >/dev/null; }
wait_for 10 gone && pass "host2's process ended with the run" || fail "a host's process outlived the run"

# From outside: ibemu exec --name joins a host of a running run.
timeout 60 "$IBEMU" run --name "vc-$$" --hosts "$HOSTS" -- sh -c \
	'n=0; until [ -e "$W/done" ] || [ $n -ge 300 ]; do n=$((n + 1)); timeout 0.1 tail -f /dev/null; done' \
	>"$WORK/run.out" 2>&1 &
runpid=$!
joined() { timeout 10 "$IBEMU" exec --name "vc-$$" --host host3 -- sh -c 'hostname; ls /dev/infiniband' >"$WORK/out" 2>&1; }
wait_for 10 joined && pass "ibemu exec --name --host from outside" || fail "exec from outside"
expect_line "host3" "... runs on host3"
expect_no_line "umad1" "... with host3's devices"
touch "$WORK/done"
wait $runpid

# Runs nest: a project's `make check` that calls `ibemu run` works on a
# host of a run (the CI action's case), and a run of hosts inside a run.
ibemu_run --configured --hosts host1,host2 -- sh -c '
	echo "inner on host2: $(ssh host2 ibemu run --attach host3 -- ibv_devices | awk "/ibemu0/ { print \$2 }")"'
expect_line "inner on host2: 0002c90300000105" "ibemu run on a host: its own fabric (host3 attached)"
ibemu_run -- ibemu run --configured --hosts host1,host2 -- ssh host2 hostname
expect_line "host2" "ibemu run --hosts inside ibemu run"

# The most hosts a run takes, 256 of a 288-HCA fat tree, within the
# usual limit of 1024 open files (two each: its FUSE mount, its fast
# socket); one more is refused in one line.
"$IBEMU" topo gen fattree 24 >"$WORK/ft.net"
grep '^Ca' "$WORK/ft.net" | sed 's/^Ca[^"]*"\([^"]*\)".*/\1/' >"$WORK/cas"
(ulimit -n 1024 && ibemu_run --configured --topology "$WORK/ft.net" --hosts "$(head -256 "$WORK/cas" | paste -sd,)" \
	-- sh -c 'ssh hca0256 hostname; ibemu ctl hosts | wc -l; ibemu ctl --json status | grep -o "\"open_fds\":[0-9]*"'
 cp "$WORK/out" "$WORK/out.256"; exit $RC)
RC=$?; cp "$WORK/out.256" "$WORK/out"
expect_rc 0 "256 hosts, 1024 files open at most"
expect_line "hca0256" "the 256th host answers ssh"
expect_match "^256$" "ctl hosts lists 256"
ibemu_run --topology "$WORK/ft.net" --hosts "$(head -257 "$WORK/cas" | paste -sd,)" -- true
[ $RC = 2 ] && grep -q "too many hosts: 1 to 256 are possible" "$WORK/log" && pass "257 hosts: refused in one line" ||
	fail "257 hosts: rc $RC"

# While a run starts (256 hosts: two seconds of it), `ctl pid init`
# says its init is on its way, never that there is none (`ibemu
# start`'s answer), which made `ibemu exec` join the emulator's own
# namespaces: an exec into an --ipoib run once saw the machine's network.
# (`ctl hosts` likewise: tests/unit/test_ctl_hosts.c.)
# The emulator serves no control command while it mounts the hosts'
# files, before its loop runs (vhosts_setup): on a loaded machine (the
# distcheck pass, other runs' network namespaces torn down meanwhile)
# that can outlast the init's two seconds, and the window is missed;
# then the run is started again, three times at most. Every answer of
# every start counts for "never none".
: >"$WORK/answers"
for try in 1 2 3; do
	rm -f "$WORK/started"
	timeout 60 "$IBEMU" run --name "vc-start-$$-$try" --configured --topology "$WORK/ft.net" \
		--hosts "$(head -256 "$WORK/cas" | paste -sd,)" -- sh -c \
		'n=0; until [ -e "$W/started" ] || [ $n -ge 300 ]; do n=$((n + 1)); timeout 0.1 tail -f /dev/null; done' \
		>"$WORK/run.out" 2>&1 &
	runpid=$!
	# Asked without a pause: the window was a few milliseconds wide.
	for n in $(seq 3000); do
		"$IBEMU" ctl --name "vc-start-$$-$try" pid init >>"$WORK/answers" 2>&1 && break
	done
	touch "$WORK/started"
	wait $runpid
	grep -q "error: the run's init is still making its namespaces" "$WORK/answers" && break
done
grep -q "error: the run's init is still making its namespaces" "$WORK/answers" &&
	pass "a starting run's pid init: the init is on its way" || fail "no answer while starting: $(sort "$WORK/answers" | uniq -c)"
grep -q "runs no command" "$WORK/answers" &&
	fail "a starting run said it runs no command: $(sort "$WORK/answers" | uniq -c)" ||
	pass "... never that it runs none"

# Wrong hosts: one line each, nothing started.
for bad in "host1,host1|host1 is named twice" "host1,leaf1|leaf1: only a CA can be attached" \
	   "host1,nosuch|nosuch: no such node in the topology" "x_y=host2|'x_y' is no hostname" \
	   "host1,,host2|a host is [NAME=]NODE"; do
	ibemu_run --hosts "${bad%%|*}" -- true
	[ $RC -ne 0 ] && grep -qF -- "${bad#*|}" "$WORK/log" && pass "--hosts ${bad%%|*}: ${bad#*|}" ||
		fail "--hosts ${bad%%|*}: rc $RC, $(cat "$WORK/log")"
done
ibemu_run --hosts host1 --attach host2 -- true
[ $RC = 2 ] && grep -q "no --attach with it" "$WORK/log" && pass "--hosts with --attach: refused" ||
	fail "--hosts with --attach"

finish
