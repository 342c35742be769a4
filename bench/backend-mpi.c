/* SPDX-License-Identifier: MIT */
/*
 * The mpi backend: each collective as its MPI call on host buffers, one rank per
 * process (MPI_Allreduce, MPI_Allgather, MPI_Reduce_scatter_block, MPI_Bcast,
 * MPI_Reduce, MPI_Alltoall, MPI_Sendrecv to the next rank as nccl-tests'
 * sendrecv). Time per size is a back-to-back batch on the wall clock
 * (MPI_Wtime), as nccl-tests times its batches; the driver takes the maximum
 * over ranks.
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
    case BENCH_HALF: /* moved, never reduced (mpi_unsupported): 16 bits as they are */
    case BENCH_BFLOAT16:
        return MPI_UINT16_T;
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

static const char *mpi_unsupported(int coll, int dtype, int op)
{
    if (!model_coll_reduces(coll))
        return NULL; /* data is only moved: every type is bytes, and there is no op */
    if (dtype == BENCH_HALF || dtype == BENCH_BFLOAT16)
        return "MPI cannot reduce half or bfloat16: use int8 uint8 int32 uint32 int64 uint64 "
               "float or double with --backend mpi";
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

/* Where a placement's input and output lie: out of place, the send and receive buffers; in
 * place, MPI_IN_PLACE's conventions (the output buffer holds the input: at this rank's part
 * for all_gather, whole for reduce_scatter and alltoall, the result in the first part). */
struct place {
    void *in, *out;
    int in_place;
};

static struct place place_of(struct mpi_state *s, const struct bench_ctx *c,
                             const struct bench_counts *n, int in_place)
{
    struct place p = {s->send, s->recv, in_place};
    if (!in_place)
        return p;
    size_t elt = bench_dtype_size(c->dtype);
    p.in =
        c->coll == MODEL_ALL_GATHER ? (char *)s->recv + (size_t)c->rank * n->param * elt : s->recv;
    p.out = s->recv;
    return p;
}

static int coll_call(struct bench_ctx *c, const struct bench_counts *n, const struct place *p)
{
    MPI_Datatype t = mpi_type(c->dtype);
    MPI_Op op = mpi_op(c->op);
    int param = (int)n->param, root = c->opt->root, rc;
    void *in = p->in_place ? MPI_IN_PLACE : p->in;
    switch (c->coll) {
    case MODEL_ALL_GATHER:
        rc = MPI_Allgather(in, param, t, p->out, param, t, c->comm);
        break;
    case MODEL_REDUCE_SCATTER:
        rc = MPI_Reduce_scatter_block(in, p->out, param, t, op, c->comm);
        break;
    case MODEL_BROADCAST: /* one buffer: the root's input was put in it */
        rc = MPI_Bcast(p->out, param, t, root, c->comm);
        break;
    case MODEL_REDUCE: /* MPI_IN_PLACE is the root's alone; a non-root receives nothing */
        rc = MPI_Reduce(p->in_place && c->rank != root ? p->out : in,
                        c->rank == root ? p->out : NULL, param, t, op, root, c->comm);
        break;
    case MODEL_ALLTOALL:
        rc = MPI_Alltoall(in, param, t, p->out, param, t, c->comm);
        break;
    case MODEL_SENDRECV: {
        int next = (c->rank + 1) % c->nranks, prev = (c->rank - 1 + c->nranks) % c->nranks;
        rc = p->in_place ? MPI_Sendrecv_replace(p->out, param, t, next, 0, prev, 0, c->comm,
                                                MPI_STATUS_IGNORE)
                         : MPI_Sendrecv(p->in, param, t, next, 0, p->out, param, t, prev, 0,
                                        c->comm, MPI_STATUS_IGNORE);
        break;
    }
    default:
        rc = MPI_Allreduce(in, p->out, param, t, op, c->comm);
    }
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        util_error("MPI %s failed in stage %s: %s", c->opt->collective, bench_current_stage(), msg);
        return BENCH_EXIT_COMM;
    }
    return 0;
}

/* The input of pass seed where the placement reads it; a cleared output out of place. */
static void prepare(struct bench_ctx *c, struct mpi_state *s, const struct bench_counts *n,
                    const struct place *p, int seed)
{
    size_t elt = bench_dtype_size(c->dtype);
    if (!p->in_place)
        memset(s->recv, 0, n->recv * elt);
    /* broadcast reads the one buffer it writes: the input goes there, in place or not */
    void *in = c->coll == MODEL_BROADCAST ? p->out : p->in;
    bench_coll_fill(c, in, n, c->rank, seed);
}

static int mpi_run(struct bench_ctx *c, const struct bench_counts *n, int in_place,
                   struct bench_result *r)
{
    struct mpi_state *s = c->state;
    const struct bench_options *o = c->opt;
    size_t elt = bench_dtype_size(c->dtype), bytes = bench_coll_size(n, elt);
    int rc = 0;
    if (n->send > (size_t)0x7fffffff || n->recv > (size_t)0x7fffffff) {
        util_error("size %zu: %zu elements exceed MPI's int count", bytes,
                   n->send > n->recv ? n->send : n->recv);
        return BENCH_EXIT_USAGE;
    }
    struct place p = place_of(s, c, n, in_place);
    prepare(c, s, n, &p, 99);
    bench_stage(c, "warmup");
    for (int i = 0; i < o->warmup && !rc; i++)
        rc = coll_call(c, n, &p);
    if (rc)
        return rc; /* failed in warm-up: the stage says so */
    bench_stage(c, "size:%zu", bytes);
    bench_hook_stall(c, "size");
    if (MPI_Barrier(c->comm) != MPI_SUCCESS)
        rc = BENCH_EXIT_COMM;
    double t0 = MPI_Wtime();
    for (int i = 0; i < o->iters && !rc; i++)
        rc = coll_call(c, n, &p);
    r->time_us = (MPI_Wtime() - t0) / o->iters * 1e6;
    if (rc)
        return rc;
    bench_stage(c, "check");
    r->wrong = o->check ? 0 : -1;
    for (int rep = 0; rep < o->check && !rc; rep++) {
        prepare(c, s, n, &p, rep);
        rc = coll_call(c, n, &p);
        bench_hook_corrupt(c, p.out, n->recv);
        if (!rc)
            r->wrong += bench_coll_check(c, p.out, n, c->rank, rep, in_place);
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
