/* SPDX-License-Identifier: MIT */
/*
 * rdma_cm in namespace mode (docs/rdmacm.md "Namespace mode",
 * abi/ucma_wire.h). librdmacm has no provider interface: it opens
 * /dev/infiniband/rdma_cm, checks that it is a character device and
 * writes its commands there, and the kernel answers by writing into the
 * caller's memory. Namespace mode has no character device of ours, so
 * when this provider is loaded into a process that has librdmacm
 * (librdmacm loads the providers in ucma_init, before it opens the
 * device) it puts itself in front of librdmacm's own calls to open,
 * fstat, write and close: their entries in librdmacm's GOT, nobody
 * else's. The fd librdmacm gets is the daemon's command file, so poll
 * and epoll on it work natively; a command becomes one UCMA_IOC_CMD and
 * its answer is written where the kernel would write it.
 *
 * Nothing is done when the daemon serves no such file (CUSE mode, where
 * the device is real) or librdmacm is not in the process.
 */
#define _GNU_SOURCE
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/param.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include <rdma/rdma_user_cm.h>

#include "abi/ucma_wire.h"
#include "verbs/provider.h"

/* The rdma_cm fds librdmacm holds (one an event channel, and a
 * synchronous id has a channel of its own): which file each is, so that a
 * number closed behind our back and reused is not taken for one. Grows
 * as needed; the process's fd limit bounds it. */
struct ucma_fd {
	int fd;			/* -1: free */
	dev_t dev;
	ino_t ino;
	uint64_t token;		/* the daemon's name for the open (MIGRATE_ID) */
};
static struct ucma_fd *fds;
static unsigned nfds;
static pthread_mutex_t fds_lock = PTHREAD_MUTEX_INITIALIZER;
static char cmd_path[4096];

static void fds_add(int fd)
{
	struct stat st;
	uint64_t token = 0;
	unsigned i;

	if (fstat(fd, &st) < 0)
		return;
	ioctl(fd, UCMA_IOC_TOKEN, &token);
	pthread_mutex_lock(&fds_lock);
	for (i = 0; i < nfds && fds[i].fd >= 0; i++)
		;
	if (i == nfds) {
		unsigned n = nfds ? nfds * 2 : 16, k;
		struct ucma_fd *more = realloc(fds, n * sizeof(*fds));

		if (!more) {	/* the fd stays a plain file: its commands fail */
			pthread_mutex_unlock(&fds_lock);
			return;
		}
		for (k = nfds; k < n; k++)
			more[k].fd = -1;
		fds = more;
		nfds = n;
	}
	fds[i] = (struct ucma_fd){ fd, st.st_dev, st.st_ino, token };
	pthread_mutex_unlock(&fds_lock);
}

/* The token of @fd if it is one of ours, else 0. */
static uint64_t fds_token(int fd)
{
	uint64_t token = 0;
	unsigned i;

	pthread_mutex_lock(&fds_lock);
	for (i = 0; i < nfds; i++)
		if (fds[i].fd == fd)
			token = fds[i].token;
	pthread_mutex_unlock(&fds_lock);
	return token;
}

static bool fds_has(int fd, bool forget)
{
	struct stat st;
	bool found = false;
	unsigned i;

	if (fd < 0)
		return false;
	pthread_mutex_lock(&fds_lock);
	for (i = 0; i < nfds; i++)
		if (fds[i].fd == fd) {
			found = fstat(fd, &st) == 0 && st.st_dev == fds[i].dev &&
				st.st_ino == fds[i].ino;
			if (forget || !found)
				fds[i].fd = -1;
			break;
		}
	pthread_mutex_unlock(&fds_lock);
	return found;
}

/* Copy to the caller's memory as copy_to_user does: EFAULT, not a crash,
 * for an address that is not writable. */
static int put_user(uint64_t addr, const void *src, size_t len)
{
	struct iovec local = { (void *)src, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };

	if (!len)
		return 0;
	if (process_vm_writev(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len)
		return 0;
	/* A sandbox that forbids the call: copy as librdmacm trusts it. */
	if (errno == ENOSYS || errno == EPERM) {
		memcpy((void *)(uintptr_t)addr, src, len);
		return 0;
	}
	return -1;
}

static int hook_open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	int fd;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (!path || strcmp(path, UCMA_DEV_PATH) != 0)
		return open(path, flags, mode);
	fd = open(cmd_path, O_RDWR | (flags & (O_CLOEXEC | O_NONBLOCK)));
	if (fd >= 0)
		fds_add(fd);
	return fd;
}

/* What util/open_cdev.c checks: a character device, as the one bound at
 * /dev/infiniband/rdma_cm says. */
