/* SPDX-License-Identifier: MIT */
/*
 * Topology files: the ibnetdiscover output format and ibsim's `net` format
 * (which is a subset of it), read into a fabric.
 *
 *   vendid=0x2c9 / devid=0x1003 / sysimgguid=0x...   apply to the next node
 *   switchguid=0x...(0x...) / caguid=0x... / rtguid=  next GUID of that kind
 *   width=4x / speed=QDR                            default for later links
 *   include "other.net"                              relative to this file
 *   Switch 36 "S-1" # "desc" enhanced port 0 lid 1 lmc 0
 *   [1]	"H-1"[1](portguid)	# "desc" lid 3 4xQDR   w=4x s=QDR options
 *   Ca 2 "H-1" # "desc"
 *   [1](portguid)	"S-1"[1]	# lid 3 lmc 0 "desc" lid 1 4xQDR
 *
 * A blank line ends a node's record. A link may be written on one side or
 * both; where the two sides name different widths or speeds, the link runs
 * at the lower (a dump of a degraded link). `ibnetdiscover -g` grouping
 * ("Chassis N", "[ext N]") is read and ignored. Errors read "file:line:
 * what is wrong".
 */
#ifndef IBEMU_TOPOLOGIES_TOPO_H
#define IBEMU_TOPOLOGIES_TOPO_H

#include <glib.h>
#include <stdbool.h>

#include "fabric/fabric.h"

#define TOPO_ERROR (topo_error_quark())
GQuark topo_error_quark(void);

/* Lines that are no topology are skipped with a warning, or refused
 * with TOPO_STRICT. */
#define TOPO_STRICT	1u
/* The ports' addresses are on the machine's own network (struct fabric's
 * loopback_addrs): addr= only in 127.0.0.0/8. */
#define TOPO_LOOPBACK_ADDRS	2u
struct fabric *topo_load_file(const char *path, unsigned flags, GError **err);
/* @name is what error messages call the text. */
struct fabric *topo_load_string(const char *text, const char *name, unsigned flags,
				GError **err);

/*
 * read.c: what loading may read in all, includes too: at most
 * TOPO_MAX_FILES files and TOPO_MAX_BYTES of text (a 50,000-node dump is
 * 8 MB). topo_read() gives @path's text (NUL-terminated, *@len bytes) or
 * NULL with *@why (g_free it); only the top file may be a pipe.
 */
#define TOPO_MAX_FILES	1000u
#define TOPO_MAX_BYTES	(512u << 20)
struct topo_budget {
	size_t bytes;
	unsigned files;
};
char *topo_read(const char *path, bool top, struct topo_budget *b, size_t *len,
		char **why);

/* gen.c: write a generated fabric (fattree2: two levels of
 * @radix-port switches); each returns -1 with *@why (one line) for
 * arguments out of range. */
#include <stdio.h>
#define TOPO_GEN_MAX_SWITCHES	100000u
int topo_gen_fattree2(FILE *out, unsigned radix, unsigned hosts, const char **why);
int topo_gen_fattree3(FILE *out, unsigned radix, unsigned pods, unsigned hosts,
		      const char **why);
int topo_gen_grid(FILE *out, bool torus, const unsigned dim[3], unsigned hcas,
		  const char **why);
int topo_gen_dragonfly(FILE *out, unsigned routers, unsigned hosts, unsigned global,
		       const char **why);

/* dump.c: the fabric as it is now, in this format. */
void topo_dump(struct fabric *f, GString *out);

/* dot.c: the fabric as a Graphviz graph; @live adds states, LIDs, faults. */
void topo_dot(struct fabric *f, GString *out, bool live);

/* The built-in default fabric (topologies/default.net). */
extern const char topo_default_text[];
struct fabric *topo_load_default(unsigned flags);

#endif
