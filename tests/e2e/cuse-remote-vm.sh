#!/bin/bash
# `ibemu start --remote` (docs/many-hosts.md): CUSE mode for an attached
# host (umad, issm and verbs devices), in the VM that boots Debian's stock
# kernel (tests/vm/run-in-vm, as cuse-vm.sh). tests/vm/cuse-remote.sh
# runs there: a namespace-mode run A owns the fabric (opensm, an ibping
# server on host1); `ibemu start --remote A --attach host2` serves host2's
# files as real character devices of the whole (virtual) host, and
# unmodified tools use them; `ibemu ctl`/`list`/`stop` find that daemon;
# when A goes, a blocked reader gets EIO and the daemon ends, leaving
# nothing. Run-in-vm exits 125 (a failure, with the reason) when the VM
# cannot start.
. "$(dirname "$0")/lib.sh"
vm_tier cuse-remote.sh
expect_rc 0 "the VM ran the remote CUSE tier"
expect_line "== done" "to its end"

expect_line "owner: SUBNET UP" "opensm in A (namespace mode) brings the fabric up"
expect_line "start rc=0" "ibemu start --remote A --attach host2 returned once the devices were there"
expect_line "node: crw------- root root umad0" "host2's umad0: a character device (ib_umad's 0600)"
expect_line "node: crw------- root root issm0" "and its issm0"
expect_line "node: crw-rw-rw- root root uverbs0" "and its HCA's uverbs0 (everyone's, as rdma-core's udev rules make it)"
expect_line "ibstat: State Active" "ibstat: host2's port Active, as A's opensm set it"
expect_line "ibstat: Base lid 5" "with the LID opensm gave host2"
expect_line "ibstat: Port GUID 0x0002c90300000104" "host2's port GUID"
expect_line "smpquery: Node Description:.....................host2 HCA-1" "smpquery by directed route from host2"
expect_line "ibnetdiscover nodes: 6" "ibnetdiscover from host2 finds the six nodes"
expect_line "saquery NodeRecords: 7" "saquery: RMPP through the forwarded CUSE device"
expect_line "pongs: 3" "ibping from host2 to A's host1"
expect_match "^static: CA node GUID 0x0002c90300000103, 1 ports" "a static libibumad program"
expect_match "^python: Switch node GUID 0x[0-9a-f]+" "Python with plain open/ioctl/write/read"
expect_issm_wait "the CUSE issm0 (forwarded to A)"
expect_match "^uverbs0 rdev: ([0-9]+:[0-9]+), sysfs dev \1$" "sysfs dev says the CUSE uverbs0's own number (libibverbs checks it)"
expect_line "ibv_devinfo: node_guid: 0002:c903:0000:0103" "ibv_devinfo: host2's HCA"
expect_line "ibv_devinfo: state: PORT_ACTIVE (4)" "its port Active, as A's opensm set it"
expect_line "ibv_devinfo: port_lid: 5" "with the LID opensm gave host2"
expect_line "rc pingpong rc=0" "ibv_rc_pingpong -e from host2 to A's host1 through the CUSE uverbs0"
expect_line "rc pingpong: remote address: LID 0x0001" "its peer: host1"

expect_match "^A's status: remote [^ ]+: uid 0, pid B, round trip [0-9]+\.[0-9]{3} ms: host2$" \
	"A's ctl status lists the CUSE host, its daemon's pid"
expect_match "^hostb status: remote [^ ]+: uid 0, pid B, round trip [0-9.]+ ms: host2$" \
	"ibemu ctl --name hostb: the control socket's place hands over to A"
expect_match "^list: hostb B remote A's: " "ibemu list: hostb, its daemon, a host of A's fabric"
expect_line "again: ibemu start: hostb is running already (pid B); ibemu stop --name hostb first" \
	"a second start of that name is refused, naming the daemon (not A)"

expect_line "ibemu: stopped B" "ibemu stop --name hostb stops the daemon, not A"
expect_line "stop rc=0" "stop exits 0"
expect_line "after stop: A lists no remote" "A detaches host2"
expect_line "after stop devices: " "no device left"
expect_line "after stop mounts: 0" "no mount left"
expect_line "after stop daemons: 0" "no daemon left"

expect_line "restart rc=0" "attached again"
expect_line "owner gone: the daemon ended" "A killed: the CUSE host's daemon ends"
expect_line "owner gone: read: Input/output error" "a read blocked on its umad0 gets EIO"
expect_line "owner gone: log: has gone (it closed its channel); stopping" "and its log says why"
expect_line "after owner gone devices: " "no device left"
expect_line "after owner gone mounts: 0" "no mount left"
expect_line "after owner gone daemons: 0" "no daemon left"
finish
