/* SPDX-License-Identifier: MIT */
/*
 * The mpi backend: MPI_Allreduce on host buffers, one rank per process.
 * Time per size is a back-to-back batch on the wall clock (MPI_Wtime), as
 * nccl-tests times its batches; the driver takes the maximum over ranks.
 */
#include "bench/internal.h"
#include "util/log.h"
#include "util/mem.h"

#include <stdlib.h>
#include <string.h>

struct mpi_state {
    void *send, *recv;
    size_t bytes;
};

static MPI_Datatype mpi_type(int dtype)
{
    switch (dtype) {
    case BENCH_INT8:
        return MPI_INT8_T;
    case BENCH_UINT8:
        return MPI_UINT8_T;
    case BENCH_INT32:
        return MPI_INT32_T;
    case BENCH_UINT32:
        return MPI_UINT32_T;
    case BENCH_INT64:
        return MPI_INT64_T;
    case BENCH_UINT64:
        return MPI_UINT64_T;
    case BENCH_FLOAT:
        return MPI_FLOAT;
    case BENCH_DOUBLE:
        return MPI_DOUBLE;
    }
    return MPI_DATATYPE_NULL;
}

static MPI_Op mpi_op(int op)
{
    switch (op) {
    case BENCH_OP_SUM:
        return MPI_SUM;
    case BENCH_OP_PROD:
        return MPI_PROD;
    case BENCH_OP_MIN:
        return MPI_MIN;
    case BENCH_OP_MAX:
        return MPI_MAX;
    }
    return MPI_OP_NULL;
}

static const char *mpi_unsupported(int dtype, int op)
{
    if (dtype == BENCH_HALF || dtype == BENCH_BFLOAT16)
        return "MPI has no half or bfloat16 type: use int8 uint8 int32 uint32 int64 uint64 float "
               "or double with --backend mpi";
    if (op == BENCH_OP_AVG)
        return "MPI has no avg reduction: use sum, prod, min or max with --backend mpi";
    return NULL;
}

static int mpi_init(struct bench_ctx *c)
{
    struct mpi_state *s = util_xcalloc(1, sizeof(*s));
    c->state = s;
    s->bytes = c->opt->max_bytes ? c->opt->max_bytes : 1;
    /* Out of host memory is neither MPI's fault nor a usage error: nccl-tests' internal error. */
    if (posix_memalign(&s->send, 64, s->bytes) || posix_memalign(&s->recv, 64, s->bytes)) {
        util_error("cannot allocate 2 x %zu bytes of host memory for -e %zu: give a smaller -e, or "
                   "free memory on this host",
                   s->bytes, c->opt->max_bytes);
        return BENCH_EXIT_INTERNAL;
    }
    /* Errors come back as codes, so a failure names its stage instead of aborting the job. */
    MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
    json_t *dev = json_object();
    json_object_set_new(dev, "device", json_integer(c->local_proc));
    json_object_set_new(dev, "pci", json_string("0000:00:00"));
    json_object_set_new(dev, "name", json_string("host memory (MPI)"));
    json_array_append_new(c->devices, dev);
    return 0;
}

static int allreduce(struct bench_ctx *c, size_t count, int in_place)
{
    struct mpi_state *s = c->state;
    int rc = MPI_Allreduce(in_place ? MPI_IN_PLACE : s->send, s->recv, (int)count,
                           mpi_type(c->dtype), mpi_op(c->op), c->comm);
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        util_error("MPI_Allreduce failed in stage %s: %s", bench_current_stage(), msg);
        return BENCH_EXIT_COMM;
    }
    return 0;
}

static int mpi_run(struct bench_ctx *c, size_t count, int in_place, struct bench_result *r)
{
    struct mpi_state *s = c->state;
    const struct bench_options *o = c->opt;
    size_t bytes = count * bench_dtype_size(c->dtype);
    int rc = 0;
    if (count > (size_t)0x7fffffff) {
        util_error("size %zu: %zu elements exceed MPI's int count", bytes, count);
        return BENCH_EXIT_USAGE;
    }
    bench_fill(s->send, count, c->dtype, c->op, c->rank, c->nranks, 99);
    memcpy(s->recv, s->send, bytes);
    bench_stage(c, "warmup");
    for (int i = 0; i < o->warmup && !rc; i++)
        rc = allreduce(c, count, in_place);
    if (rc)
        return rc; /* failed in warm-up: the stage says so */
    bench_stage(c, "size:%zu", bytes);
    bench_hook_stall(c, "size");
    if (MPI_Barrier(c->comm) != MPI_SUCCESS)
        rc = BENCH_EXIT_COMM;
    double t0 = MPI_Wtime();
    for (int i = 0; i < o->iters && !rc; i++)
        rc = allreduce(c, count, in_place);
    r->time_us = (MPI_Wtime() - t0) / o->iters * 1e6;
    if (rc)
        return rc;
    bench_stage(c, "check");
    r->wrong = o->check ? 0 : -1;
    for (int rep = 0; rep < o->check && !rc; rep++) {
        bench_fill(in_place ? s->recv : s->send, count, c->dtype, c->op, c->rank, c->nranks, rep);
        if (!in_place)
            memset(s->recv, 0, bytes);
        rc = allreduce(c, count, in_place);
        bench_hook_corrupt(c, s->recv, count);
        if (!rc)
            r->wrong += bench_check(s->recv, count, c->dtype, c->op, c->nranks, rep);
    }
    return rc;
}

static void mpi_release(struct bench_ctx *c)
{
    struct mpi_state *s = c->state;
    if (!s)
        return;
    free(s->send);
    free(s->recv);
    free(s);
    c->state = NULL;
}

const struct bench_backend bench_backend_mpi = {
    .name = "mpi",
    .default_average = 3, /* the slowest rank decides, as the issue asks */
    .unsupported = mpi_unsupported,
    .init = mpi_init,
    .run = mpi_run,
    .release = mpi_release,
};
