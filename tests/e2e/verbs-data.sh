#!/bin/bash
# Verbs, part 2: data between two attached CAs (host1 = ibemu0, host3 =
# ibemu1 of the default fabric) through the emulated switches. The
# ibverbs-utils pingpongs, unmodified, with data checks, on --configured
# and after opensm; every operation and completion field (verbs_rc); RC
# reliability under a link that goes down and a 30% drop rule; UD losing
# what the rule drops; a P_Key the destination lacks; the switch ports'
# PMA counters grown by exactly the packets and words sent.
. "$(dirname "$0")/lib.sh"
export IBEMU W="$WORK" RC_TOOL="$TOOLS/verbs_rc" SMP_SET="$TOOLS/smp_set"

PINGPONGS='
pingpong 18600 ibv_rc_pingpong -n 200 -c
pingpong 18601 ibv_rc_pingpong -n 200 -c -e
pingpong 18602 ibv_ud_pingpong -n 200 -c
pingpong 18603 ibv_ud_pingpong -n 200 -c -e
pingpong 18604 ibv_srq_pingpong -n 200 -c
pingpong 18605 ibv_srq_pingpong -n 200 -c -e
pingpong 18606 ibv_uc_pingpong -n 200 -c
pingpong 18607 ibv_uc_pingpong -n 200 -c -e
pingpong 18608 ibv_rc_pingpong -n 200 -c -t
sed "s/^/ts client: /" "$W/pp.cli"
pingpong 18609 ibv_rc_pingpong -n 200 -c -o
pingpong 18610 ibv_rc_pingpong -n 200 -c -O -P
sed "s/^/odp client: /" "$W/pp.cli"
pingpong 18611 ibv_rc_pingpong -n 200 -c -j'
export PINGPONGS

cat >"$WORK/configured.sh" <<'SCRIPT'
set -u
. "$INSIDE"
eval "$PINGPONGS"
"$RC_TOOL" ibemu0 ibemu1 ops
"$RC_TOOL" ibemu0 ibemu1 ops-ex | sed 's/^/ex: /'
"$RC_TOOL" ibemu0 ibemu1 uc | sed 's/^/uc: /'
"$RC_TOOL" ibemu0 ibemu1 rnr
"$RC_TOOL" ibemu0 ibemu1 recv-errors
"$RC_TOOL" ibemu0 ibemu1 odp
"$RC_TOOL" ibemu0 ibemu1 dm
"$RC_TOOL" ibemu0 ibemu1 parent-domain
"$RC_TOOL" ibemu0 ibemu1 channels 200 | sed 's/^/channels: /'
# The switch port that delivers to host3 (leaf2/1) counts what the
# stream sends: 10 messages of 4096 bytes at MTU 1024.
L2=$(ibswitches | awk '/leaf switch 2/ {for (i = 1; i <= NF; i++) if ($i == "lid") print $(i + 1)}')
L3=$(ibstat ibemu1 1 | awk '/Base lid/ {print $3}')
count() { perfquery -x "$L2" 1 | awk -F. '/^'"$1"':/ {print $NF}'; }
d0=$(count PortXmitData) p0=$(count PortXmitPkts)
"$RC_TOOL" ibemu0 ibemu1 stream 10 4096 14
echo "leaf2/1 xmit: $(( $(count PortXmitData) - d0 )) words $(( $(count PortXmitPkts) - p0 )) packets"
# P_Key 0x8005 in host1's table at index 1, not in host3's.
"$SMP_SET" 0 0x16 0 "ff ff 80 05" >/dev/null
v0=$(smpquery portinfo "$L3" 1 | awk -F. '/^PkeyViolations/ {print $NF}')
"$RC_TOOL" ibemu0 ibemu1 ud 5 1 | sed 's/^/pkey: /'
echo "host3 P_Key violations: $(( $(smpquery portinfo "$L3" 1 | awk -F. '/^PkeyViolations/ {print $NF}') - v0 ))"
"$RC_TOOL" ibemu0 ibemu1 ud 5 0 | sed 's/^/default pkey: /'
# 30% of the data packets towards host3 dropped at leaf2: RC delivers
# all, in order, by retransmission; UD loses some.
"$IBEMU" ctl fault add status 12 --class data 2>&1 | sed 's/^/refused: /'
"$IBEMU" ctl fault add drop --class data --node leaf2 --dlid "$L3" --prob 0.3 >/dev/null
"$RC_TOOL" ibemu0 ibemu1 stream 100 1024 14
"$RC_TOOL" ibemu0 ibemu1 ud 100 0
"$IBEMU" ctl fault list | sed 's/^/rule: /'
"$IBEMU" ctl fault del 1 >/dev/null
# The only path from host1/1 to host3 goes down: 4 tries of 67 ms each.
"$IBEMU" ctl link down host3/1 >/dev/null
"$RC_TOOL" ibemu0 ibemu1 retry 14 3
SCRIPT
ibemu_run --seed 7 -c -a host1 -a host3 -- bash "$WORK/configured.sh"
expect_rc 0 "the --configured run"
for p in "rc_pingpong -n 200 -c" "rc_pingpong -n 200 -c -e" "ud_pingpong -n 200 -c" \
	"ud_pingpong -n 200 -c -e" "srq_pingpong -n 200 -c" "srq_pingpong -n 200 -c -e" \
	"uc_pingpong -n 200 -c" "uc_pingpong -n 200 -c -e"; do
	expect_line "ibv_$p: client 0 server 0" "ibv_$p passes on --configured"
