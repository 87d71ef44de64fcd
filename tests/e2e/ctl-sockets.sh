#!/bin/bash
# Control sockets (issue #12 items 5-8): stale sockets of crashed emulators
# are not counted and are removed; `ibemu list` shows the live ones; a name
# in use is refused, and the first emulator stays reachable; names are a
# safe character set; nothing that is not a socket of ours is unlinked; a
# socket directory someone else made, or opened to others, is refused.
. "$(dirname "$0")/lib.sh"

export XDG_RUNTIME_DIR=$WORK/xdg	# our own socket directory
mkdir -m 700 "$XDG_RUNTIME_DIR"
D=$XDG_RUNTIME_DIR/ibemu

# Three stale sockets: bound, never listened, left behind.
mkdir -m 700 "$D"
for n in dead1 dead2 dead3; do
	python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$D/$n.sock"
done
NAME=live-$$
"$IBEMU" run --name "$NAME" -- sh -c 'until [ -e "$0" ]; do timeout 0.1 tail -f /dev/null; done' "$WORK/done" >"$WORK/run1" 2>&1 &
RUN=$!
# Up once it answers (a minute at most: on a loaded machine, with other
# suites' programs spinning on both CPUs, a start took longer than the
# 10 s this waited, and the status below then waited on a run not up yet).
wait_for 60 "$IBEMU" ctl --name "$NAME" seed >/dev/null 2>&1 ||
	fail "the emulator never answered ctl seed: $(cat "$WORK/run1")"

"$IBEMU" ctl status >"$WORK/out" 2>&1; RC=$?
expect_rc 0 "ctl with one live emulator and three stale sockets"
expect_line "6 nodes" "finds the live one"
ls "$D" >"$WORK/out"
expect_no_line "dead1" "stale sockets are removed"
"$IBEMU" list >"$WORK/out" 2>&1
expect_match "^$NAME +[0-9]+ +namespace +\(built-in default\) +host1$" "ibemu list: name, pid, mode, topology, attached"
[ "$(wc -l <"$WORK/out")" = 2 ] && pass "and nothing else" || fail "list: $(cat "$WORK/out")"

# A --socket path longer than sun_path (107 bytes) is refused, not cut:
# cut, this one would name the live socket (slashes pad it to 107).
tail="/$NAME.sock"
long="$D$(printf '/%.0s' $(seq $((107 - ${#D} - ${#tail}))))${tail}junk"
"$IBEMU" ctl --socket "$long" seed >"$WORK/out" 2>&1; RC=$?
expect_rc 1 "ctl --socket with a ${#long}-byte path"
expect_line "File name too long (a socket path has at most 107 bytes)" "says why, talks to no one"

# The name in use: refused, and the first stays reachable.
"$IBEMU" run --name "$NAME" -- true >"$WORK/out" 2>&1; RC=$?
expect_rc 1 "a second run under a name in use"
expect_line "an emulator is running under this name already" "says so in one line"
"$IBEMU" ctl --name "$NAME" seed >"$WORK/out" 2>&1; RC=$?
expect_rc 0 "the first is still reachable"
"$IBEMU" run --name other-$$ -- true >"$WORK/out" 2>&1
"$IBEMU" ctl status >"$WORK/out" 2>&1; RC=$?
expect_rc 0 "a run that came and went leaves one emulator to find"
touch "$WORK/done"; wait $RUN

# Names: a safe set only; never unlink what is not our socket.
echo precious >"$WORK/victim"
for bad in "../victim" "a/b" ".hidden" "" "x$(printf 'y%.0s' $(seq 70))"; do
	"$IBEMU" run --name "$bad" -- true >"$WORK/out" 2>&1; RC=$?
	expect_rc 1 "--name '${bad:0:12}' refused"
	expect_line "bad emulator name" "in one line"
done
"$IBEMU" ctl --name ../victim status >"$WORK/out" 2>&1; RC=$?
expect_rc 1 "ctl --name ../victim refused"
[ -f "$WORK/victim" ] && pass "the file outside the directory is untouched" || fail "victim gone"
echo precious >"$D/notasocket.sock"
"$IBEMU" run --name notasocket -- true >"$WORK/out" 2>&1; RC=$?
expect_rc 1 "a name whose file is not a socket of ours"
expect_line "is not a control socket of ours: not touching it" "is refused"
grep -q precious "$D/notasocket.sock" && pass "and the file is kept" || fail "file changed"
rm "$D/notasocket.sock"

# Our directory opened to others is made private; someone else's, or a
# symlink to ours, is refused.
chmod 777 "$D"
"$IBEMU" run -- true >"$WORK/out" 2>&1; RC=$?
expect_rc 0 "our socket directory of mode 0777"
[ "$(stat -c %a "$D")" = 700 ] && pass "is made 0700" || fail "mode $(stat -c %a "$D")"
chown nobody "$D"
"$IBEMU" run -- true >"$WORK/out" 2>&1; RC=$?
expect_rc 1 "a socket directory owned by another user"
expect_line "is not a directory of ours (it must be ours, and is made mode 0700): not using it" "is refused in one line"
mv "$D" "$D.other"; ln -s "$D.other" "$D"
"$IBEMU" run -- true >"$WORK/out" 2>&1; RC=$?
expect_rc 1 "a symlink in its place"
expect_line "is not a directory of ours" "is refused too"
finish
