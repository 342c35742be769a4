/* SPDX-License-Identifier: MIT */
/*
 * The nccl backend: each collective as nccl-tests calls it (ncclAllReduce,
 * ncclAllGather, ncclReduceScatter, ncclBroadcast, ncclReduce; alltoall as
 * ncclAlltoAll from NCCL 2.28, else grouped ncclSend/ncclRecv to every rank;
 * sendrecv to the next rank, from the previous) on GPU buffers, one rank per GPU;
 * -g N GPUs per process, MPI broadcasting the unique id between processes.
 *
 * Nothing here may wait forever (NCCL reference section 8): every wait polls the
 * stream's event and ncclCommGetAsyncError against the stage deadline; on an
 * error or timeout all local communicators are aborted before the process exits
 * with 3 or 4. Communicators are blocking, as nccl-tests' are: a non-blocking
 * one starts a thread in every ncclGroupEnd (group.cc, groupLaunchNonBlocking)
 * and the batch waited for it between calls, tens of microseconds of an idle GPU
 * in every timed call; an init or a connection that hangs inside NCCL is the
 * stage watchdog's to end. Times come from CUDA events around the timed batch
 * (the slowest local GPU).
 */
#include "bench/internal.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/log.h"
#include "util/mem.h"

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 19, 0)
#define HAVE_NCCL_MEM_ALLOC 1
/* weak: the NCCL loaded at run time may be older than the headers (a container's) and lack them;
 * a program bound at load (LD_BIND_NOW, -z now) would not start. Called only where present. */
#pragma weak ncclMemAlloc
#pragma weak ncclMemFree
#endif
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
#pragma weak ncclAlltoAll
#endif

struct nccl_gpu {
    int device;
    ncclComm_t comm;
    cudaStream_t stream;
    cudaEvent_t start, stop;
    void *send, *recv;
    int nccl_mem; /* send and recv from ncclMemAlloc (freed by ncclMemFree), else cudaMalloc */
};

struct nccl_state {
    int ngpus;
    struct nccl_gpu *gpu;
    void *host; /* for filling and checking */
    size_t bytes;
    char *log_path; /* NCCL_DEBUG_FILE resolved for this process, or NULL */
    int version;    /* the NCCL library's, as ncclGetVersion gives it */
};

static const char *nccl_unsupported(int coll, int dtype, int op)
{
    (void)coll;
    (void)dtype;
    (void)op;
    return NULL; /* NCCL reduces every type and op topotune-bench knows */
}

static ncclDataType_t nccl_type(int dtype)
{
    static const ncclDataType_t map[BENCH_NDTYPES] = {
        ncclInt8,   ncclUint8,   ncclInt32,   ncclUint32,  ncclInt64,
        ncclUint64, ncclFloat16, ncclFloat32, ncclFloat64, ncclBfloat16,
    };
    return map[dtype];
}

static ncclRedOp_t nccl_op(int op)
{
    static const ncclRedOp_t map[BENCH_NOPS] = {ncclSum, ncclProd, ncclMin, ncclMax, ncclAvg};
    return map[op];
}

static int cuda_fail(const char *what, cudaError_t e)
{
    util_error("%s failed in stage %s: %s (%s)", what, bench_current_stage(), cudaGetErrorString(e),
               cudaGetErrorName(e));
    return BENCH_EXIT_CUDA;
}

#define CUDA_TRY(call)                                                                             \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess)                                                                     \
            return cuda_fail(#call, e_);                                                           \
    } while (0)

static void abort_all(struct nccl_state *s)
{
    for (int g = 0; g < s->ngpus; g++)
        if (s->gpu[g].comm) {
            ncclCommAbort(s->gpu[g].comm);
            s->gpu[g].comm = NULL;
        }
}

static int nccl_fail(struct nccl_state *s, const char *what, ncclResult_t r)
{
    util_error("%s failed in stage %s: %s (%s)", what, bench_current_stage(), ncclGetErrorString(r),
               ncclGetLastError(NULL));
    abort_all(s);
    return BENCH_EXIT_COMM;
}

