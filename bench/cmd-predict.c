/* SPDX-License-Identifier: MIT */
/*
 * `topotune predict`: the model's all_reduce time, algbw, busbw and
 * algorithm/protocol per size for a topology or hardware spec, under the
 * given environment only (not this shell's), headed "predicted" everywhere.
 * --json writes topotune-bench's JSON Lines events with "predicted": true.
 */
#include "bench/internal.h"
#include "bench/model.h"
#include "topo/topo.h"
#include "util/log.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct predict_env {
    char **vars; /* NAME=VALUE */
    int n;
};

static const char *lookup(const char *name, void *ctx)
{
    const struct predict_env *e = ctx;
    size_t len = strlen(name);
    for (int i = e->n - 1; i >= 0; i--)
        if (strncmp(e->vars[i], name, len) == 0 && e->vars[i][len] == '=')
            return e->vars[i] + len + 1;
    return NULL;
}

static int valid_assignment(const char *s)
{
    const char *eq = strchr(s, '=');
    if (!eq || eq == s || !(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z')))
        return 0;
    for (const char *p = s; p < eq; p++)
        if (!(*p == '_' || isalnum((unsigned char)*p)))
            return 0;
    for (const char *p = eq + 1; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.,:=^/+-", *p))
            return 0;
    return 1;
}

static void usage(void)
{
    printf(
        "usage: topotune predict --input FILE [--nodes N] [--env NAME=VALUE]... [-b MIN] [-e MAX] "
        "[--json]\n\n"
        "Predicted all_reduce per size (float sum) from the topotune model, for a hwloc XML, NCCL\n"
        "topology XML, topology JSON or hardware spec. Only --env variables count, not this "
        "shell's.\n"
        "Exit 1 when the model predicts a hang, an init failure or wrong results.\n");
}

struct predict_opts {
    const char *input, *min, *max;
    int nodes, json;
    struct predict_env env;
};

static int parse(int argc, char **argv, struct predict_opts *o)
{
    o->env.vars = calloc((size_t)argc + 1, sizeof(char *));
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return usage(), 1;
        if (!strcmp(a, "--json")) {
            o->json = 1;
            continue;
        }
        if (!v)
            return error("option '%s' needs a value (see 'topotune predict --help')", a), 2;
        i++;
        if (!strcmp(a, "--input") || !strcmp(a, "-i"))
            o->input = v;
        else if (!strcmp(a, "-b"))
            o->min = v;
        else if (!strcmp(a, "-e"))
            o->max = v;
        else if (!strcmp(a, "--nodes")) {
            char *end;
            long n = strtol(v, &end, 10);
            if (*end || n < 1 || n > 4096)
                return error("invalid value '%s' for --nodes: expected 1 to 4096", v), 2;
            o->nodes = (int)n;
        } else if (!strcmp(a, "--env")) {
            if (!valid_assignment(v))
                return error("invalid value '%s' for --env: expected NAME=VALUE, NAME in "
                             "[A-Z_][A-Za-z0-9_]* "
                             "and VALUE in [A-Za-z0-9_.,:=^/+-]*",
                             v),
                       2;
            o->env.vars[o->env.n++] = (char *)v;
        } else {
            return error("unknown option '%s' for 'topotune predict' (see --help)", a), 2;
        }
    }
    if (!o->input)
        return error("topotune predict needs --input FILE (a topology or hardware spec)"), 2;
    return 0;
}

static void print_row(size_t bytes, const struct bench_prediction *p)
{
    printf("   predicted  %12zu  %12zu  %9.2f  %7.2f  %7.2f  %-8s  %s\n", bytes, bytes / 4,
           p->time_us, p->algbw, p->busbw, p->algo, p->proto);
}

static int report(struct predict_opts *o, const struct topo *t, const struct bench_model *m,
                  const struct bench_options *bo)
{
    struct bench_ctx c = {.opt = bo,
                          .dtype = BENCH_FLOAT,
                          .op = BENCH_OP_SUM,
                          .nprocs = 1,
                          .nranks = m->nranks,
                          .nodes = m->nodes,
                          .predicted = 1};
    c.hosts = json_array();
    json_t *versions = json_object();
    json_object_set_new(versions, "topotune", json_string("0.1.0"));
    json_object_set_new(versions, "model", json_string("topotune-model/1"));
    if (o->json) {
        bench_report_open(&c);
        bench_report_header(&c, "", versions);
    } else {
        printf("# PREDICTED all_reduce (float, sum) by the topotune model: no measurement\n");
        printf("# input %s, class %s\n", o->input, t->class_id ? t->class_id : "?");
        printf("# %d node(s) x %d GPU(s) = %d ranks; environment:", m->nodes, m->ppn, m->nranks);
        for (int i = 0; i < o->env.n; i++)
            printf(" %s", o->env.vars[i]);
        printf("%s\n#\n#            %12s  %12s  %9s  %7s  %7s  %-8s  %s\n",
               o->env.n ? "" : " (NCCL defaults)", "size (B)", "count", "time (us)", "algbw",
               "busbw", "algo", "proto");
    }
    int code = 0;
    if (m->fault != BENCH_FAULT_NONE) {
        code = 1;
        fprintf(o->json ? stderr : stdout, "# predicted outcome: %s: %s\n",
                m->fault == BENCH_FAULT_HANG_INIT   ? "hang at init"
                : m->fault == BENCH_FAULT_FAIL_INIT ? "error at init"
                : m->fault == BENCH_FAULT_CRASH     ? "crash (SIGBUS) at the first collective"
                                                    : "error at the first collective",
                m->why);
        if (o->json)
            bench_report_error(&c, m->fault == BENCH_FAULT_FAIL_COLL ? "size" : "init", m->why);
    }
    for (size_t size = bo->min_bytes ? bo->min_bytes : 1; !m->fault && size <= bo->max_bytes;
         size *= 2) {
        struct bench_prediction p;
        if (bench_model_predict(m, size, &p))
            break;
        struct bench_line l = {
            p.time_us, p.algbw, p.busbw, p.wrong ? (long long)(size / 256 + 1) : 0, "", ""};
        snprintf(l.algo, sizeof(l.algo), "%s", p.algo);
        snprintf(l.proto, sizeof(l.proto), "%s", p.proto);
        if (o->json)
            bench_report_size(&c, size, size / 4, &l, &l);
        else
            print_row(size, &p);
        code |= p.wrong;
    }
    if (code && !m->fault && !o->json)
        printf("# predicted outcome: wrong results: %s\n",
               "LL128 forced where NCCL would not enable it corrupts data");
    if (o->json)
        bench_report_end(&c, m->fault == BENCH_FAULT_CRASH       ? BENCH_EXIT_COMM
                             : m->fault == BENCH_FAULT_HANG_INIT ? BENCH_EXIT_TIMEOUT
                             : m->fault                          ? BENCH_EXIT_COMM
                             : code                              ? BENCH_EXIT_WRONG
                                                                 : 0);
    json_decref(versions);
    json_decref(c.hosts);
    return code ? 1 : 0;
}

int cmd_predict(int argc, char **argv)
{
    struct predict_opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc) {
        free(o.env.vars);
        return rc == 1 ? 0 : 2;
    }
    /* Sizes as topotune-bench reads them; 8 B to 1 GiB by default. */
    char *bargv[] = {"topotune-bench",
                     "--backend",
                     "sim",
                     "-b",
                     (char *)(o.min ? o.min : "8"),
                     "-e",
                     (char *)(o.max ? o.max : "1G"),
                     "--json",
                     "-",
                     NULL};
    struct bench_options bo;
    if (bench_parse_options(9, bargv, &bo)) {
        free(o.env.vars);
        return 2;
    }
    struct topo t;
    topo_init(&t);
    struct bench_model m;
    if (topo_load(&t, o.input)) {
        rc = 2;
    } else if (bench_model_init(&m, &t, o.nodes, lookup, &o.env)) {
        error("topology '%s' has no GPU: nothing to predict", o.input);
        rc = 2;
    } else {
        rc = report(&o, &t, &m, &bo);
    }
    topo_release(&t);
    free(o.env.vars);
    return rc;
}
