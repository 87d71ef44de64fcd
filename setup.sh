#!/bin/sh
# Install what ibemu needs from the distribution's packages and build it.
#
#   ./setup.sh          build and run: the compiler, the libraries, fuse3,
#                       and the tools the README's first command runs
#                       (infiniband-diags, opensm, ibverbs-utils)
#   ./setup.sh --test   also what `make check` needs: cmocka, valgrind,
#                       clang (fuzzers), ibsim (comparisons), qemu and the
#                       VM kernel (CUSE tier), tshark, node_exporter, ...
#
# Debian 12, Ubuntu 22.04 and 24.04 (libfuse 3.10 and GLib 2.72 or newer
# are needed). Safe to run
# again: it installs only what is missing. Needs root or sudo for apt-get.
set -eu
cd "$(dirname "$0")"

TEST=
case "${1:-}" in
--test) TEST=1 ;;
"") ;;
*) echo "usage: ./setup.sh [--test]" >&2; exit 2 ;;
esac

# Which distribution: the package names below are the same on Debian 12
# and Ubuntu 22.04 and 24.04; the VM kernel is Debian's (tests/vm/setup-vm).
ID=unknown VERSION_ID=
[ -r /etc/os-release ] && . /etc/os-release
case "$ID:$VERSION_ID" in
debian:*|ubuntu:2[2-9].*) ;;
ubuntu:*)
	echo "setup: Ubuntu $VERSION_ID has libfuse $(apt-cache policy libfuse3-dev 2>/dev/null | awk '/Candidate/ { print $2 }'); ibemu needs 3.10 or newer (Ubuntu 22.04, Debian 12)" >&2
	exit 1 ;;
*) echo "setup: $ID $VERSION_ID is not Debian or Ubuntu: install the packages named in setup.sh by hand" >&2 ;;
esac

PKGS="build-essential autoconf automake libtool pkg-config \
libglib2.0-dev libjson-glib-dev libfuse3-dev fuse3 libibumad-dev libibmad-dev libibverbs-dev \
librdmacm-dev \
infiniband-diags opensm ibverbs-utils iproute2"
# The suite: unit tests and the memory checker, the fuzzers, the tools
# tests and benchmarks compare with or run (ibsim, python3, graphviz, man,
# node_exporter, curl, tshark; rdmacm-utils, perftest, qperf, ucx-utils
# and libfabric-bin for the connection manager and verbs), the CUSE tier's VM (qemu, busybox,
# cpio, kmod, xz; systemd for the unit file check), and the Debian
# package's build and lintian (.ci/run: debian/build-and-test), and
# OpenSSH, client and server, for the many-hosts test over ssh; strace
# to count the provider's system calls (verbs.sh); ibacm, whose multicast
# queries multicast.sh runs; Open MPI and MPICH with their compilers for
# the virtual cluster's MPI jobs (mpi.sh); tgt's iSER target and
# libiscsi's iSER initiator (iser.sh); mstflint's in-band query
# (lid-routed-diags.sh); librpma, whose remote write roce-hosts.sh runs;
# ping and iperf3 over IPoIB on the wire (ipoib-wire.sh).
TEST_PKGS="libcmocka-dev valgrind clang python3 python3-yaml graphviz man-db \
ibsim-utils libumad2sim0 prometheus-node-exporter curl tshark rdmacm-utils perftest qperf ucx-utils libfabric-bin ibacm \
openmpi-bin libopenmpi-dev mpich libmpich-dev \
qemu-system-x86 busybox-static cpio kmod xz-utils systemd \
debhelper lintian fakeroot git openssh-client openssh-server strace \
tgt libiscsi-bin mstflint librpma-dev iputils-ping iperf3"
[ -z "$TEST" ] || PKGS="$PKGS $TEST_PKGS"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	echo "setup: installing:$missing"
	$SUDO apt-get update -qq
	# tshark asks whether non-root users may capture: the default (no).
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# The CUSE tier boots Debian's kernel in qemu: fetch and unpack it once
# (into /var/cache/ibemu-vm; nothing is installed on the host).
if [ -n "$TEST" ]; then
	tests/vm/setup-vm --prepare || echo "setup: no VM kernel: the CUSE tier (tests/e2e/cuse-vm.sh) will say why and skip" >&2
fi

[ -x configure ] || autoreconf -fi
if [ ! -f Makefile ]; then
	./configure -q
elif [ -n "$missing" ] ||
     { pkg-config --exists cmocka && grep -q "^HAVE_CMOCKA_TRUE='#'" config.log; }; then
	# What was installed may change what configure finds (cmocka for
	# the unit tests): configure again, with the options it had.
	echo "setup: configuring again for what was installed"
	./config.status --recheck >/dev/null && ./config.status >/dev/null
fi
make -j"$(nproc)" -s
