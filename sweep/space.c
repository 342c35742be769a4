/* SPDX-License-Identifier: MIT */
/*
 * Search spaces (docs/schemas/space.schema.json): validation that
 * names the file, the entry and the fix; pruning by what the topology has
 * (`requires`); expansion into configurations (the all-unset baseline first),
 * each with a stable id hashed from its sorted environment.
 */
#include "bench/bench.h"
#include "model/model.h"
#include "sweep/internal.h"
#include "util/buf.h"
#include "util/env.h"
#include "util/error.h"
#include "util/file.h"
#include "util/json.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/size.h"
#include "util/text.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int space_bad(const char *path, const char *entry, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The message names what the file says (keys, values): cleaned, no escape sequence of the file's
 * reaches the terminal. */
static int space_bad(const char *path, const char *entry, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    struct util_buf text = UTIL_BUF_INIT;
    util_buf_addf(&text, "cannot read space '%s': %s: %s", path, entry, msg);
    struct util_buf clean = UTIL_BUF_INIT;
    util_text_clean(&clean, text.data, text.len, 0);
    util_error("%s", util_buf_str(&clean));
    util_buf_release(&clean);
    util_buf_release(&text);
    return UTIL_EINVAL;
}

/*
 * Names are [A-Z_][A-Z0-9_]*, but Open MPI's MCA variables carry lowercase
 * parameter names (OMPI_MCA_btl, which the mpi space sweeps), so letters
 * of either case are allowed after an uppercase or underscore start.
 */
int sweep_valid_name(const char *s)
{
    if (!s || !(*s == '_' || isupper((unsigned char)*s)))
        return 0;
    for (; *s; s++)
        if (!(*s == '_' || isalnum((unsigned char)*s)))
            return 0;
    return 1;
}

int sweep_valid_value(const char *s)
{
    const char *start = s;
    for (; s && *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("_.,:=^/+-@", *s))
            return 0;
    return s != NULL && s - start <= SWEEP_VALUE_MAX;
}

/* A value as a string: strings as they are, integers printed; anything else is invalid. */
static int value_text(json_t *v, char *out, size_t len)
{
    if (json_is_string(v))
        return snprintf(out, len, "%s", json_string_value(v)) < (int)len ? 0 : -1;
    if (json_is_integer(v))
        return snprintf(out, len, "%lld", (long long)json_integer_value(v)), 0;
    return -1;
}

static int parse_size_field(const char *path, json_t *obj, const char *key, const char *entry,
                            size_t *out)
{
    json_t *v = json_object_get(obj, key);
    char text[64];
    if (!v)
        return 0;
    if (value_text(v, text, sizeof(text)))
        return space_bad(path, entry, "expected a size such as \"8\", \"1M\" or \"1G\"");
    if (bench_parse_size(text, out))
        return space_bad(path, entry,
                         "'%s' is not a size: use bytes with an optional K, M or G, at most 10^15",
                         text);
    return 0;
}

static int check_keys(const char *path, json_t *obj, const char *const *allowed, const char *where)
{
    const char *key = util_json_unknown_key(obj, allowed);
    if (key)
        return space_bad(path, where,
                         "unknown key \"%s\": check the spelling (docs/schemas/space.schema.json)",
                         key);
    return 0;
}

/* A variable name a space may set: the syntax, then the policy (util_env_refused) with its reason.
 */
static int check_name(const char *path, const char *entry, const char *name)
{
    if (!sweep_valid_name(name))
        return space_bad(path, entry, "variable names are [A-Z_][A-Za-z0-9_]*");
    const char *why = util_env_refused(name);
    if (why)
        return space_bad(path, entry, "a space may not set this variable: %s", why);
    return 0;
}

#define VALUE_SET "[A-Za-z0-9_.,:=^/+-]*, at most 255 characters"

/* fixed (values) and exclude entries (values or null, names among vars). */
static int validate_env_object(const char *path, json_t *obj, const char *what, json_t *vars)
{
    const char *name;
    json_t *v;
    char text[256], entry[320];
    if (!json_is_object(obj))
        return space_bad(path, what, "expected an object of NAME: value");
    json_object_foreach(obj, name, v) {
        snprintf(entry, sizeof(entry), "%s.%s", what, name);
        if (check_name(path, entry, name))
            return UTIL_EINVAL;
        if (vars && !json_object_get(vars, name))
            return space_bad(path, entry, "not a variable of \"vars\": check the spelling");
        if (json_is_null(v) && vars)
            continue;
        if (value_text(v, text, sizeof(text)) || !sweep_valid_value(text) || strchr(text, '@'))
            return space_bad(path, entry, "values are strings of " VALUE_SET "%s",
                             vars ? " or null" : "");
        if (util_env_value_refused(name, text))
            return space_bad(path, entry, "value \"%s\": %s", text,
                             util_env_value_refused(name, text));
    }
    return 0;
}

