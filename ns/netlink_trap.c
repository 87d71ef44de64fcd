/* SPDX-License-Identifier: MIT */
/*
 * The seccomp filter of netlink_trap.h. Other architectures' system calls
 * (i386's socketcall on x86_64) pass: libibverbs builds for them are rare
 * enough to leave to a note (docs/verbs.md).
 */
#include "config.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "ns/netlink_trap.h"

#if defined(__x86_64__)
#define TRAP_ARCH	AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define TRAP_ARCH	AUDIT_ARCH_AARCH64
#else
#error "name this architecture's AUDIT_ARCH for the netlink trap"
#endif

#ifndef NETLINK_RDMA
#define NETLINK_RDMA	20
#endif

/* The low 32 bits of a system call argument (little-endian). */
#define ARG_LO(n)	(offsetof(struct seccomp_data, args) + 8 * (n))

int netlink_trap_install(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TRAP_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_NETLINK, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(2)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NETLINK_RDMA, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPROTONOSUPPORT & SECCOMP_RET_DATA)),
	};
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };

	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0)
		return 0;
	if (errno != EACCES)
		return -errno;
	/* Without CAP_SYS_ADMIN a filter needs no_new_privs (seccomp(2)). */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return -errno;
	return 0;
}
