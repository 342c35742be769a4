/* SPDX-License-Identifier: MIT */
/* Diagnostics on stderr, checked against the level before anything is formatted. */
#include "util/log.h"
#include "util/error.h"

#include <stdio.h>

static const char *log_prog = "topotune";
static enum util_log_level log_level = UTIL_LOG_INFO;

void util_log_init(const char *progname, enum util_log_level level)
{
    log_prog = progname;
    log_level = level;
}

enum util_log_level util_log_level(void)
{
    return log_level;
}

__attribute__((format(printf, 2, 0))) static void log_line(const char *tag, const char *fmt,
                                                           va_list ap)
{
    fprintf(stderr, "%s: %s", log_prog, tag);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line("error: ", fmt, ap);
    va_end(ap);
    return -1;
}

void warning(const char *fmt, ...)
{
    if (log_level < UTIL_LOG_INFO)
        return;
    va_list ap;
    va_start(ap, fmt);
    log_line("warning: ", fmt, ap);
    va_end(ap);
}

void info(const char *fmt, ...)
{
    if (log_level < UTIL_LOG_INFO)
        return;
    va_list ap;
    va_start(ap, fmt);
    log_line("", fmt, ap);
    va_end(ap);
}

void debug(const char *fmt, ...)
{
    if (log_level < UTIL_LOG_DEBUG)
        return;
    va_list ap;
    va_start(ap, fmt);
    log_line("debug: ", fmt, ap);
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
    }
    return "unknown error";
}
