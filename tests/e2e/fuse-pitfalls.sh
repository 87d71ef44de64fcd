#!/bin/bash
# The FUSE pitfalls of docs/fuse-cuse.md ("What the core does about each
# difference"), on real fds inside `ibemu run`:
# - FOPEN_STREAM: a write() on an fd whose other thread is blocked in read()
#   returns at once (without it, it waits behind the read's f_pos_lock);
# - a blocking read is completed later by the packet (the ETIMEDOUT report);
# - FUSE_INTERRUPT: a client SIGKILLed while blocked in read() dies at once;
# - the calls the kernel answers before any driver answer as it does:
#   ftruncate and truncate EINVAL (was ENOSYS), O_TRUNC opens, lseek
#   ESPIPE, MAP_SHARED ENODEV; and the three the FUSE kernel answers
#   itself, differently from ib_umad (README, Robustness): a write of 0
#   bytes returns 0, an unknown ioctl with a NULL argument EFAULT,
#   MAP_PRIVATE maps (the fast path answers these as the kernel:
#   fast-preload.sh).
. "$(dirname "$0")/lib.sh"

ibemu_run -- timeout 10 "$TOOLS/umad_block" stream
expect_rc 0 "stream test ran"
ms=$(sed -n 's/^write_ms=\([0-9]*\)/\1/p' "$WORK/out")
if [ -n "$ms" ] && [ "$ms" -lt 250 ]; then pass "write beside a blocked read returns at once ($ms ms)"; else fail "write waited ${ms} ms"; fi
expect_line "read_len=88 status=110" "the blocked read gets the ETIMEDOUT report"

ibemu_run -- timeout 10 "$TOOLS/umad_block" kill
expect_rc 0 "kill test ran"
expect_line "reaped killed=1" "a client killed in read() is reaped"

ibemu_run -- python3 -c '
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
dev = "/dev/infiniband/umad0"
fd = os.open(dev, os.O_RDWR)
def err(name, f):
    try:
        f(); print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
err("ftruncate", lambda: os.ftruncate(fd, 0))
err("truncate", lambda: os.truncate(dev, 0))
err("open-trunc", lambda: os.close(os.open(dev, os.O_WRONLY | os.O_TRUNC)))
err("lseek", lambda: os.lseek(fd, 0, os.SEEK_SET))
p = libc.mmap(None, 4096, 1, 1, fd, 0)
print("mmap-shared", errno.errorcode[ctypes.get_errno()] if p == 2**64 - 1 else "mapped")'
expect_line "ftruncate EINVAL" "ftruncate: EINVAL as on a character device"
expect_line "truncate EINVAL" "truncate: EINVAL"
expect_line "open-trunc ok" "an O_TRUNC open succeeds (ignored on a device)"
expect_line "lseek ESPIPE" "lseek: ESPIPE"
expect_line "mmap-shared ENODEV" "MAP_SHARED: ENODEV"

# The FUSE kernel's own answers, pinned so that the README's list stays
# true (a change of kernel that fixes one shows here).
ibemu_run --no-fast-path -- "$TOOLS/umad_paths" calls
expect_line "calls: write0 ok 0" "FUSE: a zero-byte write returns 0 (ib_umad: EINVAL)"
expect_line "calls: ioctl-null EFAULT" "FUSE: an unknown ioctl with a NULL argument: EFAULT (ib_umad: ENOTTY)"
expect_line "calls: mmap-private ok 0" "FUSE: MAP_PRIVATE maps (ib_umad: ENODEV)"
expect_line "calls: lseek ESPIPE" "FUSE: lseek ESPIPE"
finish