/*
 * Waits until every communicator is out of ncclInProgress (and, when events is
 * set, every GPU's stop event has completed), polling against the deadline.
 */
static int wait_all(struct nccl_state *s, int events)
{
    for (;;) {
        int pending = 0;
        for (int g = 0; g < s->ngpus; g++) {
            ncclResult_t async = ncclSuccess;
            ncclCommGetAsyncError(s->gpu[g].comm, &async);
            if (async == ncclInProgress) {
                pending = 1;
            } else if (async != ncclSuccess) {
                return nccl_fail(s, "NCCL (asynchronous error)", async);
            } else if (events) {
                cudaError_t e = cudaEventQuery(s->gpu[g].stop);
                if (e == cudaErrorNotReady)
                    pending = 1;
                else if (e != cudaSuccess) {
                    abort_all(s);
                    return cuda_fail("cudaEventQuery", e);
                }
            }
        }
        if (!pending)
            return 0;
        if (bench_deadline_passed()) {
            util_error("timeout in stage %s: aborting the NCCL communicators",
                       bench_current_stage());
            abort_all(s);
            return BENCH_EXIT_TIMEOUT;
        }
        sched_yield();
    }
}

/* The file NCCL writes its log to (NCCL_DEBUG_FILE as NCCL expands it), or NULL. */
static char *resolve_log_path(void)
{
    const char *pattern = getenv("NCCL_DEBUG_FILE");
    char host[1024] = "";
    gethostname(host, sizeof(host) - 1);
    return pattern && *pattern ? bench_nccl_log_path(pattern, host, (int)getpid()) : NULL;
}

static int pick_devices(struct bench_ctx *c, struct nccl_state *s)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        util_error(
            "no GPU visible: cudaGetDeviceCount: %s; the nccl backend needs NVIDIA GPUs (use "
            "--backend mpi to measure MPI on this machine)",
            e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return BENCH_EXIT_CUDA;
    }
    int first = c->local_proc * s->ngpus;
    if (first + s->ngpus > count) {
        util_error("invalid number of GPUs: %d requested by local process %d but only %d visible",
                   s->ngpus, c->local_proc, count);
        return BENCH_EXIT_CUDA;
    }
    for (int g = 0; g < s->ngpus; g++) {
        struct cudaDeviceProp prop;
        char pci[16];
        s->gpu[g].device = first + g;
        CUDA_TRY(cudaGetDeviceProperties(&prop, s->gpu[g].device));
        snprintf(pci, sizeof(pci), "%04x:%02x:%02x", prop.pciDomainID & 0xffff,
                 prop.pciBusID & 0xff, prop.pciDeviceID & 0xff);
        json_t *dev = json_object();
        json_object_set_new(dev, "device", json_integer(s->gpu[g].device));
        json_object_set_new(dev, "pci", json_string(pci));
        json_object_set_new(dev, "name", json_string(prop.name));
        json_array_append_new(c->devices, dev);
    }
    return 0;
}

/* ncclMemAlloc as nccl-tests (AllocateBuffs) where the NCCL running has it: built against 2.19
 * or later is not enough, as the library loaded at run time may be older (the symbol missing,
 * weak here), so its version and the symbol decide. A failed ncclMemAlloc may have set its
 * pointer: only a buffer it returned is freed. */
