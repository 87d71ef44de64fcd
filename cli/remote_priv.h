/* SPDX-License-Identifier: MIT */
/* What remote.c shares with remote_umad.c (many hosts, the attaching side). */
#ifndef IBEMU_CLI_REMOTE_PRIV_H
#define IBEMU_CLI_REMOTE_PRIV_H

#include <stdint.h>
#include <stddef.h>

#include "cli/remote.h"
#include "cuse/umad_backend.h"

/* An emulator that does not answer within this is taken as gone. */
#define REMOTE_ANSWER_TIMEOUT_MS	10000

/* One request on channel @ch (with @fd passed beside, unless -1), its
 * answer left to the caller: 0, or -EIO (the emulator is gone). */
int remote_send(int ch, uint32_t op, uint32_t flags, uint64_t arg, const void *payload,
		size_t n, int fd);
/*
 * One request on channel @ch (with @fd passed beside, unless -1) and its
 * answer: ret (or -EIO, -ETIMEDOUT of the transport), its out bytes in
 * *@out (g_free) if @out, an fd passed back in *@fd_out (else closed).
 */
int64_t remote_ask(int ch, uint32_t op, uint32_t flags, uint64_t arg, const void *payload,
		   size_t n, int fd, char **out, size_t *out_len, int *fd_out, int timeout_ms);
/* A channel to the attached host's files (FAST_ADOPT); -errno. */
int remote_adopted_channel(struct remote *r);

/* remote_umad.c: the backend of the mirror's umad files (VN_UMAD_FWD),
 * named @name ("umad0") at the emulator; freed by remote_umad_dev_free. */
struct umad_fwd *remote_umad_dev_new(struct remote *r, const char *name);
void remote_umad_dev_free(void *fwd);
/* Its open files see the emulator gone now (remote_gone()). */
void remote_umad_dev_gone(struct umad_fwd *fwd);
/* remote_issm.c: the same for its issm files (VN_ISSM_FWD), "issm0". */
struct issm_fwd *remote_issm_dev_new(struct remote *r, const char *name);
void remote_issm_dev_free(void *fwd);

#endif
