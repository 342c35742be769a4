/* SPDX-License-Identifier: MIT */
/*
 * A sweep directory is untrusted input: gen and compare read sweep.json and
 * results.jsonl that anyone may have edited. Every field they use is checked
 * here (type, range, character set) before it can become a path, a comment,
 * a shell word or a YAML value; docs/schemas/sweep.schema.json and
 * result.schema.json say the same for other readers.
 */
#include "model/model.h"
#include "sweep/internal.h"
#include "topo/topo.h"
#include "util/buf.h"
#include "util/env.h"
#include "util/error.h"
#include "util/file.h"
#include "util/jsonl.h"
#include "util/log.h"
#include "util/text.h"
#include "workload/workload.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The file and the place in it, for one error message. */
struct where {
    const char *path;
    size_t line; /* 0: the whole file */
};

__attribute__((format(printf, 3, 4))) static int bad(const struct where *w, const char *field,
                                                     const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (w->line)
        util_error("refusing '%s': line %zu: %s: %s: the sweep directory was edited or damaged; "
                   "run the sweep again",
                   w->path, w->line, field, msg);
    else
        util_error(
            "refusing '%s': %s: %s: the sweep directory was edited or damaged; run the sweep "
            "again",
            w->path, field, msg);
    return UTIL_EINVAL;
}

/*
 * Any string anywhere in v with a control character (a newline included), as a JSON path.
 * The child's own words (stderr_tail) keep their newlines: no reader copies them into a file.
 */
static int find_control(const json_t *v, struct util_buf *path)
{
    size_t len = path->len, i;
    const char *k;
    json_t *e;
    if (json_is_string(v)) {
        for (const unsigned char *p = (const unsigned char *)json_string_value(v); *p; p++)
            if (*p < 0x20 || *p == 0x7f)
                return 1;
        return json_string_length(v) != strlen(json_string_value(v)); /* an embedded NUL */
    }
    json_object_foreach((json_t *)v, k, e) {
        if (!strcmp(k, "stderr_tail") && json_is_string(e))
            continue;
        util_buf_addf(path, ".%.64s", k);
        if (find_control(e, path))
            return 1;
        path->len = len, path->data[len] = '\0';
    }
    json_array_foreach(v, i, e) {
        util_buf_addf(path, "[%zu]", i);
        if (find_control(e, path))
            return 1;
        path->len = len, path->data[len] = '\0';
    }
    return 0;
}

static int no_control(const struct where *w, const json_t *doc)
{
    struct util_buf path = UTIL_BUF_INIT;
    util_buf_adds(&path, "$");
    int hit = find_control(doc, &path);
    int rc = hit ? bad(w, util_buf_str(&path),
                       "a control character (newline, escape or NUL) in a string")
                 : 0;
    util_buf_release(&path);
    return rc;
}

static int check_env(const struct where *w, const char *field, const json_t *env)
{
    const char *name;
    json_t *v;
    if (!json_is_object(env))
        return bad(w, field, "expected an object of NAME: value");
    json_object_foreach((json_t *)env, name, v) {
        const char *why = util_env_refused(name);
        if (why)
            return bad(w, field, "variable \"%.64s\" refused: %s", name, why);
        if (!json_is_string(v) || !sweep_valid_value(json_string_value(v)) ||
            strchr(json_string_value(v), '@'))
            return bad(w, field,
                       "value of %s: expected a string of [A-Za-z0-9_.,:=^/+-], at most %d "
                       "characters",
                       name, SWEEP_VALUE_MAX);
    }
    return 0;
}

/* "inherited": NCCL_* names of {value, from} texts (what the runs inherited: only said, never
 * set by anyone), as sweep_space_inherited records them; absent in an older topotune's. */
static int check_inherited(const struct where *w, const json_t *inherited)
{
    const char *name;
    json_t *v;
    if (!inherited)
        return 0;
    if (!json_is_object(inherited))
        return bad(w, "inherited", "expected an object of NAME: {value, from}");
    json_object_foreach((json_t *)inherited, name, v) {
        if (!sweep_inherited_name(name))
            return bad(w, "inherited", "\"%.64s\": expected an NCCL_* variable name", name);
        const char *value = json_string_value(json_object_get(v, "value"));
        const char *from = json_string_value(json_object_get(v, "from"));
        if (!json_is_object(v) || json_object_size(v) != 2 || !value || !from ||
            strlen(value) > SWEEP_INHERITED_VALUE_MAX || !*from ||
            strlen(from) > SWEEP_INHERITED_VALUE_MAX)
            return bad(w, "inherited",
                       "%s: expected {\"value\": text, \"from\": \"environment\" or a file}, "
                       "each at most 4096 characters",
                       name);
    }
    return 0;
}

