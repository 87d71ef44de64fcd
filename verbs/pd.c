/* SPDX-License-Identifier: MIT */
/*
 * Protection domains. A PD only groups the objects of the data path
 * (the "Verbs, part 2" issue), so the process keeps it: nothing of it
 * needs the daemon yet.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "verbs/provider.h"

struct ibv_pd *ibemu_alloc_pd(struct ibv_context *context)
{
	struct ibv_pd *pd = calloc(1, sizeof(*pd));

	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->context = context;
	pthread_mutex_lock(&context->mutex);
	pd->handle = ++to_ctx(context)->next_pd_handle;
	pthread_mutex_unlock(&context->mutex);
	return pd;
}

int ibemu_dealloc_pd(struct ibv_pd *pd)
{
	free(pd);
	return 0;
}
