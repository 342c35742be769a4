/* SPDX-License-Identifier: MIT */
/* Table-driven command-line options: parse everything into caller fields first, then act. */
#ifndef UTIL_OPTS_H
#define UTIL_OPTS_H

#include <stdio.h>

enum util_opt_type {
    UTIL_OPT_FLAG,      /* int field set to 1 */
    UTIL_OPT_STRING,    /* const char * field: the next argument or --name=value */
    UTIL_OPT_OPTSTRING, /* const char * field: "-" when given bare, the value when one follows */
    UTIL_OPT_LIST       /* struct util_opt_list field: every occurrence's value, in order */
};

#define UTIL_OPT_LIST_MAX 64
struct util_opt_list {
    const char *items[UTIL_OPT_LIST_MAX];
    int n;
};

struct util_opt {
    const char *name; /* long name without "--" */
    char letter;      /* short letter, or 0 */
    enum util_opt_type type;
    void *field;
    const char *arg; /* argument name for --help, or NULL */
    const char *help;
};

/*
 * Parses argv[1..] against opts for the command cmd ("topotune topo") (terminated by a
 * zero entry). Values come as "--name VALUE", "--name=VALUE", "-x VALUE" or "-xVALUE"
 * (nccl-tests' attached form: -b8 -e128M). Positional arguments are collected into
 * positional (which has room for argc entries) and counted in *npositional.
 * "--help"/"-h" prints the usage to stdout and returns 1. Unknown options or
 * missing values print an error naming the flag and return UTIL_EUSAGE.
 */
int util_opts_parse(const char *cmd, const char *usage, const struct util_opt *opts, int argc,
                    char **argv, char **positional, int *npositional);

/* Unknown options are kept among the positional arguments, in order (for a command
 * that passes another program's flags through, as `topotune bench` does). */
#define UTIL_OPTS_KEEP_UNKNOWN 1
int util_opts_parse_flags(const char *cmd, const char *usage, const struct util_opt *opts, int argc,
                          char **argv, char **positional, int *npositional, int flags);

/* Prints "usage: ..." and the option list. */
void util_opts_usage(FILE *out, const char *cmd, const char *usage, const struct util_opt *opts);

#endif