static int check_int(const struct where *w, const json_t *o, const char *key, long long min,
                     long long max, int required)
{
    json_t *v = json_object_get(o, key);
    if (!v && !required)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
        return bad(w, key, "expected an integer from %lld to %lld", min, max);
    return 0;
}

static int check_number(const struct where *w, const json_t *o, const char *key, double min,
                        double max, int required)
{
    json_t *v = json_object_get(o, key);
    if (!v && !required)
        return 0;
    if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < min ||
        json_number_value(v) > max)
        return bad(w, key, "expected a number from %g to %g", min, max);
    return 0;
}

static int check_versions(const struct where *w, const json_t *versions)
{
    const char *k;
    json_t *v;
    if (!json_is_object(versions))
        return bad(w, "versions", "expected an object");
    json_object_foreach((json_t *)versions, k, v)
        if (!json_is_null(v) && !util_valid_version(json_string_value(v)))
            return bad(w, "versions",
                       "%.32s: expected null or a version of [A-Za-z0-9 .+~_:()-], "
                       "at most 64 characters",
                       k);
    return 0;
}

static int check_configs(const struct where *w, const json_t *configs)
{
    size_t i;
    json_t *c, *seen = json_object();
    int rc = 0;
    char want[16];
    if (!json_is_array(configs) || json_array_size(configs) == 0)
        rc = bad(w, "configs", "expected a non-empty array, the all-unset baseline first");
    json_array_foreach(configs, i, c) {
        const char *id = json_string_value(json_object_get(c, "id"));
        if (rc)
            break;
        if (!util_valid_id(id))
            rc = bad(w, "configs", "entry %zu: id: expected [A-Za-z0-9._-], at most 128", i);
        else if (json_object_get(seen, id))
            rc = bad(w, "configs", "entry %zu: id %s listed twice", i, id);
        else if (check_env(w, "configs[].env", json_object_get(c, "env")))
            rc = UTIL_EINVAL;
        else if ((json_object_size(json_object_get(c, "env")) == 0) != (i == 0))
            rc = bad(w, "configs", "entry %zu: the all-unset baseline comes first, once", i);
        else if (strcmp(id, (sweep_config_id(json_object_get(c, "env"), want), want)))
            /* the id is its variables' hash: a pair that disagrees was edited, and gen would
             * recommend variables that never ran */
            rc = bad(w, "configs", "entry %zu: id %s is not the id of its env (%s)", i, id, want);
        else
            json_object_set_new(seen, id, json_true());
    }
    json_decref(seen);
    return rc;
}

int sweep_meta_check(const json_t *m, const char *path)
{
    struct where w = {path, 0};
    const char *schema = json_string_value(json_object_get(m, "schema"));
    const char *backend = json_string_value(json_object_get(m, "backend"));
    if (!json_is_object(m) || !schema || strcmp(schema, "topotune/sweep/1"))
        return bad(&w, "schema", "expected \"topotune/sweep/1\" (is this a sweep directory?)");
    if (no_control(&w, m))
        return UTIL_EINVAL;
    const char *cls = json_string_value(json_object_get(m, "class"));
    if (!util_valid_id(cls) || !strcmp(cls, "index.json")) /* a profile root's own file */
        return bad(&w, "class",
                   "expected a node class id of [A-Za-z0-9._-] (no \"..\"), at most "
                   "128 characters");
    if (!backend || (strcmp(backend, "nccl") && strcmp(backend, "mpi") && strcmp(backend, "sim")))
        return bad(&w, "backend", "expected nccl, mpi or sim");
    if (!json_is_object(json_object_get(m, "topology")))
        return bad(&w, "topology", "expected the topology object the sweep measured");
    /* gen reads it as a topology (the checks of configurations that break others need it): one
     * that does not load is refused here, not skipped there */
    char *text = json_dumps(json_object_get(m, "topology"), JSON_COMPACT);
    struct topo t;
    topo_init(&t);
    int unreadable = !text || topo_load_buffer(&t, path, text, strlen(text));
    topo_release(&t);
    free(text);
    if (unreadable)
        return bad(&w, "topology",
                   "expected the topology the sweep measured (topotune topo's "
                   "JSON); it does not load");
    /* what gen's profile says of its numbers: a measured label on the model's would be a lie */
    json_t *predicted = json_object_get(m, "predicted");
    int sim = !strcmp(backend, "sim");
    if (!json_is_boolean(predicted) || json_is_true(predicted) != sim)
        return bad(&w, "predicted",
                   "expected %s: true exactly for the sim backend, whose every "
                   "number is the model's",
                   sim ? "true" : "false");
    if (check_versions(&w, json_object_get(m, "versions")) ||
        check_inherited(&w, json_object_get(m, "inherited")) ||
        check_int(&w, m, "repeat", 1, 1000, 1) || check_number(&w, m, "cv_max", 0, 100, 1) ||
        check_int(&w, m, "objective_min", 0, 1LL << 50, 1) ||
        check_int(&w, m, "objective_max", 0, 1LL << 50, 1) ||
        check_int(&w, m, "np", 1, 1 << 20, 0) || check_int(&w, m, "nodes", 1, 1 << 20, 0))
        return UTIL_EINVAL;
    json_t *workload = json_object_get(m, "workload");
    if (workload && !json_is_null(workload)) { /* its entries as topotune workload writes them */
        char name[4200];
        snprintf(name, sizeof(name), "%s: workload", path);
        json_t *clean = workload_clean(workload, name, 1);
        if (!clean)
            return UTIL_EINVAL;
        json_decref(clean);
    }
    return check_configs(&w, json_object_get(m, "configs"));
}

