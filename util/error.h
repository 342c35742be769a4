/* SPDX-License-Identifier: MIT */
/* Error codes shared by every module, and the messages that go with them. */
#ifndef UTIL_ERROR_H
#define UTIL_ERROR_H

/*
 * Functions return 0 on success or one of these negative codes. Modules print
 * the detail (file, field, fix) where they know it, and return the code.
 */
enum {
    UTIL_OK = 0,
    UTIL_EINVAL = -1,  /* bad input: a file or value that does not parse */
    UTIL_ENOENT = -2,  /* a file or object that is not there */
    UTIL_EIO = -3,     /* a read or write that failed (full disk included) */
    UTIL_ENOMEM = -4,  /* out of memory */
    UTIL_ENOTSUP = -5, /* a format or feature this build does not support */
    UTIL_EUSAGE = -6,  /* wrong command-line usage */
};

/* A short lowercase description of code, never NULL. */
const char *util_strerror(int code);

#endif
