/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the stream `--remote ssh://` carries (lib/mux_wire.h,
 * socket/mux.c), as the far side of ssh could send it: frames of any kind,
 * channel, length and fd kind (memfds of any length, new channels, far
 * ends of channels), acknowledgements, closes, on either side (byte 0:
 * the owner's, bit 0). The stream is read from a memfd holding the rest
 * of the input; what the mux writes goes to /dev/null; channel 0 is a
 * socketpair whose far end nobody reads. Each input runs mux_run to the
 * stream's end; an fd left open after it is a finding.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib.h>

#include "tests/fuzz/fuzz.h"

#include "lib/fds.h"
#include "socket/mux.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned before = fds_open();
	int in, out, sv[2];

	if (!size)
		return 0;
	in = memfd_create("fuzz-stream", MFD_CLOEXEC);
	out = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (in < 0 || out < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 ||
	    write(in, data + 1, size - 1) != (ssize_t)(size - 1) || lseek(in, 0, SEEK_SET) < 0)
		abort();
	mux_run(in, out, sv[0], data[0] & 1);	/* closes sv[0] */
	close(sv[1]);
	close(in);
	close(out);
	if (fds_open() != before) {
		fprintf(stderr, "fuzz_mux: %u fds open before, %u after: a leak\n", before,
			fds_open());
		abort();
	}
	return 0;
}
