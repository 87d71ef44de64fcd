#!/bin/bash
# A run inside a run (issue #35 item 14): the CI action runs a project's
# `make check` inside `ibemu run`, and a project whose tests call `ibemu
# run` must work there. The inner run has its own fabric, devices, sysfs,
# verbs provider, fast path and control socket; the outer one's are as
# they were once it ends. As root here; tests/e2e/unprivileged.sh runs one
# as nobody (a user namespace inside a user namespace).
. "$(dirname "$0")/lib.sh"
# The inner run's fast path is checked: on even in CI's FUSE-only pass.
unset IBEMU_FAST_PATH

ibemu_run -- sh -c '
	"$IBEMU" run --attach host2 --name inner-$$ -- sh -c "
		ibstat | grep -E \"Node GUID|Port GUID\" | sed \"s/^/inner ibstat: /\"
		ibv_devinfo | grep node_guid | sed \"s/^/inner ibv_devinfo: /\"
		$TOOLS/umad_paths path | sed \"s/^/inner /\"
		ibemu ctl info | sed \"s/^/inner ctl: /\"
		ls -lL /dev/null | cut -c1 | sed \"s/^/inner null: /\"" 
	echo "inner rc=$?"
	ibstat | grep "Node GUID" | sed "s/^/outer ibstat after: /"
	ibemu ctl info | sed "s/^/outer ctl: /"'
expect_rc 0 "an ibemu run inside ibemu run"
expect_line "inner rc=0" "the inner run succeeds"
expect_match "^inner ibstat:\s+Node GUID: 0x0002c90300000103" "the inner run's ibstat: its own HCA (host2)"
expect_match "^inner ibv_devinfo:\s+node_guid:\s+0002:c903:0000:0103" "libibverbs in the inner run: host2"
expect_line "inner path: fast" "the inner run's fast path"
expect_match "^inner ctl: inner-[0-9]+\s" "ibemu ctl inside reaches the inner emulator"
expect_line "inner null: c" "/dev/null is the machine's, through both runs"
expect_match "^outer ibstat after:\s+Node GUID: 0x0002c90300000100" "the outer run's device is host1's again after"
expect_match "^outer ctl: run-[0-9]+\s" "and ibemu ctl reaches the outer emulator"
finish
