#!/bin/bash
# RoCE on the virtual cluster (docs/roce.md; issue #50): `ibemu run --roce
# --hosts host1,host3` makes two hosts whose HCAs are RoCE ports, each
# with its Ethernet interfaces and their GIDs' netdevs in its own sysfs
# (the first host's too). Between the hosts, through the RDMA CM with no
# SA and with each result checked: librpma's remote write (its write,
# flush to visibility, a read back, and the server's own look at the
# bytes), an Open MPI job over UCX (tests/tools/mpi_check.c checks every
# value; UCX's log says rc_verbs carries it) and one over UCX's UD
# transport alone (it reads the packet type from the completion's SL, as
# a ConnectX reports it), MPICH's job, ucmatose's sends, and
# qperf's RC bandwidth with its CM (-cm1).
. "$(dirname "$0")/lib.sh"
export W="$WORK"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
TOOLS="$(dirname "$0")/../tools"

if ! echo "#include <librpma.h>" | ${CC:-cc} -E - >/dev/null 2>&1 ||
	! command -v mpicc.openmpi >/dev/null || ! command -v mpicc.mpich >/dev/null; then
	fail "no librpma-dev, Open MPI or MPICH: ./setup.sh --test installs them"
	finish
	exit 1
fi
${CC:-cc} -O2 -o "$WORK/rpma_write" "$TOOLS/rpma_write.c" -lrpma -libverbs &&
	mpicc.openmpi -O2 -o "$WORK/mpi_check" "$TOOLS/mpi_check.c" &&
	mpicc.mpich -O2 -o "$WORK/mpi_check_mpich" "$TOOLS/mpi_check.c" || fail "building the tools"

cat >"$WORK/roce-hosts.sh" <<'SCRIPT'
set -u
. "$INSIDE"
echo "host1 ndev 3: $(cat /sys/class/infiniband/ibemu0/ports/1/gid_attrs/ndevs/3)"
echo "host1 net: $(ls /sys/class/infiniband/ibemu0/device/net | tr '\n' ' ')"
ssh host3 'echo "host3 ndev 3: $(cat /sys/class/infiniband/ibemu0/ports/1/gid_attrs/ndevs/3) $(cat /sys/class/infiniband/ibemu0/ports/1/gid_attrs/types/3)"'
ssh host3 'ibv_devinfo -v | grep -E "link_layer|GID\[ *3\]"' | tr -s ' \t' ' ' | sed 's/^/host3 devinfo:/'
listening_on() { ibemu ctl status | grep -q "listening on 10.1.0.5"; }

ssh host3 "timeout 60 $W/rpma_write server 10.1.0.5 7204" >"$W/rpmas.out" 2>&1 &
s=$!
wait_until listening_on
timeout 60 "$W/rpma_write" client 10.1.0.5 7204 >"$W/rpmac.out" 2>&1
c=$?
wait $s
echo "rpma | client $c server $?"
cat "$W/rpmac.out" "$W/rpmas.out"

mpirun.openmpi -np 2 --host host1,host3 --mca pml ucx -x UCX_LOG_LEVEL=info \
	-x UCX_LOG_FILE="$W/ucx.%h.%p.log" "$W/mpi_check" >"$W/mpi.out" 2>&1
echo "mpi rc $?"
grep "^mpi_check: OK" "$W/mpi.out"
cat "$W"/ucx.*.log | grep -o "ep_cfg\[1\]: tag([a-z_]*verbs/ibemu0:1)" | sort -u | sed 's/^/ucx /'
# UCX's UD transport alone: it finds the DGID where the completion's SL
# says the IPv4 header is, and drops what it cannot match.
rm -f "$W"/ucx.*.log
mpirun.openmpi -np 2 --host host1,host3 --mca pml ucx -x UCX_TLS=ud_verbs,self -x UCX_LOG_LEVEL=info \
	-x UCX_LOG_FILE="$W/ucx.%h.%p.log" "$W/mpi_check" >"$W/mpi-ud.out" 2>&1
echo "mpi ud rc $? | $(grep -c '^mpi_check: OK' "$W/mpi-ud.out")"
cat "$W"/ucx.*.log | grep -o "ep_cfg\[1\]: tag([a-z_]*verbs/ibemu0:1)" | sort -u | sed 's/^/ucx-ud /'

mpiexec.mpich -n 2 -hosts host1,host3 "$W/mpi_check_mpich" >"$W/mpich.out" 2>&1
echo "mpich rc $? | $(grep -c '^mpi_check: OK' "$W/mpich.out")"

ssh host3 "timeout 60 ucmatose -b 10.1.0.5 -C 20" >"$W/ums.out" 2>&1 &
s=$!
wait_until listening_on
timeout 60 ucmatose -s 10.1.0.5 -C 20 >"$W/umc.out" 2>&1
c=$?
wait $s
echo "ucmatose | client $c server $? | $(grep -c 'data transfers complete' "$W/umc.out" "$W/ums.out" | tr '\n' ' ')"

ssh host3 "timeout 60 qperf" >/dev/null 2>&1 &
s=$!
qp_up() { ssh host3 'ss -ltn "sport = :19765"' | grep -q LISTEN; }
wait_until qp_up
timeout 60 qperf -cm1 host3 -t 1 -m 64k rc_bw quit >"$W/qperf.out" 2>&1
echo "qperf -cm1 rc_bw rc $? | $(grep -c 'bw  = ' "$W/qperf.out")"
wait $s
exit 0
SCRIPT
ibemu_run --roce --hosts host1,host3 -- bash "$WORK/roce-hosts.sh"
expect_rc 0 "the RoCE cluster run"
expect_line "host1 ndev 3: eth0" "the first host's sysfs names GID 3's netdev"
expect_line "host1 net: eth0 eth1 " "the first host's device/net lists its interfaces"
expect_line "host3 ndev 3: eth0 RoCE v2" "host3's sysfs: its own interface, RoCE v2"
expect_line "host3 devinfo: link_layer: Ethernet" "host3: ibv_devinfo says Ethernet"
expect_line "host3 devinfo: GID[ 3]: ::ffff:10.1.0.5, RoCE v2" "host3: GID 3 its address's, RoCE v2"
expect_line "rpma | client 0 server 0" "librpma: client and server succeed"
expect_line "client: wrote 65536 bytes, flushed, read back the same" \
	"librpma: rpma_write, rpma_flush (visibility), rpma_read back"
expect_line "server: 65536 bytes written by the client, 0 wrong" "librpma: the server sees the bytes"
expect_line "mpi rc 0" "Open MPI over UCX on RoCE"
expect_line "mpi_check: OK" "every MPI result checked"
expect_line "ucx ep_cfg[1]: tag(rc_verbs/ibemu0:1)" "UCX carries it on rc_verbs over the RoCE port"
expect_line "mpi ud rc 0 | 1" "Open MPI over UCX's UD transport alone, every result checked"
expect_line "ucx-ud ep_cfg[1]: tag(ud_verbs/ibemu0:1)" "UCX carries that one on ud_verbs"
expect_line "mpich rc 0 | 1" "MPICH (over UCX) between the RoCE hosts, every result checked"
expect_line "ucmatose | client 0 server 0 | $WORK/umc.out:1 $WORK/ums.out:1 " "ucmatose between the hosts"
expect_line "qperf -cm1 rc_bw rc 0 | 1" "qperf's RC bandwidth through its CM"
finish
