/* SPDX-License-Identifier: MIT */
/* Diagnostics on stderr, checked against the level before anything is formatted. */
#include "util/log.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/mem.h"
#include "util/text.h"

#include <stdio.h>
#include <stdlib.h>

static const char *log_prog = "topotune";
static enum util_log_level log_level = UTIL_LOG_INFO;
static char last_error[1024]; /* the last error's text, cleaned, for a report that must say it */

void util_log_init(const char *progname, enum util_log_level level)
{
    log_prog = progname;
    log_level = level;
}

enum util_log_level util_log_level(void)
{
    return log_level;
}

/*
 * One line per message, whatever it quotes: the names, values and parse errors a message carries
 * come from files, nodes and children, so the text is cleaned as util_text_clean does without
 * lines (no escape sequence, control character or line break of theirs reaches the terminal, and
 * no forged "topotune: error:" line either).
 */
__attribute__((format(printf, 2, 0))) static void log_line(const char *tag, const char *fmt,
                                                           va_list ap, int error)
{
    char stack[1024], *text = stack;
    va_list again;
    va_copy(again, ap);
    int len = vsnprintf(stack, sizeof(stack), fmt, ap);
    if (len >= (int)sizeof(stack)) {
        text = util_xmalloc((size_t)len + 1);
        vsnprintf(text, (size_t)len + 1, fmt, again);
    }
    va_end(again);
    struct util_buf clean = UTIL_BUF_INIT;
    util_text_clean(&clean, text, len > 0 ? (size_t)len : 0, 0);
    fprintf(stderr, "%s: %s%s\n", log_prog, tag, util_buf_str(&clean));
    if (error)
        snprintf(last_error, sizeof(last_error), "%s", util_buf_str(&clean));
    util_buf_release(&clean);
    if (text != stack)
        free(text);
}

int util_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line("error: ", fmt, ap, 1);
    va_end(ap);
    return -1;
}

void util_warning(const char *fmt, ...)
{
    if (log_level < UTIL_LOG_INFO)
        return;
    va_list ap;
    va_start(ap, fmt);
    log_line("warning: ", fmt, ap, 0);
    va_end(ap);
}

void util_info(const char *fmt, ...)
{
    if (log_level < UTIL_LOG_INFO)
        return;
    va_list ap;
    va_start(ap, fmt);
    log_line("", fmt, ap, 0);
    va_end(ap);
}

void util_debug(const char *fmt, ...)
{
    if (log_level < UTIL_LOG_DEBUG)
        return;
    va_list ap;
    va_start(ap, fmt);
    log_line("debug: ", fmt, ap, 0);
    va_end(ap);
}

const char *util_strerror(int code)
{
    switch (code) {
    case UTIL_OK:
        return "success";
    case UTIL_EINVAL:
        return "invalid input";
    case UTIL_ENOENT:
        return "not found";
    case UTIL_EIO:
        return "input/output error";
    case UTIL_ENOMEM:
        return "out of memory";
    case UTIL_ENOTSUP:
        return "not supported";
    case UTIL_EUSAGE:
        return "usage error";
    case UTIL_EINTR:
        return "interrupted";
    case UTIL_EENV:
        return "the environment failed";
    }
    return "unknown error";
}

const char *util_error_last(void)
{
    return last_error;
}
