/* SPDX-License-Identifier: MIT */
/* Memory shared with a client; see shm.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/shm.h"

void *shm_sealed_map(const char *name, size_t size, int *memfd)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	void *m;

	*memfd = -1;
	if (fd < 0)
		return NULL;
	/* Sealed at its size: ib_umad has no memory a client can take away. */
	if (ftruncate(fd, (off_t)size) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0 ||
	    (m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		int e = errno;

		close(fd);
		errno = e;
		return NULL;
	}
	*memfd = fd;
	return m;
}
