#!/bin/bash
# MPI jobs over the virtual cluster (`ibemu run --hosts`,
# docs/virtual-cluster.md): mpirun and mpiexec launch ranks on four
# emulated hosts through the run's ssh, as on a cluster, and the ranks
# talk over the emulated HCAs. tests/tools/mpi_check.c checks every
# result (ping-pong bytes, allreduce, alltoall, barriers); UCX's own log
# says which transports carry it; the PMA counters of the switch port on
# the ping-pong's path grow by at least its bytes. A cable cut during a
# job: routed around by opensm when there is another path, fatal to the
# job (as over InfiniBand) when there is none.
. "$(dirname "$0")/lib.sh"
export W="$WORK"
# Debian's CI runs as root; Open MPI wants to be told that is meant.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
HOSTS=host1,host2,host3,host4
SRC="$(dirname "$0")/../tools/mpi_check.c"

for cc in mpicc.openmpi mpicc.mpich; do
	if ! command -v $cc >/dev/null; then
		fail "no $cc: ./setup.sh --test installs Open MPI and MPICH"
		finish
		exit 1
	fi
done
mpicc.openmpi -O2 -o "$WORK/mpi_check_ompi" "$SRC" && mpicc.mpich -O2 -o "$WORK/mpi_check_mpich" "$SRC" ||
	fail "building mpi_check"

# Three jobs on one fabric (--configured: LIDs and routes without an SM).
# Each line of the jobs' output tagged with which job it is; UCX logs to
# a file per process (%h host, %p pid), not into the ranks' stdout,
# where the launcher could mix its lines with theirs.
cat >"$WORK/jobs.sh" <<'EOF'
data() { ibemu ctl counters "$1" | awk '/PortXmitData|PortRcvData/ { s += $2 } END { print s * 4 }'; }
tag() { sed "s/^/$1 /; s/^\($1 \).*\(ep_cfg\[\)/\1\2/"; }
lanes() { cat "$W"/ucx-"$1".*.log | grep ep_cfg; }
port=$(ibemu ctl port host2/1 | sed -n 's/.* remote \([^ ]*\).*/\1/p')
before=$(data "$port")
mpirun.openmpi -np 4 --host host1,host2,host3,host4 --mca pml ucx -x UCX_LOG_LEVEL=info \
	-x UCX_LOG_FILE="$W/ucx-ompi.%h.%p.log" "$W/mpi_check_ompi" >"$W/ompi.out" 2>&1
echo "ompi-ucx rc $?"
echo "pma $port: $(( $(data "$port") - before )) bytes"
{ grep "^mpi_check" "$W/ompi.out"; lanes ompi; } | tag ompi-ucx
mpirun.openmpi -np 4 --host host1,host2,host3,host4 --mca pml ob1 --mca btl openib,vader,self \
	--mca btl_openib_allow_ib 1 --mca btl_openib_warn_default_gid_prefix 0 \
	--mca btl_base_verbose 10 "$W/mpi_check_ompi" >"$W/openib.out" 2>&1
rc=$?
echo "ompi-openib rc $rc"
# A failure's own words, for whoever reads the log (a crash in CI once).
[ $rc -eq 0 ] || grep -v "btl_base_verbose\|select: init" "$W/openib.out" | tail -25 | sed "s/^/ompi-openib said: /"
grep -E "^mpi_check|Using .* btl for send" "$W/openib.out" | tag ompi-openib
mpiexec.mpich -n 4 -hosts host1,host2,host3,host4 -genv UCX_LOG_LEVEL info \
	-genv UCX_LOG_FILE "$W/ucx-mpich.%h.%p.log" "$W/mpi_check_mpich" >"$W/mpich.out" 2>&1
echo "mpich rc $?"
{ grep "^mpi_check" "$W/mpich.out"; lanes mpich; } | tag mpich
EOF
ibemu_run --configured --hosts "$HOSTS" -- bash "$WORK/jobs.sh"
expect_rc 0 "three MPI jobs on four hosts"
# The lanes UCX chose for endpoints to other ranks (not to itself):
# the emulated HCA's, never shared memory or TCP.
lanes_ok() {
	grep "^$1 ep_cfg" "$WORK/out" | grep -v "self/" >"$WORK/lanes"
	[ -s "$WORK/lanes" ] && grep -qE "(rc|ud)_verbs/ibemu0:1" "$WORK/lanes" &&
		! grep -qE "sysv|posix|cma|knem|xpmem|tcp" "$WORK/lanes"
}
for job in ompi-ucx mpich; do
	expect_line "$job rc 0" "$job: the launcher's status"
	expect_line "$job mpi_check: OK" "$job: every result right"
	for r in 0 1 2 3; do
		expect_line "$job mpi_check: rank $r of 4 on host$((r + 1))" "$job: rank $r on host$((r + 1))"
	done
	lanes_ok "$job" && pass "$job: UCX chose rc_verbs/ud_verbs between hosts by itself" ||
		fail "$job: UCX's lanes: $(cat "$WORK/lanes")"
