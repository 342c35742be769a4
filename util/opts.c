/* SPDX-License-Identifier: MIT */
/* Option parsing from a table, in the manner of git's parse-options, much smaller. */
#include "util/opts.h"
#include "util/error.h"
#include "util/log.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int util_parse_int(const char *s, long long min, long long max, long long *out)
{
    char *end;
    errno = 0;
    long long v = s ? strtoll(s, &end, 10) : 0;
    if (!s || end == s || *end || errno || v < min || v > max)
        return UTIL_EINVAL;
    *out = v;
    return 0;
}

int util_parse_double(const char *s, double min, double max, double *out)
{
    char *end;
    errno = 0;
    double v = s ? strtod(s, &end) : 0;
    if (!s || end == s || *end || errno || !isfinite(v) || v < min || v > max)
        return UTIL_EINVAL;
    *out = v;
    return 0;
}

int util_parse_size(const char *s, double min, double max, size_t *out)
{
    char *end;
    errno = 0;
    double v = s ? strtod(s, &end) : 0, unit = 1;
    if (!s || end == s || errno || !isfinite(v))
        return UTIL_EINVAL;
    switch (*end) {
    case 'K':
    case 'k':
        unit = 1024.0, end++;
        break;
    case 'M':
    case 'm':
        unit = 1024.0 * 1024, end++;
        break;
    case 'G':
    case 'g':
        unit = 1024.0 * 1024 * 1024, end++;
        break;
    }
    double bytes = round(v * unit);
    if (*end || !(bytes >= min && bytes <= max))
        return UTIL_EINVAL;
    *out = (size_t)bytes;
    return 0;
}

const char *util_size_text(double bytes, char *buf, size_t len)
{
    static const char units[] = "GMK";
    for (int i = 0; i < 3; i++) {
        double unit = pow(1024, 3 - i);
        if (bytes >= unit && fmod(bytes, unit) == 0) {
            snprintf(buf, len, "%.0f%c", bytes / unit, units[i]);
            return buf;
        }
    }
    snprintf(buf, len, "%.0f", bytes);
    return buf;
}

