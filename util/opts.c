/* SPDX-License-Identifier: MIT */
/* Option parsing from a table, in the manner of git's parse-options, much smaller. */
#include "util/opts.h"
#include "util/error.h"
#include "util/log.h"

#include <string.h>

void util_opts_usage(FILE *out, const char *cmd, const char *usage, const struct util_opt *opts)
{
    fprintf(out, "usage: %s %s\n\n", cmd, usage);
    for (const struct util_opt *o = opts; o->name; o++) {
        char left[64];
        int n = o->letter ? snprintf(left, sizeof(left), "-%c, --%s", o->letter, o->name)
                          : snprintf(left, sizeof(left), "    --%s", o->name);
        if (o->arg && (size_t)n < sizeof(left))
            snprintf(left + n, sizeof(left) - (size_t)n,
                     o->type == UTIL_OPT_OPTSTRING ? " [%s]" : " %s", o->arg);
        fprintf(out, "  %-28s %s\n", left, o->help);
    }
    fprintf(out, "  %-28s %s\n", "-h, --help", "show this help");
}

/* Stores one value; a list collects them. 0, or UTIL_EUSAGE when a list is full. */
static int set_value(const struct util_opt *o, const char *value)
{
    if (o->type != UTIL_OPT_LIST) {
        *(const char **)o->field = value;
        return 0;
    }
    struct util_opt_list *l = o->field;
    if (l->n == UTIL_OPT_LIST_MAX)
        return error("option '--%s' given more than %d times", o->name, UTIL_OPT_LIST_MAX),
               UTIL_EUSAGE;
    l->items[l->n++] = value;
    return 0;
}

static const struct util_opt *find(const struct util_opt *opts, const char *name, size_t len,
                                   char letter)
{
    for (const struct util_opt *o = opts; o->name; o++)
        if ((letter && o->letter == letter) ||
            (!letter && strlen(o->name) == len && strncmp(o->name, name, len) == 0))
            return o;
    return NULL;
}

/* "-b8" is -b with the value 8 (as nccl-tests' getopt reads it) when -b takes a value. */
static const struct util_opt *find_arg(const struct util_opt *opts, const char *a, const char **eq)
{
    *eq = NULL;
    if (a[1] == '-') {
        *eq = strchr(a, '=');
        return find(opts, a + 2, *eq ? (size_t)(*eq - a - 2) : strlen(a + 2), 0);
    }
    const struct util_opt *o = find(opts, "", 0, a[1]);
    if (o && a[2] != '\0') {
        if (o->type == UTIL_OPT_FLAG)
            return NULL;
        *eq = a + 1; /* the value starts after the letter */
    }
    return o;
}

int util_opts_parse_flags(const char *cmd, const char *usage, const struct util_opt *opts, int argc,
                          char **argv, char **positional, int *npositional, int flags)
{
    *npositional = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            util_opts_usage(stdout, cmd, usage, opts);
            return 1;
        }
        if (a[0] != '-' || strcmp(a, "-") == 0) {
            positional[(*npositional)++] = argv[i];
            continue;
        }
        const char *eq;
        const struct util_opt *o = find_arg(opts, a, &eq);
        if (!o && (flags & UTIL_OPTS_KEEP_UNKNOWN)) {
            positional[(*npositional)++] = argv[i];
            continue;
        }
        if (!o) {
            error("unknown option '%s' for '%s' (see '%s --help')", a, cmd, cmd);
            return UTIL_EUSAGE;
        }
        if (o->type == UTIL_OPT_FLAG) {
            if (eq)
                return error("option '--%s' takes no value", o->name), UTIL_EUSAGE;
            *(int *)o->field = 1;
        } else if (eq) {
            if (set_value(o, eq + 1))
                return UTIL_EUSAGE;
        } else if (i + 1 < argc && (o->type != UTIL_OPT_OPTSTRING || argv[i + 1][0] != '-' ||
                                    strcmp(argv[i + 1], "-") == 0)) {
            if (set_value(o, argv[++i]))
                return UTIL_EUSAGE;
        } else if (o->type == UTIL_OPT_OPTSTRING) {
            *(const char **)o->field = "-";
        } else {
            error("option '--%s' needs a value (%s)", o->name, o->arg ? o->arg : "value");
            return UTIL_EUSAGE;
        }
    }
    return 0;
}

int util_opts_parse(const char *cmd, const char *usage, const struct util_opt *opts, int argc,
                    char **argv, char **positional, int *npositional)
{
    return util_opts_parse_flags(cmd, usage, opts, argc, argv, positional, npositional, 0);
}
