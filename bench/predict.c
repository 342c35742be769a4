/* SPDX-License-Identifier: MIT */
/* The sim backend's events without a run: what `topotune predict --json` prints. */
#include "bench/internal.h"
#include "model/model.h"
#include "util/version.h"

#include <stdio.h>

static int exit_code(const struct model *m, int coll, int wrong)
{
    switch (m->fault == MODEL_FAULT_FAIL_COLL && coll != MODEL_ALL_REDUCE ? MODEL_FAULT_NONE
                                                                          : m->fault) {
    case MODEL_FAULT_NONE:
        return wrong ? BENCH_EXIT_WRONG : BENCH_EXIT_OK;
    case MODEL_FAULT_HANG_INIT:
        return BENCH_EXIT_TIMEOUT;
    default: /* init and collective failures, the SIGBUS of an outgrown /dev/shm */
        return BENCH_EXIT_COMM;
    }
}

int bench_predict_events(const struct bench_options *o, const struct model *m, const json_t *env)
{
    struct bench_ctx c = {.opt = o,
                          .coll = model_coll_parse(o->collective),
                          .dtype = BENCH_FLOAT,
                          .op = BENCH_OP_SUM,
                          .nprocs = 1,
                          .nranks = m->nranks,
                          .nodes = model_hosts(m),
                          .predicted = 1,
                          .env = env};
    c.hosts = json_array();
    json_t *versions = json_object();
    json_object_set_new(versions, "topotune", json_string(util_version()));
    json_object_set_new(versions, "model", json_string(MODEL_VERSION));
    bench_report_open(&c);
    bench_report_header(&c, "", versions);
    /* a collective other than all_reduce fails alone, where NCCL has no algorithm for it */
    int fault = m->fault != MODEL_FAULT_NONE &&
                (m->fault != MODEL_FAULT_FAIL_COLL || c.coll == MODEL_ALL_REDUCE);
    if (fault)
        bench_report_error(&c, m->fault == MODEL_FAULT_FAIL_COLL ? "size" : "init", m->why);
    int wrong = 0, rows = 0;
    for (size_t size = o->min_bytes ? o->min_bytes : 1; !fault && size <= o->max_bytes; size *= 2) {
        struct model_prediction p;
        struct bench_counts n;
        bench_coll_counts(c.coll, size / 4, 4, m->nranks, &n);
        size_t bytes = bench_coll_size(&n, 4);
        if (n.param == 0)
            continue; /* no float part for every rank, as topotune-bench skips it */
        rows++;
        if (model_predict_coll(m, c.coll, bytes, &p)) { /* never an empty or cut prediction */
            bench_report_error(&c, "size", "the model found no algorithm and protocol usable here");
            int code = bench_report_end(&c, BENCH_EXIT_COMM);
            json_decref(versions);
            json_decref(c.hosts);
            return code;
        }
        struct bench_line l = {
            p.time_us, p.algbw, p.busbw, p.wrong ? (long long)(n.recv / 64 + 1) : 0, "", ""};
        snprintf(l.algo, sizeof(l.algo), "%s", p.algo);
        snprintf(l.proto, sizeof(l.proto), "%s", p.proto);
        bench_report_size(&c, bytes, n.param, &l, &l);
        wrong |= p.wrong;
    }
    if (!fault && !rows) /* never an empty prediction that says ok: the text says the same */
        bench_report_error(&c, "size", "no size in -b..-e gives every rank a float to move");
    int code =
        bench_report_end(&c, !fault && !rows ? BENCH_EXIT_USAGE : exit_code(m, c.coll, wrong));
    json_decref(versions);
    json_decref(c.hosts);
    return code;
}
