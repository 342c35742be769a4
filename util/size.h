/* SPDX-License-Identifier: MIT */
/* Message sizes as nccl-tests steps them: the one rule for the benchmark, the sweep and compare. */
#ifndef UTIL_SIZE_H
#define UTIL_SIZE_H

#include <stddef.h>
#include <stdint.h>

/*
 * The size after size: times factor when factor > 1, else plus step; always at
 * least size + 1, so every loop ends (0 and a factor of 1.5 from 1 byte used to
 * loop forever). SIZE_MAX once the next size would pass max.
 */
size_t util_next_size(size_t size, double factor, size_t step, size_t max);

#endif
