#!/bin/bash
# Nothing in the mock sysfs or /dev/infiniband can be changed, even by
# root inside the namespace: writes, truncation, chmod, new files, new
# directories, links, removal and renames all fail, and the values read
# afterwards are the fabric's. Only the device files take writes (MADs).
. "$(dirname "$0")/lib.sh"

ibemu_run -- bash -c '
P=/sys/class/infiniband/ibemu0/ports/1
try() { if "$@" 2>/dev/null; then echo "ALLOWED: $*"; else echo "refused: $*"; fi; }
try sh -c "echo 0x77 > $P/lid"
try sh -c "echo x >> /sys/class/infiniband_mad/abi_version"
try truncate -s 0 $P/state
try chmod 666 $P/lid
try touch /sys/class/infiniband/ibemu0/new
try mkdir /sys/class/infiniband_mad/umad9
try ln -s /etc/passwd /sys/class/infiniband/ibemu0/passwd
try rm -f /sys/class/infiniband_mad/abi_version
try mv /sys/class/infiniband_mad/umad0 /sys/class/infiniband_mad/umad5
try rm -f /dev/infiniband/umad0
try mknod /dev/infiniband/umad7 c 231 7
echo "lid now $(cat $P/lid), abi $(cat /sys/class/infiniband_mad/abi_version)"
echo "umad0 still: $(ls /dev/infiniband | tr "\n" " ")"'
expect_rc 0 "the run"
expect_no_line "ALLOWED" "every change is refused"
[ "$(grep -c '^refused: ' "$WORK/out")" = 11 ] && pass "all 11 attempts" || fail "refusals: $(grep -c '^refused: ' "$WORK/out")"
expect_line "lid now 0x0, abi 5" "values unchanged"
expect_line "umad0 still: issm0 issm1 rdma_cm umad0 umad1 uverbs0 " "device files unchanged"
finish
