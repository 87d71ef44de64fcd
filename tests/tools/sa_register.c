/* SPDX-License-Identifier: MIT */
/*
 * sa_register: what a program registers at the SA, with libibumad, for
 * the SA tests (saquery only reads):
 *
 *   sa_register service ID NAME    SubnAdmSet(ServiceRecord): ID, the port's GID,
 *                                  P_Key 0xffff, lease forever, NAME
 *   sa_register unservice ID       SubnAdmDelete(ServiceRecord) of ID
 *   sa_register inform TRAP        SubnAdmSet(InformInfo): subscribe to TRAP
 *   sa_register uninform TRAP      ... and take it back
 *   sa_register hostile            requests an SA must refuse, one a line
 *   sa_register listen TRAP        subscribe to TRAP, then print the first
 *                                  Report that comes (30 s at most) and answer it
 *
 * Prints one line a request: "NAME: status 0xSSSS" (and what came back).
 */
#include <endian.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include <infiniband/umad_sa.h>

#define SA_HDR_LEN	56
#define SR_SIZE		176

static int fd, agent;
static umad_port_t port;
static uint64_t tid = 0x5a000000;

/* Send an SA MAD (@method, @attr, @comp, @rec of @len bytes, @cv class
 * version) to the SM and return the status of the answer, with the
 * answer's record in @out (200 bytes) if given; -1: none came. */
static int ask(const char *what, uint8_t cv, uint8_t method, uint16_t attr, uint64_t comp,
	       const void *rec, size_t len, uint8_t *out)
{
	uint8_t buf[4096];
	void *umad = buf;
	uint8_t *mad = umad_get_mad(umad);
	int n = (int)(sizeof(buf) - umad_size()), status;

	memset(buf, 0, sizeof(buf));
	mad[0] = 1;
	mad[1] = UMAD_CLASS_SUBN_ADM;
	mad[2] = cv;
	mad[3] = method;
	mad_set_field64(mad, 0, IB_MAD_TRID_F, ++tid);
	mad_set_field(mad, 0, IB_MAD_ATTRID_F, attr);
	mad_set_field64(mad, 0, IB_SA_COMPMASK_F, comp);
	memcpy(mad + SA_HDR_LEN, rec, len);
	umad_set_addr(umad, port.sm_lid, 1, port.sm_sl, UMAD_QKEY);
	if (umad_send(fd, agent, umad, IB_MAD_SIZE, 1000, 2) < 0 ||
	    umad_recv(fd, umad, &n, 3000) < 0 || umad_status(umad)) {
		printf("%s: no answer\n", what);
		return -1;
	}
	status = mad_get_field(mad, 0, IB_MAD_STATUS_F);
	printf("%s: status 0x%04x\n", what, status);
	if (out)
		memcpy(out, mad + SA_HDR_LEN, IB_SA_DATA_SIZE);
	return status;
}

static void service_rec(uint8_t *r, uint64_t id, const char *name)
{
	uint64_t pfx = port.gid_prefix, guid = port.port_guid;	/* network order */

	memset(r, 0, SR_SIZE);
	mad_set_field64(r, 0, IB_SA_SR_ID_F, id);
	memcpy(r + 8, &pfx, 8);
	memcpy(r + 16, &guid, 8);
	r[24] = r[25] = 0xff;				/* P_Key */
	memset(r + 28, 0xff, 4);			/* lease: forever */
	if (name)
		strncpy((char *)r + 48, name, 64);
}

/* InformInfo subscribing this port to generic trap @trap from any LID. */
static void inform_rec(uint8_t *r, unsigned trap, int subscribe)
{
	memset(r, 0, 36);
	r[16] = r[17] = 0;			/* LIDRangeBegin 0 .. */
	r[18] = r[19] = 0xff;			/* LIDRangeEnd 0xffff: all */
	r[22] = 1;				/* IsGeneric */
	r[23] = (uint8_t)subscribe;
	r[24] = r[25] = 0xff;			/* Type: all */
	r[26] = (uint8_t)(trap >> 8);
	r[27] = (uint8_t)trap;
	r[33] = r[34] = r[35] = 0xff;		/* ProducerType: all */
}

/* Subscribe to @trap on an agent that takes the SA's Reports, and print
 * the first one (its trap, type, producer and issuer). */
