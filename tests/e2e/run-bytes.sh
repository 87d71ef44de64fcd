#!/bin/bash
# Arguments and file names are bytes (issue #12 item 15): `ibemu run` and
# `ibemu exec` pass them to the command as given, in any locale, UTF-8 or
# not (GLib's option parser once refused "héllo" with "Invalid byte
# sequence in conversion input").
. "$(dirname "$0")/lib.sh"

want=$(printf 'h\xc3\xa9llo \xffx\n' | od -An -c)
LC_ALL=C ibemu_run -- echo $'h\xc3\xa9llo' $'\xffx'
expect_rc 0 "ibemu run with non-ASCII arguments, C locale"
[ "$(od -An -c <"$WORK/out")" = "$want" ] && pass "they reach the command byte for byte" ||
	fail "got: $(od -An -c <"$WORK/out")"
LC_ALL=C.UTF-8 ibemu_run -- echo $'h\xc3\xa9llo' $'\xffx'
[ "$(od -An -c <"$WORK/out")" = "$want" ] && pass "the same in a UTF-8 locale" ||
	fail "got: $(od -An -c <"$WORK/out")"
cp "$TOPOLOGIES/default.net" "$WORK/t"$'\xe9'.net
LC_ALL=C ibemu_run --topology "$WORK/t"$'\xe9'.net -- ibstat -l
expect_line "ibemu0" "a topology file whose name is not UTF-8"
finish