done
n=$(grep -c "^  client: 200 iters in" "$WORK/out")
[ "$n" -eq 11 ] && pass "every pingpong client did its 200 iterations" ||
	fail "$n pingpong clients report 200 iterations, want 11"
# -t: completion timestamps (ibv_create_cq_ex with
# IBV_WC_EX_WITH_COMPLETION_TIMESTAMP; the device's 1 GHz clock).
expect_line "ibv_rc_pingpong -n 200 -c -t: client 0 server 0" "ibv_rc_pingpong -t passes"
# On-demand paging: odp_caps, explicit and implicit ODP regions, prefetch.
expect_line "ibv_rc_pingpong -n 200 -c -o: client 0 server 0" "ibv_rc_pingpong -o (ODP) passes"
expect_line "ibv_rc_pingpong -n 200 -c -O -P: client 0 server 0" \
	"ibv_rc_pingpong -O -P (implicit ODP, prefetched) passes"
expect_no_line "odp client: Couldn't prefetch" "ibv_advise_mr takes the prefetch"
for l in odp_implicit_reg odp_write_to_new_memory odp_read_back odp_prefetch odp_prefetch_pinned \
	odp_unmapped odp_read_only; do
	expect_line "$l ok" "verbs_rc odp: $l"
done
# Device memory: ibv_alloc_dm, a zero-based region on it, RDMA there.
expect_line "ibv_rc_pingpong -n 200 -c -j: client 0 server 0" "ibv_rc_pingpong -j (device memory) passes"
for l in dm_too_big dm_not_zero_based dm_write dm_read dm_copy_bounds dm_busy dm_free; do
	expect_line "$l ok" "verbs_rc dm: $l"
done
# Thread and parent domains, with the program's allocators.
for l in pd_alloc pd_busy_objects pd_cq pd_cq_plain_pd pd_qp_allocs pd_send pd_write pd_busy pd_freed \
	pd_dealloc; do
	expect_line "$l ok" "verbs_rc parent-domain: $l"
done
expect_no_line "ts client: The device isn't completion timestamp capable" \
	"ibv_query_device_ex gives a completion timestamp mask"
awk '/^ts client: Max receive completion clock cycles/ { max = $NF }
     /^ts client: Min receive completion clock cycles/ { min = $NF }
     /^ts client: Average receive completion clock cycles/ { avg = $NF }
     END { exit !(min > 0 && min <= avg && avg <= max) }' "$WORK/out" &&
	pass "ibv_rc_pingpong -t: receive completion times between 0 < min <= average <= max" ||
	fail "ibv_rc_pingpong -t: $(grep '^ts client' "$WORK/out" | tail -3 | tr '\n' ' ')"
for op in send send_imm send_inline send_empty write write_imm read; do
	expect_line "$op ok" "RC $op: data and completion fields as sent"
done
for op in send send_imm send_inline send_empty write write_imm read bad_rkey after_error; do
	expect_line "ex: $op ok" "the same through ibv_wr_* and ibv_start_poll: $op"
done
for c in uc_rc_attrs uc_send uc_write_imm uc_read uc_no_recv_sender uc_no_recv_dropped \
	uc_after_drop; do
	expect_line "uc: $c ok" "UC: $c"
done
expect_line "ex: cq_ex_flow_tag ok" "ibv_create_cq_ex: a flow tag (which the device lacks) is EOPNOTSUPP"
expect_line "ex: cq_ex_channel ok" "ibv_create_cq_ex with a channel holds it once (EBUSY, then freed)"
expect_line "resize_cq ok" "ibv_resize_cq: not below what it holds (EINVAL), grown with its completions kept"
expect_line "rereg_mr ok" "ibv_rereg_mr to a new buffer: the same rkey writes there"
expect_line "unmapped ok" "WRITE, READ (zeros) and an atomic on a region unmapped since: done, nobody faults"
for op in cmp_swap_equal cmp_swap_unequal fetch_add; do
	expect_line "$op ok" "RC atomic $op: the value back and the word at the responder"
	expect_line "ex: $op ok" "the same through ibv_wr_atomic_*: $op"
