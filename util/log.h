/* SPDX-License-Identifier: MIT */
/* Diagnostics on stderr: errors, warnings, progress and detail, by level. */
#ifndef UTIL_LOG_H
#define UTIL_LOG_H

#include <stdarg.h>

enum util_log_level {
    UTIL_LOG_QUIET = 0, /* errors only (-q) */
    UTIL_LOG_INFO = 1,  /* warnings and progress (default) */
    UTIL_LOG_DEBUG = 2, /* detail (-v) */
};

/*
 * Sets the level for the whole process; the program name prefixes every line. Every message is
 * one line, cleaned as util_text_clean does without lines: what it quotes from a file, a node or
 * a child cannot put an escape sequence or a line of its own on the terminal.
 */
void util_log_init(const char *progname, enum util_log_level level);
enum util_log_level util_log_level(void);

/* Prints "PROG: error: MSG" to stderr and returns -1, so callers can `return util_error(...)`. */
int util_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The text of the last error printed (cleaned, at most 1023 bytes), "" before any: for a report
 * that must say why it could not be made. */
const char *util_error_last(void);
/* Prints "PROG: warning: MSG" unless quiet. */
void util_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "PROG: MSG" unless quiet: progress and notes. */
void util_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "PROG: debug: MSG" only with -v. */
void util_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
