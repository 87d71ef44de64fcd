#!/bin/bash
# ibping between two attached HCAs (host1 = ibemu0, host3 = ibemu1, LID 6
# with --configured): the server registers the vendor class 0x32 with an OUI
# on one port; the client's pings travel the fabric by LID and are answered.
. "$(dirname "$0")/lib.sh"

ibemu_run --configured --attach host1 --attach host3 -- bash -c '
ibping -S -C ibemu1 & srv=$!
n=0
until ibping -C ibemu0 -c 1 -t 100 6 2>/dev/null | grep -q Pong || [ $n -ge 50 ]; do n=$((n + 1)); done
echo "server answered after $n tries"
ibping -C ibemu0 -c 2 6
echo "ping rc=$?"
kill $srv
ibping -C ibemu0 -c 1 -t 200 6; echo "no server rc=$?"'
expect_line "ping rc=0" "ibping succeeds"
expect_line "2 packets transmitted, 2 received, 0% packet loss" "every ping answered"
expect_line "Pong from" "pongs come back"
expect_line "1 packets transmitted, 0 received, 100% packet loss" "without the server the ping is lost"
finish