static int cmp_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One vars list: every value valid and none twice (sorted: a list of n values costs n log n). */
static int load_values(const char *path, const char *entry, const char *name, json_t *list)
{
    size_t n = json_array_size(list), k = 0, i;
    char **texts = util_xcalloc(n + 1, sizeof(char *));
    int rc = 0;
    json_t *v;
    json_array_foreach(list, i, v) {
        char text[256];
        if (rc || json_is_null(v))
            continue;
        if (value_text(v, text, sizeof(text)) || !sweep_valid_value(text))
            rc =
                space_bad(path, entry, "value %zu: values are strings of " VALUE_SET " or null", i);
        else if (strchr(text, '@') && strcmp(text, "@interfaces"))
            rc = space_bad(path, entry, "value %zu: '@' is only for \"@interfaces\"", i);
        else if (strcmp(text, "@interfaces") && util_env_value_refused(name, text))
            rc = space_bad(path, entry, "value %zu (\"%s\"): %s", i, text,
                           util_env_value_refused(name, text));
        else if (!(texts[k++] = util_xstrdup(text)))
            rc = space_bad(path, entry, "out of memory");
    }
    if (!rc)
        qsort(texts, k, sizeof(char *), cmp_text);
    for (i = 1; !rc && i < k; i++)
        if (strcmp(texts[i - 1], texts[i]) == 0)
            rc = space_bad(path, entry, "value \"%s\" is listed twice", texts[i]);
    for (i = 0; texts && i < k; i++)
        free(texts[i]);
    free(texts);
    return rc;
}

static int load_vars(struct sweep_space *s, const char *path)
{
    json_t *vars = json_object_get(s->doc, "vars"), *fixed = json_object_get(s->doc, "fixed");
    if (!json_is_object(vars) || json_object_size(vars) == 0)
        return space_bad(path, "vars",
                         "expected an object of NAME: [values] with at least one variable");
    if (json_object_size(vars) > SWEEP_MAX_VARS)
        return space_bad(path, "vars",
                         "%zu variables: at most %d are swept (one with a single value belongs "
                         "in \"fixed\")",
                         json_object_size(vars), SWEEP_MAX_VARS);
    const char *name;
    json_t *list;
    json_object_foreach(vars, name, list) {
        char entry[300];
        snprintf(entry, sizeof(entry), "vars.%s", name);
        if (check_name(path, entry, name))
            return UTIL_EINVAL;
        if (json_object_get(fixed, name))
            return space_bad(path, entry, "also in \"fixed\": a variable is either swept or fixed");
        if (!json_is_array(list) || json_array_size(list) == 0)
            return space_bad(path, entry, "expected a non-empty list of values (null means unset)");
        if (load_values(path, entry, name, list))
            return UTIL_EINVAL;
    }
    return 0;
}

/* sizes: each run measures from 1 byte to 64G, at most SWEEP_MAX_SIZES sizes, at least one. */
static int load_sizes(struct sweep_space *s, const char *path)
{
    json_t *sizes = json_object_get(s->doc, "sizes");
    static const char *const size_keys[] = {"min", "max", "factor", NULL};
    s->min_bytes = 8;
    s->max_bytes = 1u << 30;
    s->factor = 2;
    if (sizes && !json_is_object(sizes))
        return space_bad(path, "sizes", "expected an object of min, max and factor");
    if (sizes && (check_keys(path, sizes, size_keys, "sizes") ||
                  parse_size_field(path, sizes, "min", "sizes.min", &s->min_bytes) ||
                  parse_size_field(path, sizes, "max", "sizes.max", &s->max_bytes)))
        return UTIL_EINVAL;
    json_t *f = json_object_get(sizes, "factor");
    if (f && (!json_is_number(f) || !(json_number_value(f) > 1 && json_number_value(f) <= 1024)))
        return space_bad(
            path, "sizes.factor",
            "expected a number above 1 and at most 1024 (2 doubles the size each step)");
    if (f)
        s->factor = json_number_value(f);
    if (s->min_bytes == 0)
        return space_bad(path, "sizes.min", "expected at least 1 byte");
    if (s->max_bytes > SWEEP_MAX_BYTES)
        return space_bad(path, "sizes.max",
                         "%zu bytes is above 64G: every rank holds two buffers of the largest size",
                         s->max_bytes);
    if (s->min_bytes > s->max_bytes)
        return space_bad(path, "sizes", "min is above max: swap them");
    struct bench_options o = {.min_bytes = s->min_bytes,
                              .max_bytes = s->max_bytes,
                              .step_factor = s->factor,
                              .dtype = s->dtype ? s->dtype : "float"};
    size_t n = bench_count_sizes(&o, SWEEP_MAX_SIZES + 1);
    if (n == 0)
        return space_bad(path, "sizes",
                         "no size from %zu to %zu bytes holds one %s element: raise min and max",
                         s->min_bytes, s->max_bytes, o.dtype);
    if (n > SWEEP_MAX_SIZES)
        return space_bad(path, "sizes.factor",
                         "more than %d sizes from %zu to %zu bytes by %g: raise the factor",
                         SWEEP_MAX_SIZES, s->min_bytes, s->max_bytes, s->factor);
    s->nsizes = (int)n;
    return 0;
}

