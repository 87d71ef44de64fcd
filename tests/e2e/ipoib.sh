#!/bin/bash
# `ibemu run` (--ipoib, the default): a network of the run's own with an interface per HCA
# port carrying the port's address (ns/ipoib.h), so that libfabric's verbs
# provider, which finds RDMA devices through interfaces, sees the emulated
# HCAs: fi_info lists MSG endpoints, verbs;ofi_rxm takes an address, and
# fi_pingpong's RDM endpoints move verified data between two HCAs.
. "$(dirname "$0")/lib.sh"

RUN=(--configured --attach host1 --attach host2)

# The interfaces: host1's two ports, then host2's, with the default plan's
# addresses (10.PORT.0.NODE) and fe80::GUID; IPoIB's MTU; /sys/class/net
# shows the run's interfaces, not the machine's.
ibemu_run --ipoib "${RUN[@]}" -- sh -c 'ip -br addr; ls /sys/class/net | tr "\n" " "; echo; cat /sys/class/net/ib0/mtu'
expect_rc 0 "ibemu run --ipoib"
expect_match "^ib0 +[A-Z]+ +10\.1\.0\.3/16 fe80::2:c903:0:101/64 *$" "ib0: host1 port 1's addresses"
expect_match "^ib1 +[A-Z]+ +10\.2\.0\.3/16 fe80::2:c903:0:102/64 *$" "ib1: host1 port 2's"
expect_match "^ib2 +[A-Z]+ +10\.1\.0\.4/16 fe80::2:c903:0:104/64 *$" "ib2: host2 port 1's"
expect_line "ib0 ib1 ib2 lo " "/sys/class/net is the run's"
expect_line "2044" "IPoIB's datagram MTU"

# Each HCA's netdevs as rdma-core's tests find them (base.py get_net_name:
# device/net/<if>/dev_port, the port less one), the PCI ids of a
# ConnectX, and the GID attributes of an IB port (issue #49).
cat >"$WORK/netdevs.sh" <<'EOF'
for d in ibemu0 ibemu1; do
	for n in $(ls /sys/class/infiniband/$d/device/net); do
		echo "$d $n port $(($(cat /sys/class/infiniband/$d/device/net/$n/dev_port) + 1))"
	done
	echo "$d pci $(cat /sys/class/infiniband/$d/device/vendor) $(cat /sys/class/infiniband/$d/device/device) $(cat /sys/class/infiniband/$d/device/class)"
done
P=/sys/class/infiniband/ibemu0/ports/1/gid_attrs
echo "type 0: $(cat $P/types/0 2>&1)"
echo "type 1: $(cat $P/types/1 2>&1 | sed 's/.*: //')"
echo "ndev 0: $(cat $P/ndevs/0 2>&1 | sed 's/.*: //')"
EOF
ibemu_run "${RUN[@]}" -- sh "$WORK/netdevs.sh"
expect_rc 0 "the netdevs of each HCA"
expect_line "ibemu0 ib0 port 1" "ibemu0's device/net: ib0 is port 1"
expect_line "ibemu0 ib1 port 2" "and ib1 port 2"
expect_line "ibemu1 ib2 port 1" "ibemu1's: ib2 is its port 1"
expect_match "^ibemu0 pci 0x15b3 0x[0-9a-f]{4} 0x020700$" "device/: Mellanox's PCI vendor, an InfiniBand controller"
expect_line "type 0: IB/RoCE v1" "gid_attrs/types/0 of an IB port"
expect_line "type 1: Invalid argument" "an empty GID entry's type: EINVAL"
expect_line "ndev 0: Invalid argument" "an IB GID has no netdev: EINVAL"
ibemu_run --host-network "${RUN[@]}" -- sh -c 'ls /sys/class/infiniband/ibemu0/device/net 2>&1 | sed "s/^/host-network: /"'
expect_match "^host-network: .*No such file or directory" "--host-network: no device/net (no interface of ours)"

# The default is the same network; --host-network shares the machine's.
ibemu_run "${RUN[@]}" -- sh -c 'ls /sys/class/net | tr "\n" " "; echo'
expect_rc 0 "ibemu run"
expect_line "ib0 ib1 ib2 lo " "the run's own interfaces by default"
ibemu_run --host-network "${RUN[@]}" -- sh -c 'ls /sys/class/net | tr "\n" " "; echo'
expect_rc 0 "ibemu run --host-network"
expect_line "$(ls /sys/class/net | tr '\n' ' ')" "the machine's interfaces with --host-network"

