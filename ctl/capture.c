/* SPDX-License-Identifier: MIT */
/*
 * Packet capture to pcap (capture.h). The headers are written from the
 * fabric's packet fields as IBA lays them out: LRH 7.7.1, GRH 8.3, BTH
 * 9.2, DETH 9.3.3, RETH 9.3.4, AETH 9.3.5, ImmDt 9.3.6; the pcap file
 * format is libpcap's (a 24-byte file header, a 16-byte header a record).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "abi/verbs_wire.h"
#include "ctl/capture.h"
#include "ctl/capture_roce.h"
#include "fabric/mcast.h"
#include "fabric/port.h"
#include "kernel/rmpp.h"
#include "lib/log.h"

/*
 * The link type: LINKTYPE_INFINIBAND (247) is the one made for raw
 * InfiniBand packets, but Wireshark 4.0 (Debian 12) does not map it to its
 * InfiniBand dissector ("network type 247 unknown or unsupported"); its
 * ERF reader does, for ERF records of type InfiniBand. So each packet is an
 * ERF record in a LINKTYPE_ERF pcap file.
 */
#define LINKTYPE_ERF		197
#define ERF_TYPE_ETH		2	/* then 2 bytes (offset, pad), the frame */
#define ERF_TYPE_INFINIBAND	21
#define ERF_ETH_PAD		2
#define ERF_FLAG_VARLEN		0x04
#define ERF_HDR_BYTES		16
#define PCAP_SNAPLEN		8192	/* the largest packet: 4096 payload + headers */

#define LRH_BYTES	8
#define GRH_BYTES	40
#define BTH_BYTES	12
#define DETH_BYTES	8
#define ICRC_BYTES	4
#define VCRC_BYTES	2
#define LNH_IBA_LOCAL	2	/* LRH LNH: BTH follows */
#define LNH_IBA_GLOBAL	3	/* GRH follows */
#define GRH_NXTHDR_BTH	0x1b
#define VL_SMP		15	/* QP0 traffic goes on VL15 (IBA 7.6.4) */

/* Records are gathered here and written whole: a write the disk cannot
 * take is cut back to the last whole record (ftruncate), so the file is
 * always one tshark reads to its end. */
#define OUT_BUF_BYTES	(64u << 10)
#define OUT_FLUSH_BYTES	4096	/* written once this much waits, as stdio's */

struct pkt_capture {
	struct fabric *f;
	char *path;
	int fd;
	struct capture_opts o;
	int64_t real0_us;	/* wall clock when the capture began */
	uint64_t mono0_us;	/* the emulator's clock then */
	uint64_t packets, bytes;	/* in the file and in buf */
	uint64_t file_packets, file_bytes;	/* in the file */
	uint8_t *buf;
	size_t buf_len;
	const char *stopped;	/* why no more is written, or NULL */
	int stopped_errno;
	off_t replaced;		/* the size of the file it replaced, or -1 */
};

/* Write what waits in the buffer; on failure cut the file back to its
 * last whole record and stop, saying why. */
static void flush_out(struct pkt_capture *c)
{
	size_t done = 0;

	while (done < c->buf_len) {
		ssize_t n = write(c->fd, c->buf + done, c->buf_len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			c->stopped_errno = n < 0 ? errno : EIO;
			c->stopped = g_strerror(c->stopped_errno);
			if (ftruncate(c->fd, (off_t)c->file_bytes) < 0 ||
			    lseek(c->fd, (off_t)c->file_bytes, SEEK_SET) < 0)
				g_warning("capture %s: cannot cut back to its last whole record: %s",
					  c->path, g_strerror(errno));
			c->packets = c->file_packets;
			c->bytes = c->file_bytes;
			c->buf_len = 0;
			g_warning("capture %s stopped: %s; it holds %" G_GUINT64_FORMAT
				  " whole packets", c->path, c->stopped, c->packets);
			return;
		}
		done += (size_t)n;
	}
	c->file_bytes = c->bytes;
	c->file_packets = c->packets;
	c->buf_len = 0;
}

