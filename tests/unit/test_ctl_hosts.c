/* SPDX-License-Identifier: MIT */
/*
 * What `pid init` and `hosts` answer (ctl/ctl_show.c), which `ibemu exec`
 * and the run's ssh act on (cli/cmd_exec.c): a run that is starting says
 * so to both, never that it runs no command or has no hosts (exec then
 * joined the emulator's own namespaces, or failed); `ibemu start` says it
 * has neither; a run of hosts names each.
 */
#include "config.h"

#include "ctl/ctl.h"
#include "testfab.h"

/* @cmd's answer, as the control socket sends it (g_free it). */
static char *ask(struct ctl_env *e, const char *cmd)
{
	char **argv = g_strsplit(cmd, " ", -1);
	GString *out = g_string_new(NULL);

	ctl_run(e, argv, out);
	g_strfreev(argv);
	return g_string_free(out, FALSE);
}

static void expect(struct ctl_env *e, const char *cmd, const char *want)
{
	char *got = ask(e, cmd);

	if (!strstr(got, want))
		fail_msg("%s: '%s', want '%s' in it", cmd, got, want);
	g_free(got);
}

static void test_starting_run(void **state)
{
	struct ctl_env e = { .fabric = topo_load_default(0), .init_pid = -1 };

	(void)state;
	expect(&e, "pid init", CTL_INIT_STARTING);
	expect(&e, "hosts", CTL_INIT_STARTING);
	expect(&e, "hosts host2", CTL_INIT_STARTING);
	fabric_free(e.fabric);
}

static void test_start_has_neither(void **state)
{
	struct ctl_env e = { .fabric = topo_load_default(0), .init_pid = 0 };

	(void)state;
	expect(&e, "pid init", CTL_NO_COMMAND);
	expect(&e, "hosts", CTL_NO_HOSTS);
	fabric_free(e.fabric);
}

static void test_hosts(void **state)
{
	struct ctl_host h[] = {
		{ .name = (char *)"host1", .nodes = (char *)"host1", .fast = (char *)"/s1",
		  .pid = 7, .ns_pid = 2 },
		{ .name = (char *)"host2", .nodes = (char *)"host2", .fast = (char *)"/s2",
		  .pid = 8, .ns_pid = 3 },
	};
	struct ctl_env e = { .fabric = topo_load_default(0), .init_pid = 42,
			     .hosts = g_ptr_array_new() };

	(void)state;
	g_ptr_array_add(e.hosts, &h[0]);
	g_ptr_array_add(e.hosts, &h[1]);
	expect(&e, "hosts host2", "host2\t8\t3\t/s2\thost2\n");
	expect(&e, "hosts", "host1\t7\t2\t/s1\thost1\nhost2\t8\t3\t/s2\thost2\n");
	expect(&e, "hosts nosuch", "nosuch: " CTL_NO_SUCH_HOST);
	expect(&e, "pid init", "42");
	g_ptr_array_unref(e.hosts);
	fabric_free(e.fabric);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_starting_run),
		cmocka_unit_test(test_start_has_neither),
		cmocka_unit_test(test_hosts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
