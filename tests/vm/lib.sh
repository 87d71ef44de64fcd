# Shared by the scripts run inside the VM (cuse-tier.sh, cuse-remote.sh),
# sourced first: their arguments are IBEMU BUILDDIR SRCDIR; they run in a
# fresh directory $W.
set -u
IBEMU=$1 BIN=$2 SRC=$3
W=$(mktemp -d)
cd "$W" || exit 1

# wait_for SECONDS COMMAND...: until COMMAND succeeds, at most SECONDS.
wait_for() {
	local end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		timeout 0.2 tail -f /dev/null
	done
	return 0	# an until loop returns its body's last status
}

# What a daemon leaves behind: device nodes, mounts over /sys/class.
devices_and_mounts() {
	echo "devices: $(ls /dev/infiniband 2>/dev/null | tr '\n' ' ')"
	echo "mounts: $(grep -cE ' /sys/class(/| )' /proc/self/mountinfo)"
}
