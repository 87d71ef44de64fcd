/* SPDX-License-Identifier: MIT */
/*
 * What the kernel checks when it pins a region's pages for ibv_reg_mr
 * (drivers/infiniband/core/umem.c ib_umem_get): every page mapped, and
 * writable if the region may be written (FOLL_WRITE), else EFAULT; and the
 * process's pinned pages within RLIMIT_MEMLOCK unless it has CAP_IPC_LOCK
 * in the initial user namespace (capable()), else ENOMEM. The count is the
 * process's, across its contexts, as the kernel's mm->pinned_vm.
 *
 * And what pinned pages do for the HCA's DMA: a page its owner unmaps (or
 * write-protects) after registering stays pinned, and the HCA still writes
 * to it or reads from it, unseen by the process. Here the pages are the
 * process's own, so the copies go through process_vm_writev/readv on
 * ourselves, which say EFAULT where memcpy would raise SIGSEGV in the
 * provider's thread: what would be written is dropped, what would be read
 * is zeros.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>

#include "verbs/provider.h"

static pthread_mutex_t pin_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t pinned_pages;	/* under pin_lock */

/* Whether every byte of [start, end) is mapped readable (and writable if
 * @write), by /proc/self/maps. */
static bool mapped(uintptr_t start, uintptr_t end, bool write)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512], perms[8];
	uintptr_t lo, hi, at = start;

	if (!f)
		return true;	/* no /proc: nothing to check against */
	while (at < end && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s", &lo, &hi, perms) != 3)
			continue;
		if (hi <= at)
			continue;
		if (lo > at || perms[0] != 'r' || (write && perms[1] != 'w'))
			break;	/* a hole, or a page it may not use */
		at = hi;
	}
	fclose(f);
	return at >= end;
}

/* CAP_IPC_LOCK where the kernel's capable() looks: the initial user
 * namespace (in `ibemu run`'s own, root has every capability but that). */
static bool ipc_lock_capable(void)
{
	char line[256];
	unsigned long long eff = 0;
	unsigned a, b, c;
	bool init_ns = false;
	FILE *f = fopen("/proc/self/uid_map", "re");

	if (f) {
		init_ns = fgets(line, sizeof(line), f) && sscanf(line, "%u %u %u", &a, &b, &c) == 3 &&
			  a == 0 && b == 0 && c == 4294967295u;
		fclose(f);
	}
	if (!init_ns || !(f = fopen("/proc/self/status", "re")))
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return eff & (1ull << 14);	/* CAP_IPC_LOCK */
}

int ibemu_pin(void *addr, size_t length, int access, uint64_t *pages)
{
	uintptr_t psz = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)addr & ~(psz - 1);
	uintptr_t end = ((uintptr_t)addr + length + psz - 1) & ~(psz - 1);
	bool write = access & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			       IBV_ACCESS_REMOTE_ATOMIC);
	struct rlimit rl;
	int ret = 0;

	*pages = 0;
	if (!length)
		return 0;
	if ((uintptr_t)addr + length < (uintptr_t)addr || !mapped(start, end, write))
		return EFAULT;
	*pages = (end - start) / psz;
	pthread_mutex_lock(&pin_lock);
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    pinned_pages + *pages > rl.rlim_cur / psz && !ipc_lock_capable())
		ret = ENOMEM;
	else
		pinned_pages += *pages;
	pthread_mutex_unlock(&pin_lock);
	if (ret)
		*pages = 0;
	return ret;
}

void ibemu_unpin(uint64_t pages)
{
	pthread_mutex_lock(&pin_lock);
	pinned_pages -= pages;
	pthread_mutex_unlock(&pin_lock);
}

/* Where the system call is refused (a seccomp profile without it: ENOSYS,
 * EPERM), the copy is a plain one: the data must not be lost for it. */
void ibemu_dma_write(void *dst, const void *src, size_t len)
{
	struct iovec from = { (void *)src, len }, to = { dst, len };

	if (len && process_vm_writev(getpid(), &from, 1, &to, 1, 0) < 0 && errno != EFAULT)
		memcpy(dst, src, len);
}

void ibemu_dma_read(void *dst, const void *src, size_t len)
{
	struct iovec from = { (void *)src, len }, to = { dst, len };
	ssize_t n = len ? process_vm_readv(getpid(), &to, 1, &from, 1, 0) : 0;

	if (n < 0 && errno != EFAULT) {
		memcpy(dst, src, len);
		return;
	}
	if (n < (ssize_t)len)
		memset((char *)dst + (n > 0 ? n : 0), 0, len - (size_t)(n > 0 ? n : 0));
}

bool ibemu_dma_mapped(const void *p, size_t len)
{
	uintptr_t psz = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)p & ~(psz - 1);
	unsigned char vec[2];

	/* An atomic's 8 aligned bytes are on one page. */
	return len <= psz && mincore((void *)start, psz, vec) == 0;
}
