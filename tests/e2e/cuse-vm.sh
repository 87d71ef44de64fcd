#!/bin/bash
# CUSE mode, for real: this kernel has no CUSE, so tests/vm/run-in-vm boots
# Debian's stock kernel in qemu over this host's root filesystem and runs
# tests/vm/cuse-tier.sh there. `ibemu start` registers /dev/infiniband/umadN
# and issmN as character devices for the whole (virtual) host; unmodified
# ibstat, ibstatus, opensm, smpquery, ibnetdiscover and saquery, a static
# libibumad program and a Python program with plain open/ioctl/write/read
# use them; `ibemu stop`, a crash and SIGINT leave nothing behind; the
# systemd unit's start and stop commands work as systemd runs them. When the
# VM cannot start, this fails with the reason (run-in-vm exits 125).
. "$(dirname "$0")/lib.sh"
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
BIN=$(dirname "$IBEMU")
vm_tier cuse-tier.sh
expect_rc 0 "the VM ran the CUSE tier"
expect_line "== done" "to its end"

expect_line "no-cuse: ibemu start: /dev/cuse: No such file or directory: load the module (modprobe cuse)" \
	"without /dev/cuse: a clear refusal"
expect_line "not-root: ibemu start: CUSE mode needs root" "not root: refused"
expect_line "real-ib: ibemu start: this host has InfiniBand devices already (umad0)" \
	"real InfiniBand present: refused"

expect_line "start rc=0" "ibemu start returned once the devices were there"
for d in umad0 umad1 issm0 issm1; do
	expect_line "node: crw-rw---- root adm $d" "/dev/infiniband/$d: a character device, --mode 0660 --group adm"
done
expect_line "again: ibemu start: ibemu is running already" "a second start is refused"
expect_line "ibstat state: Initializing" "ibstat reads the merged sysfs (no SM yet)"
expect_line "ibstatus: 	default gid:	 fe80:0000:0000:0000:0002:c903:0000:0101" "ibstatus too"
expect_line "opensm: SUBNET UP" "opensm brings the subnet up through the character devices"
expect_line "ibstat after sm: State Active" "ports Active"
expect_line "ibstat after sm: Base lid 1" "with the LID opensm gave"
expect_line "smpquery: Node Description:.............ibemu leaf switch 1" "smpquery by directed route"
expect_line "ibnetdiscover nodes: 6" "ibnetdiscover finds the six nodes"
expect_line "saquery NodeRecords: 7" "saquery: kernel RMPP through CUSE"
expect_line "saquery: 		NodeDescription.........host3 HCA-1" "saquery by name"
expect_line "long-read header failures: 0" "every ENOSPC read got its header (poked into the reader)"
expect_line "static: CA node GUID 0x0002c90300000105, 1 ports, SMP arrived on port 1" \
	"a statically linked libibumad program"
expect_line "python: CA node GUID 0x0002c90300000107, 1 ports (from Python, no libibumad)" \
	"plain open/ioctl/write/read from Python"
# Calls the kernel answers before the CUSE server is asked: as ib_umad's
# for ftruncate and mmap; CUSE's own fops differ from umad_fops for the
# rest (README, Robustness): .llseek is noop_llseek, a write of 0 bytes
# never reaches the server, and a restricted ioctl copies its argument in
# first.
expect_line "cuse-calls: ftruncate EINVAL" "CUSE: ftruncate EINVAL"
expect_line "cuse-calls: mmap-shared ENODEV" "CUSE: MAP_SHARED ENODEV"
expect_line "cuse-calls: mmap-private ENODEV" "CUSE: MAP_PRIVATE ENODEV"
expect_line "cuse-calls: lseek ok 0" "CUSE: lseek returns 0 (ib_umad: ESPIPE)"
expect_line "cuse-calls: write0 ok 0" "CUSE: a zero-byte write returns 0 (ib_umad: EINVAL)"
expect_line "cuse-calls: ioctl-null EFAULT" "CUSE: an unknown ioctl with a NULL argument: EFAULT (ib_umad: ENOTTY)"

for b in 131071 131072 131073 1048576 1048577 33554432; do
	expect_line "big: ok $b" "CUSE: $b bytes there and back in one read and one write"
	expect_line "big server $b rc=0" "CUSE: the server read $b bytes in one read"
done
expect_line "host1 addr: 127.1.0.3" "CUSE mode: a port's address is a loopback one (never routed off the machine)"
expect_line "rping: ping data: rdma-ping-4" "CUSE mode: rping between host1 and host3, data verified"
expect_line "rping server rc=0" "and its server"
expect_line "roce start rc=0" "CUSE mode with RoCE ports (ibemu start --roce)"
expect_line "roce devinfo: state: PORT_ACTIVE (4)" "a RoCE port is Active with no SM"
expect_line "roce devinfo: link_layer: Ethernet" "... and Ethernet"
expect_line "roce gid 3: 0000:0000:0000:0000:0000:ffff:7f01:0005 RoCE v2" \
	"its GID 3: its loopback address mapped, RoCE v2"
