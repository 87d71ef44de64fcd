#!/bin/bash
# Kernel RMPP between two libibumad programs on two attached HCAs: a
# 100-segment request (21600 data bytes, more than the kernel's 64-segment
# window) and a 150-segment reply, both checked byte for byte, both read
# through ENOSPC with the needed length in the header. Then one-segment
# messages, whose delivered length is shorter than a MAD.
. "$(dirname "$0")/lib.sh"

run_pair() {	# run_pair SEGS RSEGS
	ibemu_run --configured --attach host1 --attach host3 -- bash -c "
	'$TOOLS/rmpp_echo' server ibemu1 >'$WORK/srv' & s=\$!
	n=0
	until grep -q ready '$WORK/srv' || [ \$n -ge 200 ]; do n=\$((n + 1)); timeout 0.05 tail -f /dev/null; done
	timeout 20 '$TOOLS/rmpp_echo' client ibemu0 6 $1 $2; echo \"client rc=\$?\"
	wait \$s; echo \"server rc=\$?\"; cat '$WORK/srv'"
}

run_pair 100 150
expect_line "ok sent=100 got=150 rmpp_flags=0x3" "150 segments back, byte-exact, Active|First"
expect_line "served 100 segments, answered 150" "the server got all 100 segments"
expect_line "client rc=0" "client done"
expect_line "server rc=0" "server done"

run_pair 1 1
expect_line "ok sent=1 got=1 rmpp_flags=0x7" "a one-segment transfer is Active|First|Last"
finish