/* Append @n bytes of one record to the buffer (it has room: records are
 * at most PCAP_SNAPLEN plus headers). */
static void put_out(struct pkt_capture *c, const void *p, size_t n)
{
	memcpy(c->buf + c->buf_len, p, n);
	c->buf_len += n;
}

/* ---- CRCs (IBA 7.8) ---------------------------------------------------- */

/* Both CRCs are computed least significant bit first, as the link sends
 * them: the ICRC is Ethernet's CRC-32 (as rxe computes it for RoCE), the
 * VCRC a CRC-16 with polynomial 0x100B; each is written least significant
 * byte first. */
static uint32_t crc32_table[256];
static uint16_t crc16_table[256];

static void crc_tables(void)
{
	unsigned i, k;

	if (crc32_table[1])
		return;
	for (i = 0; i < 256; i++) {
		uint32_t c = i;
		uint16_t d = (uint16_t)i;

		for (k = 0; k < 8; k++) {
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			d = d & 1 ? (uint16_t)(0xd008u ^ (d >> 1)) : (uint16_t)(d >> 1);
		}
		crc32_table[i] = c;
		crc16_table[i] = d;
	}
}

uint32_t ib_icrc(const uint8_t *pkt, size_t len)
{
	uint32_t c = 0xffffffffu;
	size_t i, bth = LRH_BYTES;

	crc_tables();
	if ((pkt[1] & 3) == LNH_IBA_GLOBAL)
		bth += GRH_BYTES;
	for (i = 0; i < len; i++) {
		uint8_t b = pkt[i];

		/* Variant fields count as 1s: the whole LRH; the GRH's
		 * TClass, FlowLabel and HopLmt; the BTH's Resv8a. */
		if (i < LRH_BYTES || i == bth + 4)
			b = 0xff;
		else if (bth > LRH_BYTES && i < bth) {
			size_t g = i - LRH_BYTES;

			if (g == 0)
				b |= 0x0f;
			else if (g <= 3 || g == 7)
				b = 0xff;
		}
		c = crc32_table[(c ^ b) & 0xff] ^ (c >> 8);
	}
	return ~c;
}

uint32_t eth_crc32(const uint8_t *b, size_t len)
{
	uint32_t c = 0xffffffffu;
	size_t i;

	crc_tables();
	for (i = 0; i < len; i++)
		c = crc32_table[(c ^ b[i]) & 0xff] ^ (c >> 8);
	return ~c;
}

uint16_t ib_vcrc(const uint8_t *pkt, size_t len)
{
	uint16_t c = 0xffff;
	size_t i;

	crc_tables();
	for (i = 0; i < len; i++)
		c = (uint16_t)(crc16_table[(c ^ pkt[i]) & 0xff] ^ (c >> 8));
	return (uint16_t)~c;
}

/* ---- headers ----------------------------------------------------------- */

/* A 24-bit field (QPs, PSNs); the others through fabric/packet.h's put_be*. */
static void put_be24(uint8_t *b, size_t off, uint32_t v)
{
	b[off] = (uint8_t)(v >> 16);
	put_be16(b, off + 1, (uint16_t)v);
}

/* LRH (IBA 7.7.1): VL, LVer 0, SL, LNH, DLID, PktLen in 4-byte words
 * from the LRH through the ICRC, SLID. */
static size_t put_lrh(uint8_t *b, unsigned vl, unsigned sl, bool grh, uint16_t dlid,
		      uint16_t slid, size_t pkt_bytes_to_icrc)
{
	b[0] = (uint8_t)(vl << 4);
	b[1] = (uint8_t)((sl & 0xf) << 4 | (grh ? LNH_IBA_GLOBAL : LNH_IBA_LOCAL));
	put_be16(b, 2, dlid);
	put_be16(b, 4, (uint16_t)((pkt_bytes_to_icrc / 4) & 0x7ff));
	put_be16(b, 6, slid);
	return LRH_BYTES;
}

/* GRH (IBA 8.3): IPVer 6, TClass, FlowLabel, PayLen (BTH through ICRC),
 * NxtHdr BTH, HopLmt, SGID, DGID. */