done
expect_line "ex: qp_ex_atomics ok" "ibv_create_qp_ex: an op the device lacks is EOPNOTSUPP"
expect_line "ex: too_many_sges ok" "ibv_wr_complete: EINVAL for more SGEs than the QP has"
expect_line "ex: abort ok" "ibv_wr_abort: nothing is posted"
expect_line "ex: batch_of_two ok" "two WRs in one batch (inline list, immediate): in order"
expect_line "ex: completion_time ok" \
	"a completion's cycles within ibv_query_rt_values_ex's, its wall clock within the system's"
expect_line "bad_rkey ok" "a bad rkey completes with IBV_WC_REM_ACCESS_ERR"
expect_line "after_error ok" "and later WRs are flushed"
expect_line "rnr ok" "no receive WR and rnr_retry 1: IBV_WC_RNR_RETRY_EXC_ERR"
# The responder's fault (IBA 9.9.3.1.2): its receive WR's region moved
# by ibv_rereg_mr is a local protection error there, NAK "remote
# operational error" here; a message longer than the WR is a length
# error there, NAK "invalid request" here (issue #49).
for l in "region moved to another PD: sender remote operation error, receiver local protection error" \
	"region moved to other memory: sender remote operation error, receiver local protection error" \
	"a SEND longer than the receive WR: sender remote invalid request error, receiver local length error"; do
	expect_line "$l" "$l"
done
expect_line "reset_cleans_cq ok" "a QP put in Reset leaves no flush of its first life in its CQ"
expect_line "channels: channels: 200 made during the stream" \
	"completion channels made while the same process's reader thread sends ACKs"
expect_line "channels: stream 200 ok" "and the stream goes on"
# 40 packets of 8+12+1024+4+2 bytes: 263 words each (IBA 7.7, 9.2).
expect_line "leaf2/1 xmit: 10520 words 40 packets" \
	"perfquery on the switch port to host3: exactly the stream's packets and words"
expect_line "stream 10 ok" "the stream arrived"
expect_line "pkey: ud sent 5 received 0" "a P_Key host3 lacks: nothing arrives"
expect_line "host3 P_Key violations: 5" "and host3's PortInfo counts 5 P_Key violations"
expect_line "default pkey: ud sent 5 received 5" "with the default P_Key all arrive"
expect_match "^refused: .*--class data takes no MAD fields" "a status rule for data packets is refused"
expect_line "stream 100 ok" "RC through a 30% drop rule: every message, in order, data checked"
got=$(sed -n 's/^ud sent 100 received \([0-9]*\)$/\1/p' "$WORK/out")
[ -n "$got" ] && [ "$got" -gt 40 ] && [ "$got" -lt 95 ] &&
	pass "UD through the same rule loses some: $got of 100 arrive" ||
	fail "UD through a 30% drop rule: '${got:-nothing}' of 100 arrived"
expect_match "^rule: 1 drop .*hits [1-9]" "the rule dropped packets"
ms=$(sed -n 's/^retry: transport retry counter exceeded after \([0-9]*\) ms$/\1/p' "$WORK/out")
# 4.096 us x 2^14 = 67.1 ms, 1 + 3 tries: 268 ms; not at once, not never.
[ -n "$ms" ] && [ "$ms" -ge 260 ] && [ "$ms" -le 2000 ] &&
	pass "link down: IBV_WC_RETRY_EXC_ERR after $ms ms (timeout 14, retry_cnt 3: 268)" ||
	fail "link down: want RETRY_EXC_ERR after about 268 ms: $(grep '^retry:' "$WORK/out")"

cat >"$WORK/opensm.sh" <<'SCRIPT'
set -u
. "$INSIDE"
start_opensm
eval "$PINGPONGS"
"$RC_TOOL" ibemu0 ibemu1 ops
stop_opensm
SCRIPT
ibemu_run -a host1 -a host3 -- bash "$WORK/opensm.sh"
expect_rc 0 "the run with opensm"
for p in "rc_pingpong -n 200 -c" "rc_pingpong -n 200 -c -e" "ud_pingpong -n 200 -c" \
	"ud_pingpong -n 200 -c -e" "srq_pingpong -n 200 -c" "srq_pingpong -n 200 -c -e" \
	"uc_pingpong -n 200 -c" "uc_pingpong -n 200 -c -e"; do
	expect_line "ibv_$p: client 0 server 0" "ibv_$p passes after opensm's SUBNET UP"
done
expect_line "read ok" "RDMA READ after opensm"
finish
