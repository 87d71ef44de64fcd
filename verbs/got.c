/* SPDX-License-Identifier: MIT */
/*
 * Putting ourselves in front of another library's calls into libc (see
 * got.h): the entries of that library's GOT, PLT calls (JUMP_SLOT) and
 * the -fno-plt ones (GLOB_DAT), and nobody else's.
 */
#define _GNU_SOURCE
#include "config.h"

#include <elf.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "verbs/got.h"

struct got_job {
	const char *lib;
	const struct ibemu_got_hook *hooks;
	size_t n;
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
#define SLOT_TYPE(t)	0	/* not ported: the library is left alone */
#endif

static void patch_rels(const struct got_job *job, uintptr_t base, const rel_t *rel, size_t size,
		       const ElfW(Sym) *syms, const char *strs)
{
	size_t i, k;

	for (i = 0; i < size / sizeof(*rel); i++) {
		const char *name = strs + syms[REL_SYM(rel[i].r_info)].st_name;

		if (!REL_SYM(rel[i].r_info) || !SLOT_TYPE(REL_TYPE(rel[i].r_info)))
			continue;
		for (k = 0; k < job->n; k++)
			if (!strcmp(name, job->hooks[k].name))
				patch_slot((void **)(base + rel[i].r_offset), job->hooks[k].fn);
	}
}

static int patch_lib(struct dl_phdr_info *info, size_t size, void *data)
{
	const struct got_job *job = data;
	const ElfW(Dyn) *dyn = NULL;
	uintptr_t base = info->dlpi_addr, jmprel = 0, rel = 0, symtab = 0, strtab = 0;
	size_t jmpsz = 0, relsz = 0;
	int i;

	(void)size;
	if (!info->dlpi_name || !strstr(info->dlpi_name, job->lib))
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
		patch_rels(job, base, (const rel_t *)jmprel, jmpsz, (const ElfW(Sym) *)symtab,
			   (const char *)strtab);
	if (rel)
		patch_rels(job, base, (const rel_t *)rel, relsz, (const ElfW(Sym) *)symtab,
			   (const char *)strtab);
	return 1;
}

void ibemu_got_patch(const char *lib, const struct ibemu_got_hook *hooks, size_t n)
{
	struct got_job job = { lib, hooks, n };

	dl_iterate_phdr(patch_lib, &job);
}