static size_t put_grh_fields(uint8_t *b, unsigned tclass, uint32_t flow, unsigned hop_limit,
			     const uint8_t *sgid, const uint8_t *dgid, size_t paylen)
{
	memset(b, 0, GRH_BYTES);
	put_be32(b, 0, 6u << 28 | (tclass & 0xff) << 20 | (flow & 0xfffff));
	put_be16(b, 4, (uint16_t)paylen);
	b[6] = GRH_NXTHDR_BTH;
	b[7] = (uint8_t)hop_limit;
	memcpy(b + 8, sgid, 16);
	memcpy(b + 24, dgid, 16);
	return GRH_BYTES;
}

/* A MAD's GRH: TClass and FlowLabel 0, HopLmt 255 (one subnet). */
static size_t put_grh(uint8_t *b, const struct mad_pkt *p, size_t paylen)
{
	return put_grh_fields(b, 0, 0, 0xff, p->sgid, p->dgid, paylen);
}

/* BTH (IBA 9.2): OpCode, SE/M/PadCnt/TVer, P_Key, DestQP, AckReq, PSN. */
static size_t put_bth(uint8_t *b, uint8_t opcode, unsigned pad, uint16_t pkey,
		      uint32_t dqp, bool ackreq, uint32_t psn)
{
	memset(b, 0, BTH_BYTES);
	b[0] = opcode;
	b[1] = (uint8_t)((pad & 3) << 4);
	put_be16(b, 2, pkey);
	put_be24(b, 5, dqp);
	b[8] = ackreq ? 0x80 : 0;
	put_be24(b, 9, psn);
	return BTH_BYTES;
}

/* DETH (IBA 9.3.3): Q_Key, SrcQP. */
static size_t put_deth(uint8_t *b, uint32_t qkey, uint32_t sqp)
{
	put_be32(b, 0, qkey);
	b[4] = 0;
	put_be24(b, 5, sqp);
	return DETH_BYTES;
}

/* ---- writing ----------------------------------------------------------- */

/*
 * One packet: the pcap record header, then the ERF record header Wireshark
 * reads an InfiniBand packet behind (its packet-erf.c: type
 * ERF_TYPE_INFINIBAND, the packet from its LRH), then the packet; or an
 * Ethernet frame (ERF_TYPE_ETH: two bytes of offset and pad first).
 */
static void write_record(struct pkt_capture *c, unsigned type, const uint8_t *pkt, size_t len)
{
	size_t pre = type == ERF_TYPE_ETH ? ERF_ETH_PAD : 0;
	uint64_t now = c->f->tq ? timerq_now(c->f->tq) : c->mono0_us;
	int64_t t = c->real0_us + (int64_t)(now - c->mono0_us);
	uint32_t hdr[4] = { (uint32_t)(t / G_USEC_PER_SEC), (uint32_t)(t % G_USEC_PER_SEC),
			    (uint32_t)(ERF_HDR_BYTES + pre + len), (uint32_t)(ERF_HDR_BYTES + pre + len) };
	const uint8_t pad[ERF_ETH_PAD] = { 0 };
	/* ERF: a 32.32 fixed-point time, little-endian; type; flags; record
	 * and wire lengths, big-endian. */
	uint64_t ts = (uint64_t)(t / G_USEC_PER_SEC) << 32 |
		      (((uint64_t)(t % G_USEC_PER_SEC) << 32) / G_USEC_PER_SEC);
	uint8_t erf[ERF_HDR_BYTES] = { 0 };
	unsigned i;

	if (c->stopped)
		return;
	for (i = 0; i < 8; i++)
		erf[i] = (uint8_t)(ts >> (8 * i));
	erf[8] = (uint8_t)type;
	erf[9] = ERF_FLAG_VARLEN;
	put_be16(erf, 10, (uint16_t)(ERF_HDR_BYTES + pre + len));
	put_be16(erf, 14, (uint16_t)len);
	if (c->bytes + sizeof(hdr) + sizeof(erf) + pre + len > c->o.max_bytes) {
		c->stopped = "its size cap";
		flush_out(c);
		g_message("capture %s reached its %" G_GUINT64_FORMAT " MiB cap after %"
			  G_GUINT64_FORMAT " packets: no more written", c->path,
			  c->o.max_bytes >> 20, c->packets);
		return;
	}
	if (c->buf_len + sizeof(hdr) + sizeof(erf) + pre + len > OUT_BUF_BYTES)
		flush_out(c);
	if (c->stopped)
		return;
	put_out(c, hdr, sizeof(hdr));
	put_out(c, erf, sizeof(erf));
	put_out(c, pad, pre);
	put_out(c, pkt, len);
	c->packets++;
	c->bytes += sizeof(hdr) + sizeof(erf) + pre + len;
	if (c->buf_len >= OUT_FLUSH_BYTES)
		flush_out(c);
}