static int load_numbers(struct sweep_space *s, const char *path)
{
    json_t *d = s->doc, *obj = json_object_get(d, "objective");
    static const char *const obj_keys[] = {"min", "max", NULL};
    if (load_sizes(s, path))
        return UTIL_EINVAL;
    s->obj_min = s->min_bytes;
    s->obj_max = s->max_bytes;
    if (obj && (!json_is_object(obj) || check_keys(path, obj, obj_keys, "objective") ||
                parse_size_field(path, obj, "min", "objective.min", &s->obj_min) ||
                parse_size_field(path, obj, "max", "objective.max", &s->obj_max)))
        return UTIL_EINVAL;
    if (s->obj_min > s->obj_max)
        return space_bad(path, "objective", "min is above max: swap them");
    int measured = 0; /* an objective no run measures ranks every configuration at 0 */
    for (size_t b = s->min_bytes; b <= s->max_bytes && !measured;
         b = util_next_size(b, s->factor, 0, s->max_bytes))
        measured = b >= s->obj_min && b <= s->obj_max;
    if (!measured)
        return space_bad(path, "objective",
                         "no size from %zu to %zu B measured (sizes run from %zu to %zu): give an "
                         "objective within the sizes",
                         s->obj_min, s->obj_max, s->min_bytes, s->max_bytes);
    struct {
        const char *key;
        double min, max, dflt, *out;
    } nums[] = {{"repeat", 1, 100, 3, NULL},
                {"iters", 1, 100000, 20, NULL},
                {"warmup", 0, 10000, 5, NULL},
                {"timeout_s", 1, 86400, 120, &s->timeout_s},
                {"cv_max", 0, 1, 0.05, &s->cv_max}};
    int *ints[] = {&s->repeat, &s->iters, &s->warmup};
    for (int i = 0; i < 5; i++) {
        json_t *v = json_object_get(d, nums[i].key);
        double x = v ? json_number_value(v) : nums[i].dflt;
        if (v && (!json_is_number(v) || x < nums[i].min || x > nums[i].max ||
                  (i < 3 && !json_is_integer(v))))
            return space_bad(path, nums[i].key, "expected %s from %g to %g",
                             i < 3 ? "an integer" : "a number", nums[i].min, nums[i].max);
        if (i < 3)
            *ints[i] = (int)x;
        else
            *nums[i].out = x;
    }
    return 0;
}

/* rdma: any RDMA NIC; verbs: one that NCCL's own IB transport drives (InfiniBand, RoCE), which
 * the NCCL_IB_* variables tune and aws-ofi-nccl (EFA, Slingshot) ignores. */
static const char *const features[] = {"gpu", "nvlink", "nvswitch", "ib",        "roce", "efa",
                                       "cxi", "rdma",   "verbs",    "multinode", NULL};

static int load_rules(struct sweep_space *s, const char *path)
{
    json_t *ex = json_object_get(s->doc, "exclude"), *req = json_object_get(s->doc, "requires");
    if (ex && !json_is_array(ex))
        return space_bad(path, "exclude", "expected a list of {NAME: value} objects");
    if (json_array_size(ex) > SWEEP_MAX_EXCLUDES)
        return space_bad(path, "exclude", "%zu entries: at most %d", json_array_size(ex),
                         SWEEP_MAX_EXCLUDES);
    size_t i;
    json_t *e;
    json_array_foreach(ex, i, e) {
        char entry[64];
        snprintf(entry, sizeof(entry), "exclude[%zu]", i);
        if (validate_env_object(path, e, entry, json_object_get(s->doc, "vars")))
            return UTIL_EINVAL;
    }
    if (req && !json_is_object(req))
        return space_bad(path, "requires", "expected an object of NAME: feature");
    const char *name;
    json_t *v;
    json_object_foreach(req, name, v) {
        char entry[300];
        snprintf(entry, sizeof(entry), "requires.%s", name);
        int ok = 0;
        for (const char *const *f = features; *f && json_is_string(v); f++)
            ok |= strcmp(*f, json_string_value(v)) == 0;
        if (!ok)
            return space_bad(path, entry,
                             "unknown feature: one of gpu, nvlink, nvswitch, ib, roce, efa, cxi, "
                             "rdma, verbs, multinode");
    }
    return 0;
}

