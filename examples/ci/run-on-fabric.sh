#!/bin/bash
# Run a test command on an emulated fabric, the way a CI job wants it:
# optionally with opensm up first, and with what explains a failure kept in
# an artifacts directory: the emulator's event log (`ibemu ctl events`), a
# packet capture of the whole run (tshark/Wireshark), opensm's log.
#
#   IBEMU_RUN="make check" examples/ci/run-on-fabric.sh
#
# Environment (all but IBEMU_RUN optional):
#   IBEMU_RUN        the command, run by bash inside `ibemu run`
#   IBEMU_TOPOLOGY   a topology file (default: the built-in fabric)
#   IBEMU_ARGS       more `ibemu run` options, e.g. "--configured --seed 1234"
#   IBEMU_OPENSM     "true": start opensm and wait for SUBNET UP first
#   IBEMU_ROCE       "true": RoCE ports instead of InfiniBand (ibemu run
#                    --roce: what Soft-RoCE gives, with no SM to start)
#   IBEMU_ARTIFACTS  where the logs and capture go (default: ibemu-artifacts)
#   IBEMU            the ibemu binary (default: the one on PATH)
# Exit status: the command's.
set -u
: "${IBEMU_RUN:?IBEMU_RUN names the command to run}"
ART=$(mkdir -p "${IBEMU_ARTIFACTS:-ibemu-artifacts}" && cd "${IBEMU_ARTIFACTS:-ibemu-artifacts}" && pwd)
IBEMU=${IBEMU:-ibemu}
args=(--capture "$ART/fabric.pcap" --log "$ART/ibemu.log")
[ -z "${IBEMU_TOPOLOGY:-}" ] || args+=(--topology "$IBEMU_TOPOLOGY")
if [ "${IBEMU_ROCE:-false}" = true ]; then
	if [ "${IBEMU_OPENSM:-false}" = true ]; then
		echo "ibemu: roce and opensm: RoCE ports have no subnet manager; leave opensm out" >&2
		exit 2
	fi
	args+=(--roce)
fi
# shellcheck disable=SC2206 # IBEMU_ARGS is a list of options by design
args+=(${IBEMU_ARGS:-})

export ART IBEMU_RUN IBEMU_OPENSM="${IBEMU_OPENSM:-false}"
"$IBEMU" run "${args[@]}" -- bash -c '
	if [ "$IBEMU_OPENSM" = true ]; then
		mkdir -p "$ART/opensm"
		OSM_CACHE_DIR="$ART/opensm" opensm -f "$ART/opensm.log" -B >/dev/null
		ibemu ctl wait sm-up --timeout 120 || { ibemu ctl events >"$ART/events.txt"; exit 1; }
	fi
	bash -c "$IBEMU_RUN"
	rc=$?
	ibemu ctl events >"$ART/events.txt"
	exit $rc'
rc=$?
echo "ibemu: exit $rc; event log, capture and logs in $ART"
exit $rc
