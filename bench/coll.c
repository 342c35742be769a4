/* SPDX-License-Identifier: MIT */
/*
 * Every collective as nccl-tests measures it: the element counts of a size (its
 * GetCollByteCount: parts rounded down to 16 bytes), where each rank's input lies, and what each
 * rank must hold afterwards. Inputs are small integers, exact in every dtype, computable from
 * (rank, element, seed) alone, so each rank checks its own output without the others' data.
 */
#include "bench/internal.h"

#include <math.h>
#include <stdint.h>

void bench_coll_counts(int coll, size_t count, size_t elt, int nranks, struct bench_counts *n)
{
    size_t ranks = nranks > 0 ? (size_t)nranks : 1;
    size_t part = (count / ranks) & ~(16 / elt - 1); /* nccl-tests: 16-byte aligned parts */
    switch (coll) {
    case MODEL_ALL_GATHER:
        *n = (struct bench_counts){.send = part, .recv = part * ranks, .param = part};
        break;
    case MODEL_REDUCE_SCATTER:
        *n = (struct bench_counts){.send = part * ranks, .recv = part, .param = part};
        break;
    case MODEL_ALLTOALL:
        *n = (struct bench_counts){.send = part * ranks, .recv = part * ranks, .param = part};
        break;
    default: /* all_reduce, broadcast, reduce, sendrecv: the whole buffer */
        *n = (struct bench_counts){.send = count, .recv = count, .param = count};
    }
}

size_t bench_coll_size(const struct bench_counts *n, size_t elt)
{
    return (n->send > n->recv ? n->send : n->recv) * elt;
}

size_t bench_coll_shift(const struct bench_counts *n, size_t elt, size_t max_bytes, int iter)
{
    size_t total = bench_coll_size(n, elt);
    size_t steps = total ? max_bytes / total : 1;
    return steps > 1 && iter > 0 ? total * ((size_t)iter % steps) : 0;
}

size_t bench_float_size(int coll, size_t size, int nranks, size_t *count)
{
    struct bench_counts n;
    bench_coll_counts(coll, size / 4, 4, nranks, &n);
    *count = n.param;
    return n.param ? bench_coll_size(&n, 4) : 0;
}

/* Data-movement collectives' values: from 0 to 126 (int8, and exact in half and bfloat16), a
 * pseudo-random function of (element, rank, seed), so that data from another rank or another
 * element differs in almost every element whatever the counts and ranks (no period to align). */
static double moved(size_t i, int rank, int seed)
{
    uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ULL + (uint64_t)rank * 0xC2B2AE3D27D4EB4FULL +
                 (uint64_t)seed * 0x165667B19E3779F9ULL;
    x ^= x >> 31;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 29;
    return (double)(x % 127);
}

void bench_coll_fill(const struct bench_ctx *c, void *buf, const struct bench_counts *n, int rank,
                     int seed)
{
    int coll = c->coll, dt = c->dtype;
    for (size_t i = 0; i < n->send; i++)
        bench_set(buf, i, dt,
                  model_coll_reduces(coll) ? bench_value(i, c->op, rank, c->nranks, seed)
                                           : moved(i, rank, seed)); /* broadcast: the root's wins */
}

/* What rank's output element i must be. */
static double expect_at(const struct bench_ctx *c, const struct bench_counts *n, int rank, size_t i,
                        int seed)
{
    switch (c->coll) {
    case MODEL_ALL_GATHER: /* part b is rank b's input */
        return moved(i % n->param, (int)(i / n->param), seed);
    case MODEL_REDUCE_SCATTER: /* this rank's part of the reduction */
        return bench_expected((size_t)rank * n->param + i, c->op, c->nranks, seed);
    case MODEL_ALLTOALL: /* part b is rank b's part for this rank */
        return moved((size_t)rank * n->param + i % n->param, (int)(i / n->param), seed);
    case MODEL_BROADCAST:
        return moved(i, c->opt->root, seed);
    case MODEL_SENDRECV: /* from the previous rank */
        return moved(i, (rank - 1 + c->nranks) % c->nranks, seed);
    default: /* all_reduce, and reduce on the root */
        return bench_expected(i, c->op, c->nranks, seed);
    }
}

long long bench_coll_check(const struct bench_ctx *c, const void *buf, const struct bench_counts *n,
                           int rank, int seed, int in_place)
{
    long long wrong = 0;
    if (c->coll == MODEL_REDUCE && rank != c->opt->root) {
        /* a non-root receives nothing: its buffer stays as it was, its input in place, the
         * cleared receive buffer out of place (nccl-tests checks it too) */
        for (size_t i = 0; i < n->recv; i++)
            wrong += bench_get(buf, i, c->dtype) !=
                     (in_place ? bench_value(i, c->op, rank, c->nranks, seed) : 0);
        return wrong;
    }
    double tol = model_coll_reduces(c->coll) ? bench_tolerance(c->op, c->dtype, c->nranks) : 0;
    for (size_t i = 0; i < n->recv; i++)
        wrong += !(fabs(bench_get(buf, i, c->dtype) - expect_at(c, n, rank, i, seed)) <= tol);
    return wrong;
}
