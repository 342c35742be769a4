/* SPDX-License-Identifier: MIT */
/*
 * Table-driven command-line options: every option is parsed and checked into the caller's
 * fields first, then the command acts. Numbers are typed, with their range in the table: no
 * command checks a number by hand, and every error names the option, the value and what it
 * takes ("invalid value '0' for --iters: expected a whole number from 1 to 100000").
 */
#ifndef UTIL_OPTS_H
#define UTIL_OPTS_H

#include <stddef.h>
#include <stdio.h>

enum util_opt_type {
    UTIL_OPT_FLAG,      /* int field set to 1 */
    UTIL_OPT_STRING,    /* const char * field: the next argument or --name=value */
    UTIL_OPT_OPTSTRING, /* const char * field: "-" when given bare, the value when one follows */
    UTIL_OPT_LIST,      /* struct util_opt_list field: every occurrence's value, in order */
    UTIL_OPT_INT,       /* int field: a whole number from min to max */
    UTIL_OPT_DOUBLE,    /* double field: a finite number from min to max */
    UTIL_OPT_SIZE,      /* size_t field: bytes from min to max, "8", "0.5K", "64M", "1G" (1024s) */
    UTIL_OPT_INTS,      /* struct util_opt_ints field: "1,2,4", each a whole number min to max */
    UTIL_OPT_CHOICE     /* const char * field: one of the words of choices ("nccl mpi sim") */
};

#define UTIL_OPT_LIST_MAX 64
struct util_opt_list {
    const char *items[UTIL_OPT_LIST_MAX];
    int n;
};

struct util_opt_ints {
    int v[UTIL_OPT_LIST_MAX];
    int n;
};

struct util_opt {
    const char *name; /* long name without "--" */
    char letter;      /* short letter, or 0 */
    enum util_opt_type type;
    void *field;     /* left as it was when the option is not given: set the default first */
    const char *arg; /* argument name for --help, or NULL */
    const char *help;
    double min, max;     /* the typed numbers' range, both included */
    int max_items;       /* UTIL_OPT_INTS: values taken at most (0: UTIL_OPT_LIST_MAX) */
    const char *choices; /* UTIL_OPT_CHOICE: the words taken, separated by spaces */
    const char *hint;    /* said in parentheses after what a bad value should be, or NULL */
};

/* A command: its name ("topotune survey"), the usage after the name (with its description)
 * and its options (ending with a zero entry). */
struct util_opts_cmd {
    const char *name;
    const char *usage;
    const struct util_opt *opts;
    int max_positional; /* positional arguments taken at most (-1: any number) */
    int keep_unknown;   /* unknown options are kept among the positional arguments, in order
                           (a command that passes another program's flags through) */
};

/*
 * Parses argv[1..argc) against cmd->opts. Values come as "--name VALUE", "--name=VALUE",
 * "-x VALUE" or "-xVALUE" (nccl-tests' attached form: -b8 -e128M). The positional arguments are
 * moved, in order, to argv[1..*npositional] (the strings themselves do not move); after "--"
 * every argument is positional (a command and its own flags). Returns 0;
 * UTIL_OPTS_HELP after printing the usage for "--help"/"-h"; UTIL_EUSAGE after an error naming
 * the option (unknown, missing or bad value, too many positional arguments).
 */
/* The help was asked for and printed: nothing more to do. Not 1, which callers take for a
 * verdict: cli_status maps this value alone to exit 0. */
#define UTIL_OPTS_HELP 64
int util_opts_parse(const struct util_opts_cmd *cmd, int argc, char **argv, int *npositional);

/* Prints "usage: ..." and the option list. */
void util_opts_usage(FILE *out, const struct util_opts_cmd *cmd);

/*
 * The parsers behind the typed options, for numbers read elsewhere (positional arguments).
 * Each returns 0 with *out set, or UTIL_EINVAL (nothing printed, *out untouched) for an empty
 * or partly numeric string, a value out of range, or one that is not finite.
 */
int util_parse_int(const char *s, long long min, long long max, long long *out);
int util_parse_double(const char *s, double min, double max, double *out);
int util_parse_size(const char *s, double min, double max, size_t *out);

/* bytes as a size option takes it back: "16G", "64K", "1000" (whole units only), in buf. */
const char *util_size_text(double bytes, char *buf, size_t len);

#endif
