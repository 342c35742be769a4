/* SPDX-License-Identifier: MIT */
/*
 * Data types, reduction ops, and the correctness pattern: small integers chosen
 * per op so that the reduced value is exact in every type and computable from
 * (element, ranks, seed) alone, so each rank checks its own result.
 */
#include "bench/internal.h"

#include <math.h>
#include <string.h>

static const struct {
    const char *name;
    size_t size;
} dtypes[BENCH_NDTYPES] = {
    {"int8", 1},   {"uint8", 1}, {"int32", 4}, {"uint32", 4}, {"int64", 8},
    {"uint64", 8}, {"half", 2},  {"float", 4}, {"double", 8}, {"bfloat16", 2},
};

static const char *ops[BENCH_NOPS] = {"sum", "prod", "min", "max", "avg"};

const char *bench_dtype_name(int dtype)
{
    return dtypes[dtype].name;
}

size_t bench_dtype_size(int dtype)
{
    return dtypes[dtype].size;
}

int bench_dtype_parse(const char *name)
{
    for (int i = 0; i < BENCH_NDTYPES; i++)
        if (strcmp(name, dtypes[i].name) == 0)
            return i;
    /* nccl-tests' aliases */
    if (strcmp(name, "char") == 0)
        return BENCH_INT8;
    if (strcmp(name, "int") == 0)
        return BENCH_INT32;
    if (strcmp(name, "float16") == 0 || strcmp(name, "fp16") == 0)
        return BENCH_HALF;
    if (strcmp(name, "bf16") == 0)
        return BENCH_BFLOAT16;
    return -1;
}

const char *bench_op_name(int op)
{
    return ops[op];
}

int bench_op_parse(const char *name)
{
    for (int i = 0; i < BENCH_NOPS; i++)
        if (strcmp(name, ops[i]) == 0)
            return i;
    return -1;
}

/* IEEE binary16 from a float; exact for the integers the pattern uses. */
static uint16_t half_from_float(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff, man = x & 0x7fffff;
    if (exp == 0)
        return (uint16_t)sign;
    int e = (int)exp - 127 + 15;
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00);
    if (e <= 0)
        return (uint16_t)sign;
    uint32_t h = sign | ((uint32_t)e << 10) | (man >> 13);
    if ((man & 0x1fff) > 0x1000 || ((man & 0x1fff) == 0x1000 && (h & 1)))
        h++;
    return (uint16_t)h;
}

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    float f;
    if (exp == 0) {
        f = ldexpf((float)man, -24);
        return sign ? -f : f;
    }
    uint32_t x = sign | (exp == 31 ? 0xff << 23 : (exp - 15 + 127) << 23) | (man << 13);
    memcpy(&f, &x, 4);
    return f;
}

double bench_get(const void *buf, size_t i, int dtype)
{
    const unsigned char *p = buf;
    switch (dtype) {
    case BENCH_INT8:
        return ((const int8_t *)p)[i];
    case BENCH_UINT8:
        return ((const uint8_t *)p)[i];
    case BENCH_INT32:
        return ((const int32_t *)p)[i];
    case BENCH_UINT32:
        return ((const uint32_t *)p)[i];
    case BENCH_INT64:
        return (double)((const int64_t *)p)[i];
    case BENCH_UINT64:
        return (double)((const uint64_t *)p)[i];
    case BENCH_HALF:
        return half_to_float(((const uint16_t *)p)[i]);
    case BENCH_FLOAT:
        return ((const float *)buf)[i];
    case BENCH_DOUBLE:
        return ((const double *)buf)[i];
    case BENCH_BFLOAT16: {
        uint32_t x = (uint32_t)((const uint16_t *)p)[i] << 16;
        float f;
        memcpy(&f, &x, 4);
        return f;
    }
    }
    return NAN;
}

void bench_set(void *buf, size_t i, int dtype, double v)
{
    unsigned char *p = buf;
    switch (dtype) {
    case BENCH_INT8:
        ((int8_t *)p)[i] = (int8_t)v;
        break;
    case BENCH_UINT8:
        ((uint8_t *)p)[i] = (uint8_t)v;
        break;
    case BENCH_INT32:
        ((int32_t *)p)[i] = (int32_t)v;
        break;
    case BENCH_UINT32:
        ((uint32_t *)p)[i] = (uint32_t)v;
        break;
    case BENCH_INT64:
        ((int64_t *)p)[i] = (int64_t)v;
        break;
    case BENCH_UINT64:
        ((uint64_t *)p)[i] = (uint64_t)v;
        break;
    case BENCH_HALF:
        ((uint16_t *)p)[i] = half_from_float((float)v);
        break;
    case BENCH_FLOAT:
        ((float *)buf)[i] = (float)v;
        break;
    case BENCH_DOUBLE:
        ((double *)buf)[i] = v;
        break;
    case BENCH_BFLOAT16: {
        float f = (float)v; /* small integers: the upper 16 bits hold them exactly */
        uint32_t x;
        memcpy(&x, &f, 4);
        ((uint16_t *)p)[i] = (uint16_t)(x >> 16);
        break;
    }
    }
}

/*
 * Rank r's value at element i:
 *   sum, min, max: (i + r + seed) mod 3, so sums stay below 2 x ranks;
 *   prod: 2 on the one rank where (i + r + seed) mod ranks is 0, else 1: product 2;
 *   avg: (i + seed) mod 3 on every rank, plus ranks on rank 0: the mean is exact.
 */
double bench_value(size_t i, int op, int rank, int nranks, int seed)
{
    size_t base = i + (size_t)seed;
    switch (op) {
    case BENCH_OP_PROD:
        return (base + (size_t)rank) % (size_t)nranks == 0 ? 2 : 1;
    case BENCH_OP_AVG:
        return (double)(base % 3) + (rank == 0 ? nranks : 0);
    default:
        return (double)((base + (size_t)rank) % 3);
    }
}

double bench_expected(size_t i, int op, int nranks, int seed)
{
    size_t s0 = (i + (size_t)seed) % 3;
    switch (op) {
    case BENCH_OP_PROD:
        return 2;
    case BENCH_OP_AVG:
        return (double)s0 + 1;
    case BENCH_OP_SUM: {
        /* ranks cycle through s0, s0+1, s0+2 (mod 3): full cycles add 3 each */
        int q = nranks / 3, m = nranks % 3;
        double sum = 3.0 * q;
        for (int k = 0; k < m; k++)
            sum += (double)((s0 + (size_t)k) % 3);
        return sum;
    }
    default: {
        double best = (double)s0;
        for (int r = 1; r < nranks && r < 3; r++) {
            double v = (double)((s0 + (size_t)r) % 3);
            best = op == BENCH_OP_MIN ? fmin(best, v) : fmax(best, v);
        }
        return best;
    }
    }
}

void bench_fill(void *buf, size_t count, int dtype, int op, int rank, int nranks, int seed)
{
    for (size_t i = 0; i < count; i++)
        bench_set(buf, i, dtype, bench_value(i, op, rank, nranks, seed));
}

long long bench_check(const void *buf, size_t count, int dtype, int op, int nranks, int seed)
{
    long long wrong = 0;
    for (size_t i = 0; i < count; i++)
        wrong += bench_get(buf, i, dtype) != bench_expected(i, op, nranks, seed);
    return wrong;
}
