/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: what a process can do to a umad device, as a sequence
 * of operations on two open files of host1's port 1 in a configured
 * fabric: REGISTER_AGENT(2) with any request, UNREGISTER, ENABLE_PKEY,
 * writes of any bytes and length (MADs, kernel-RMPP messages of many
 * segments, user-RMPP segments), reads of any size (ENOSPC included), time
 * passing (send timeouts, retries, RMPP), close and reopen. Sends that
 * loop back to the other file exercise the RMPP receiver. Each input
 * starts from a fresh fabric.
 *
 * Op byte: low 3 bits the operation, bit 3 the file; operands follow.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <glib.h>

#include "tests/fuzz/fuzz.h"

#include "fabric/configure.h"
#include "kernel/umad.h"
#include "kernel/umad_abi.h"
#include "lib/timerq.h"
#include "topologies/topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	uint64_t now = 1;
	struct fabric *f = topo_load_default(0);
	struct timerq *tq = timerq_new(fuzz_clock, &now);
	struct host *hw = host_new(f, tq);
	struct umad_host *h;
	struct umad_file *file[2];
	struct umad_dev *dev;
	static uint8_t buf[70000];
	unsigned ops = 0;

	host_attach(hw, fabric_find(f, "host1"));
	h = umad_host_new(hw);
	dev = umad_host_dev(h, 0);
	fabric_configure(f, umad_dev_port(dev));
	file[0] = umad_open(dev);
	file[1] = umad_open(dev);
	while (in.left && ops++ < 256) {
		uint8_t op;
		struct umad_file **fp;
		size_t out_len, n;

		fuzz_take(&in, &op, 1);
		fp = &file[(op >> 3) & 1];
		switch (op & 7) {
		case 0:
			fuzz_take(&in, buf, sizeof(struct umad_abi_reg_req));
			umad_ioctl(*fp, UMAD_IOC_REGISTER_AGENT, buf, &out_len);
			break;
		case 1:
			fuzz_take(&in, buf, sizeof(struct umad_abi_reg_req2));
			umad_ioctl(*fp, UMAD_IOC_REGISTER_AGENT2, buf, &out_len);
			break;
		case 2:
			fuzz_take(&in, buf, 4);
			umad_ioctl(*fp, op & 0x10 ? UMAD_IOC_UNREGISTER_AGENT : UMAD_IOC_ENABLE_PKEY,
				   buf, &out_len);
			break;
		case 3:	/* a write: a header and up to 64 KiB (RMPP) */
			n = fuzz_take16(&in);
			fuzz_take(&in, buf, n);
			umad_write(*fp, buf, n);
			break;
		case 4:
			umad_read(*fp, buf, fuzz_take16(&in) % sizeof(buf));
			break;
		case 5:	/* time passes: up to 25 s */
			fuzz_take(&in, buf, 1);
			now += (uint64_t)buf[0] * 100000;
			timerq_run(tq);
			break;
		case 6:
			umad_release(*fp);
			*fp = umad_open(dev);
			break;
		case 7:
			umad_issm_open(dev) == 0 ? (void)0 : umad_issm_close(dev);
			break;
		}
	}
	umad_release(file[0]);
	umad_release(file[1]);
	umad_host_free(h);
	host_free(hw);
	timerq_free(tq);
	fabric_free(f);
	return 0;
}
