/* SPDX-License-Identifier: MIT */
#include "util/mem.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* No stdio here: stdio may itself need memory. */
static void out_of_memory(size_t size)
{
    char line[96];
    int n = snprintf(line, sizeof(line), "topotune: out of memory (%zu bytes asked for)\n", size);
    if (n > 0)
        (void)!write(STDERR_FILENO, line, (size_t)n); /* nothing more to try if it fails */
    abort();
}

void *util_xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        out_of_memory(size);
    return p;
}

void *util_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        out_of_memory(n * size);
    return p;
}

void *util_xrealloc(void *p, size_t size)
{
    void *q = realloc(p, size ? size : 1);
    if (!q)
        out_of_memory(size);
    return q;
}

char *util_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(util_xmalloc(n), s, n);
}

char *util_xstrndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *d = util_xmalloc(len + 1);
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

void util_mem_init(void)
{
    json_set_alloc_funcs(util_xmalloc, free);
}