/* The CRCs after @len header and payload bytes; the record's length. */
static size_t finish(uint8_t *b, size_t len)
{
	uint32_t icrc = ib_icrc(b, len);
	uint16_t vcrc;

	b[len] = (uint8_t)icrc;
	b[len + 1] = (uint8_t)(icrc >> 8);
	b[len + 2] = (uint8_t)(icrc >> 16);
	b[len + 3] = (uint8_t)(icrc >> 24);
	vcrc = ib_vcrc(b, len + ICRC_BYTES);
	b[len + 4] = (uint8_t)vcrc;
	b[len + 5] = (uint8_t)(vcrc >> 8);
	return len + ICRC_BYTES + VCRC_BYTES;
}

/*
 * The packet @pkt (LRH through VCRC) as its link carries it: a packet
 * from a RoCE port (its SGID one of that port's) as an Ethernet frame,
 * RoCE v2 unless the SGID index @sgid_index (-1: none, a MAD, which the
 * RDMA CM sends from the RoCE v2 GID) is a RoCE v1 entry; any other as
 * InfiniBand.
 */
static void emit(struct pkt_capture *c, const uint8_t *pkt, size_t len, bool grh,
		 const uint8_t *sgid, const uint8_t *dgid, int sgid_index, uint32_t sqp)
{
	struct port *from = grh ? fabric_roce_port_by_gid(c->f, sgid) : NULL, *to;
	struct roce_ends e = { .sqp = sqp, .v2 = true };
	const char *type;
	uint8_t *frame;

	if (!from) {
		write_record(c, ERF_TYPE_INFINIBAND, pkt, len);
		return;
	}
	port_mac(from, e.src_mac);
	/* A multicast group's MAC as IP maps it (RFC 1112 6.4: 01:00:5e and
	 * the address's low 23 bits; RFC 2464 7: 33:33 and its last four
	 * bytes); a GID no port has, the broadcast address. */
	if (fabric_gid_is_mcast(dgid) && dgid[0] != 0xff) {
		memcpy(e.dst_mac, (const uint8_t[]){ 0x01, 0x00, 0x5e }, 3);
		e.dst_mac[3] = dgid[13] & 0x7f;
		e.dst_mac[4] = dgid[14];
		e.dst_mac[5] = dgid[15];
	} else if (dgid[0] == 0xff) {
		e.dst_mac[0] = e.dst_mac[1] = 0x33;
		memcpy(e.dst_mac + 2, dgid + 12, 4);
	} else if ((to = fabric_roce_port_by_gid(c->f, dgid))) {
		port_mac(to, e.dst_mac);
	} else {
		memset(e.dst_mac, 0xff, sizeof(e.dst_mac));
	}
	type = sgid_index >= 0 ? port_gid_type(from, (unsigned)sgid_index) : NULL;
	e.v2 = !type || !strcmp(type, "RoCE v2");
	frame = g_malloc(len + 64);
	write_record(c, ERF_TYPE_ETH, frame, roce_frame(&e, pkt, len, frame));
	g_free(frame);
}