expect_line "roce pingpong rc=0 server 0 1 ::ffff:127.1.0.5" \
	"ibv_rc_pingpong -g 3 over RoCE v2 between the CUSE devices, data checked"
expect_line "roce rping: ping data: rdma-ping-4" "rping over RoCE, no SA, data verified"
expect_line "roce rping server rc=0" "and its server"
expect_line "opensm 648: SUBNET UP" "opensm on the 648-HCA fat tree through CUSE"
expect_line "saquery PIR rc=0 records 2646" "saquery PIR: all 648 + 54 x 37 PortInfoRecords (once 1,818, exit 0)"
expect_line "node: crw-rw-rw- root root uverbs0" "/dev/infiniband/uverbs0: a character device for everyone, as ib_uverbs'"
expect_match "uverbs0: character special file 666, rdev ([0-9]+:[0-9]+), sysfs dev \1$" \
	"sysfs uverbs0/dev names the CUSE device's own numbers"
expect_line "blacklist: 1" "ibemu start keeps ib_core from autoloading"
expect_match "plain ibv_devices:[[:space:]]+ibemu0[[:space:]]+0002c90300000100" "ibv_devices outside any namespace lists ibemu0"
expect_line "plain ibv_devinfo: state: PORT_ACTIVE (4)" "ibv_devinfo shows the state opensm set"
expect_line "plain ibv_devinfo: port_lid: 1" "and the LID"
expect_line "nobody ports active: 2" "as a normal user too"
expect_line "nobody ctl: ibemu: no emulator of yours is running; root's (ibemu start, for the whole host) are not visible to you: try sudo" \
	"a normal user's ibemu ctl says the host's emulator is root's"
expect_line "plain netlink: errno 93, ib_core absent" "an RDMA netlink socket does not load ib_core while it runs"
expect_line "modprobe ib_core rc=0" "loaded by hand"
expect_line "with ib_core, plain ibv_devices ibemu0 lines: 0" "with ib_core, libibverbs without the trap lists nothing"
expect_match "with ib_core, ibemu exec:[[:space:]]+ibemu0" "ibemu exec's netlink trap lists ibemu0 all the same"
expect_line "after stop blacklist: 0" "ibemu stop removes the blacklist"
expect_line "ib_core loaded: ibemu start: ib_core is loaded" "start refuses while ib_core is loaded"
expect_match "with ib_core, ibemu run:[[:space:]]+ibemu0" "namespace mode lists ibemu0 with ib_core loaded"
expect_line "modprobe -r ib_core rc=0" "ib_core unloaded"
expect_match "without ib_core, ibemu run:[[:space:]]+ibemu0" "namespace mode on the stock kernel"
expect_line "without ib_core, ibemu run: opened" "the preloaded library answers RDMA netlink (docs/netlink.md)"
expect_line "without ib_core, ibemu run: errno 93" "with the library off, the trap refuses it"
expect_line "after run: ib_core absent" "so nothing autoloads ib_core"
expect_line "stop rc=0" "ibemu stop"
expect_line "early sigint rc=0" "a SIGINT during set-up is held, then ends it cleanly"
for when in "after stop" "after kill" "after sigint" "after early sigint"; do
	[ "$when" = "after kill" ] && continue
	expect_line "$when devices: " "$when: no device left"
	expect_line "$when mounts: 0" "$when: no mount left"
	expect_line "$when processes: 0" "$when: no process left"
	expect_line "$when blacklist: 0" "$when: no modprobe blacklist left"
done
expect_line "after kill mounts: 5" "a killed daemon leaves its five /sys/class mounts"
expect_line "restart: removed 6 mount(s)" "which the next start removes, with /etc/libibverbs.d's"
expect_line "after restart: Node Description:.....................host1 HCA-1" "and then serves again"
expect_line "foreground rc=0" "--foreground ends cleanly on SIGINT"

expect_line "unit start rc=0" "the systemd unit's ExecStart"
expect_line "unit: main pid 1, crw-rw-rw-" "leaves one daemon, with IBEMU_OPTS applied"
expect_line "unit smpquery: Node Description:.....................host1 HCA-1" "serving"
expect_line "unit stop rc=0" "its ExecStop"
expect_line "after unit stop mounts: 0" "cleans up"
# On this host: inside a namespace-mode run, start refuses (it would take
# that run's mounts for a crashed daemon's).
ibemu_run -- sh -c '"$IBEMU" start 2>&1'
expect_rc 1 "ibemu start inside ibemu run"
expect_line "ibemu start: this is inside an emulator's namespace (IBEMU_CTL is set)" "is refused"

sed "s|@bindir@|$BIN|g" "$SRC/cli/ibemu.service.in" >"$WORK/ibemu.service"
if systemd-analyze verify --man=no "$WORK/ibemu.service" >"$WORK/out" 2>&1; then
	pass "systemd-analyze verify accepts the unit"
else
	fail "systemd-analyze verify: $(cat "$WORK/out")"
fi
finish
