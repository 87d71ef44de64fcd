#!/bin/bash
# `ibemu ctl wait sm-up` returns once an SM has brought the subnet up (after
# opensm logged SUBNET UP, so saquery works next) and fails within its
# --timeout, saying why, when no SM runs; `wait active` accepts --configured.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/in.sh" <<'IN'
. "$INSIDE"
ibemu ctl wait sm-up --timeout 1; echo "nosm=$?"
mkdir -p "$W/cache"
OSM_CACHE_DIR=$W/cache opensm -d2 -f "$W/opensm.log" >/dev/null 2>&1 &
ibemu ctl wait sm-up --timeout 30; echo "up=$?"
grep -c "SUBNET UP" "$W/opensm.log" | sed 's/^/logged=/'
saquery -N | grep -c "NodeRecord dump" | sed 's/^/records=/'
ibemu ctl wait sm-up --json
# A replugged cable comes up Init; opensm's re-sweep (on its Trap 128)
# makes it Active, maybe before the next command runs: the wait holds
# until then.
ibemu ctl link down host2/1; ibemu ctl link up host2/1
ibemu ctl wait sm-up --timeout 30; echo "again=$?"
ibemu ctl port host2/1 | grep -o "state [A-Z]*" | sed 's/^/after /' 
ibemu ctl wait sm-up --timeout 0x; echo "bad=$?"
IN
W=$WORK ibemu_run -- bash "$WORK/in.sh"
cat "$WORK/log" >>"$WORK/out"
expect_line "nosm=1" "without an SM, wait sm-up fails"
expect_line "wait sm-up: not within 1 s (leaf1/1 is INIT)" "within its timeout, saying why"
expect_line "up=0" "with opensm it succeeds"
expect_line "logged=1" "after opensm has logged SUBNET UP"
expect_line "records=7" "and saquery answers at once"
expect_line '"sm_lid":1,"sm_node":"host1","sm_port":1' "--json names the SM's port"
expect_line "again=0" "wait sm-up waits for opensm's re-sweep"
expect_line "after state ACTIVE" "which made it Active"
expect_line "bad=1" "a bad --timeout"
expect_line 'error: --timeout is 0 to 86400, not "0x"' "is refused in one line"

ibemu_run --configured -- sh -c 'ibemu ctl wait active; ibemu ctl wait sm-up --timeout 1'
expect_line "14 ports Active" "--configured: wait active succeeds"
cp "$WORK/log" "$WORK/out"
expect_line "no port with LID" "and wait sm-up says no SM claims the SM LID"
finish
