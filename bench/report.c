/* SPDX-License-Identifier: MIT */
/*
 * What topotune-bench prints: nccl-tests' header, device lines, columns and
 * footer (so parsers of nccl-tests' *_perf output keep working), and the JSON
 * Lines events of docs/schemas/bench-event.schema.json. Only process 0 writes.
 */
#include "bench/internal.h"
#include "model/model.h"
#include "ops/ops.h"
#include "topo/topo.h"
#include "util/env.h"
#include "util/file.h"
#include "util/log.h"
#include "util/version.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct {
    pthread_mutex_t lock;
    FILE *text; /* NULL when the JSON goes to stdout */
    FILE *json;
    double busbw_sum;
    int nresults;
    long long wrong_total;
    int ended;
    int table;     /* the header is out: a footer belongs under it */
    json_t *rows;  /* [[bytes, out-of-place busbw]] for --metrics */
    char cls[256]; /* --metrics: the class, mapped at the start (not by the watchdog at the end) */
} rep = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int writer(const struct bench_ctx *c)
{
    return c->world_proc == 0;
}

static void class_of(const struct bench_ctx *c, char *out, size_t len);

int bench_report_open(const struct bench_ctx *c)
{
    if (!writer(c))
        return 0;
    if (c->opt->metrics)
        class_of(c, rep.cls, sizeof(rep.cls));
    const char *json = c->opt->json;
    rep.text = json && strcmp(json, "-") == 0 ? NULL : stdout;
    if (json && strcmp(json, "-") == 0) {
        rep.json = stdout;
    } else if (json) {
        /* never through a link, FIFO or hard link planted at the name (a sweep's output folder) */
        const char *why = NULL;
        int fd = util_file_open_output(json, UTIL_FILE_TRUNC, &why);
        rep.json = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (!rep.json) {
            if (fd >= 0)
                close(fd);
            return util_error("cannot write '%s': %s", json, why ? why : strerror(errno)),
                   BENCH_EXIT_USAGE;
        }
    }
    return 0;
}

