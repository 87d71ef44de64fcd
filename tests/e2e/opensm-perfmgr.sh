#!/bin/bash
# opensm's PerfMgr at its default number of outstanding queries (500) on
# the 648-HCA fat tree: every sweep queries the PMA of all 2646 ports and
# every answer comes back (ibsim stalls here after ~186 replies). Three
# sweeps (3 x 2646 answers) must complete, with no error logged.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/run.sh" <<'SCRIPT'
set -u
W=$1
. "$INSIDE"
start_opensm -D 0x07 --perfmgr --perfmgr_sweep_time_s 1
ans='pc_recv_process: Processing received MAD status 0x0'
wait_log "$W/opensm.log" "$ans" 7938
echo "PerfMgr answers $(log_count "$W/opensm.log" "$ans")"
echo "errors before stop $(grep -c ' ERR ' "$W/opensm.log")"
# With verbose logging and PerfMgr on, opensm 3.3.23's own threads can lock
# up on SIGTERM (all on userspace futexes, none waiting on a device): the
# sweeps are what this test is about, so end it hard.
kill -9 $osm
wait $osm 2>/dev/null
SCRIPT
ibemu_run --topology "$TOPOLOGIES/fattree-648.net" -- bash "$WORK/run.sh" "$WORK"
n=$(sed -n 's/^PerfMgr answers //p' "$WORK/out")
if [ "${n:-0}" -ge 7938 ]; then pass "PerfMgr got $n answers (three sweeps of 2646 ports)"; else fail "PerfMgr answers: ${n:-none}"; fi
expect_line "errors before stop 0" "no ERR while sweeping"
finish