static int alloc_buffers(struct nccl_gpu *g, size_t bytes, int nccl_version)
{
    CUDA_TRY(cudaSetDevice(g->device));
    CUDA_TRY(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    CUDA_TRY(cudaEventCreate(&g->start));
    CUDA_TRY(cudaEventCreate(&g->stop));
#ifdef HAVE_NCCL_MEM_ALLOC
    if (nccl_version >= NCCL_VERSION(2, 19, 0) && ncclMemAlloc && ncclMemFree) {
        void *send = NULL, *recv = NULL;
        int sent = ncclMemAlloc(&send, bytes) == ncclSuccess;
        if (sent && ncclMemAlloc(&recv, bytes) == ncclSuccess) {
            g->send = send;
            g->recv = recv;
            g->nccl_mem = 1;
            return 0;
        }
        if (sent) /* the send buffer came, the receive did not: both from cudaMalloc then */
            ncclMemFree(send);
    }
#else
    (void)nccl_version;
#endif
    CUDA_TRY(cudaMalloc(&g->send, bytes));
    CUDA_TRY(cudaMalloc(&g->recv, bytes));
    return 0;
}

static int init_comms(struct bench_ctx *c, struct nccl_state *s)
{
    /* Process 0 sends its status with the id, so nobody waits in NCCL init alone. */
    struct {
        int status;
        ncclUniqueId id;
    } msg;
    memset(&msg, 0, sizeof(msg));
    if (c->proc == 0) {
        ncclResult_t r = ncclGetUniqueId(&msg.id);
        msg.status = r == ncclSuccess ? 0 : BENCH_EXIT_COMM;
        if (r != ncclSuccess)
            util_error("ncclGetUniqueId failed: %s", ncclGetErrorString(r));
    }
    MPI_Bcast(&msg, sizeof(msg), MPI_BYTE, 0, c->comm);
    if (msg.status)
        return msg.status;
    ncclUniqueId id = msg.id;
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 1; /* see the top of this file */
    ncclResult_t r = ncclGroupStart();
    cudaError_t ce = cudaSuccess;
    for (int g = 0; g < s->ngpus && (r == ncclSuccess || r == ncclInProgress); g++) {
        ce = cudaSetDevice(s->gpu[g].device);
        if (ce != cudaSuccess)
            break; /* the group must still be closed */
        r = ncclCommInitRankConfig(&s->gpu[g].comm, c->nranks, id, c->rank + g, &config);
    }
    ncclResult_t end = ncclGroupEnd();
    if (ce != cudaSuccess) {
        abort_all(s);
        return cuda_fail("cudaSetDevice", ce);
    }
    if (r != ncclSuccess && r != ncclInProgress)
        return nccl_fail(s, "ncclCommInitRankConfig", r);
    if (end != ncclSuccess && end != ncclInProgress)
        return nccl_fail(s, "ncclGroupEnd", end);
    return wait_all(s, 0);
}

static int nccl_init(struct bench_ctx *c)
{
    struct nccl_state *s = util_xcalloc(1, sizeof(*s));
    c->state = s;
    s->ngpus = c->opt->ngpus;
    s->bytes = c->opt->max_bytes ? c->opt->max_bytes : 1;
    s->gpu = util_xcalloc((size_t)s->ngpus, sizeof(*s->gpu));
    s->host = malloc(s->bytes); /* -e's size: too large is the user's to fix, said below */
    s->log_path = resolve_log_path();
    if (ncclGetVersion(&s->version) != ncclSuccess)
        s->version = 0;
    int rc = 0;
    if (!s->gpu || !s->host) {
        util_error(
            "cannot allocate %zu bytes of host memory for -e %zu: give a smaller -e, or free "
            "memory on this host",
            s->bytes, c->opt->max_bytes);
        rc = BENCH_EXIT_INTERNAL;
    }
    if (!rc)
        rc = pick_devices(c, s);
    for (int g = 0; !rc && g < s->ngpus; g++)
        rc = alloc_buffers(&s->gpu[g], s->bytes, s->version);
    /* Every process must have its devices before any enters the collective init. */
    int worst = rc;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, c->comm);
    return worst ? worst : init_comms(c, s);
}

/* nccl-tests' placements: in place, the input lies in the receive buffer at this rank's part
 * (all_gather) or whole, and reduce_scatter's output at this rank's part. */
static char *input_of(const struct bench_ctx *c, struct nccl_gpu *gpu, int rank,
                      const struct bench_counts *n, int in_place)
{
    size_t elt = bench_dtype_size(c->dtype);
    if (!in_place)
        return gpu->send;
    return (char *)gpu->recv + (c->coll == MODEL_ALL_GATHER ? (size_t)rank * n->param * elt : 0);
}

