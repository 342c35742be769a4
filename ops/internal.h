/* SPDX-License-Identifier: MIT */
/* What ops/ shares inside: running a scheduler's client, printing its command line. */
#ifndef OPS_INTERNAL_H
#define OPS_INTERNAL_H

#include "util/buf.h"

#include <stddef.h>

/*
 * Runs argv (argv[0] looked up in PATH; never a shell) under a deadline, stdout to out_path (when
 * set), the rest to log_path. 0, or UTIL_EENV with what went wrong in why (not found, timed out,
 * the exit status and the command's last words).
 */
int ops_run(char **argv, const char *out_path, const char *log_path, double timeout_s,
            struct util_buf *why);

/* The log of the i-th command run: "PREFIX.i" in buf (each command its own), or NULL. */
const char *ops_log_of(char buf[4200], const char *prefix, size_t i);

/* Appends w as a POSIX shell reads it back: as it is when plain, else single-quoted. */
void ops_add_word(struct util_buf *b, const char *w);

#endif
