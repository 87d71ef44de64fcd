/* SPDX-License-Identifier: MIT */
/*
 * A token goes around the ranks 100 times, each adding its rank; rank 0
 * checks the sum. With one rank per emulated host (ibemu run --hosts),
 * every hop crosses the emulated fabric. The example of
 * examples/ci/github-actions.yml.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	char host[MPI_MAX_PROCESSOR_NAME];
	long token = 0, want;
	int rank, size, n, lap;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Get_processor_name(host, &n);
	printf("rank %d of %d on %s\n", rank, size, host);
	for (lap = 0; lap < 100; lap++) {
		if (rank != 0)
			MPI_Recv(&token, 1, MPI_LONG, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		token += rank;
		MPI_Send(&token, 1, MPI_LONG, (rank + 1) % size, 0, MPI_COMM_WORLD);
		if (rank == 0)
			MPI_Recv(&token, 1, MPI_LONG, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	want = 100L * size * (size - 1) / 2;
	if (rank == 0)
		printf("ring: token %ld after 100 laps, %s\n", token, token == want ? "right" : "WRONG");
	MPI_Finalize();
	return rank == 0 && token != want;
}
