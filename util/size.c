/* SPDX-License-Identifier: MIT */
/* util_next_size: nccl-tests' -f/-i stepping, guaranteed to advance. */
#include "util/size.h"

size_t util_next_size(size_t size, double factor, size_t step, size_t max)
{
    double next = factor > 1 ? (double)size * factor : (double)size + (double)step;
    if (next > (double)max)
        return SIZE_MAX;
    return (size_t)next > size ? (size_t)next : size + 1;
}
