/* SPDX-License-Identifier: MIT */
/* Work in another process's network namespace; see netns.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include "ns/netns.h"

struct job {
	int ns, err;
	void (*fn)(void *arg);
	void *arg;
};

static void *in_ns(void *data)
{
	struct job *j = data;

	if (setns(j->ns, CLONE_NEWNET) < 0)
		j->err = errno;
	else
		j->fn(j->arg);
	return NULL;
}

int netns_run(int pid, void (*fn)(void *arg), void *arg)
{
	struct job j = { .fn = fn, .arg = arg };
	char path[64];
	pthread_t t;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
	if ((j.ns = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	if (pthread_create(&t, NULL, in_ns, &j) == 0)
		pthread_join(t, NULL);
	else
		j.err = EAGAIN;
	close(j.ns);
	return -j.err;
}
