# Helpers for test scripts that run *inside* `ibemu run` (sourced there):
# start opensm and wait, with a bound, for what it logs. $W is the test's
# work directory. No sleeps: every wait polls a condition for at most 30 s.

# log_count FILE PATTERN: how many lines of FILE match PATTERN (0 if none)
log_count() {
	local n
	n=$(grep -c "$2" "$1" 2>/dev/null)
	echo "${n:-0}"
}

# wait_until COMMAND...: until COMMAND (a function, too) succeeds,
# polled every 0.1 s, 30 s at most
wait_until() {
	local n=0
	until "$@" || [ $n -ge 300 ]; do
		n=$((n + 1))
		timeout 0.1 tail -f /dev/null
	done
}

# logged FILE PATTERN N: PATTERN appears N times or more
logged() {
	[ "$(log_count "$1" "$2")" -ge "$3" ]
}

# wait_log FILE PATTERN [N]: until PATTERN appears N (default 1) times
wait_log() {
	wait_until logged "$1" "$2" "${3:-1}"
}

# start_opensm [OPENSM ARGS...]: opensm logging to $W/opensm.log, its pid
# in $osm; returns once it has logged SUBNET UP.
start_opensm() {
	mkdir -p "$W/cache"
	OSM_CACHE_DIR=$W/cache opensm -d2 -f "$W/opensm.log" "$@" >/dev/null 2>&1 &
	osm=$!
	wait_log "$W/opensm.log" "SUBNET UP"
}

# wait_ups N: until opensm has logged SUBNET UP N times (re-sweeps)
wait_ups() {
	wait_log "$W/opensm.log" "SUBNET UP" "$1"
}

stop_opensm() {
	kill $osm
	wait $osm
}

# listening PORT: something listens on TCP PORT here
listening() {
	ss -ltn "sport = :$1" | grep -q LISTEN
}

# wait_listen PORT: until something listens on TCP PORT here
wait_listen() {
	wait_until listening "$1"
}

# pingpong PORT PROGRAM [ARGS...]: PROGRAM's server on ibemu1 and its
# client on ibemu0 (the ibverbs-utils pingpongs' -d, -p, host); prints
# "PROGRAM ARGS: client RC server RC" and each side's last line.
# The runs share the host's loopback, and `make -j` runs tests at once:
# each test has ports of its own (verbs-data 18600-18607, verbs 18608, many-hosts-verbs
# 18611-18612, capture 18621, rdma-link 18650-18651, bench/verbs-pingpong.sh 18701 on,
# sysfs-counters 19100). Two tests on one port connect to each other.
pingpong() {
	local port=$1 s rc src
	shift
	timeout 60 "$@" -d ibemu1 -p "$port" >"$W/pp.srv" 2>&1 &
	s=$!
	wait_listen "$port"
	timeout 60 "$@" -d ibemu0 -p "$port" localhost >"$W/pp.cli" 2>&1
	rc=$?
	wait $s
	src=$?
	echo "$*: client $rc server $src"
	echo "  client: $(tail -1 "$W/pp.cli")"
	echo "  server: $(tail -1 "$W/pp.srv")"
}

# cm_listening PORT: an rdma_cm id listens on PORT, as `ibemu ctl status` says
cm_listening() {
	ibemu ctl status | grep -q "^ *rdma_cm: listening on .*:$1 "
}
cm_not_listening() { ! cm_listening "$1"; }

# perftest_cm NAME PORT SERVER_DEV CLIENT_DEV DEST TOOL [ARGS...]: a
# perftest TOOL -R server on SERVER_DEV and its client on CLIENT_DEV to
# DEST; the client's output in $W/NAME.out, the server's in
# $W/NAME-server.out, their statuses in pt_client and pt_server.
# perftest 4.5-0.17's server listens twice, for a control connection and
# then for the data QPs', with no listener between: a data REQ that comes
# then is rejected (IBA reason 8, as by a kernel) and the client crashes
# retrying with the id it has just destroyed (perftest fixed both in
# 3d9d8d0, 2025-12). So a try whose client fails ends its server and
# starts both again, 5 times at most (-F as perftest.sh says); callers
# also delay CM REQs with a fault rule, as a client a few hops away would
# see them, which leaves the server its time to listen again.
perftest_cm() {
	local name=$1 port=$2 sdev=$3 cdev=$4 dest=$5 tool=$6 n s
	shift 6
	for n in 1 2 3 4 5; do
		timeout 60 "$tool" -R -F -d "$sdev" -p "$port" "$@" >"$W/$name-server.out" 2>&1 &
		s=$!
		wait_until cm_listening "$port"
		timeout 30 "$tool" -R -F -d "$cdev" -p "$port" "$@" "$dest" >"$W/$name.out" 2>&1
		pt_client=$?
		if [ $pt_client -eq 0 ]; then
			wait $s
			pt_server=$?
			break
		fi
		kill $s 2>/dev/null
		wait $s 2>/dev/null
		pt_server=$?
		wait_until cm_not_listening "$port"
	done
}

# fi_pingpong_pair NAME ADDR ARGS...: fi_pingpong ARGS as a server here
# and as a client to ADDR, started again while the server's control port
# (TCP) refuses, 50 times at most; sets fi_client and fi_server to their
# statuses. Output in $W/NAME-[cs].out.
fi_pingpong_pair() {
	local name=$1 addr=$2 s n=0
	shift 2
	timeout 100 fi_pingpong "$@" >"$W/$name-s.out" 2>&1 &
	s=$!
	while :; do
		timeout 100 fi_pingpong "$@" "$addr" >"$W/$name-c.out" 2>&1
		fi_client=$?
		[ $fi_client -ne 0 ] && grep -q "Connection refused" "$W/$name-c.out" && [ $n -lt 50 ] || break
		n=$((n + 1)); timeout 0.1 tail -f /dev/null
	done
	wait $s
	fi_server=$?
}

# iperf3_to HOST ADDR: iperf3 from here to a server run on HOST (one
# test, 8 MiB), at ADDR; prints "iperf3: status N" and
# "iperf3 receiver: RATE UNIT". Output in $W/iperf-[cs].out.
iperf3_to() {
	local s
	ssh "$1" iperf3 -s -1 >"$W/iperf-s.out" 2>&1 &
	s=$!
	iperf3_up() { ssh "$1" ss -ltn "sport = :5201" | grep -q LISTEN; }
	wait_until iperf3_up "$1"
	# 8 MiB, not a time: a second of a fast run's segments made an
	# 87 MB capture that tshark read for more than 14 minutes.
	iperf3 -c "$2" -n 8M -f m >"$W/iperf-c.out" 2>&1
	echo "iperf3: status $?"
	wait $s
	awk '/receiver/ {print "iperf3 receiver: " $(NF-2) " " $(NF-1)}' "$W/iperf-c.out"
}
