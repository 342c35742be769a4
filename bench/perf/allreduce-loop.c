/* SPDX-License-Identifier: MIT */
/*
 * The reference for bench/perf/compare.sh: the smallest honest MPI_Allreduce
 * timing loop (float sum, warm-up, barrier, a timed batch, slowest rank),
 * printing "size time_us" per size from 8 B to 4 MiB.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, iters = argc > 1 ? atoi(argv[1]) : 20, warmup = argc > 2 ? atoi(argv[2]) : 5;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    size_t max = 4u << 20;
    float *send = malloc(max), *recv = malloc(max);
    /* Touch every page: untouched calloc memory reads the shared zero page and looks fast. */
    for (size_t i = 0; i < max / 4; i++)
        send[i] = recv[i] = (float)(i % 3);
    for (size_t bytes = 8; bytes <= max; bytes *= 2) {
        int count = (int)(bytes / 4);
        for (int i = 0; i < warmup; i++)
            MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        double t = (MPI_Wtime() - t0) / iters * 1e6, worst;
        MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (rank == 0)
            printf("%zu %.3f\n", bytes, worst);
    }
    free(send);
    free(recv);
    MPI_Finalize();
    return 0;
}
