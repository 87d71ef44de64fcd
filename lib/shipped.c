/* SPDX-License-Identifier: MIT */
/* Files this ibemu ships; see shipped.h. */
#include "config.h"

#include <glib.h>

#include "lib/shipped.h"

char *shipped_find(const char *rel, const char *installed)
{
	char *exe = g_file_read_link("/proc/self/exe", NULL);
	char *dir = exe ? g_path_get_dirname(exe) : NULL;
	char *beside = dir ? g_build_filename(dir, rel, NULL) : NULL;
	char *found = NULL;

	if (beside && g_file_test(beside, G_FILE_TEST_IS_REGULAR))
		found = g_strdup(beside);
	else if (g_file_test(installed, G_FILE_TEST_IS_REGULAR))
		found = g_strdup(installed);
	g_free(beside);
	g_free(dir);
	g_free(exe);
	return found;
}