/* A run's sizes as the sweep records them: in order (one twice where two requested sizes round
 * to it); none with wrong results in an ok run (ok: the run ended ok). */
static int check_sizes(const struct where *w, const json_t *sizes, int ok)
{
    size_t i;
    json_t *s;
    json_int_t last = -1;
    if (!json_is_array(sizes))
        return bad(w, "sizes", "expected an array");
    json_array_foreach(sizes, i, s) {
        if (check_int(w, s, "size", 0, 1LL << 50, 1) ||
            check_number(w, s, "busbw", 0, SWEEP_MAX_BUSBW, 1) ||
            check_number(w, s, "time_us", 0, SWEEP_MAX_TIME_US, 0))
            return UTIL_EINVAL;
        json_int_t size = json_integer_value(json_object_get(s, "size"));
        if (size == 0 && json_number_value(json_object_get(s, "busbw")) > 0)
            return bad(w, "sizes", "size 0 with a busbw: nothing moves at 0 bytes");
        if (size < last) /* twice in a row is the bench's: two sizes that round to one */
            return bad(w, "sizes", "size %lld follows %lld: a run measures the sizes in order",
                       (long long)size, (long long)last);
        last = size;
        if (ok && json_integer_value(json_object_get(s, "wrong")) != 0)
            return bad(w, "sizes", "size %lld: wrong results in a run recorded ok",
                       (long long)size);
        const char *keys[] = {"algo", "proto"};
        for (int k = 0; k < 2; k++) {
            json_t *v = json_object_get(s, keys[k]);
            if (v && !json_is_null(v) &&
                !(json_is_string(v) &&
                  (!json_string_length(v) || util_valid_id(json_string_value(v)))))
                return bad(w, keys[k], "expected NCCL's name of an algorithm or protocol");
        }
    }
    return 0;
}

int sweep_result_check(const json_t *r, const char *path, size_t line)
{
    static const char *const outcomes[] = {"ok",    "timeout", "crash",
                                           "error", "wrong",   "launch-failed"};
    struct where w = {path, line};
    if (!json_is_object(r))
        return bad(&w, "$", "expected a result object");
    if (no_control(&w, r))
        return UTIL_EINVAL;
    const char *outcome = json_string_value(json_object_get(r, "outcome"));
    int known = 0;
    for (size_t i = 0; outcome && i < sizeof(outcomes) / sizeof(outcomes[0]); i++)
        known |= !strcmp(outcome, outcomes[i]);
    if (!known)
        return bad(&w, "outcome", "expected ok, timeout, crash, error, wrong or launch-failed");
    if (!util_valid_id(json_string_value(json_object_get(r, "config_id"))))
        return bad(&w, "config_id", "expected a configuration id of [A-Za-z0-9._-]");
    if (!util_valid_id(json_string_value(json_object_get(r, "class"))))
        return bad(&w, "class", "expected a node class id of [A-Za-z0-9._-] (no \"..\")");
    if (!json_is_boolean(json_object_get(r, "final")))
        return bad(&w, "final", "expected true or false");
    json_t *coll = json_object_get(r, "collective");
    const char *name = json_string_value(coll);
    if (coll && (!name || strcmp(name, model_coll_name(model_coll_parse(name)) ?: "")))
        return bad(&w, "collective", "expected one of %s, as the sweep writes them",
                   model_coll_names());
    json_t *stage = json_object_get(r, "stage");
    if (stage && !json_is_null(stage) &&
        !util_text_in_set(json_string_value(stage) ? json_string_value(stage) : "", 64, " :._-"))
        return bad(&w, "stage", "expected a stage name such as init or size:1024");
    /* an ok run ran somewhere: its start event's hosts, nodes and ranks (calibrate models it on
     * them, gen reads its shape) */
    int ok = !strcmp(outcome, "ok");
    if (check_env(&w, "env", json_object_get(r, "env")) || check_int(&w, r, "rep", 0, 1 << 20, 0) ||
        check_int(&w, r, "rung", 0, 64, 0) || check_int(&w, r, "nodes", 1, SWEEP_MAX_NODES, ok) ||
        check_int(&w, r, "ranks", 1, SWEEP_MAX_RANKS, ok))
        return UTIL_EINVAL;
    if ((ok || json_object_get(r, "hosts")) && !json_is_array(json_object_get(r, "hosts")))
        return bad(&w, "hosts", "expected the hosts of the run's start event");
    /* the env it ran with is the one its id names: else gen would credit other variables */
    char want[16];
    sweep_config_id(json_object_get(r, "env"), want);
    if (strcmp(want, json_string_value(json_object_get(r, "config_id"))))
        return bad(&w, "config_id", "%s is not the id of the env it ran with (%s)",
                   json_string_value(json_object_get(r, "config_id")), want);
    return check_sizes(&w, json_object_get(r, "sizes"), ok);
}