static void emit(json_t *event)
{
    if (rep.json) {
        char *line = json_dumps(event, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (line) {
            fprintf(rep.json, "%s\n", line);
            fflush(rep.json);
        }
        free(line);
    }
    json_decref(event);
}

static const char *outcome_of(int code)
{
    switch (code) {
    case BENCH_EXIT_OK:
        return "ok";
    case BENCH_EXIT_TIMEOUT:
        return "timeout";
    case BENCH_EXIT_WRONG:
        return "wrong";
    default:
        return "error";
    }
}

/* nccl-tests' redop and root columns: "none" for a collective that does not reduce, -1 for one
 * without a root. */
static const char *op_name(const struct bench_ctx *c)
{
    return model_coll_reduces(c->coll) ? bench_op_name(c->op) : "none";
}

static int root_of(const struct bench_ctx *c)
{
    return model_coll_rooted(c->coll) ? c->opt->root : -1;
}

void bench_report_header(const struct bench_ctx *c, const char *device_lines, json_t *versions)
{
    if (!writer(c))
        return;
    const struct bench_options *o = c->opt;
    pthread_mutex_lock(&rep.lock);
    if (rep.text) {
        fprintf(rep.text, "# topotune-bench %s (nccl-tests %s_perf format) backend: %s\n",
                util_version(), o->collective, o->backend);
        fprintf(rep.text, "# Collective test starting: %s_perf\n", o->collective);
        if (c->predicted)
            fprintf(rep.text,
                    "# PREDICTED: the sim backend moved no data; every time below comes from "
                    "the topotune model\n");
        fprintf(rep.text, "# nThread 1 nGpus %d minBytes %zu maxBytes %zu step: ", o->ngpus,
                o->min_bytes, o->max_bytes);
        if (o->step_factor > 1)
            fprintf(rep.text, "%g(factor)", o->step_factor);
        else
            fprintf(rep.text, "%zu(bytes)", o->step_bytes);
        fprintf(rep.text,
                " warmup iters: %d iters: %d agg iters: 1 validation: %d graph: 0 unalign: 0\n",
                o->warmup, o->iters, o->check ? 1 : 0);
        fprintf(rep.text, "#\n# Using devices\n%s", device_lines);
        fprintf(rep.text, "#\n"
                          "#                                                              "
                          "out-of-place                       in-place          \n"
                          "#       size         count      type   redop    root     time   algbw   "
                          "busbw  #wrong     time   algbw   busbw  #wrong \n"
                          "#        (B)    (elements)                               (us)  (GB/s)  "
                          "(GB/s)             (us)  (GB/s)  (GB/s)         \n");
        fflush(rep.text);
        rep.table = 1;
    }
    /* The launch as a whole: with --split, c's own counts are world process 0's group's, and
     * each group's come with the groups event (the sim's counts are its model's). */
    json_t *e = json_object();
    json_object_set_new(e, "event", json_string("start"));
    json_object_set_new(e, "backend", json_string(o->backend));
    json_object_set_new(e, "collective", json_string(o->collective));
    json_object_set_new(e, "predicted", json_boolean(c->predicted));
    json_object_set_new(e, "ranks",
                        json_integer(c->ngroups ? c->world_nprocs * o->ngpus : c->nranks));
    json_object_set_new(e, "procs", json_integer(c->ngroups ? c->world_nprocs : c->nprocs));
    json_object_set_new(e, "gpus_per_proc", json_integer(o->ngpus));
    json_object_set_new(e, "nodes", json_integer(c->ngroups ? c->world_nodes : c->nodes));
    json_object_set_new(e, "hosts", json_incref(c->hosts));
    json_object_set_new(e, "dtype", json_string(bench_dtype_name(c->dtype)));
    json_object_set_new(e, "op", json_string(op_name(c)));
    json_object_set_new(e, "root", json_integer(root_of(c)));
    json_object_set_new(e, "min_bytes", json_integer((json_int_t)o->min_bytes));
    json_object_set_new(e, "max_bytes", json_integer((json_int_t)o->max_bytes));
    if (o->step_factor > 1)
        json_object_set_new(e, "step_factor", json_real(o->step_factor));
    else
        json_object_set_new(e, "step_bytes", json_integer((json_int_t)o->step_bytes));
    json_object_set_new(e, "iters", json_integer(o->iters));
    json_object_set_new(e, "warmup", json_integer(o->warmup));
    json_object_set_new(e, "check", json_integer(o->check));
    json_object_set_new(e, "timeout_s", json_real(o->timeout_s));
    json_object_set_new(e, "versions", json_incref(versions));
    json_object_set_new(e, "env", c->env ? json_deep_copy(c->env) : util_env_recorded());
    emit(e);
    pthread_mutex_unlock(&rep.lock);
}

/* A number in width columns as nccl-tests formats it: 2 decimals, then fewer, then exponent. */
static const char *fit(char *buf, size_t len, int width, double v)
{
    for (int decimals = 2; decimals >= 0; decimals--) {
        int n = snprintf(buf, len, "%.*f", decimals, v);
        if (n <= width)
            return buf;
    }
    snprintf(buf, len, "%.*e", width > 6 ? width - 6 : 0, v);
    return buf;
}

static void text_block(const struct bench_line *l)
{
    char t[32], a[32], b[32], w[32];
    if (l->wrong < 0) /* nccl-tests' "    N/A" is a column narrower than its counts' "  %6g" */
        snprintf(w, sizeof(w), "  N/A");
    else
        snprintf(w, sizeof(w), "%6lld", l->wrong);
    fprintf(rep.text, "  %7s  %6s  %6s  %s", fit(t, sizeof(t), 7, l->time_us),
            fit(a, sizeof(a), 6, l->algbw), fit(b, sizeof(b), 6, l->busbw), w);
}

static json_t *line_json(const struct bench_line *l)
{
    json_t *o = json_object();
    json_object_set_new(o, "time_us", json_real(l->time_us));
    json_object_set_new(o, "algbw", json_real(l->algbw));
    json_object_set_new(o, "busbw", json_real(l->busbw));
    json_object_set_new(o, "wrong", l->wrong < 0 ? json_null() : json_integer(l->wrong));
    return o;
}

static void tally(const struct bench_line *l)
{
    rep.busbw_sum += l->busbw;
    rep.nresults++;
    if (l->wrong > 0)
        rep.wrong_total += l->wrong;
}

void bench_report_size(const struct bench_ctx *c, size_t bytes, size_t count,
                       const struct bench_line *oop, const struct bench_line *ip)
{
    if (!writer(c))
        return;
    pthread_mutex_lock(&rep.lock);
    tally(oop);
    tally(ip);
    if (c->opt->metrics) {
        if (!rep.rows)
            rep.rows = json_array();
        json_array_append_new(rep.rows, json_pack("[I,f]", (json_int_t)bytes, oop->busbw));
    }
    if (rep.text) {
        fprintf(rep.text, "%12zu  %12zu  %8s  %6s  %6d", bytes, count, bench_dtype_name(c->dtype),
                op_name(c), root_of(c));
        text_block(oop);
        text_block(ip);
        fputc('\n', rep.text);
        fflush(rep.text);
    }
    json_t *e = line_json(oop);
    json_t *ev = json_object();
    json_object_set_new(ev, "event", json_string("size"));
    json_object_set_new(ev, "collective", json_string(c->opt->collective));
    json_object_set_new(ev, "size", json_integer((json_int_t)bytes));
    json_object_set_new(ev, "count", json_integer((json_int_t)count));
    json_object_set_new(ev, "dtype", json_string(bench_dtype_name(c->dtype)));
    json_object_update(ev, e);
    json_decref(e);
    json_object_set_new(ev, "algo", oop->algo[0] ? json_string(oop->algo) : json_null());
    json_object_set_new(ev, "proto", oop->proto[0] ? json_string(oop->proto) : json_null());
    json_object_set_new(ev, "in_place", line_json(ip));
    json_object_set_new(ev, "predicted", json_boolean(c->predicted));
    if (c->predicted && oop->busbw >= 0) { /* where 90% of healthy systems measure (model/) */
        struct model_band band = model_band_for(c->coll, bytes);
        json_object_set_new(ev, "busbw_band",
                            json_pack("[f,f]", oop->busbw * band.low, oop->busbw * band.high));
        if (oop->time_us > 0) /* the same error, the other way round */
            json_object_set_new(
                ev, "time_us_band",
                json_pack("[f,f]", oop->time_us / band.high, oop->time_us / band.low));
    }
    if (c->report_group)
        json_object_set_new(ev, "group", json_integer(c->report_group - 1));
    emit(ev);
    pthread_mutex_unlock(&rep.lock);
}

void bench_report_groups(const struct bench_ctx *c, json_t *groups)
{
    if (!writer(c))
        return;
    pthread_mutex_lock(&rep.lock);
    emit(json_pack("{s:s,s:O}", "event", "groups", "groups", groups));
    pthread_mutex_unlock(&rep.lock);
}

void bench_report_error(const struct bench_ctx *c, const char *stage, const char *message)
{
    if (!writer(c))
        return;
    pthread_mutex_lock(&rep.lock);
    json_t *e = json_object();
    json_object_set_new(e, "event", json_string("error"));
    json_object_set_new(e, "stage", json_string(stage));
    json_object_set_new(e, "message", json_string(message));
    if (c->predicted) /* the model's verdict, not a run's */
        json_object_set_new(e, "predicted", json_true());
    emit(e);
    pthread_mutex_unlock(&rep.lock);
}

/* The node class of the hardware measured: the sim's topology, else this node as mapped (or
 * $TOPOTUNE_TOPOLOGY); empty when it has none (no GPU). */
static void class_of(const struct bench_ctx *c, char *out, size_t len)
{
    struct topo t;
    topo_init(&t);
    out[0] = '\0';
    if (!topo_load(&t, !strcmp(c->opt->backend, "sim") ? c->opt->topology : NULL) && t.class_id)
        snprintf(out, len, "%s", t.class_id);
    topo_release(&t);
}

/* --metrics: the run as Prometheus metrics (docs/design.md "Metrics"), written atomically. */
static int write_metrics(const struct bench_ctx *c, int code, double avg)
{
    char nodes[16], size[32];
    const char *cls = rep.cls;
    snprintf(nodes, sizeof(nodes), "%d", c->nodes);
    const char *source = c->predicted ? "predicted" : "measured", *coll = c->opt->collective;
    struct ops_metrics m;
    ops_metrics_init(&m);
    size_t i;
    json_t *r;
    json_array_foreach(rep.rows, i, r) {
        snprintf(size, sizeof(size), "%" JSON_INTEGER_FORMAT,
                 json_integer_value(json_array_get(r, 0)));
        ops_metric(&m, OPS_BUSBW, "gauge", OPS_BUSBW_HELP,
                   json_real_value(json_array_get(r, 1)) * 1e9, "collective", coll, "class", cls,
                   "nodes", nodes, "size", size, "source", source, "backend", c->opt->backend,
                   OPS_END);
    }
    ops_metric(&m, "topotune_bench_avg_busbw_bytes_per_second", "gauge",
               "nccl-tests' Avg bus bandwidth of the last run (every size, both placements)",
               avg * 1e9, "collective", coll, "class", cls, "nodes", nodes, "source", source,
               OPS_END);
    if (c->opt->min_bw >= 0)
        ops_metric(&m, "topotune_bench_min_busbw_bytes_per_second", "gauge",
                   "NCCL_TESTS_MIN_BW of the last run: it fails below 0.9 x this",
                   c->opt->min_bw * 1e9, "collective", coll, "class", cls, "nodes", nodes, "source",
                   source, OPS_END);
    ops_metric(&m, "topotune_bench_wrong_results", "gauge",
               "values out of bounds in the last run's checks (-c)", (double)rep.wrong_total,
               "collective", coll, "class", cls, "nodes", nodes, "source", source, OPS_END);
    ops_metric(&m, "topotune_bench_exit_code", "gauge",
               "the last run's exit status (0 ok, 4 timed out, 7 wrong or below "
               "NCCL_TESTS_MIN_BW, as nccl-tests')",
               code, "collective", coll, "class", cls, "nodes", nodes, "source", source, OPS_END);
    ops_metric(&m, "topotune_bench_last_run_timestamp_seconds", "gauge",
               "when the last run ended, in seconds since the epoch", (double)time(NULL),
               "collective", coll, "class", cls, "nodes", nodes, "source", source, OPS_END);
    int rc = ops_metrics_write(&m, c->opt->metrics);
    ops_metrics_release(&m);
    return rc;
}

int bench_report_end(const struct bench_ctx *c, int code)
{
    if (!writer(c))
        return code;
    pthread_mutex_lock(&rep.lock);
    if (code == BENCH_EXIT_OK && rep.wrong_total > 0)
        code = BENCH_EXIT_WRONG;
    if (rep.ended) {
        pthread_mutex_unlock(&rep.lock);
        return code;
    }
    rep.ended = 1;
    double avg = rep.nresults ? rep.busbw_sum / rep.nresults : 0;
    /* nccl-tests' NCCL_TESTS_MIN_BW: the mean over every size and placement against 0.9 x it */
    double min_bw = c->opt->min_bw;
    /* -1 is nccl-tests' own "unchecked"; any other value checks, a negative one never fails */
    int below = min_bw != -1 && avg < min_bw * 0.9; /* the line's word, as nccl-tests': bw alone */
    int slow = code == BENCH_EXIT_OK && below;      /* the outcome: wrong results come first */
    if (rep.text && rep.table && code != BENCH_EXIT_TIMEOUT) {
        fprintf(rep.text, "# Out of bounds values : %lld %s\n", rep.wrong_total,
                rep.wrong_total ? "FAILED" : "OK");
        fprintf(rep.text, "# Avg bus bandwidth    : %g %s\n#\n", avg,
                min_bw == -1 ? ""
                : below      ? "FAILED"
                             : "OK");
        fprintf(rep.text, "# Collective test concluded: %s_perf\n#\n", c->opt->collective);
        fflush(rep.text);
    }
    /* the table and the events are the run's result: one that did not reach its file (a full
     * disk, a closed stdout) is a failed run, said on stderr, as nccl-tests' internal error */
    int lost = rep.text && (fflush(rep.text) || ferror(rep.text)), text_errno = errno;
    json_t *e = json_object();
    json_object_set_new(e, "event", json_string("end"));
    if (slow)
        code = BENCH_EXIT_WRONG; /* nccl-tests' testNumResults, as for wrong results */
    json_object_set_new(e, "outcome", json_string(slow ? "slow" : outcome_of(code)));
    json_object_set_new(e, "exit_code", json_integer(code));
    json_object_set_new(e, "min_bw", min_bw >= 0 ? json_real(min_bw) : json_null());
    json_object_set_new(e, "wrong", json_integer(rep.wrong_total));
    json_object_set_new(e, "avg_busbw", json_real(avg));
    json_object_set_new(e, "effective_env",
                        c->effective_env ? json_incref(c->effective_env) : json_null());
    json_object_set_new(e, "predicted", json_boolean(c->predicted));
    emit(e);
    const char *json = c->opt->json && strcmp(c->opt->json, "-") ? c->opt->json : "stdout";
    int json_lost = rep.json && (fflush(rep.json) || ferror(rep.json)), json_errno = errno;
    if (rep.json && rep.json != stdout && fclose(rep.json) && !json_lost)
        json_lost = 1, json_errno = errno;
    rep.json = NULL;
    if (lost)
        util_error("cannot write the results table to stdout: %s", strerror(text_errno));
    if (json_lost)
        util_error("cannot write the JSON events to '%s': %s", json, strerror(json_errno));
    if ((lost || json_lost) && code == BENCH_EXIT_OK)
        code = BENCH_EXIT_INTERNAL;
    if (c->opt->metrics && write_metrics(c, code, avg) && code == BENCH_EXIT_OK)
        code = BENCH_EXIT_INTERNAL;
    json_decref(rep.rows);
    rep.rows = NULL;
    pthread_mutex_unlock(&rep.lock);
    return code;
}
