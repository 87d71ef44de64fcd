/* SPDX-License-Identifier: MIT */
/*
 * Reading topology text within a budget (topo.h): what a file can make
 * the parser read is bounded, so a set of nested includes, an include of
 * /dev/zero or of a FIFO ends in one error instead of hours, memory or a
 * hang. Regular files only; the file named on the command line may also
 * be a pipe (`--topology <(ibemu topo gen ...)`).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "topologies/topo.h"

char *topo_read(const char *path, bool top, struct topo_budget *b, size_t *len,
		char **why)
{
	GByteArray *buf;
	struct stat st;
	int fd;

	if (b->files >= TOPO_MAX_FILES) {
		*why = g_strdup_printf("more than %u topology files read in all (the limit)",
				       TOPO_MAX_FILES);
		return NULL;
	}
	if (stat(path, &st) < 0) {
		*why = g_strdup(g_strerror(errno));
		return NULL;
	}
	if (!S_ISREG(st.st_mode) && !(top && S_ISFIFO(st.st_mode))) {
		*why = g_strdup(top ? "not a regular file or a pipe" : "not a regular file");
		return NULL;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		*why = g_strdup(g_strerror(errno));
		return NULL;
	}
	b->files++;
	buf = g_byte_array_new();
	for (;;) {
		guint8 chunk[65536];
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			*why = g_strdup(g_strerror(errno));
			break;
		}
		if (n == 0)
			break;
		if ((size_t)n > TOPO_MAX_BYTES - b->bytes) {
			*why = g_strdup_printf("more than %u MiB of topology text in all (the limit)",
					       TOPO_MAX_BYTES >> 20);
			break;
		}
		b->bytes += (size_t)n;
		g_byte_array_append(buf, chunk, (guint)n);
	}
	close(fd);
	if (*why) {
		g_byte_array_free(buf, TRUE);
		return NULL;
	}
	*len = buf->len;
	g_byte_array_append(buf, (const guint8 *)"", 1);	/* a C string too */
	return (char *)g_byte_array_free(buf, FALSE);
}
