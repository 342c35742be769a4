/* SPDX-License-Identifier: MIT */
/* util_sort_doubles, util_median: one comparator for every module that ranks values. */
#include "util/num.h"

#include <stdlib.h>

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void util_sort_doubles(double *x, size_t n)
{
    if (n > 1)
        qsort(x, n, sizeof(double), by_value);
}

double util_median(double *x, int n)
{
    if (n <= 0)
        return 0;
    util_sort_doubles(x, (size_t)n);
    return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}