static int listen_reports(unsigned trap)
{
	long methods[16 / sizeof(long)] = { 0 };
	uint8_t rec[IB_SA_DATA_SIZE], buf[4096];
	void *umad = buf;
	uint8_t *mad = umad_get_mad(umad), *n;
	int rep, len;

	methods[0] = 1L << UMAD_METHOD_REPORT;
	rep = umad_register(fd, UMAD_CLASS_SUBN_ADM, UMAD_SA_CLASS_VERSION, 1, methods);
	if (rep < 0) {
		fprintf(stderr, "umad_register for Reports failed\n");
		return 1;
	}
	inform_rec(rec, trap, 1);
	rec[28] = rec[29] = 0;
	rec[30] = 1;		/* QPN 1, the QP this agent is on */
	if (ask("inform", 2, UMAD_METHOD_SET, UMAD_ATTR_INFORM_INFO, 0, rec, 36, NULL) != 0)
		return 1;
	printf("subscribed\n");
	fflush(stdout);
	for (;;) {
		len = (int)(sizeof(buf) - umad_size());
		if (umad_recv(fd, umad, &len, 30000) < 0) {
			printf("no report\n");
			return 1;
		}
		if (mad[1] == UMAD_CLASS_SUBN_ADM && mad[3] == UMAD_METHOD_REPORT)
			break;
	}
	n = mad + SA_HDR_LEN;
	printf("report: trap %u type %u producer %u issuer LID %u\n",
	       mad_get_field(n, 0, IB_NOTICE_TRAP_NUMBER_F), mad_get_field(n, 0, IB_NOTICE_TYPE_F),
	       mad_get_field(n, 0, IB_NOTICE_PRODUCER_F),
	       mad_get_field(n, 0, IB_NOTICE_ISSUER_LID_F));
	/* ReportResp: the Report back, as the subscriber answers it. */
	mad[3] = UMAD_METHOD_REPORT_RESP;
	umad_set_addr(umad, umad_get_mad_addr(umad)->lid ? ntohs(umad_get_mad_addr(umad)->lid) :
		      port.sm_lid, 1, 0, UMAD_QKEY);
	umad_send(fd, rep, umad, IB_MAD_SIZE, 0, 0);
	return 0;
}

int main(int argc, char **argv)
{
	uint8_t rec[IB_SA_DATA_SIZE], out[IB_SA_DATA_SIZE];

	if (argc < 2) {
		fprintf(stderr, "usage: %s service ID NAME | unservice ID | inform TRAP | "
			"uninform TRAP | hostile\n", argv[0]);
		return 2;
	}
	if (umad_init() < 0 || umad_get_port(NULL, 0, &port) < 0 ||
	    (fd = umad_open_port(NULL, 0)) < 0 ||
	    (agent = umad_register(fd, UMAD_CLASS_SUBN_ADM, UMAD_SA_CLASS_VERSION, 1, NULL)) < 0) {
		perror("umad");
		return 1;
	}
	if (!strcmp(argv[1], "service") && argc == 4) {
		service_rec(rec, strtoull(argv[2], NULL, 0), argv[3]);
		if (ask("register", 2, UMAD_METHOD_SET, UMAD_SA_ATTR_SERVICE_REC, 0x7f, rec,
			SR_SIZE, out) == 0)
			printf("registered: %.64s\n", (char *)out + 48);
	} else if (!strcmp(argv[1], "unservice") && argc == 3) {
		service_rec(rec, strtoull(argv[2], NULL, 0), NULL);
		ask("delete", 2, UMAD_SA_METHOD_DELETE, UMAD_SA_ATTR_SERVICE_REC, 0x7, rec, SR_SIZE,
		    NULL);
	} else if (!strcmp(argv[1], "inform") || !strcmp(argv[1], "uninform")) {
		inform_rec(rec, argc > 2 ? (unsigned)atoi(argv[2]) : 64, argv[1][0] == 'i');
		ask(argv[1], 2, UMAD_METHOD_SET, UMAD_ATTR_INFORM_INFO, 0, rec, 36, NULL);
	} else if (!strcmp(argv[1], "listen") && argc == 3) {
		return listen_reports((unsigned)atoi(argv[2]));
	} else if (!strcmp(argv[1], "hostile")) {
		memset(rec, 0xa5, sizeof(rec));
		ask("unknown attribute", 2, UMAD_METHOD_GET, 0x7777, ~0ull, rec, sizeof(rec), NULL);
		ask("delete of a NodeRecord", 2, UMAD_SA_METHOD_DELETE, UMAD_SA_ATTR_NODE_REC, 0,
		    rec, sizeof(rec), NULL);
		ask("class version 1", 1, UMAD_METHOD_GET, UMAD_SA_ATTR_NODE_REC, 0, rec,
		    sizeof(rec), NULL);
		ask("Get of every NodeRecord", 2, UMAD_METHOD_GET, UMAD_SA_ATTR_NODE_REC, 0, rec,
		    sizeof(rec), NULL);
		ask("Get of a NodeRecord by a LID nobody has", 2, UMAD_METHOD_GET,
		    UMAD_SA_ATTR_NODE_REC, 1, rec, sizeof(rec), NULL);
		ask("join without a PortGID", 2, UMAD_METHOD_SET, UMAD_SA_ATTR_MCMEMBER_REC, 0x1, rec,
		    sizeof(rec), NULL);
		ask("join of a port nobody has", 2, UMAD_METHOD_SET, UMAD_SA_ATTR_MCMEMBER_REC,
		    ~0ull, rec, sizeof(rec), NULL);
		ask("leave of a group nobody made", 2, UMAD_SA_METHOD_DELETE,
		    UMAD_SA_ATTR_MCMEMBER_REC, ~0ull, rec, sizeof(rec), NULL);
		ask("PathRecord to a GID nobody has", 2, UMAD_METHOD_GET, UMAD_SA_ATTR_PATH_REC,
		    0x4, rec, sizeof(rec), NULL);
		ask("ServiceRecord without its key", 2, UMAD_METHOD_SET, UMAD_SA_ATTR_SERVICE_REC,
		    0x1, rec, sizeof(rec), NULL);
	} else {
		fprintf(stderr, "%s: what is '%s'?\n", argv[0], argv[1]);
		return 2;
	}
	umad_close_port(fd);
	return 0;
}