void util_opts_usage(FILE *out, const struct util_opts_cmd *cmd)
{
    fprintf(out, "usage: %s %s\n\n", cmd->name, cmd->usage);
    for (const struct util_opt *o = cmd->opts; o->name; o++) {
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

/* "nccl, mpi or sim" from "nccl mpi sim", in buf. */
static const char *choices_text(const char *words, char *buf, size_t len)
{
    size_t used = 0, n = 0;
    const char *p = words;
    buf[0] = '\0';
    while (*p) {
        size_t w = strcspn(p, " ");
        const char *next = p + w + strspn(p + w, " ");
        const char *sep = !n ? "" : *next ? ", " : " or ";
        int k = snprintf(buf + used, len - used, "%s%.*s", sep, (int)w, p);
        if (k < 0 || (size_t)k >= len - used)
            break;
        used += (size_t)k, n++;
        p = next;
    }
    return buf;
}

static int is_choice(const char *words, const char *v)
{
    size_t len = strlen(v);
    for (const char *p = words; len && *p;) {
        size_t w = strcspn(p, " ");
        if (w == len && !strncmp(p, v, len))
            return 1;
        p += w + strspn(p + w, " ");
    }
    return 0;
}

/* How many values a list of numbers takes: the option's own bound, never past the field's. */
static int max_items(const struct util_opt *o)
{
    return o->max_items > 0 && o->max_items < UTIL_OPT_LIST_MAX ? o->max_items : UTIL_OPT_LIST_MAX;
}

/* The error for a bad value of a typed option: what it should have been, with its range. */
static int bad_value(const struct util_opt *o, const char *value)
{
    char want[512], lo[32], hi[32], flag[80];
    if (o->letter)
        snprintf(flag, sizeof(flag), "-%c (--%s)", o->letter, o->name);
    else
        snprintf(flag, sizeof(flag), "--%s", o->name);
    switch (o->type) {
    case UTIL_OPT_INT:
        snprintf(want, sizeof(want), "a whole number from %.0f to %.0f", o->min, o->max);
        break;
    case UTIL_OPT_INTS:
        snprintf(want, sizeof(want),
                 "whole numbers from %.0f to %.0f separated by commas, at most %d", o->min, o->max,
                 max_items(o));
        break;
    case UTIL_OPT_DOUBLE:
        snprintf(want, sizeof(want), "a number from %g to %g", o->min, o->max);
        break;
    case UTIL_OPT_SIZE:
        snprintf(want, sizeof(want), "bytes from %s to %s, with an optional K, M or G",
                 util_size_text(o->min, lo, sizeof(lo)), util_size_text(o->max, hi, sizeof(hi)));
        break;
    default: /* UTIL_OPT_CHOICE */
        choices_text(o->choices, want, sizeof(want));
        break;
    }
    util_error("invalid value '%s' for %s: expected %s%s%s%s", value, flag, want,
               o->hint ? " (" : "", o->hint ? o->hint : "", o->hint ? ")" : "");
    return UTIL_EUSAGE;
}

static int parse_ints(const struct util_opt *o, const char *value)
{
    struct util_opt_ints *l = o->field, got = {{0}, 0};
    const char *p = value;
    for (;;) {
        char item[32];
        size_t w = strcspn(p, ",");
        long long v;
        if (got.n == max_items(o) || w >= sizeof(item))
            return bad_value(o, value);
        memcpy(item, p, w);
        item[w] = '\0';
        if (util_parse_int(item, (long long)o->min, (long long)o->max, &v))
            return bad_value(o, value);
        got.v[got.n++] = (int)v;
        if (!p[w])
            break;
        p += w + 1;
    }
    *l = got;
    return 0;
}

/* Stores one value, checked by its type. 0, or UTIL_EUSAGE after the error. */
static int set_value(const struct util_opt *o, const char *value)
{
    long long i;
    switch (o->type) {
    case UTIL_OPT_LIST: {
        struct util_opt_list *l = o->field;
        if (l->n == UTIL_OPT_LIST_MAX)
            return util_error("option '--%s' given more than %d times", o->name, UTIL_OPT_LIST_MAX),
                   UTIL_EUSAGE;
        l->items[l->n++] = value;
        return 0;
    }
    case UTIL_OPT_INT:
        if (util_parse_int(value, (long long)o->min, (long long)o->max, &i))
            return bad_value(o, value);
        *(int *)o->field = (int)i;
        return 0;
    case UTIL_OPT_DOUBLE:
        return util_parse_double(value, o->min, o->max, o->field) ? bad_value(o, value) : 0;
    case UTIL_OPT_SIZE:
        return util_parse_size(value, o->min, o->max, o->field) ? bad_value(o, value) : 0;
    case UTIL_OPT_INTS:
        return parse_ints(o, value);
    case UTIL_OPT_CHOICE:
        if (!is_choice(o->choices, value))
            return bad_value(o, value);
        *(const char **)o->field = value;
        return 0;
    default:
        *(const char **)o->field = value;
        return 0;
    }
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

/* One option at argv[*i] (its value may take the next argument). 0 or UTIL_EUSAGE. */
static int one_option(const struct util_opt *o, const char *eq, int argc, char **argv, int *i)
{
    if (o->type == UTIL_OPT_FLAG) {
        if (eq)
            return util_error("option '--%s' takes no value", o->name), UTIL_EUSAGE;
        *(int *)o->field = 1;
        return 0;
    }
    if (eq)
        return set_value(o, eq + 1);
    if (*i + 1 < argc &&
        (o->type != UTIL_OPT_OPTSTRING || argv[*i + 1][0] != '-' || strcmp(argv[*i + 1], "-") == 0))
        return set_value(o, argv[++*i]);
    if (o->type == UTIL_OPT_OPTSTRING) {
        *(const char **)o->field = "-";
        return 0;
    }
    return util_error("option '--%s' needs a value (%s)", o->name, o->arg ? o->arg : "value"),
           UTIL_EUSAGE;
}

int util_opts_parse(const struct util_opts_cmd *cmd, int argc, char **argv, int *npositional)
{
    int npos = 0;
    *npositional = 0;
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (strcmp(a, "--") == 0) { /* the rest is positional, whatever it looks like */
            while (++i < argc)
                argv[++npos] = argv[i];
            break;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            util_opts_usage(stdout, cmd);
            return UTIL_OPTS_HELP;
        }
        const char *eq = NULL;
        const struct util_opt *o =
            a[0] == '-' && strcmp(a, "-") ? find_arg(cmd->opts, a, &eq) : NULL;
        if (!o && a[0] == '-' && strcmp(a, "-") && !cmd->keep_unknown)
            return util_error("unknown option '%s' for '%s' (see '%s --help')", a, cmd->name,
                              cmd->name),
                   UTIL_EUSAGE;
        if (!o) { /* positional (kept in order: i >= npos + 1, nothing is overwritten unread) */
            argv[++npos] = a;
            continue;
        }
        if (one_option(o, eq, argc, argv, &i))
            return UTIL_EUSAGE;
    }
    if (cmd->max_positional >= 0 && npos > cmd->max_positional)
        return util_error("unexpected argument '%s' (see '%s --help')",
                          argv[cmd->max_positional + 1], cmd->name),
               UTIL_EUSAGE;
    *npositional = npos;
    return 0;
}
