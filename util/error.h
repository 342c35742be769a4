/* SPDX-License-Identifier: MIT */
/*
 * The error contract, for every module below cli/:
 *
 * - A function that can fail returns 0 (or a count, or a pointer, as its header says) on
 *   success and one of the negative UTIL_E* codes below on failure. It never returns a process
 *   exit status: which status a code becomes is cli/'s choice, made in one place (cli_status).
 * - The function that knows the detail (the file, the field, the host, the fix) prints it once
 *   with util_error, then returns the code: `return util_error("...: %s", ...), UTIL_EIO;`.
 *   util_error itself returns UTIL_EINVAL, so `return util_error(...)` is bad input.
 * - Predicates (is_..., has_..., a "1 when" in the header) return 1 or 0 and print nothing.
 * - Out of memory is not an error to return: util/mem.h's allocators end the process.
 */
#ifndef UTIL_ERROR_H
#define UTIL_ERROR_H

enum {
    UTIL_OK = 0,
    UTIL_EINVAL = -1,  /* bad input: a file or value that does not parse */
    UTIL_ENOENT = -2,  /* a file or object that is not there */
    UTIL_EIO = -3,     /* a read or write that failed (full disk included) */
    UTIL_ENOMEM = -4,  /* out of memory */
    UTIL_ENOTSUP = -5, /* a format or feature this build does not support */
    UTIL_EUSAGE = -6,  /* wrong command-line usage */
    UTIL_EINTR = -7,   /* a signal came (util_child_interrupted names it): the work was cut */
    UTIL_EENV = -8,    /* the environment failed: a host, launcher or program did not answer */
};

/* A short lowercase description of code, never NULL. */
const char *util_strerror(int code);

#endif