static void fake_stat(int fd, struct stat *st)
{
	struct stat dev;

	fstat(fd, st);
	st->st_mode = S_IFCHR | (st->st_mode & 07777);
	st->st_rdev = stat(UCMA_DEV_PATH, &dev) == 0 && S_ISCHR(dev.st_mode) ?
			      dev.st_rdev : makedev(10, 58);
}

static int hook_fstat(int fd, struct stat *st)
{
	if (!fds_has(fd, false))
		return fstat(fd, st);
	fake_stat(fd, st);
	return 0;
}

/* glibc before 2.33 had no fstat symbol: programs called __fxstat. */
extern int __fxstat(int ver, int fd, struct stat *st);

static int hook_fxstat(int ver, int fd, struct stat *st)
{
	if (!fds_has(fd, false))
		return __fxstat(ver, fd, st);
	fake_stat(fd, st);
	return 0;
}

static int hook_close(int fd)
{
	fds_has(fd, true);
	return close(fd);
}

static ssize_t get_event(int fd, const void *buf, size_t count)
{
	struct rdma_ucm_cmd_hdr hdr;
	struct rdma_ucm_get_event cmd;
	struct rdma_ucm_event_resp ev;
	ssize_t n;

	memcpy(&hdr, buf, sizeof(hdr));
	if (count < sizeof(hdr) + sizeof(cmd) || hdr.in < sizeof(cmd)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(&cmd, (const char *)buf + sizeof(hdr), sizeof(cmd));
	/* ucma_get_event(): the answer must fit, less the fields newer
	 * than the caller (reserved, ece), which it then does not get. */
	if (hdr.out < sizeof(ev) - sizeof(ev.reserved) - sizeof(ev.ece)) {
		errno = ENOSPC;
		return -1;
	}
	n = read(fd, &ev, sizeof(ev));
	if (n < 0)
		return -1;
	if (put_user(cmd.response, &ev, MIN((size_t)n, hdr.out)) < 0) {
		errno = EFAULT;
		return -1;
	}
	return (ssize_t)count;
}

static ssize_t hook_write(int fd, const void *buf, size_t count)
{
	struct ucma_wire_cmd w;
	struct rdma_ucm_cmd_hdr hdr;

	if (!fds_has(fd, false))
		return write(fd, buf, count);
	if (count < sizeof(hdr)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.cmd == RDMA_USER_CM_CMD_GET_EVENT)
		return get_event(fd, buf, count);
	memset(&w, 0, offsetof(struct ucma_wire_cmd, buf));
	w.len = (uint32_t)(count < sizeof(w.buf) ? count : sizeof(w.buf));
	memcpy(w.buf, buf, w.len);
	if (hdr.cmd == RDMA_USER_CM_CMD_SET_OPTION &&
	    count >= sizeof(hdr) + sizeof(struct rdma_ucm_set_option)) {
		struct rdma_ucm_set_option o;
		struct iovec local, remote;

		/* The value the kernel would read at optval: carried after
		 * the command, if it fits (else the daemon says EFAULT). */
		memcpy(&o, (const char *)buf + sizeof(hdr), sizeof(o));
		local = (struct iovec){ w.buf + w.len, o.optlen };
		remote = (struct iovec){ (void *)(uintptr_t)o.optval, o.optlen };
		if (o.optlen && o.optlen <= sizeof(w.buf) - w.len &&
		    process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)o.optlen)
			w.optlen = o.optlen;
	}
	if (hdr.cmd == RDMA_USER_CM_CMD_MIGRATE_ID &&
	    count >= sizeof(hdr) + sizeof(struct rdma_ucm_migrate_id)) {
		struct rdma_ucm_migrate_id m;

		memcpy(&m, (const char *)buf + sizeof(hdr), sizeof(m));
		if (fds_has((int)m.fd, false))
			w.from_token = fds_token((int)m.fd);
	}
	if (ioctl(fd, UCMA_IOC_CMD, &w) < 0)
		return -1;
	if (w.resp_len && put_user(w.resp_addr, w.buf, w.resp_len) < 0) {
		errno = EFAULT;
		return -1;
	}
	if (w.ret < 0) {
		errno = -w.ret;
		return -1;
	}
	return w.ret;
}

/* ---- librdmacm's GOT ------------------------------------------------- */

static const struct {
	const char *name;
	void *fn;
} hooks[] = {
	{ "open", (void *)hook_open },
	{ "open64", (void *)hook_open },
	{ "fstat", (void *)hook_fstat },
	{ "fstat64", (void *)hook_fstat },
	{ "__fxstat", (void *)hook_fxstat },
	{ "__fxstat64", (void *)hook_fxstat },
	{ "write", (void *)hook_write },
	{ "close", (void *)hook_close },
};

