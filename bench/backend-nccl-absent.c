/* SPDX-License-Identifier: MIT */
/* Stands in for the nccl backend when configure found no CUDA toolkit or NCCL. */
#include "bench/internal.h"
#include "util/log.h"

static const char *absent_unsupported(int dtype, int op)
{
    (void)dtype;
    (void)op;
    return NULL;
}

static int absent_init(struct bench_ctx *c)
{
    (void)c;
    util_error("this topotune-bench was built without the CUDA toolkit or NCCL: set CUDA_HOME and "
               "NCCL_HOME, configure again, or use --backend mpi");
    return BENCH_EXIT_CUDA;
}

const struct bench_backend bench_backend_nccl = {
    .name = "nccl",
    .default_average = 1,
    .unsupported = absent_unsupported,
    .init = absent_init,
};