/* 1 after an error when r repeats a run seen before (in seen, which it joins): the same
 * configuration, repetition, rung and collective, whose points gen and calibrate would count
 * twice. The sweep writes each run once; a torn line is cut away on --resume. */
static int seen_twice(json_t *seen, const json_t *r, const char *path, size_t line)
{
    const char *coll = json_string_value(json_object_get(r, "collective"));
    char key[256];
    snprintf(key, sizeof(key), "%s r%lld g%lld %s",
             json_string_value(json_object_get(r, "config_id")),
             (long long)json_integer_value(json_object_get(r, "rep")),
             (long long)json_integer_value(json_object_get(r, "rung")), coll ? coll : "all_reduce");
    json_t *first = json_object_get(seen, key);
    if (first) {
        util_error(
            "%s: line %zu: the run of line %lld again (configuration %s, the same repetition "
            "and rung): each run is recorded once; remove the copy",
            path, line, (long long)json_integer_value(first),
            json_string_value(json_object_get(r, "config_id")));
        return 1;
    }
    json_object_set_new(seen, key, json_integer((json_int_t)line));
    return 0;
}

int sweep_load_dir(const char *dir, json_t **meta, json_t **results)
{
    char path[4096];
    const char *why = NULL;
    struct util_buf text = UTIL_BUF_INIT;
    *meta = *results = NULL;
    if (snprintf(path, sizeof(path), "%s/sweep.json", dir) >= (int)sizeof(path))
        return util_error("sweep directory name too long: '%.64s...'", dir), UTIL_EINVAL;
    int rc = util_file_read_regular(path, SWEEP_MAX_META_BYTES, &text, &why);
    if (rc) {
        util_buf_release(&text);
        return util_error("'%s' is not a sweep directory: cannot read sweep.json: %s: give the "
                          "directory topotune sweep --out wrote",
                          dir, why),
               rc;
    }
    json_error_t err;
    *meta = json_loadb(util_buf_str(&text), text.len, JSON_REJECT_DUPLICATES, &err);
    util_buf_release(&text);
    if (!*meta)
        return util_error("cannot parse '%s': line %d, column %d: %s", path, err.line, err.column,
                          err.text),
               UTIL_EINVAL;
    if (sweep_meta_check(*meta, path))
        goto fail;
    /* a recorded workload as its readers weigh it: entries without weight dropped, weights
     * scaled to add up to 1 (an edited copy could hold a size of 0, which no profile may) */
    json_t *workload = json_object_get(*meta, "workload");
    if (json_is_object(workload))
        json_object_set_new(*meta, "workload", workload_clean(workload, path, 1));
    snprintf(path, sizeof(path), "%s/results.jsonl", dir);
    *results = util_jsonl_load(path, UTIL_JSONL_READ);
    if (!*results)
        goto fail;
    size_t i;
    json_t *r, *seen = json_object();
    json_array_foreach(*results, i, r) {
        if (sweep_result_check(r, path, i + 1) || seen_twice(seen, r, path, i + 1)) {
            json_decref(seen);
            goto fail;
        }
    }
    json_decref(seen);
    return 0;
fail:
    json_decref(*meta);
    json_decref(*results);
    *meta = *results = NULL;
    return UTIL_EINVAL;
}