/* A MAD (or one RMPP segment @mad of @p) as a UD SEND Only to QP0/QP1. */
static void write_mad(struct pkt_capture *c, const struct mad_pkt *p, const uint8_t *mad)
{
	uint8_t b[LRH_BYTES + GRH_BYTES + BTH_BYTES + DETH_BYTES + MAD_SIZE + 6];
	size_t tail = BTH_BYTES + DETH_BYTES + MAD_SIZE + ICRC_BYTES;
	size_t n = put_lrh(b, p->dqp == 0 ? VL_SMP : 0, p->sl, p->grh, p->dlid, p->slid,
			   LRH_BYTES + (p->grh ? GRH_BYTES : 0) + tail);

	if (p->grh)
		n += put_grh(b + n, p, tail);
	n += put_bth(b + n, OP_UD_SEND_ONLY, 0, p->pkey, p->dqp, false, 0);
	n += put_deth(b + n, p->qkey, p->sqp);
	memcpy(b + n, mad, MAD_SIZE);
	emit(c, b, finish(b, n + MAD_SIZE), p->grh, p->sgid, p->dgid, -1, p->sqp);
}

/* A verbs data packet (abi/verbs_wire.h) with its extension headers in
 * the order IBA 9.2 gives them: DETH, XRCETH, RETH, AtomicETH, AETH,
 * AtomicAckETH, ImmDt, IETH. */
static void write_data(struct pkt_capture *c, const struct mad_pkt *p)
{
	gsize rec_len;
	const struct verbs_wire_pkt *w = g_bytes_get_data(p->data, &rec_len);
	const uint8_t *payload = (const uint8_t *)(w + 1);
	unsigned op = w->opcode, pad = (4 - (w->len & 3)) & 3;
	size_t wire = verbs_pkt_wire_bytes(w), n;
	bool grh = w->flags & VERBS_PKT_GRH;
	uint8_t *b;

	if (rec_len < sizeof(*w) || wire > PCAP_SNAPLEN)
		return;
	b = g_malloc0(wire);
	n = put_lrh(b, 0, w->sl, grh, w->dlid, w->slid, wire - VCRC_BYTES);
	if (grh)
		n += put_grh_fields(b + n, w->grh_tclass, w->grh_flow, w->grh_hop_limit, w->sgid,
				    w->dgid, wire - VCRC_BYTES - LRH_BYTES - GRH_BYTES);
	n += put_bth(b + n, (uint8_t)op, pad, w->pkey, w->dqpn, false, w->psn);
	if (verbs_op_has_deth(op))
		n += put_deth(b + n, w->qkey, w->sqpn);
	if (verbs_op_has_xrceth(op)) {
		put_be32(b, n, w->xrc_srqn & 0xffffff);	/* the SRQ number, 24 bits */
		n += 4;
	}
	if (verbs_op_has_reth(op)) {
		put_be64(b, n, w->va);
		put_be32(b, n + 8, w->rkey);
		put_be32(b, n + 12, w->dma_len);
		n += 16;
	}
	if (verbs_op_has_atomiceth(op)) {
		put_be64(b, n, w->va);
		put_be32(b, n + 8, w->rkey);
		put_be64(b, n + 12, w->swap_add);
		put_be64(b, n + 20, w->compare);
		n += 28;
	}
	if (verbs_op_has_aeth(op)) {
		put_be32(b, n, w->aeth);
		n += 4;
	}
	if (verbs_op_has_atomicacketh(op)) {
		put_be64(b, n, w->swap_add);
		n += 8;
	}
	if (verbs_op_has_imm(op)) {
		memcpy(b + n, &w->imm, 4);	/* network order already */
		n += 4;
	}
	if (verbs_op_has_ieth(op)) {
		put_be32(b, n, w->imm);		/* the R_Key, in host order */
		n += 4;
	}
	memcpy(b + n, payload, MIN((size_t)w->len, rec_len - sizeof(*w)));
	n += w->len + pad;
	emit(c, b, finish(b, n), grh, w->sgid, w->dgid, w->sgid_index, w->sqpn);
	g_free(b);
}

