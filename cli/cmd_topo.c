/* SPDX-License-Identifier: MIT */
/*
 * ibemu topo: topology files without an emulator.
 *
 *   ibemu topo check FILE | topo dot FILE | topo gen KIND ARGS...
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/emulator.h"
#include "lib/log.h"
#include "topologies/topo.h"

/* Whole decimal numbers that fit an unsigned: no sign, no wrap ("-1" is
 * not 4294967295). */
static bool parse_uints(char **argv, unsigned n, unsigned *v)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		char *end;
		guint64 x;

		errno = 0;
		x = g_ascii_strtoull(argv[i], &end, 10);
		if (!g_ascii_isdigit(argv[i][0]) || *end || errno || x > G_MAXUINT)
			return false;
		v[i] = (unsigned)x;
	}
	return true;
}

/* ibemu topo gen KIND ARGS...: write a generated topology to stdout. */

/* The one usage text of `topo`, for --help, mistakes and `gen` alike. */
static int topo_usage(FILE *out)
{
	fprintf(out,
		"Usage: ibemu topo check [-v] [--strict] FILE\n"
		"                                  validate; print node, link and port counts\n"
		"                                  (-v: say how cable ends that disagree were read)\n"
		"       ibemu topo dot [--strict] FILE   the fabric as a Graphviz graph (dot -Tpng)\n"
		"       ibemu topo gen fattree RADIX [HOSTS]\n"
		"                                  two-level fat tree of RADIX-port switches (RADIX\n"
		"                                  even), HOSTS HCAs a leaf (RADIX/2; more oversubscribes)\n"
		"       ibemu topo gen fattree3 RADIX PODS [HOSTS]\n"
		"                                  three levels; PODS x (RADIX-HOSTS) x RADIX/2 a\n"
		"                                  multiple of RADIX\n"
		"       ibemu topo gen torus|mesh X Y [Z]   one HCA a switch\n"
		"       ibemu topo gen dragonfly ROUTERS HOSTS GLOBAL\n"
		"FILE is in the ibnetdiscover or ibsim net format (man 5 ibemu-topology); lines\n"
		"that are not topology are skipped with a warning, or refused with --strict.\n");
	return out == stderr ? 2 : 0;
}

/* ibemu topo gen KIND ARGS...: write a generated topology to stdout. */
static int topo_gen(int argc, char **argv)
{
	unsigned v[4] = { 0, 0, 1, 1 }, f[3] = { 0, 0, 0 };	/* f: 0 HOSTS = the default */
	const char *why = NULL;
	int r = -1;

	if (!strcmp(argv[0], "fattree") && (argc == 2 || argc == 3) &&
	    parse_uints(argv + 1, (unsigned)argc - 1, f) && (argc == 2 || f[1]))
		r = topo_gen_fattree2(stdout, f[0], f[1], &why);
	else if (!strcmp(argv[0], "fattree3") && (argc == 3 || argc == 4) &&
		 parse_uints(argv + 1, (unsigned)argc - 1, f) && (argc == 3 || f[2]))
		r = topo_gen_fattree3(stdout, f[0], f[1], f[2], &why);
	else if ((!strcmp(argv[0], "torus") || !strcmp(argv[0], "mesh")) &&
		 (argc == 3 || argc == 4) && parse_uints(argv + 1, (unsigned)argc - 1, v))
		r = topo_gen_grid(stdout, argv[0][0] == 't', v, 1, &why);
	else if (!strcmp(argv[0], "dragonfly") && argc == 4 && parse_uints(argv + 1, 3, v))
		r = topo_gen_dragonfly(stdout, v[0], v[1], v[2], &why);
	if (r < 0 && why) {
		fprintf(stderr, "ibemu topo gen %s: %s\n", argv[0], why);
		return 2;
	}
	return r < 0 ? topo_usage(stderr) : 0;
}

static int topo_dot_file(const char *path, unsigned flags)
{
	GString *out = g_string_new(NULL);
	struct fabric *f = emu_load_fabric(path, flags);

	if (!f) {
		g_string_free(out, TRUE);
		return 1;
	}
	topo_dot(f, out, false);
	fputs(out->str, stdout);
	g_string_free(out, TRUE);
	fabric_free(f);
	return 0;
}

static int topo_check(const char *path, unsigned flags)
{
	struct fabric_counts c;
	struct fabric *f = emu_load_fabric(path, flags);

	if (!f)
		return 1;
	fabric_count(f, &c);
	printf("%s: %u nodes (%u switches, %u CAs, %u routers), %u links, %u ports\n",
	       path, c.nodes, c.switches, c.cas, c.routers, c.links, c.ports);
	fabric_free(f);
	return 0;
}

/* check and dot: [-v] [--strict] FILE. NULL on anything else. */
static const char *file_args(int argc, char **argv, unsigned *flags, bool *verbose)
{
	const char *file = NULL;
	int i;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--strict"))
			*flags |= TOPO_STRICT;
		else if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose"))
			*verbose = true;
		else if (file || (argv[i][0] == '-' && argv[i][1]))
			return NULL;
		else
			file = argv[i];
	}
	return file;
}

int cmd_topo(int argc, char **argv)
{
	unsigned flags = 0;
	bool verbose = false;
	const char *file;

	if (cli_wants_help(argc, argv))
		return topo_usage(stdout);
	if (argc >= 3 && !strcmp(argv[1], "gen"))
		return topo_gen(argc - 2, argv + 2);
	if (argc < 3 || (strcmp(argv[1], "dot") && strcmp(argv[1], "check")))
		return topo_usage(stderr);
	if (!(file = file_args(argc - 2, argv + 2, &flags, &verbose)))
		return topo_usage(stderr);
	log_init(verbose ? 1 : 0);
	return argv[1][0] == 'd' ? topo_dot_file(file, flags) : topo_check(file, flags);
}
