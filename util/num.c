/* SPDX-License-Identifier: MIT */
/* util_sort_doubles, util_median: one comparator for every module that ranks values;
 * util_family_sigmas. */
#include "util/num.h"

#include <math.h>
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

double util_family_sigmas(int tests)
{
    /* the z of a normal's lower tail holding 5% / tests: erfc is monotone, bisect it */
    double p = 0.05 / (tests > 1 ? tests : 1), lo = 0, hi = 40;
    for (int i = 0; i < 100; i++) {
        double mid = (lo + hi) / 2;
        if (0.5 * erfc(mid / sqrt(2)) > p)
            lo = mid;
        else
            hi = mid;
    }
    return fmax(3, lo);
}