/* Validates s->doc, read from path (named in every message). */
static int space_check(struct sweep_space *s, const char *path)
{
    static const char *const keys[] = {"schema",   "backend",   "collective", "sizes",  "dtype",
                                       "op",       "objective", "vars",       "fixed",  "exclude",
                                       "requires", "repeat",    "iters",      "warmup", "timeout_s",
                                       "cv_max",   "note",      NULL};
    const char *schema = json_string_value(json_object_get(s->doc, "schema"));
    if (!json_is_object(s->doc))
        return space_bad(path, "document", "expected a JSON object");
    if (!schema || strcmp(schema, "topotune/space/1"))
        return space_bad(path, "schema", "expected \"topotune/space/1\"");
    if (check_keys(path, s->doc, keys, "top level"))
        return UTIL_EINVAL;
    const char *coll = json_string_value(json_object_get(s->doc, "collective"));
    if (coll && strcmp(coll, "all_reduce"))
        return space_bad(path, "collective", "only all_reduce is benchmarked");
    s->backend = json_string_value(json_object_get(s->doc, "backend"));
    s->dtype = json_string_value(json_object_get(s->doc, "dtype"));
    s->op = json_string_value(json_object_get(s->doc, "op"));
    if (s->backend && strcmp(s->backend, "nccl") && strcmp(s->backend, "mpi") &&
        strcmp(s->backend, "sim"))
        return space_bad(path, "backend", "expected nccl, mpi or sim");
    if (s->dtype && bench_dtype_parse(s->dtype) < 0)
        return space_bad(path, "dtype", "unknown type '%s'", s->dtype);
    if (s->op && bench_op_parse(s->op) < 0)
        return space_bad(path, "op", "unknown op '%s'", s->op);
    json_t *fixed = json_object_get(s->doc, "fixed");
    if (json_object_size(fixed) > SWEEP_MAX_FIXED)
        return space_bad(path, "fixed", "%zu variables: at most %d", json_object_size(fixed),
                         SWEEP_MAX_FIXED);
    if ((fixed && validate_env_object(path, fixed, "fixed", NULL)) || load_vars(s, path) ||
        load_numbers(s, path) || load_rules(s, path))
        return UTIL_EINVAL;
    return 0;
}

int sweep_space_load(struct sweep_space *s, const char *path)
{
    memset(s, 0, sizeof(*s));
    struct util_buf text = UTIL_BUF_INIT;
    const char *why = NULL; /* a FIFO would block the read forever: refused at once */
    int rc = util_file_read_input(path, 1, 64u << 20, &text, &why);
    if (rc)
        util_error("cannot read space '%s': %s", path, why ? why : util_strerror(rc));
    else
        rc = sweep_space_load_buffer(s, path, text.data, text.len);
    util_buf_release(&text);
    return rc ? UTIL_EINVAL : 0;
}

int sweep_space_load_buffer(struct sweep_space *s, const char *name, const char *data, size_t len)
{
    memset(s, 0, sizeof(*s));
    s->path = util_xstrdup(name);
    json_error_t err;
    int rc;
    if (!len) /* jansson calls an empty buffer "wrong arguments" */
        rc = space_bad(name, "document", "the file is empty: a space is a JSON object");
    else if (!(s->doc = json_loadb(data, len, JSON_REJECT_DUPLICATES, &err)))
        rc = space_bad(name, "document", "line %d, column %d: %s", err.line, err.column, err.text);
    else
        rc = space_check(s, name);
    if (rc) /* nothing kept of a space refused: a caller that returns at once leaked it */
        sweep_space_release(s);
    return rc;
}

void sweep_space_release(struct sweep_space *s)
{
    json_decref(s->doc);
    json_decref(s->vars);
    free(s->path);
    memset(s, 0, sizeof(*s));
}

static int has_feature(const struct topo *t, int nodes, const char *f)
{
    int kinds[TOPO_NIC_NKINDS] = {0}, rdma = 0, verbs = 0;
    for (int i = 0; i < t->nnics; i++) {
        kinds[t->nics[i].kind]++;
        rdma += topo_nic_rdma(t->nics[i].kind);
        verbs += topo_nic_verbs(t->nics[i].kind);
    }
    if (!strcmp(f, "gpu"))
        return t->ngpus > 0;
    if (!strcmp(f, "nvlink"))
        return t->ngpus > 0 && t->gpus[0].nvlinks > 0;
    if (!strcmp(f, "nvswitch"))
        return t->nvswitches > 0 || t->nvswitches == TOPO_UNKNOWN;
    if (!strcmp(f, "ib"))
        return kinds[TOPO_NIC_IB] > 0;
    if (!strcmp(f, "roce"))
        return kinds[TOPO_NIC_ROCE] > 0;
    if (!strcmp(f, "efa"))
        return kinds[TOPO_NIC_EFA] > 0;
    if (!strcmp(f, "cxi"))
        return kinds[TOPO_NIC_CXI] > 0;
    if (!strcmp(f, "rdma"))
        return rdma > 0;
    if (!strcmp(f, "verbs")) /* beside EFA or Slingshot NCCL runs on its plugin, not verbs */
        return verbs > 0 && !topo_libfabric_nics(t);
    return nodes > 1; /* multinode */
}

