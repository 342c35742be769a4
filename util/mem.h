/* SPDX-License-Identifier: MIT */
/*
 * Allocation that never returns NULL. Out of memory is not an error a caller can handle here
 * (the message, the cleanup and the exit all need memory), so these end the process: one line
 * on stderr naming the size asked for, then abort(). Jansson allocates through util_xmalloc too
 * (util_mem_init). The NCCL tuner plugin, loaded into another program, does not use them.
 */
#ifndef UTIL_MEM_H
#define UTIL_MEM_H

#include <stddef.h>

void *util_xmalloc(size_t size);
void *util_xcalloc(size_t n, size_t size);
void *util_xrealloc(void *p, size_t size);
char *util_xstrdup(const char *s);
char *util_xstrndup(const char *s, size_t n);

/* Has Jansson allocate through util_xmalloc: call first thing in main(). */
void util_mem_init(void);

#endif