static char *output_of(const struct bench_ctx *c, struct nccl_gpu *gpu, int rank,
                       const struct bench_counts *n, int in_place)
{
    size_t elt = bench_dtype_size(c->dtype);
    return (char *)gpu->recv +
           (in_place && c->coll == MODEL_REDUCE_SCATTER ? (size_t)rank * n->param * elt : 0);
}

/* Every rank's part to every rank: ncclAlltoAll where the library has it, else the pairs. */
static ncclResult_t alltoall(const struct bench_ctx *c, const struct nccl_state *s, char *in,
                             char *out, size_t count, ncclComm_t comm, cudaStream_t stream)
{
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
    if (s->version >= NCCL_VERSION(2, 28, 0) && ncclAlltoAll)
        return ncclAlltoAll(in, out, count, nccl_type(c->dtype), comm, stream);
#endif
    (void)s;
    size_t part = count * bench_dtype_size(c->dtype);
    ncclResult_t r = ncclGroupStart();
    for (int peer = 0; peer < c->nranks && (r == ncclSuccess || r == ncclInProgress); peer++) {
        r = ncclSend(in + (size_t)peer * part, count, nccl_type(c->dtype), peer, comm, stream);
        if (r == ncclSuccess || r == ncclInProgress)
            r = ncclRecv(out + (size_t)peer * part, count, nccl_type(c->dtype), peer, comm, stream);
    }
    ncclResult_t end = ncclGroupEnd();
    return r != ncclSuccess && r != ncclInProgress ? r : end;
}

static ncclResult_t call(const struct bench_ctx *c, const struct nccl_state *s,
                         struct nccl_gpu *gpu, int rank, const struct bench_counts *n, int in_place,
                         int iter)
{
    /* each iteration further along the -e sized buffers, as nccl-tests (bench_coll_shift) */
    size_t shift = bench_coll_shift(n, bench_dtype_size(c->dtype), s->bytes, iter);
    char *in = input_of(c, gpu, rank, n, in_place) + shift;
    char *out = output_of(c, gpu, rank, n, in_place) + shift;
    ncclDataType_t t = nccl_type(c->dtype);
    ncclRedOp_t op = nccl_op(c->op);
    size_t count = n->param;
    int root = c->opt->root;
    switch (c->coll) {
    case MODEL_ALL_GATHER:
        return ncclAllGather(in, out, count, t, gpu->comm, gpu->stream);
    case MODEL_REDUCE_SCATTER:
        return ncclReduceScatter(in, out, count, t, op, gpu->comm, gpu->stream);
    case MODEL_BROADCAST:
        return ncclBroadcast(in, out, count, t, root, gpu->comm, gpu->stream);
    case MODEL_REDUCE:
        return ncclReduce(in, out, count, t, op, root, gpu->comm, gpu->stream);
    case MODEL_ALLTOALL:
        return alltoall(c, s, in, out, count, gpu->comm, gpu->stream);
    case MODEL_SENDRECV: {
        int next = (rank + 1) % c->nranks, prev = (rank - 1 + c->nranks) % c->nranks;
        ncclResult_t r = ncclGroupStart();
        if (r == ncclSuccess)
            r = ncclSend(in, count, t, next, gpu->comm, gpu->stream);
        if (r == ncclSuccess || r == ncclInProgress)
            r = ncclRecv(out, count, t, prev, gpu->comm, gpu->stream);
        ncclResult_t end = ncclGroupEnd();
        return r != ncclSuccess && r != ncclInProgress ? r : end;
    }
    default:
        return ncclAllReduce(in, out, count, t, op, gpu->comm, gpu->stream);
    }
}

/* One collective per local GPU, as one group. */
static int launch(struct bench_ctx *c, struct nccl_state *s, const struct bench_counts *n,
                  int in_place, int iter)
{
    ncclResult_t r = ncclGroupStart();
    for (int g = 0; g < s->ngpus && (r == ncclSuccess || r == ncclInProgress); g++)
        r = call(c, s, &s->gpu[g], c->rank + g, n, in_place, iter);
    ncclResult_t end = ncclGroupEnd();
    if (r != ncclSuccess && r != ncclInProgress)
        return nccl_fail(s, c->opt->collective, r);
    if (end != ncclSuccess && end != ncclInProgress)
        return nccl_fail(s, "ncclGroupEnd", end);
    /* (a non-blocking communicator, were one configured, takes no call in ncclInProgress) */
    return end == ncclInProgress || r == ncclInProgress ? wait_all(s, 0) : 0;
}

