/* SPDX-License-Identifier: MIT */
/*
 * mpi_check: a small MPI job whose every result is checked, for the
 * virtual cluster (docs/virtual-cluster.md): where each rank runs, a
 * ping-pong between ranks 0 and 1 (latency and bandwidth, every byte
 * checked), an allreduce, an alltoall and a barrier loop. Prints one line
 * per rank's host, one per measurement, and "mpi_check: OK" from rank 0;
 * any wrong value aborts the job with a line saying which.
 *
 *   mpirun -np N mpi_check [ITERATIONS_SCALE]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;
static char outbuf[BUFSIZ];	/* stdout's, for main's setvbuf */

static void fail(const char *what, long at, long got, long want)
{
	fprintf(stderr, "mpi_check: rank %d: %s: at %ld got %ld, want %ld\n", rank, what, at,
		got, want);
	MPI_Abort(MPI_COMM_WORLD, 3);
}

static unsigned char pattern(size_t i, int iter, int from)
{
	return (unsigned char)(i * 31 + (size_t)iter * 7 + (size_t)from * 101);
}

/* Ranks 0 and 1 bounce @len bytes @iters times; each side checks every
 * byte it receives. The half round trip in microseconds. */
static double pingpong(unsigned char *buf, size_t len, int iters)
{
	double t0 = 0;
	int it;
	size_t i;

	MPI_Barrier(MPI_COMM_WORLD);
	if (rank > 1)
		return 0;
	t0 = MPI_Wtime();
	for (it = 0; it < iters; it++) {
		if (rank == 0) {
			for (i = 0; i < len; i++)
				buf[i] = pattern(i, it, 0);
			MPI_Send(buf, (int)len, MPI_BYTE, 1, it, MPI_COMM_WORLD);
			MPI_Recv(buf, (int)len, MPI_BYTE, 1, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			for (i = 0; i < len; i++)
				if (buf[i] != pattern(i, it, 1))
					fail("ping-pong reply", (long)i, buf[i], pattern(i, it, 1));
		} else {
			MPI_Recv(buf, (int)len, MPI_BYTE, 0, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			for (i = 0; i < len; i++)
				if (buf[i] != pattern(i, it, 0))
					fail("ping-pong request", (long)i, buf[i], pattern(i, it, 0));
			for (i = 0; i < len; i++)
				buf[i] = pattern(i, it, 1);
			MPI_Send(buf, (int)len, MPI_BYTE, 0, it, MPI_COMM_WORLD);
		}
	}
	return (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
}

int main(int argc, char **argv)
{
	static const struct { size_t len; int iters; } pp[] = {
		{ 8, 200 }, { 65536, 40 }, { 1 << 20, 8 },
	};
	char name[MPI_MAX_PROCESSOR_NAME];
	int scale = argc > 1 ? atoi(argv[1]) : 1, n, i, j, it;
	unsigned char *buf = malloc(1 << 20);
	long *in, *out, sum;
	uint64_t bytes = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	/*
	 * Progress seen as it comes, a line per write(): MPICH's MPI_Init
	 * leaves stdout unbuffered (a 1-byte buffer, which a later
	 * setvbuf(NULL) keeps), so printf would write a line in pieces and
	 * the launcher mix one rank's pieces with another's.
	 */
	setvbuf(stdout, outbuf, _IOLBF, sizeof(outbuf));
	if (scale < 1)
		scale = 1;
	MPI_Get_processor_name(name, &n);
	/* Each rank's host, in rank order. */
	for (i = 0; i < size; i++) {
		if (i == rank)
			printf("mpi_check: rank %d of %d on %s\n", rank, size, name);
		fflush(stdout);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	if (size < 2) {
		fprintf(stderr, "mpi_check: needs 2 ranks or more\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	for (i = 0; i < (int)(sizeof(pp) / sizeof(pp[0])); i++) {
		double us = pingpong(buf, pp[i].len, pp[i].iters * scale);

		bytes += 2 * (uint64_t)pp[i].len * (uint64_t)(pp[i].iters * scale);
		if (rank == 0)
			printf("mpi_check: ping-pong %zu bytes: %.1f us, %.1f MB/s\n", pp[i].len, us,
			       (double)pp[i].len / us);
	}
	/* allreduce: the sum of every rank's values, 4096 longs. */
	in = malloc(4096 * sizeof(long) * (size_t)size);
	out = malloc(4096 * sizeof(long) * (size_t)size);
	for (it = 0; it < 10 * scale; it++) {
		for (i = 0; i < 4096; i++)
			in[i] = (long)rank * 4096 + i + it;
		MPI_Allreduce(in, out, 4096, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		for (i = 0; i < 4096; i++) {
			sum = 4096L * size * (size - 1) / 2 + (long)size * (i + it);
			if (out[i] != sum)
				fail("allreduce", i, out[i], sum);
		}
	}
	if (rank == 0)
		printf("mpi_check: allreduce of 4096 longs x %d: right\n", 10 * scale);
	/* alltoall: rank r sends j*1000000 + r*1000 + k to rank j. */
	for (it = 0; it < 10 * scale; it++) {
		for (j = 0; j < size; j++)
			for (i = 0; i < 4096; i++)
				in[j * 4096 + i] = (long)j * 1000000 + rank * 1000 + i % 1000 + it;
		MPI_Alltoall(in, 4096, MPI_LONG, out, 4096, MPI_LONG, MPI_COMM_WORLD);
		for (j = 0; j < size; j++)
			for (i = 0; i < 4096; i++) {
				long want = (long)rank * 1000000 + j * 1000 + i % 1000 + it;

				if (out[j * 4096 + i] != want)
					fail("alltoall", j * 4096 + i, out[j * 4096 + i], want);
			}
	}
	if (rank == 0)
		printf("mpi_check: alltoall of 4096 longs per pair x %d: right\n", 10 * scale);
	for (it = 0; it < 100 * scale; it++)
		MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		printf("mpi_check: %d barriers\n", 100 * scale);
		printf("mpi_check: ping-pong bytes %llu\n", (unsigned long long)bytes);
		printf("mpi_check: OK\n");
	}
	free(in);
	free(out);
	free(buf);
	MPI_Finalize();
	return 0;
}