#if UINTPTR_MAX == UINT64_MAX
typedef ElfW(Rela) rel_t;
#define REL_SYM(i)	ELF64_R_SYM(i)
#define REL_TYPE(i)	ELF64_R_TYPE(i)
#else
typedef ElfW(Rel) rel_t;
#define REL_SYM(i)	ELF32_R_SYM(i)
#define REL_TYPE(i)	ELF32_R_TYPE(i)
#endif

/* A dynamic entry's address: glibc has relocated most of them in place,
 * some loaders leave them as offsets. */
static uintptr_t dyn_ptr(uintptr_t base, ElfW(Addr) p)
{
	return p < base ? base + p : p;
}

/* The part of the object that RELRO makes read-only after relocation. */
static uintptr_t relro_start, relro_end;

static void patch_slot(void **slot, void *fn)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t page = (uintptr_t)slot & ~((uintptr_t)pg - 1);
	bool relro = (uintptr_t)slot >= relro_start && (uintptr_t)slot < relro_end;

	if (relro && mprotect((void *)page, (size_t)pg, PROT_READ | PROT_WRITE) < 0)
		return;
	*slot = fn;
	if (relro)
		mprotect((void *)page, (size_t)pg, PROT_READ);
}

#if defined(__x86_64__)
#define SLOT_TYPE(t)	((t) == R_X86_64_JUMP_SLOT || (t) == R_X86_64_GLOB_DAT)
#elif defined(__aarch64__)
#define SLOT_TYPE(t)	((t) == R_AARCH64_JUMP_SLOT || (t) == R_AARCH64_GLOB_DAT)
#elif defined(__i386__)
#define SLOT_TYPE(t)	((t) == R_386_JMP_SLOT || (t) == R_386_GLOB_DAT)
#else
#define SLOT_TYPE(t)	0	/* not ported: librdmacm is left alone */
#endif

static void patch_rels(uintptr_t base, const rel_t *rel, size_t size, const ElfW(Sym) *syms,
		       const char *strs)
{
	size_t i, k;

	for (i = 0; i < size / sizeof(*rel); i++) {
		const char *name = strs + syms[REL_SYM(rel[i].r_info)].st_name;

		if (!REL_SYM(rel[i].r_info) || !SLOT_TYPE(REL_TYPE(rel[i].r_info)))
			continue;
		for (k = 0; k < sizeof(hooks) / sizeof(hooks[0]); k++)
			if (!strcmp(name, hooks[k].name))
				patch_slot((void **)(base + rel[i].r_offset), hooks[k].fn);
	}
}

static int patch_rdmacm(struct dl_phdr_info *info, size_t size, void *data)
{
	const ElfW(Dyn) *dyn = NULL;
	uintptr_t base = info->dlpi_addr, jmprel = 0, rel = 0, symtab = 0, strtab = 0;
	size_t jmpsz = 0, relsz = 0;
	int i;

	(void)size;
	(void)data;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "/librdmacm.so"))
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(base + ph->p_vaddr);
		if (ph->p_type == PT_GNU_RELRO) {
			relro_start = base + ph->p_vaddr;
			relro_end = relro_start + ph->p_memsz;
		}
	}
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_JMPREL:
			jmprel = dyn_ptr(base, dyn->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			jmpsz = dyn->d_un.d_val;
			break;
#if UINTPTR_MAX == UINT64_MAX
		case DT_RELA:
			rel = dyn_ptr(base, dyn->d_un.d_ptr);
			break;
		case DT_RELASZ:
			relsz = dyn->d_un.d_val;
			break;
#else
		case DT_REL:
			rel = dyn_ptr(base, dyn->d_un.d_ptr);
			break;
		case DT_RELSZ:
			relsz = dyn->d_un.d_val;
			break;
#endif
		case DT_SYMTAB:
			symtab = dyn_ptr(base, dyn->d_un.d_ptr);
			break;
		case DT_STRTAB:
			strtab = dyn_ptr(base, dyn->d_un.d_ptr);
			break;
		}
	}
	if (!symtab || !strtab)
		return 1;
	/* PLT calls, and the GOT entries of -fno-plt calls (GLOB_DAT). */
	if (jmprel)
		patch_rels(base, (const rel_t *)jmprel, jmpsz, (const ElfW(Sym) *)symtab,
			   (const char *)strtab);
	if (rel)
		patch_rels(base, (const rel_t *)rel, relsz, (const ElfW(Sym) *)symtab,
			   (const char *)strtab);
	return 1;
}

void ibemu_rdmacm_hook(void)
{
	const char *sysfs = getenv("SYSFS_PATH");

	snprintf(cmd_path, sizeof(cmd_path), "%s/%s/%s", sysfs && *sysfs ? sysfs : "/sys",
		 UCMA_WIRE_DIR, UCMA_WIRE_CMD);
	if (access(cmd_path, F_OK) < 0)
		return;
	dl_iterate_phdr(patch_rdmacm, NULL);
}