static int record(struct nccl_state *s, int start)
{
    for (int g = 0; g < s->ngpus; g++) {
        CUDA_TRY(cudaSetDevice(s->gpu[g].device));
        CUDA_TRY(cudaEventRecord(start ? s->gpu[g].start : s->gpu[g].stop, s->gpu[g].stream));
    }
    return 0;
}

static int batch(struct bench_ctx *c, struct nccl_state *s, const struct bench_counts *counts,
                 int in_place, int n)
{
    int rc = record(s, 1);
    for (int i = 0; i < n && !rc; i++)
        rc = launch(c, s, counts, in_place, i);
    if (!rc)
        rc = record(s, 0);
    return rc ? rc : wait_all(s, 1);
}

static int check_pass(struct bench_ctx *c, struct nccl_state *s, const struct bench_counts *n,
                      int in_place, int seed, long long *wrong)
{
    size_t elt = bench_dtype_size(c->dtype);
    for (int g = 0; g < s->ngpus; g++) {
        struct nccl_gpu *gpu = &s->gpu[g];
        bench_coll_fill(c, s->host, n, c->rank + g, seed);
        CUDA_TRY(cudaSetDevice(gpu->device));
        /* On the run's own stream, which is non-blocking: a copy or memset on the legacy
         * default stream would not be ordered before the collective that reads it. The host
         * buffer is reused for the next GPU, so each fill waits for its copy. */
        /* cleared in place too (all_gather: the others' parts would still hold the last
         * pass's right values, and a part NCCL failed to write would pass), as nccl-tests */
        CUDA_TRY(cudaMemsetAsync(gpu->recv, 0, n->recv * elt, gpu->stream));
        CUDA_TRY(cudaMemcpyAsync(input_of(c, gpu, c->rank + g, n, in_place), s->host, n->send * elt,
                                 cudaMemcpyHostToDevice, gpu->stream));
        CUDA_TRY(cudaStreamSynchronize(gpu->stream));
    }
    int rc = batch(c, s, n, in_place, 1);
    for (int g = 0; !rc && g < s->ngpus; g++) {
        struct nccl_gpu *gpu = &s->gpu[g];
        CUDA_TRY(cudaSetDevice(gpu->device));
        CUDA_TRY(cudaMemcpyAsync(s->host, output_of(c, gpu, c->rank + g, n, in_place),
                                 n->recv * elt, cudaMemcpyDeviceToHost, gpu->stream));
        CUDA_TRY(cudaStreamSynchronize(gpu->stream));
        struct bench_ctx local = *c;
        local.rank = c->rank + g;
        bench_hook_corrupt(&local, s->host, n->recv);
        *wrong += bench_coll_check(c, s->host, n, c->rank + g, seed, in_place);
    }
    return rc;
}

static void read_log(struct bench_ctx *c, struct nccl_state *s, const struct bench_counts *n,
                     struct bench_result *r)
{
    struct util_buf log = UTIL_BUF_INIT;
    if (!s->log_path || util_file_read(s->log_path, 256u << 20, &log)) {
        util_buf_release(&log);
        return;
    }
    /* NCCL logs the count the call was given: one rank's part of an all_gather */
    bench_nccl_log_choice(util_buf_str(&log), c->coll, n->param * bench_dtype_size(c->dtype),
                          r->algo, r->proto);
    json_decref(c->effective_env);
    c->effective_env = bench_nccl_log_env(util_buf_str(&log));
    util_buf_release(&log);
}