/*
 * An interface name from a topology file goes into a run's environment: it must
 * be one a space could have written, and a name Linux could give (1 to 15
 * characters, no '/'), in a set that cannot change what NCCL_SOCKET_IFNAME's
 * syntax means ('^', '=' and ',' are NCCL's).
 */
static int valid_interface(const char *name)
{
    size_t len = strlen(name);
    if (len == 0 || len > 15 || !strcmp(name, ".") || !strcmp(name, ".."))
        return 0;
    for (const char *p = name; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("_.-", *p))
            return 0;
    return 1;
}

/* Appends v to list unless seen holds it already (null counts as a value too). */
static void append_once(json_t *list, json_t *seen, json_t *v)
{
    char text[256] = "";
    if (!json_is_null(v) && value_text(v, text, sizeof(text)))
        return;
    char key[260];
    snprintf(key, sizeof(key), "%c%s", json_is_null(v) ? 'n' : 'v', text);
    if (json_object_get(seen, key))
        return;
    json_object_set_new(seen, key, json_true());
    json_array_append(list, v);
}

/* New reference: the list with "@interfaces" replaced by "=NAME" per valid interface of t. */
static json_t *interfaces_expand(json_t *list, const struct topo *t, const char *var)
{
    json_t *expanded = json_array(), *seen = json_object(), *val;
    size_t i;
    json_array_foreach(list, i, val) {
        if (!json_is_string(val) || strcmp(json_string_value(val), "@interfaces")) {
            append_once(expanded, seen, val);
            continue;
        }
        int left_out = 0;
        const char *first = NULL;
        for (int k = 0; k < t->nnics; k++) {
            const char *dev = t->nics[k].netdev;
            if (dev && !valid_interface(dev)) {
                first = left_out++ ? first : dev;
            } else if (dev) {
                json_t *exact = json_sprintf("=%s", dev);
                append_once(expanded, seen, exact);
                json_decref(exact);
            }
        }
        if (left_out) {
            struct util_buf shown = UTIL_BUF_INIT;
            util_text_clean(&shown, first, strnlen(first, 64), 0);
            util_warning("%s: @interfaces leaves out %d interface(s) of the topology ('%s'%s): an "
                         "interface name is 1 to 15 of A-Z a-z 0-9 _ . -",
                         var, left_out, util_buf_str(&shown), left_out > 1 ? ", ..." : "");
            util_buf_release(&shown);
        }
    }
    json_decref(seen);
    return expanded;
}

/* A new {var} entry of pruned (its reason still to set), borrowed. */
static json_t *pruned_one(json_t *pruned, const char *name)
{
    json_t *p = json_object();
    json_object_set_new(p, "var", json_string(name));
    json_array_append_new(pruned, p);
    return p;
}

/* Why NCCL version have (0: not known) does not read name, into why; 0 when it does or no
 * version rule names it. */
static int nccl_unread(const char *name, int have, const char *version, char *why, size_t len)
{
    int since = util_env_nccl_since(name), gone = util_env_nccl_gone(name);
    if (have && since > have)
        snprintf(why, len, "NCCL %s does not read it (NCCL %d.%d.%d on does)", version,
                 since / 10000, since / 100 % 100, since % 100);
    else if (have && gone && have >= gone)
        snprintf(why, len, "NCCL %s no longer reads it (NCCL %d.%d.%d on does not)", version,
                 gone / 10000, gone / 100 % 100, gone % 100);
    else
        return 0;
    return 1;
}

int sweep_inherited_name(const char *name)
{
    size_t n = strlen(name);
    int ok = n > 5 && n <= SWEEP_INHERITED_NAME_MAX && !strncmp(name, "NCCL_", 5);
    for (size_t i = 5; ok && i < n; i++)
        ok = isupper((unsigned char)name[i]) || isdigit((unsigned char)name[i]) || name[i] == '_';
    return ok;
}

/* text made one safe line of valid UTF-8 (a value of the environment may be any bytes), cut to
 * SWEEP_INHERITED_VALUE_MAX bytes at a character's start: as sweep_meta_check reads it back. */
static json_t *inherited_text(const char *text)
{
    struct util_buf b = UTIL_BUF_INIT;
    util_text_shown(&b, text);
    size_t n = b.len;
    if (n > SWEEP_INHERITED_VALUE_MAX) {
        n = SWEEP_INHERITED_VALUE_MAX;
        while (n > 0 && ((unsigned char)b.data[n] & 0xc0) == 0x80)
            n--;
    }
    json_t *s = json_stringn(b.data ? b.data : "", n);
    util_buf_release(&b);
    return s;
}

