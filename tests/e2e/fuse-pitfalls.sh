#!/bin/bash
# The FUSE pitfalls of fuse-notes.md, on real fds inside `ibemu run`:
# - FOPEN_STREAM: a write() on an fd whose other thread is blocked in read()
#   returns at once (without it, it waits behind the read's f_pos_lock);
# - a blocking read is completed later by the packet (the ETIMEDOUT report);
# - FUSE_INTERRUPT: a client SIGKILLed while blocked in read() dies at once.
. "$(dirname "$0")/lib.sh"

ibemu_run -- timeout 10 "$TOOLS/umad_block" stream
expect_rc 0 "stream test ran"
ms=$(sed -n 's/^write_ms=\([0-9]*\)/\1/p' "$WORK/out")
if [ -n "$ms" ] && [ "$ms" -lt 250 ]; then pass "write beside a blocked read returns at once ($ms ms)"; else fail "write waited ${ms} ms"; fi
expect_line "read_len=88 status=110" "the blocked read gets the ETIMEDOUT report"

ibemu_run -- timeout 10 "$TOOLS/umad_block" kill
expect_rc 0 "kill test ran"
expect_line "reaped killed=1" "a client killed in read() is reaped"
finish
