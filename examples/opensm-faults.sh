#!/bin/bash
# opensm on the default fabric, then a pulled cable, a powered-off node and
# injected error counters, and how the SM and the diags see them.
#   ibemu run -- examples/opensm-faults.sh
set -eu
W=$(mktemp -d)
# How many sweeps opensm has finished (its log, flushed by -d2; 0 before
# the log exists), and a wait of at most 30 s for the Nth.
ups() { cat "$W/opensm.log" 2>/dev/null | grep -c "SUBNET UP" || true; }
wait_ups() { n=0; until [ "$(ups)" -ge "$1" ] || [ $n -ge 300 ]; do n=$((n + 1)); timeout 0.1 tail -f /dev/null || true; done; }

OSM_CACHE_DIR=$W opensm -d2 -f "$W/opensm.log" >/dev/null 2>&1 &
osm=$!
ibemu ctl wait sm-up
echo "== SUBNET UP: $(saquery | grep -c 'NodeRecord dump') NodeRecords"
ibemu ctl link down leaf1/2; wait_ups 2
echo "== cable out: $(saquery | grep -c 'NodeRecord dump') NodeRecords"
ibemu ctl link up leaf1/2; wait_ups 3
echo "== cable back: $(saquery | grep -c 'NodeRecord dump') NodeRecords"
ibemu ctl counters leaf2/7 set SymbolErrorCounter 500
ibqueryerrors | grep -A1 "leaf switch 2" || true
ibemu ctl events
kill $osm; wait $osm || true
rm -rf "$W"
