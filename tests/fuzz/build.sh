#!/bin/bash
# build.sh SRCDIR BUILDDIR OUTDIR: the libFuzzer targets, built with clang,
# ASan and UBSan from the emulator's sources (everything but the FUSE/CUSE
# front-ends, which fuzz_umad reaches through kernel/umad.c's API; the
# fast socket's server and the sysfs it lists, for fuzz_fast; the stream
# carrier of --remote ssh://, for fuzz_mux).
# Skips the work when OUTDIR's binaries are newer than every source.
set -eu
SRC=$(cd "$1" && pwd) BUILD=$(cd "$2" && pwd) OUT=$3
CC=${FUZZ_CC:-clang}
TARGETS="topo mad umad ctl fast verbs mux ucma inbox"
command -v "$CC" >/dev/null || { echo "build.sh: $CC not found (apt-get install clang)" >&2; exit 1; }
mkdir -p "$OUT/obj"
OUT=$(cd "$OUT" && pwd)
SOURCES=$(cd "$SRC" && ls lib/*.c fabric/*.c topologies/*.c kernel/*.c ctl/*.c)
FAST_SOURCES="socket/fastpath.c socket/fastpath_file.c socket/fastpath_slots.c socket/fastpath_host.c socket/fastpath_link.c socket/fastpath_verbs.c socket/fastslot.c dev/vfs.c dev/serve.c
dev/sysfs.c dev/sysfs_verbs.c"
MUX_SOURCES="socket/mux.c"

fresh=yes
for t in $TARGETS; do [ -x "$OUT/fuzz_$t" ] || fresh=no; done
if [ $fresh = yes ] && [ -z "$(cd "$SRC" && find abi lib fabric topologies kernel ctl dev socket tests/fuzz \
	-newer "$OUT/fuzz_topo" \( -name '*.[ch]' -o -name '*.net' \) | head -1)" ]; then
	exit 0
fi

FLAGS="-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"
CPP="-I$SRC -I$BUILD -DFUSE_USE_VERSION=35 -DTOPO_DEFAULT_FILE=\"$SRC/topologies/default.net\"
$(pkg-config --cflags glib-2.0 json-glib-1.0 libibumad libibmad fuse3)"
LIBS="$(pkg-config --libs json-glib-1.0 glib-2.0 libibmad libibumad)"
objs="" fast_objs="" mux_objs=""
for s in $SOURCES $FAST_SOURCES $MUX_SOURCES; do
	o="$OUT/obj/$(echo "$s" | tr / _).o"
	# shellcheck disable=SC2086
	"$CC" $FLAGS -fsanitize=fuzzer-no-link $CPP -c "$SRC/$s" -o "$o" &
	case $s in socket/mux.c) mux_objs="$mux_objs $o" ;; socket/* | dev/*) fast_objs="$fast_objs $o" ;;
	*) objs="$objs $o" ;; esac
	[ "$(jobs -r | wc -l)" -lt "$(nproc)" ] || wait -n
done
wait
for t in $TARGETS; do
	more="" extra=""
	[ $t = fast ] && more=$fast_objs extra="$(pkg-config --libs fuse3)"
	[ $t = mux ] && more=$mux_objs
	# shellcheck disable=SC2086
	"$CC" $FLAGS -fsanitize=fuzzer $CPP "$SRC/tests/fuzz/fuzz_$t.c" $objs $more $LIBS $extra \
		-o "$OUT/fuzz_$t"
done