json_t *sweep_space_inherited(const struct sweep_space *s, const char *backend)
{
    json_t *out = json_object();
    if (backend && !strcmp(backend, "mpi")) /* host MPI between processes: no NCCL */
        return out;
    json_t *here = util_env_nccl_reaching(!backend || !strcmp(backend, "nccl")), *v;
    const char *name;
    json_object_foreach(here, name, v) {
        const char *value =
            json_is_array(v) ? json_string_value(json_array_get(v, 0)) : json_string_value(v);
        const char *from = json_is_array(v) ? json_string_value(json_array_get(v, 1)) : NULL;
        /* a name NCCL never reads (lower case, a configuration file's "NCCL_PROTO ") is none */
        if (!strncmp(name, "NCCL_DEBUG", 10) || util_env_per_node(name) ||
            !sweep_inherited_name(name) || json_object_get(json_object_get(s->doc, "fixed"), name))
            continue;
        json_object_set_new(out, name,
                            json_pack("{s:o,s:o}", "value", inherited_text(value), "from",
                                      inherited_text(from ? from : "environment")));
    }
    json_decref(here);
    return out;
}

char *sweep_inherited_text(const json_t *inherited)
{
    struct util_buf names = UTIL_BUF_INIT;
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)inherited, name, v) {
        const char *value = json_string_value(json_object_get(v, "value"));
        const char *from = json_string_value(json_object_get(v, "from"));
        util_buf_addf(&names, "%s%.64s=%.64s", names.len ? ", " : "", name, value ? value : "");
        if (from && strcmp(from, "environment"))
            util_buf_addf(&names, " (%.200s)", from);
    }
    return names.len ? util_buf_detach(&names) : NULL;
}

void sweep_space_version_warnings(const struct sweep_space *s, const struct topo *t,
                                  const char *backend)
{
    int have = util_env_nccl_version(t->software.nccl);
    if (backend && strcmp(backend, "nccl")) /* the sim has no NCCL, the mpi backend none */
        return;
    const char *name;
    json_t *v;
    char why[160];
    json_object_foreach(json_object_get(s->doc, "fixed"), name, v) {
        if (nccl_unread(name, have, t->software.nccl, why, sizeof(why)))
            util_warning("fixed %s: %s: set in every run, it changes nothing", name, why);
    }
    if (have)
        return;
    struct util_buf names = UTIL_BUF_INIT;
    json_object_foreach(s->vars, name, v) {
        if (util_env_nccl_since(name) || util_env_nccl_gone(name))
            util_buf_addf(&names, "%s%s", names.len ? ", " : "", name);
    }
    if (names.len)
        util_warning("the NCCL version the runs load is not known (no NCCL found here, or a "
                     "topology file without one): %s, read by some NCCL releases only, are "
                     "swept unchecked",
                     util_buf_str(&names));
    util_buf_release(&names);
}

json_t *sweep_space_prune(struct sweep_space *s, const struct topo *t, int nodes)
{
    json_t *pruned = json_array();
    json_decref(s->vars);
    s->vars = json_deep_copy(json_object_get(s->doc, "vars"));
    json_t *req = json_object_get(s->doc, "requires");
    const char *name;
    json_t *v, *tmp;
    /* the NCCL the runs load, when the topology knows it (this node's, or a host's) */
    int have = util_env_nccl_version(t->software.nccl);
    char why[160];
    json_object_foreach_safe(s->vars, tmp, name, v) {
        const char *f = json_string_value(json_object_get(req, name));
        /* NCCL ignores a variable it does not read: sweeping it would measure noise */
        if (nccl_unread(name, have, t->software.nccl, why, sizeof(why))) {
            json_object_set_new(pruned_one(pruned, name), "reason", json_string(why));
            json_object_del(s->vars, name);
            continue;
        }
        if (f && !has_feature(t, nodes, f)) {
            json_object_set_new(pruned_one(pruned, name), "reason",
                                json_sprintf("this node has no %s", f));
            json_object_del(s->vars, name);
            continue;
        }
        /* "@interfaces": each network interface of the topology, matched exactly. */
        json_t *expanded = interfaces_expand(v, t, name);
        json_object_set_new(s->vars, name, expanded);
    }
    return pruned;
}

/* Variables NCCL reads for some collectives only (NCCL's sources): where a collective runs one of
 * algos (-1: no further), or is made of sends and receives (p2p); and why. */