static int nccl_run(struct bench_ctx *c, const struct bench_counts *n, int in_place,
                    struct bench_result *r)
{
    struct nccl_state *s = c->state;
    const struct bench_options *o = c->opt;
    size_t bytes = bench_coll_size(n, bench_dtype_size(c->dtype));
    bench_stage(c, "warmup");
    int rc = o->warmup ? batch(c, s, n, in_place, o->warmup) : 0;
    if (rc)
        return rc; /* each failure keeps the stage it happened in */
    bench_stage(c, "size:%zu", bytes);
    bench_hook_stall(c, "size");
    /* every process starts the timed calls together, as nccl-tests (a barrier after the
     * warmup): a late process would count in the others' time */
    MPI_Barrier(c->comm);
    rc = batch(c, s, n, in_place, o->iters);
    r->time_us = 0;
    for (int g = 0; !rc && g < s->ngpus; g++) {
        float ms = 0;
        CUDA_TRY(cudaEventElapsedTime(&ms, s->gpu[g].start, s->gpu[g].stop));
        double us = (double)ms * 1000.0 / o->iters;
        r->time_us = us > r->time_us ? us : r->time_us;
    }
    if (rc)
        return rc;
    bench_stage(c, "check");
    r->wrong = o->check ? 0 : -1;
    for (int rep = 0; rep < o->check && !rc; rep++)
        rc = check_pass(c, s, n, in_place, rep, &r->wrong);
    /* in place, alltoall reads what it overwrites and sendrecv sends the buffer it receives
     * into (ahead of a slower next rank, the receive overwrites unsent chunks): unchecked, as
     * nccl-tests leaves them */
    if (in_place && (c->coll == MODEL_ALLTOALL || c->coll == MODEL_SENDRECV))
        r->wrong = -1;
    if (!rc)
        read_log(c, s, n, r);
    return rc;
}

static void nccl_release(struct bench_ctx *c)
{
    struct nccl_state *s = c->state;
    if (!s)
        return;
    for (int g = 0; s->gpu && g < s->ngpus; g++) {
        struct nccl_gpu *gpu = &s->gpu[g];
        if (gpu->comm) {
            /* Finalize can block on a dead peer: abort is always safe and frees as well. */
            ncclCommAbort(gpu->comm);
        }
        cudaSetDevice(gpu->device);
#ifdef HAVE_NCCL_MEM_ALLOC
        if (gpu->nccl_mem) {
            ncclMemFree(gpu->send);
            ncclMemFree(gpu->recv);
        } else {
            cudaFree(gpu->send);
            cudaFree(gpu->recv);
        }
#else
        cudaFree(gpu->send);
        cudaFree(gpu->recv);
#endif
        if (gpu->stream)
            cudaStreamDestroy(gpu->stream);
        if (gpu->start)
            cudaEventDestroy(gpu->start);
        if (gpu->stop)
            cudaEventDestroy(gpu->stop);
    }
    free(s->gpu);
    free(s->host);
    free(s->log_path);
    free(s);
    c->state = NULL;
}

static void nccl_versions(json_t *v)
{
    int nccl = 0, runtime = 0, driver = 0;
    char buf[32];
    if (ncclGetVersion(&nccl) == ncclSuccess) {
        snprintf(buf, sizeof(buf), "%d.%d.%d", nccl / 10000, (nccl % 10000) / 100, nccl % 100);
        json_object_set_new(v, "nccl", json_string(buf));
    }
    if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) {
        snprintf(buf, sizeof(buf), "%d.%d", runtime / 1000, (runtime % 1000) / 10);
        json_object_set_new(v, "cuda_runtime", json_string(buf));
    }
    if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0) {
        snprintf(buf, sizeof(buf), "%d.%d", driver / 1000, (driver % 1000) / 10);
        json_object_set_new(v, "cuda_driver", json_string(buf));
    }
}

const struct bench_backend bench_backend_nccl = {
    .name = "nccl",
    .default_average = 1, /* nccl-tests' -a 1: the mean over ranks */
    .unsupported = nccl_unsupported,
    .init = nccl_init,
    .run = nccl_run,
    .release = nccl_release,
    .versions = nccl_versions,
};
