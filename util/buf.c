/* SPDX-License-Identifier: MIT */
/* Growable buffer: doubling growth, NUL kept after the last byte. */
#include "util/buf.h"
#include "util/error.h"
#include "util/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void util_buf_release(struct util_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void util_buf_reset(struct util_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

static void buf_grow(struct util_buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1)
        cap *= 2;
    b->data = util_xrealloc(b->data, cap);
    b->cap = cap;
}

int util_buf_add(struct util_buf *b, const void *data, size_t len)
{
    buf_grow(b, len);
    if (len)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}

int util_buf_adds(struct util_buf *b, const char *s)
{
    return util_buf_add(b, s, strlen(s));
}

int util_buf_addf(struct util_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) /* a format vsnprintf refuses */
        return UTIL_EINVAL;
    buf_grow(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

const char *util_buf_str(const struct util_buf *b)
{
    return b->data ? b->data : "";
}

char *util_buf_detach(struct util_buf *b)
{
    char *s = b->data ? b->data : util_xstrdup("");
    b->data = NULL;
    b->len = b->cap = 0;
    return s;
}

size_t util_text_tail(const char *text, size_t *len, int lines)
{
    while (*len && (text[*len - 1] == '\n' || text[*len - 1] == ' '))
        (*len)--;
    size_t start = *len;
    for (int seen = 0; start; start--)
        if (text[start - 1] == '\n' && ++seen == lines)
            break;
    return start;
}
