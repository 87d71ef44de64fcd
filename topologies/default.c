/* SPDX-License-Identifier: MIT */
/* The built-in default fabric: topologies/default.net, embedded verbatim. */
#include "config.h"

#include "topologies/topo.h"

__asm__(".section .rodata\n"
	".global topo_default_text\n"
	".type topo_default_text, @object\n"
	"topo_default_text:\n"
	".incbin \"" TOPO_DEFAULT_FILE "\"\n"
	".byte 0\n"
	".size topo_default_text, . - topo_default_text\n"
	".previous\n");