static bool wanted(const struct pkt_capture *c, const struct port *out, bool first)
{
	if (c->o.port)
		return out == c->o.port || out->remote == c->o.port;
	if (c->o.node)
		return out->node == c->o.node || (out->remote && out->remote->node == c->o.node);
	return first;
}

static void on_packet(void *ctx, const struct port *out, const struct mad_pkt *p, bool first)
{
	struct pkt_capture *c = ctx;
	size_t i, segs;

	if (c->stopped || !wanted(c, out, first))
		return;
	if (p->data) {
		write_data(c, p);
	} else if (p->rmpp) {
		uint8_t seg[MAD_SIZE];

		segs = rmpp_segments(p->rmpp);
		for (i = 1; i <= segs; i++) {
			rmpp_segment(p->rmpp, i, seg);
			write_mad(c, p, seg);
		}
	} else {
		write_mad(c, p, p->mad);
	}
}

struct pkt_capture *pkt_capture_start(struct fabric *f, const char *path,
				      const struct capture_opts *o, GError **err)
{
	/* The pcap file header: magic (microsecond stamps), version 2.4,
	 * zone 0, sigfigs 0, snaplen, link type; in our byte order. */
	const struct {
		uint32_t magic;
		uint16_t major, minor;
		int32_t zone;
		uint32_t sigfigs, snaplen, link;
	} head = { 0xa1b2c3d4, 2, 4, 0, 0, PCAP_SNAPLEN, LINKTYPE_ERF };
	struct pkt_capture *c;
	struct stat st;
	off_t replaced = -1;
	int fd;

	if (f->tap.fn) {
		g_set_error(err, IBEMU_ERROR, EBUSY, "a capture is running already");
		return NULL;
	}
	/* A device or a FIFO is no capture file (/dev/full took the header
	 * into stdio's buffer and said yes); a file there is replaced, and
	 * the answer says so. */
	if (stat(path, &st) == 0) {
		if (!S_ISREG(st.st_mode)) {
			g_set_error(err, IBEMU_ERROR, EINVAL, "cannot write %s: not a regular file", path);
			return NULL;
		}
		replaced = st.st_size;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 || write(fd, &head, sizeof(head)) != (ssize_t)sizeof(head)) {
		g_set_error(err, IBEMU_ERROR, errno, "cannot write %s: %s", path, g_strerror(errno));
		if (fd >= 0) {
			close(fd);
			if (replaced < 0)	/* ours: made just now */
				unlink(path);
		}
		return NULL;
	}
	c = g_new0(struct pkt_capture, 1);
	c->f = f;
	c->path = g_strdup(path);
	c->fd = fd;
	c->buf = g_malloc(OUT_BUF_BYTES);
	c->o = *o;
	if (!c->o.max_bytes)
		c->o.max_bytes = (uint64_t)CAPTURE_DEFAULT_MAX_MB << 20;
	c->bytes = c->file_bytes = sizeof(head);
	c->replaced = replaced;
	c->real0_us = g_get_real_time();
	c->mono0_us = f->tq ? timerq_now(f->tq) : 0;
	f->tap.fn = on_packet;
	f->tap.ctx = c;
	return c;
}

void pkt_capture_flush(struct pkt_capture *c)
{
	if (!c->stopped || c->buf_len)
		flush_out(c);
}

void pkt_capture_stop(struct pkt_capture *c)
{
	if (!c)
		return;
	c->f->tap.fn = NULL;
	c->f->tap.ctx = NULL;
	flush_out(c);
	if (close(c->fd) != 0)
		g_warning("capture %s: %s", c->path, g_strerror(errno));
	g_free(c->buf);
	g_free(c->path);
	g_free(c);
}

const char *pkt_capture_path(const struct pkt_capture *c) { return c->path; }
uint64_t pkt_capture_packets(const struct pkt_capture *c) { return c->packets; }
uint64_t pkt_capture_bytes(const struct pkt_capture *c) { return c->bytes; }
const char *pkt_capture_stopped(const struct pkt_capture *c) { return c->stopped; }
int64_t pkt_capture_replaced(const struct pkt_capture *c) { return c->replaced; }