static const struct {
    const char *var;
    int algos[2], p2p;
    const char *why;
} for_some[] = {
    {"NCCL_PAT_ENABLE",
     {MODEL_ALGO_PAT, -1},
     0,
     "NCCL runs PAT for all_gather and reduce_scatter only (src/graph/tuning.cc)"},
    {"NCCL_NVLS_CHUNKSIZE",
     {MODEL_ALGO_NVLS, MODEL_ALGO_NVLSTREE},
     0,
     "NCCL runs NVLS for all_reduce, all_gather and reduce_scatter on one node, and across nodes "
     "without CollNet for all_reduce alone, as NVLSTree (src/graph/tuning.cc)"},
    {"NCCL_NCHANNELS_PER_NET_PEER",
     {-1, -1},
     1,
     "it sets the channels of each peer's sends and receives, which alltoall and sendrecv are "
     "made of (src/graph/paths.cc, ncclTopoGetNchannels)"},
    {"NCCL_P2P_PER_CHANNEL_NET_BW",
     {-1, -1},
     1,
     "it sets the channels of each peer's sends and receives, which alltoall and sendrecv are "
     "made of (src/graph/paths.cc, ncclTopoGetNchannels)"},
};

/* Whether one of collectives (names) makes NCCL read for_some[i]'s variable. */
static int reads_var(size_t i, const json_t *collectives, int nccl_nodes, int collnet)
{
    size_t k;
    json_t *c;
    json_array_foreach(collectives, k, c) {
        int coll = model_coll_parse(json_string_value(c));
        if (for_some[i].p2p && model_coll_p2p(coll))
            return 1;
        for (int a = 0; a < 2; a++)
            if (for_some[i].algos[a] >= 0 &&
                model_coll_runs(coll, for_some[i].algos[a], nccl_nodes, collnet))
                return 1;
    }
    return 0;
}

void sweep_space_prune_unused(struct sweep_space *s, const json_t *collectives, int nccl_nodes,
                              json_t *pruned)
{
    /* CollNet (swept, or fixed on) lets NCCL run NVLS across nodes for more: keep them all */
    const char *fixed =
        json_string_value(json_object_get(json_object_get(s->doc, "fixed"), "NCCL_COLLNET_ENABLE"));
    int collnet = json_object_get(s->vars, "NCCL_COLLNET_ENABLE") || (fixed && strcmp(fixed, "0"));
    struct util_buf runs = UTIL_BUF_INIT; /* what the sweep runs, for the reasons */
    size_t k;
    json_t *c;
    json_array_foreach(collectives, k, c) {
        const char *name = json_string_value(c);
        util_buf_addf(&runs, "%s%s", k ? ", " : "", name ? name : "?");
    }
    for (size_t i = 0; i < sizeof(for_some) / sizeof(for_some[0]); i++) {
        if (!json_object_get(s->vars, for_some[i].var) ||
            reads_var(i, collectives, nccl_nodes, collnet))
            continue;
        json_object_set_new(pruned_one(pruned, for_some[i].var), "reason",
                            json_sprintf("%s; this sweep runs %s on %d node(s) as NCCL counts them",
                                         for_some[i].why, util_buf_str(&runs), nccl_nodes));
        json_object_del(s->vars, for_some[i].var);
    }
    util_buf_release(&runs);
}

/* Stable id: 12 hex digits of FNV-1a over the sorted NAME=value lines. */
void sweep_config_id(const json_t *env, char out[16])
{
    const char **keys = util_xcalloc(json_object_size(env) + 1, sizeof(char *));
    size_t n = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)env, k, v)
        keys[n++] = k;
    qsort(keys, n, sizeof(char *), cmp_text);
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        struct util_buf line = UTIL_BUF_INIT;
        util_buf_addf(&line, "%s=%s\n", keys[i], json_string_value(json_object_get(env, keys[i])));
        for (const char *p = util_buf_str(&line); *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ULL;
        util_buf_release(&line);
    }
    free(keys);
    snprintf(out, 16, "%012llx", (unsigned long long)(h >> 16));
}

/* An exclude entry matches when every NAME: value in it matches (null: unset). */
static int excluded(json_t *exclude, json_t *env)
{
    size_t i;
    json_t *e;
    json_array_foreach(exclude, i, e) {
        int all = 1;
        const char *name;
        json_t *want;
        json_object_foreach(e, name, want) {
            const char *have = json_string_value(json_object_get(env, name));
            char text[256] = "";
            if (json_is_null(want))
                all &= have == NULL;
            else
                all &= have && value_text(want, text, sizeof(text)) == 0 && strcmp(text, have) == 0;
        }
        if (all)
            return 1;
    }
    return 0;
}

double sweep_space_count(const struct sweep_space *s)
{
    double n = 1;
    const char *name;
    json_t *list;
    json_object_foreach(s->vars ? s->vars : json_object_get(s->doc, "vars"), name, list) {
        size_t len = json_array_size(list);
        n *= len ? (double)len : 1; /* an empty list (no interface) leaves the variable unset */
    }
    return n;
}

