/* SPDX-License-Identifier: MIT */
/*
 * Data types, reduction ops, and the correctness pattern: small integers chosen
 * per op so that the reduced value is exact in every type and computable from
 * (element, ranks, seed) alone, so each rank checks its own result, and varying
 * pseudo-randomly with the element, so data in the wrong place is caught too.
 */
#include "bench/internal.h"

#include "util/error.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
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

/* A 64-bit mix (splitmix64's finaliser): the pattern's values vary with the element, pseudo-
 * randomly, so a part that lands at another element's place (a misrouted block) is caught. */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

/* Per element: the one rank with a special value, k, and a value from 0 to 39, w. */
static void element(size_t i, int nranks, int seed, int *k, int *w)
{
    uint64_t h = mix((uint64_t)i * 0x9E3779B97F4A7C15ULL + (uint64_t)seed * 0xD1B54A32D192ED03ULL);
    *k = (int)(h % (uint64_t)(nranks > 0 ? nranks : 1));
    *w = (int)((h >> 32) % 40);
}

/*
 * Rank r's value at element i: small integers, so that the reduced result is exact in every
 * dtype (up to the ranks bench_pattern_fits allows: 176 for int8 sums), and varying with i, so
 * that misplaced data is caught.
 * With k and w the element's (element()) and b = (i + r + seed) mod 2:
 *   sum: b, plus w on rank k (the sum: w plus how many ranks have b = 1);
 *   max: 2 + w on rank k, else b (the max: 2 + w);
 *   min: w on rank k, else w + 1 + b (the min: w);
 *   prod: 1 + w on rank k, else 1 (the product: 1 + w);
 *   avg: w mod 3 on every rank, plus ranks on rank k (the mean: w mod 3 + 1; the sum NCCL divides
 *        stays within int8 up to 42 ranks; floating types are averaged with rounding).
 */
double bench_value(size_t i, int op, int rank, int nranks, int seed)
{
    int k, w;
    element(i, nranks, seed, &k, &w);
    double b = (double)((i + (size_t)rank + (size_t)seed) % 2);
    switch (op) {
    case BENCH_OP_PROD:
        return rank == k ? 1 + w : 1;
    case BENCH_OP_AVG:
        return w % 3 + (rank == k ? nranks : 0);
    case BENCH_OP_MAX:
        return rank == k ? 2 + w : b;
    case BENCH_OP_MIN:
        return rank == k ? w : w + 1 + b;
    default:
        return b + (rank == k ? w : 0);
    }
}

double bench_tolerance(int op, int dtype, int nranks)
{
    int bits = dtype == BENCH_HALF       ? 11
               : dtype == BENCH_BFLOAT16 ? 8
               : dtype == BENCH_FLOAT    ? 24
               : dtype == BENCH_DOUBLE   ? 53
                                         : 0; /* significand bits; integers divide exactly */
    return op == BENCH_OP_AVG && bits ? (nranks + 1) * ldexp(1.0, 1 - bits) : 0;
}

int bench_pattern_fits(int op, int dtype, int nranks, char *why, size_t len)
{
    static const struct {
        int dtype;
        double exact; /* the largest integer every smaller one of which the type holds */
    } limits[] = {{BENCH_INT8, 127}, {BENCH_UINT8, 255}, {BENCH_HALF, 2048}, {BENCH_BFLOAT16, 256}};
    double tol = bench_tolerance(op, dtype, nranks);
    if (tol >= 0.5) { /* the averages are 1, 2 and 3: a neighbour's value would pass */
        snprintf(why, len,
                 "at %d ranks NCCL's rounded average in %s may lie %.2g from the exact one, so "
                 "the check could not tell a misplaced value; use a wider -d (--datatype)",
                 nranks, bench_dtype_name(dtype), tol);
        return UTIL_EINVAL;
    }
    int integer_avg = op == BENCH_OP_AVG && tol == 0;
    double reach = op == BENCH_OP_SUM ? 39 + (nranks + 1) / 2 : integer_avg ? 3.0 * nranks : 41;
    for (size_t k = 0; k < sizeof(limits) / sizeof(limits[0]); k++)
        if (limits[k].dtype == dtype && reach > limits[k].exact) {
            snprintf(why, len,
                     "at %d ranks the check's %s reaches %.0f, past the %.0f %s holds exactly: "
                     "its results would be wrong by arithmetic, not by the system; use a wider "
                     "-d (--datatype)",
                     nranks, integer_avg ? "sum before the average's division" : "sum", reach,
                     limits[k].exact, bench_dtype_name(dtype));
            return UTIL_EINVAL;
        }
    return 0;
}

double bench_expected(size_t i, int op, int nranks, int seed)
{
    int k, w;
    element(i, nranks, seed, &k, &w);
    switch (op) {
    case BENCH_OP_PROD:
        return 1 + w;
    case BENCH_OP_AVG:
        return w % 3 + 1;
    case BENCH_OP_MAX:
        return 2 + w;
    case BENCH_OP_MIN:
        return w;
    default: { /* ranks r with (i + seed + r) odd: every other one, from r = 0 or 1 */
        int odd_first = (int)((i + (size_t)seed) % 2);
        return w + (odd_first ? (nranks + 1) / 2 : nranks / 2);
    }
    }
}
