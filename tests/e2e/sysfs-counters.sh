#!/bin/bash
# ports/N/counters/ as the kernel serves them (drivers/infiniband/core/
# sysfs.c, the extended set): every read is a PMA Get, so the files follow
# the traffic and what `ibemu ctl counters` injects, in the PMA's units
# (data in 4-byte words; 16-bit counters saturate at 65535). Prometheus'
# node_exporter infiniband collector (Debian's prometheus-node-exporter)
# reads them and reports ibemu's ports with the traffic the test made.
. "$(dirname "$0")/lib.sh"

NE=$(command -v prometheus-node-exporter || command -v node_exporter)
[ -n "$NE" ] || { fail "prometheus-node-exporter is not installed (./setup.sh --test)"; finish; exit 1; }

cat >"$WORK/run.sh" <<'SCRIPT'
W=$1 NE=$2
. "$INSIDE"
C=/sys/class/infiniband/ibemu0/ports/1/counters
echo "files $(ls $C | wc -l)"
echo "before $(cat $C/port_xmit_packets) $(cat $C/port_rcv_packets)"
for i in 1 2 3 4 5 6 7; do smpquery -D nodeinfo 0,1 >/dev/null; done
echo "after $(cat $C/port_xmit_packets) $(cat $C/port_rcv_packets) $(cat $C/unicast_xmit_packets)"
echo "words $(cat $C/port_xmit_data)"
perfquery -x 1 1 >/dev/null	# LID-routed to leaf1, out of port 1 as well
perfquery -x 3 1 | sed -n 's/^PortXmitData:\.*/pma-data /p; s/^PortXmitPkts:\.*/pma-pkts /p'
echo "sysfs-data $(cat $C/port_xmit_data)"
echo "sysfs-pkts $(cat $C/port_xmit_packets)"
ibemu ctl counters host1/1 set SymbolErrorCounter 70000 2>&1 | sed 's/^/too big: /'
ibemu ctl counters host1/1 set SymbolErrorCounter 65000 >/dev/null
ibemu ctl counters host1/1 bump SymbolErrorCounter 10000 >/dev/null
ibemu ctl counters host1/1 set LinkDownedCounter 3 >/dev/null
echo "symbol_error $(cat $C/symbol_error)"
echo "link_downed $(cat $C/link_downed)"
"$NE" --collector.disable-defaults --collector.infiniband \
	--web.listen-address=127.0.0.1:19100 >"$W/ne.log" 2>&1 &
ne=$!
scrape() { curl -sf http://127.0.0.1:19100/metrics >"$W/metrics"; }
n=0; until scrape || [ $n -ge 100 ]; do n=$((n + 1)); timeout 0.1 tail -f /dev/null; done
kill $ne; wait $ne
grep -E '^node_(infiniband|scrape_collector_success\{collector="infiniband)' "$W/metrics"
SCRIPT
PATH=$(dirname "$IBEMU"):$PATH ibemu_run --configured -- bash "$WORK/run.sh" "$WORK" "$NE"
expect_rc 0 "the run"
expect_line "files 21" "the 21 counter files of the kernel's extended set"
expect_line "before 0 0" "no traffic yet"
expect_line "after 7 7 7" "seven SMPs out and back through port 1"
pkts=$(sed -n 's/^sysfs-pkts //p' "$WORK/out")
data=$(sed -n 's/^sysfs-data //p' "$WORK/out")
if [ -n "$pkts" ] && [ "$pkts" = "$(sed -n 's/^pma-pkts //p' "$WORK/out")" ] &&
   [ "$data" = "$(sed -n 's/^pma-data //p' "$WORK/out")" ]; then
	pass "sysfs port_xmit_packets/data ($pkts, $data words) = perfquery -x"
else fail "sysfs and perfquery -x differ"; fi
expect_line "symbol_error 65535" "symbol_error saturates at 16 bits as PortCounters"
expect_line '"70000" is not SymbolErrorCounter (0 to 65535)' \
	"ctl counters set names a 16-bit counter's own range (issue #47)"
expect_line "link_downed 3" "injected link_downed shows"
expect_line 'node_scrape_collector_success{collector="infiniband"} 1' "node_exporter's infiniband collector succeeds"
expect_line "node_infiniband_port_packets_transmitted_total{device=\"ibemu0\",port=\"1\"} $pkts" "node_exporter: packets sent on ibemu0 port 1"
expect_line "node_infiniband_port_data_transmitted_bytes_total{device=\"ibemu0\",port=\"1\"} $((data * 4))" "node_exporter: bytes (4 x the words)"
expect_line 'node_infiniband_state_id{device="ibemu0",port="1"} 4' "node_exporter: port state Active"
expect_line 'node_infiniband_rate_bytes_per_second{device="ibemu0",port="1"} 5e+09' "node_exporter: 40 Gb/s"
expect_line 'node_infiniband_symbol_error_total{device="ibemu0",port="1"} 65535' "node_exporter: the injected errors"
finish