# libfabric's verbs provider maps each interface address to its HCA with
# rdma_bind_addr (vrb_getifaddrs) and says so in its log; with
# --host-network it finds none. MSG endpoints and verbs;ofi_rxm given an address.
cat >"$WORK/fi.sh" <<'EOF'
FI_LOG_LEVEL=info fi_info -p verbs 2>&1 | sed -n 's/.*verbs_devs_print():[0-9]*<info> *//p' | tr -d '\t'
fi_info -p verbs | grep -E "domain|type" | paste - - | sed 's/[[:space:]]\+/ /g'
echo "rxm: $(fi_info -p 'verbs;ofi_rxm' -s 10.1.0.4 | awk '/domain:/ { print $2 }' | sort -u)"
EOF
ibemu_run --host-network "${RUN[@]}" -- sh "$WORK/fi.sh"
expect_no_line "#1 ibemu0 - IPoIB addresses:" "no IPoIB address with --host-network"
ibemu_run --ipoib "${RUN[@]}" -- sh "$WORK/fi.sh"
expect_rc 0 "fi_info with --ipoib"
expect_line "#1 ibemu0 - IPoIB addresses:" "libfabric finds ibemu0's interfaces"
expect_line "10.2.0.3" "host1 port 2's address is ibemu0's"
expect_line "#2 ibemu1 - IPoIB addresses:" "libfabric finds ibemu1's interfaces"
expect_line " domain: ibemu0 type: FI_EP_MSG" "fi_info: a MSG endpoint on ibemu0"
expect_line " domain: ibemu1 type: FI_EP_MSG" "fi_info: a MSG endpoint on ibemu1"
expect_line "rxm: ibemu1" "verbs;ofi_rxm at 10.1.0.4 is host2's HCA"

# fi_pingpong over RDM endpoints (verbs;ofi_rxd on UD QPs), every size,
# data checked (-c); its control connection is TCP to ib0's address.
cat >"$WORK/pp.sh" <<'EOF'
. "$INSIDE"
fi_pingpong_pair fi 10.1.0.3 -p verbs -e rdm -c -I 10 -S all
echo "client: $fi_client"
echo "server: $fi_server"
grep -E "^(1|4k|64k|1m) " "$W/fi-c.out" | awk '{ print "size", $1, "sent", $2, "acked", $3 }'
EOF
ibemu_run --ipoib "${RUN[@]}" -- env W="$WORK" bash "$WORK/pp.sh"
expect_line "client: 0" "fi_pingpong -e rdm client"
expect_line "server: 0" "fi_pingpong -e rdm server"
expect_line "size 1 sent 10 acked =10" "1 byte, 10 round trips"
expect_line "size 1m sent 10 acked =10" "1 MiB, 10 round trips, data checked"

# ibemu exec joins the run's network too.
NAME="e2e-ipoib-$$"
"$IBEMU" run --ipoib --name "$NAME" "${RUN[@]}" -- bash -c "
	n=0; until [ -e '$WORK/done' ] || [ \$n -ge 600 ]; do n=\$((n + 1)); timeout 0.1 tail -f /dev/null; done" \
	>"$WORK/run.out" 2>&1 &
BG=$!
trap 'touch "$WORK/done"; wait $BG; rm -rf "$WORK"' EXIT
# Until the run answers (its ctl socket is there once it is up).
if ! wait_for 60 "$IBEMU" ctl --name "$NAME" status >/dev/null 2>&1; then
	fail "the --ipoib run did not answer in 60 s: $(cat "$WORK/run.out")"
fi
"$IBEMU" exec --name "$NAME" -- ip -br addr >"$WORK/out" 2>&1
RC=$?
[ $RC = 0 ] || { echo "---- the run's output ----"; cat "$WORK/run.out"; }
expect_rc 0 "ibemu exec into a --ipoib run"
expect_match "^ib2 +[A-Z]+ +10\.1\.0\.4/16" "ibemu exec sees the run's interfaces"
touch "$WORK/done"

# --remote hosts have no fabric here to take addresses from.
timeout 20 "$IBEMU" run --remote unix:/nonexistent --ipoib --attach host2 -- true >"$WORK/out" 2>&1
RC=$?
expect_rc 2 "--ipoib with --remote is refused"
finish
