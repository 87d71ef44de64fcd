/* SPDX-License-Identifier: MIT */
/*
 * Control commands of packet capture (ctl/capture.h):
 *
 *   capture start FILE [--node N [--port P]] [--max-mb M]
 *   capture stop
 *   capture                  the file, packets and bytes so far
 *
 * `ibemu ctl` makes FILE absolute before sending it (the emulator's
 * working directory is not the caller's).
 */
#include "config.h"

#include "ctl/capture.h"
#include "ctl/ctl_cmd.h"

enum { O_NODE, O_PORT, O_MAX_MB };

const struct ctl_optdef ctl_capture_opts[] = {
	[O_NODE] = { "--node", OPT_NODE, "NODE", 0, NULL },
	[O_PORT] = { "--port", OPT_UINT, "P", 254, NULL },
	[O_MAX_MB] = { "--max-mb", OPT_UINT, "M", 1u << 20, NULL },
	{ NULL },
};

static int describe(struct ctl_call *c, const struct pkt_capture *cap, const char *verb)
{
	if (c->json) {
		json_builder_begin_object(c->json);
		ctl_json_str(c->json, "file", pkt_capture_path(cap));
		ctl_json_uint(c->json, "packets", pkt_capture_packets(cap));
		ctl_json_uint(c->json, "bytes", pkt_capture_bytes(cap));
		ctl_json_bool(c->json, "full", pkt_capture_stopped(cap) != NULL);
		if (pkt_capture_stopped(cap))
			ctl_json_str(c->json, "stopped", pkt_capture_stopped(cap));
		json_builder_end_object(c->json);
		return 0;
	}
	g_string_append_printf(c->out, "capture %s%s: %" G_GUINT64_FORMAT " packets, %"
			       G_GUINT64_FORMAT " bytes", verb, pkt_capture_path(cap),
			       pkt_capture_packets(cap), pkt_capture_bytes(cap));
	if (pkt_capture_stopped(cap))
		g_string_append_printf(c->out, " (%s stopped it)", pkt_capture_stopped(cap));
	g_string_append_c(c->out, '\n');
	return 0;
}

int ctl_capture_start(struct ctl_call *c)
{
	struct capture_opts o = { 0 };
	struct node *n = c->opt[O_NODE].node;
	GError *err = NULL;
	struct pkt_capture *cap;

	if (c->env->capture)
		return ctl_fail(c, "a capture to %s is running: `capture stop` first",
				pkt_capture_path(c->env->capture));
	if (c->opt[O_PORT].set) {
		if (!n)
			return ctl_fail(c, "--port needs --node");
		if (!(o.port = node_port(n, (unsigned)c->opt[O_PORT].u)) ||
		    (!c->opt[O_PORT].u && !node_is_switch(n)))
			return ctl_fail(c, "%s has no port %" G_GUINT64_FORMAT, n->id,
					c->opt[O_PORT].u);
	}
	o.node = n;
	if (c->opt[O_MAX_MB].set) {
		if (!c->opt[O_MAX_MB].u)
			return ctl_fail(c, "--max-mb is 1 to %u, not 0", 1u << 20);
		o.max_bytes = c->opt[O_MAX_MB].u << 20;
	}
	if (!g_path_is_absolute(c->arg[0]))
		return ctl_fail(c, "capture FILE must be an absolute path, not \"%s\"", c->arg[0]);
	cap = pkt_capture_start(c->env->fabric, c->arg[0], &o, &err);
	if (!cap) {
		ctl_fail(c, "%s", err->message);
		g_error_free(err);
		return -1;
	}
	c->env->capture = cap;
	g_message("capture to %s started", c->arg[0]);
	if (pkt_capture_replaced(cap) >= 0 && !c->json)
		g_string_append_printf(c->out, "capture: replacing the file of %" G_GINT64_FORMAT
				       " bytes that was at %s\n", pkt_capture_replaced(cap), c->arg[0]);
	return describe(c, cap, "to ");
}

int ctl_capture_stop(struct ctl_call *c)
{
	struct pkt_capture *cap = c->env->capture;
	int ret;

	if (!cap)
		return ctl_fail(c, "no capture is running");
	pkt_capture_flush(cap);
	ret = describe(c, cap, "ended, ");
	pkt_capture_stop(cap);
	c->env->capture = NULL;
	return ret;
}

int ctl_capture_show(struct ctl_call *c)
{
	if (!c->env->capture) {
		if (c->json) {
			json_builder_begin_object(c->json);
			json_builder_end_object(c->json);
		} else {
			g_string_append(c->out, "no capture\n");
		}
		return 0;
	}
	return describe(c, c->env->capture, "to ");
}
