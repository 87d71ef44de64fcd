/* SPDX-License-Identifier: MIT */
/*
 * The kinds of device file (kernel/kfile.h), as the kernel's character
 * devices are registered: a new kind is its table in the module that owns
 * it and a line here; the transports serve and forward it unchanged
 * (docs/architecture.md "Device files").
 */
#include "config.h"

#include "kernel/kfile.h"

const struct kfile_ops *const kfile_kinds[] = {
	&umad_fops, &issm_fops, &uverbs_cmd_fops, &uverbs_events_fops, &ucma_fops, NULL,
};

const struct kfile_ops *kfile_kind(char code)
{
	unsigned i;

	for (i = 0; code && kfile_kinds[i]; i++)
		if (kfile_kinds[i]->code == code)
			return kfile_kinds[i];
	return NULL;
}
