#!/bin/bash
# One message per read(2) and write(2), whatever its size (issue #12 item 1).
# FUSE cuts a call into requests of at most 1 MiB (CUSE: 128 KiB); the
# kernel's ib_umad does not. Each size goes host1 -> host3 and back through
# kernel RMPP in one write and one read each way, byte for byte, and the
# reader's first read, one byte short, gets ENOSPC with the needed length in
# the header. Sizes straddle both piece sizes; one write is a writev.
. "$(dirname "$0")/lib.sh"

SIZES="131071 131072 131073 1048575 1048576 1048577 33554432"
cat >"$WORK/pair.sh" <<EOS
for b in $SIZES; do
	'$TOOLS/umad_big' server ibemu1 >'$WORK/srv' & s=\$!
	n=0
	until grep -q ready '$WORK/srv' || [ \$n -ge 400 ]; do n=\$((n + 1)); timeout 0.05 tail -f /dev/null; done
	how=; [ \$b = 1048577 ] && how=writev
	timeout 60 '$TOOLS/umad_big' client ibemu0 6 \$b \$how; echo "client \$b rc=\$?"
	wait \$s; echo "server \$b rc=\$?"; cat '$WORK/srv'
done
EOS
ibemu_run --configured --attach host1 --attach host3 -- bash "$WORK/pair.sh"
for b in $SIZES; do
	expect_line "ok $b" "$b bytes there and back, byte-exact, one read and one write each"
	expect_line "served $b" "the server read $b bytes in one read"
	expect_line "server $b rc=0" "server of $b done"
done
expect_no_line "cannot" "no piece went unexplained"
if grep -q "cannot\|not under way" "$WORK/log"; then fail "the emulator complained"; cat "$WORK/log" | grep "cannot\|not under way" | head; else pass "no complaint in the log"; fi
finish
