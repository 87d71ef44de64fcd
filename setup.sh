#!/bin/sh
# Install what ibemu needs from Debian 12 (bookworm) packages and build it.
# Safe to run again. Needs root or sudo for apt-get.
set -eu
cd "$(dirname "$0")"

PKGS="build-essential autoconf automake libtool pkg-config \
libglib2.0-dev libjson-glib-dev libfuse3-dev fuse3 libibumad-dev libibmad-dev libibverbs-dev libcmocka-dev \
infiniband-diags opensm ibverbs-utils ibsim-utils libumad2sim0 python3 valgrind graphviz man-db \
qemu-system-x86 busybox-static cpio kmod xz-utils systemd clang \
prometheus-node-exporter curl iproute2"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	echo "setup: installing:$missing"
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

# The CUSE tier boots Debian's kernel in qemu: fetch and unpack it once
# (into /var/cache/ibemu-vm; nothing is installed on the host).
tests/vm/setup-vm --prepare

[ -x configure ] || autoreconf -fi
[ -f Makefile ] || ./configure -q
make -j"$(nproc)" -s
