/* SPDX-License-Identifier: MIT */
/* A growable, always NUL-terminated byte buffer. */
#ifndef UTIL_BUF_H
#define UTIL_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct util_buf {
    char *data; /* NUL-terminated; "" until something is added */
    size_t len;
    size_t cap;
};

#define UTIL_BUF_INIT                                                                              \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

/* Releases the memory; the buffer is empty and reusable afterwards. */
void util_buf_release(struct util_buf *b);
/* Empties the buffer, keeping its memory. */
void util_buf_reset(struct util_buf *b);
/* Appends bytes, a string or formatted text; 0 (growing never fails: util/mem.h), or
 * UTIL_EINVAL from util_buf_addf for a format vsnprintf refuses. */
int util_buf_add(struct util_buf *b, const void *data, size_t len);
int util_buf_adds(struct util_buf *b, const char *s);
int util_buf_addf(struct util_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The contents as a C string: "" for an empty buffer, never NULL. */
const char *util_buf_str(const struct util_buf *b);
/*
 * The last `lines` lines of text[0..*len): *len is cut before trailing newlines
 * and spaces, and the offset where those lines begin is returned (a log's tail
 * for an error message or a result).
 */
size_t util_text_tail(const char *text, size_t *len, int lines);
/* Hands the heap string over to the caller, who frees it with free(); the buffer is emptied. */
char *util_buf_detach(struct util_buf *b);

#endif