/*
 * At most how many bytes one configuration takes in sweep.json (indented, as util_json_write
 * writes it at that depth): its id and braces, and each variable's name and longest value.
 */
static double config_bytes(const struct sweep_space *s)
{
    double bytes = 80;
    const char *name;
    json_t *list, *v;
    size_t i;
    json_object_foreach(s->vars, name, list) {
        size_t longest = 0;
        char text[256];
        json_array_foreach(list, i, v)
            if (!json_is_null(v) && value_text(v, text, sizeof(text)) == 0 &&
                strlen(text) > longest)
                longest = strlen(text);
        bytes += (double)(strlen(name) + longest) + 16;
    }
    return bytes;
}

json_t *sweep_space_configs(const struct sweep_space *s)
{
    /* Counted before anything is built: a space of 10^12 configurations is refused, not tried. */
    double count = sweep_space_count(s);
    size_t limit = s->max_configs ? s->max_configs : SWEEP_MAX_CONFIGS;
    struct util_buf many = UTIL_BUF_INIT, most = UTIL_BUF_INIT; /* 1,000,000, not 1e+06 */
    util_text_number(&many, count, 15);
    util_text_number(&most, (double)limit, 15);
    if (count > (double)limit) {
        space_bad(s->path ? s->path : "(space)", "vars",
                  "%s combinations of values, above the limit of %s configurations: shorten "
                  "the lists, or raise the limit with topotune sweep --max-configs N",
                  util_buf_str(&many), util_buf_str(&most));
        util_buf_release(&many);
        util_buf_release(&most);
        return NULL;
    }
    /* sweep.json lists them all, and a reader takes 64 MiB: a space that cannot be read back
     * is refused before 4 GB of configurations are built (--max-configs 10000000 once did) */
    double bytes = count * config_bytes(s);
    if (bytes > (double)SWEEP_MAX_CONFIGS_BYTES) {
        space_bad(s->path ? s->path : "(space)", "vars",
                  "%s combinations of values would take about %.0f MiB of sweep.json, above the "
                  "%u MiB its readers take: shorten the lists or the values",
                  util_buf_str(&many), bytes / (1 << 20), SWEEP_MAX_CONFIGS_BYTES >> 20);
        util_buf_release(&many);
        util_buf_release(&most);
        return NULL;
    }
    util_buf_release(&many);
    util_buf_release(&most);
    json_t *configs = json_array();
    size_t nvars = json_object_size(s->vars);
    const char **names = util_xcalloc(nvars + 1, sizeof(char *));
    json_t **lists = util_xcalloc(nvars + 1, sizeof(json_t *));
    size_t *idx = util_xcalloc(nvars + 1, sizeof(size_t));
    size_t n = 0;
    const char *name;
    json_t *list;
    json_object_foreach(s->vars, name, list) {
        names[n] = name;
        lists[n++] = list;
    }
    json_t *exclude = json_object_get(s->doc, "exclude");
    for (;;) {
        json_t *env = json_object();
        for (size_t i = 0; i < n; i++) {
            json_t *v = json_array_get(lists[i], idx[i]);
            char text[256];
            if (!json_is_null(v) && value_text(v, text, sizeof(text)) == 0)
                json_object_set_new(env, names[i], json_string(text));
        }
        int baseline = json_object_size(env) == 0;
        if (baseline || !excluded(exclude, env)) {
            json_t *c = json_object();
            char id[16];
            sweep_config_id(env, id);
            json_object_set_new(c, "id", json_string(id));
            json_object_set_new(c, "env", env);
            if (baseline) /* the baseline goes first, always */
                json_array_insert_new(configs, 0, c);
            else
                json_array_append_new(configs, c);
        } else {
            json_decref(env);
        }
        size_t i = 0; /* next combination, like an odometer */
        while (i < n && ++idx[i] >= json_array_size(lists[i]))
            idx[i++] = 0;
        if (i == n)
            break;
    }
    /* A space whose lists all lack null still measures the all-unset baseline. */
    json_t *first = json_array_get(configs, 0);
    if (!first || json_object_size(json_object_get(first, "env")) != 0) {
        json_t *c = json_object(), *env = json_object();
        char id[16];
        sweep_config_id(env, id);
        json_object_set_new(c, "id", json_string(id));
        json_object_set_new(c, "env", env);
        json_array_insert_new(configs, 0, c);
    }
    free(names);
    free(lists);
    free(idx);
    return configs;
}

json_t *sweep_space_env(const struct sweep_space *s, const json_t *config)
{
    json_t *env = json_object(), *v;
    const char *k;
    json_object_foreach(json_object_get(s->doc, "fixed"), k, v) {
        if (json_is_string(v))
            json_object_set(env, k, v);
        else
            json_object_set_new(env, k, json_sprintf("%lld", (long long)json_integer_value(v)));
    }
    json_object_update(env, json_object_get(config, "env"));
    return env;
}
