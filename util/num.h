/* SPDX-License-Identifier: MIT */
/* Numbers: doubles sorted in place, their median; how many sigmas make a family of tests safe. */
#ifndef UTIL_NUM_H
#define UTIL_NUM_H

#include <stddef.h>

/* Sorts x[0..n) ascending. */
void util_sort_doubles(double *x, size_t n);
/* The median of x[0..n), which it sorts: the mean of the two middle values when n is even;
 * 0 when n <= 0. */
double util_median(double *x, int n);
/* How many sigmas a value must lie beyond its reference for one of `tests` values to pass on
 * noise alone in about one family of twenty (a normal's tail of 5% / tests), 3 at least. */
double util_family_sigmas(int tests);

#endif
