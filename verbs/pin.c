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
 * process's own, so a copy that meets such a page must end without the
 * SIGSEGV that would kill the process: the copies are plain ones under a
 * guard, a SIGSEGV/SIGBUS handler that ends a copy of ours that faulted
 * (siglongjmp) and hands every other fault to the handler that was there
 * before (or to the default action, as if we were not there). What would
 * be written is dropped, what would be read is zeros. (The copies went
 * through process_vm_writev/readv on ourselves before, which say EFAULT
 * instead: two system calls a packet, and three quarters of the CPU of a
 * qperf rc_bw: 1.3 GB/s, 4.9 GB/s with the guard.) A program that puts
 * its own SIGSEGV handler in after ours gets such a fault itself.
 *
 * An on-demand (ODP) region pins nothing and is checked against nothing
 * at registration (ib_umem_odp_get): its pages are the process's as they
 * are at each access, which is what the copies here see anyway. An
 * access to a part of it that is not mapped then fails, as the HCA's
 * page fault would (ibemu_dma_range_mapped, from mr.c).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
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
	if (!length || (access & IBV_ACCESS_ON_DEMAND))
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

/* The copy of this thread that runs under the guard, or NULL. Static
 * TLS: read in the handler, where a dlopened library's lazily made TLS
 * block could call malloc (a thread's first look at it there). */
static __thread sigjmp_buf *dma_guard __attribute__((tls_model("initial-exec")));
static struct sigaction prev_segv, prev_bus;
static pthread_once_t guard_once = PTHREAD_ONCE_INIT;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	const struct sigaction *prev = sig == SIGBUS ? &prev_bus : &prev_segv;

	if (dma_guard)
		siglongjmp(*dma_guard, 1);
	/* Not ours: as if we were not there. */
	if (prev->sa_flags & SA_SIGINFO)
		prev->sa_sigaction(sig, si, uc);
	else if (prev->sa_handler == SIG_DFL || prev->sa_handler == SIG_IGN)
		sigaction(sig, prev, NULL);	/* the fault comes again, to it */
	else
		prev->sa_handler(sig);
}

static void guard_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	/* NODEFER and an empty mask: jumping out leaves the mask as it was,
	 * so sigsetjmp need not save it (a system call a copy). */
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &prev_segv);
	sigaction(SIGBUS, &sa, &prev_bus);
}

/* memcpy under the guard: false when a page faulted. */
static bool guarded_copy(void *dst, const void *src, size_t len)
{
	sigjmp_buf jb;

	pthread_once(&guard_once, guard_install);
	if (sigsetjmp(jb, 0)) {
		dma_guard = NULL;
		return false;
	}
	dma_guard = &jb;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);	/* set before the copy */
	memcpy(dst, src, len);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	dma_guard = NULL;
	return true;
}

void ibemu_dma_write(void *dst, const void *src, size_t len)
{
	if (len)
		(void)guarded_copy(dst, src, len);	/* a fault drops it */
}

void ibemu_dma_read(void *dst, const void *src, size_t len)
{
	if (len && !guarded_copy(dst, src, len))
		memset(dst, 0, len);
}

bool ibemu_dma_range_mapped(const void *p, size_t len)
{
	uintptr_t psz = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)p & ~(psz - 1), end = (uintptr_t)p + len;

	/* msync says ENOMEM for a range with a page not mapped, and does
	 * nothing else with MS_ASYNC: one system call, whatever the length. */
	return !len || end < start ||
	       msync((void *)start, end - start, MS_ASYNC) == 0 || errno != ENOMEM;
}

bool ibemu_dma_range_writable(const void *p, size_t len)
{
	return !len || mapped((uintptr_t)p, (uintptr_t)p + len, true);
}

bool ibemu_dma_mapped(const void *p, size_t len)
{
	uintptr_t psz = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)p & ~(psz - 1);
	unsigned char vec[2];

	/* An atomic's 8 aligned bytes are on one page. */
	return len <= psz && mincore((void *)start, psz, vec) == 0;
}