done
expect_line "ompi-openib rc 0" "Open MPI with btl openib: mpirun's status"
expect_line "ompi-openib mpi_check: OK" "btl openib: every result right"
expect_match "^ompi-openib .*Using openib btl for send to .* on node host2" "btl openib carries it between hosts"
expect_no_line "Using tcp btl" "... not TCP"
bytes=$(sed -n 's/^ompi-ucx mpi_check: ping-pong bytes //p' "$WORK/out")
pma=$(sed -n 's/^pma leaf1\/2: \([0-9]*\) bytes$/\1/p' "$WORK/out")
[ -n "$bytes" ] && [ -n "$pma" ] && [ "$pma" -ge "$bytes" ] &&
	pass "PMA: leaf1/2 (host2's switch port) moved $pma bytes, >= the ping-pong's $bytes" ||
	fail "PMA on the ping-pong's path: '$pma' bytes for '$bytes'"

# A cable cut during a job, with opensm on host1: one of the two cables
# between the leaf switches goes down and up again. The SM routes around
# it; RC's retransmissions bridge the gap; the job finishes, right.
cat >"$WORK/cut.sh" <<'EOF'
. "$INSIDE"
start_opensm
data() { ibemu ctl counters "$1" | awk '/PortXmitData|PortRcvData/ { s += $2 } END { print s * 4 }'; }
mpirun.openmpi -np 4 --host host1,host2,host3,host4 --mca pml ucx "$W/mpi_check_ompi" 10 >"$W/job.out" 2>&1 &
job=$!
wait_log "$W/job.out" "ping-pong 65536"
other=$(data leaf1/8)
ibemu ctl link down leaf1/7
wait_ups 2
ibemu ctl link up leaf1/7
wait_ups 3
wait $job
echo "job rc $?"
grep "^mpi_check: OK" "$W/job.out"
[ "$(data leaf1/8)" -gt "$other" ] && echo "the other cable carried data"
ibemu ctl events | grep -oE "link (down|up) leaf1/7" | sort -u
EOF
ibemu_run --hosts "$HOSTS" -- bash "$WORK/cut.sh"
expect_rc 0 "a job through a cut on a redundant path"
expect_line "job rc 0" "the job finishes"
expect_line "mpi_check: OK" "... with every result right"
expect_line "the other cable carried data" "traffic took the other cable"

# host3's only cable cut: no path is left, RC runs out of retries (UCX's
# timeout shortened, 100 ms x 3), UCX says so and the ranks abort. The
# launcher's TCP to host3's daemon rides IPoIB over the same cable
# (docs/ipoib.md): mpirun waits for it while the cable is out, as on a
# cluster, and ends the job in error once it is back (the port made
# Active by hand, as an SM would: --configured has none).
cat >"$WORK/dead.sh" <<'EOF'
. "$INSIDE"
mpirun.openmpi -np 4 --host host1,host2,host3,host4 --mca pml ucx -x UCX_RC_TIMEOUT=100ms \
	-x UCX_RC_RETRY_COUNT=3 "$W/mpi_check_ompi" 10 >"$W/job.out" 2>&1 &
job=$!
wait_log "$W/job.out" "ping-pong 65536"
ibemu ctl link down host3/1
wait_log "$W/job.out" "transport retry counter exceeded"
# Five seconds after the ranks' errors mpirun still waits for host3.
for i in $(seq 10); do kill -0 $job 2>/dev/null && timeout 0.5 tail -f /dev/null; done
kill -0 $job 2>/dev/null && echo "mpirun waits while host3 is cut off"
L2=$(ibswitches | awk '/leaf switch 2/ {for (i = 1; i <= NF; i++) if ($i == "lid") print $(i + 1)}')
H3=$(ssh host3 ibstat ibemu0 1 | awk '/Base lid/ {print $3}')
ibemu ctl link up host3/1
for state in arm active; do
	ibportstate "$L2" 1 $state >/dev/null
	ibportstate "$H3" 1 $state >/dev/null
done
wait $job
echo "job rc $?"
grep -o "send completion with error: transport retry counter exceeded" "$W/job.out" | sort -u
grep -o "Assertion .*" "$W/job.out" | head -1
EOF
ibemu_run --configured --hosts "$HOSTS" -- bash "$WORK/dead.sh"
expect_line "mpirun waits while host3 is cut off" "the launcher's TCP to host3 waits for the cable (IPoIB)"
expect_match "^job rc [1-9]" "a job that loses a host's only cable fails, once mpirun hears from host3"
expect_line "send completion with error: transport retry counter exceeded" "UCX reports RC's retries exhausted, as on InfiniBand"
expect_no_line "Assertion" "no assertion in UCX (ibv_qp's state is libibverbs')"

finish
