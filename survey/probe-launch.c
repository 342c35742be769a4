/* SPDX-License-Identifier: MIT */
/*
 * Real measurements for a survey: the map through the cluster gather (topotune-node on every
 * host), and each launch as one supervised `topotune-bench --split GROUPS` under mpirun or srun:
 * a communicator per group in one launch, each group's busbw from the benchmark's "group"
 * events. A launch that fails or passes its deadline is killed with its whole process group
 * and reported with the hosts the launcher's log blames. With the nccl backend (a rank per GPU),
 * the model predicts each class from the map of its first node, so the survey also judges the
 * measured numbers against the band a healthy node of that hardware gives.
 */
#include "cluster/cluster.h"
#include "doctor/doctor.h"
#include "launch/launch.h"
#include "survey/internal.h"
#include "survey/survey.h"
#include "topo/topo.h"
#include "util/buf.h"
#include "util/child.h"
#include "util/error.h"
#include "util/file.h"
#include "util/json.h"
#include "util/jsonl.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* A class as the model sees it: the map of its first node. */
struct launch_class {
    char *id;
    struct topo t;
    int ok; /* t holds the class's map (the model can predict it) */
};

struct launch_ctx {
    struct survey_launch l;
    char *tcp_env[LAUNCH_TCP_ENV_MAX + 1];
    int seq;
    int *gpus; /* per node, as mapped (nccl: a rank per GPU) */
    int ppn;   /* ranks per node of the launch being made */
    struct launch_class *cls;
    int ncls;
};

/*
 * A class's hardware for the model, from the map of its first node (topology JSON, untrusted:
 * read as any topology file is). A map the reader refuses leaves the class without a prediction.
 */
static void keep_class_map(struct launch_ctx *c, const char *id, const json_t *topology,
                           const char *host)
{
    for (int k = 0; k < c->ncls; k++)
        if (!strcmp(c->cls[k].id, id))
            return;
    c->cls = util_xrealloc(c->cls, sizeof(*c->cls) * (size_t)(c->ncls + 1));
    struct launch_class *k = &c->cls[c->ncls++];
    k->id = util_xstrdup(id);
    topo_init(&k->t);
    char *text = json_dumps(topology, JSON_COMPACT);
    char name[300];
    snprintf(name, sizeof(name), "the map of %s", host);
    k->ok = text && topo_load_buffer(&k->t, name, text, strlen(text)) == 0;
    if (!k->ok)
        util_warning("class %s: no model prediction from %s (see above)", id, name);
    else if (!k->t.class_id || strcmp(k->t.class_id, id)) { /* a map that is not its class's */
        util_warning("class %s: no model prediction: %s describes class %s", id, name,
                     k->t.class_id ? k->t.class_id : "(none)");
        k->ok = 0;
    }
    free(text);
}

/* The model's busbw for n nodes of a class at the survey's size, or -1 (no usable map). */
static double launch_predict(struct survey *s, const char *class_id, int n)
{
    struct launch_ctx *c = s->probe.ctx;
    for (int k = 0; k < c->ncls; k++)
        if (!strcmp(c->cls[k].id, class_id))
            return c->cls[k].ok ? survey_model_busbw(&c->cls[k].t, n, s->size, NULL) : -1;
    return -1;
}

/* doctor on every mapped node (as `doctor --hosts` runs it): the across-node checks, and per
 * node the names of its failed checks. A doctor that cannot run is said, not fatal. */
static void run_doctor(struct survey *s, double deadline)
{
    struct util_buf hosts = UTIL_BUF_INIT;
    for (int i = 0; i < s->nnodes; i++)
        if (s->nodes[i].class_id)
            util_buf_addf(&hosts, "%s%s", hosts.len ? "," : "", s->nodes[i].host);
    json_t *nodes =
        hosts.len ? cluster_gather(util_buf_str(&hosts), "doctor", NULL, deadline) : NULL;
    util_buf_release(&hosts);
    if (!nodes) {
        util_warning("doctor could not run on the mapped nodes (see above): the survey goes on");
        return;
    }
    json_t *failed = json_object(), *n, *check;
    size_t i, j;
    json_array_foreach(nodes, i, n) {
        json_t *names = json_array();
        json_array_foreach(json_object_get(n, "checks"), j, check)
            if (!strcmp(util_json_str(check, "status", ""), "fail"))
                json_array_append_new(names, json_string(util_json_str(check, "name", "?")));
        json_object_set_new(failed, util_json_str(n, "host", "?"), names);
    }
    s->doctor = json_pack("{s:o,s:o}", "checks", doctor_compare_nodes(nodes), "nodes", failed);
    json_decref(nodes);
}

/* ---- which report is which node's ---- */

/* The length of a host name's first label ("n1" of "n1.cluster"), or the whole when short. */
static size_t name_len(const char *h, int short_name)
{
    return short_name ? strcspn(h, ".") : strlen(h);
}

static int compare_names(const char *a, const char *b, int short_name)
{
    size_t la = name_len(a, short_name), lb = name_len(b, short_name);
    int c = memcmp(a, b, la < lb ? la : lb);
    return c ? c : (la > lb) - (la < lb);
}

/* qsort has no context: the reports being sorted and how (one thread maps). */
static const char **sort_names;
static int sort_short;

static int by_name(const void *a, const void *b)
{
    return compare_names(sort_names[*(const int *)a], sort_names[*(const int *)b], sort_short);
}

/* Matches each node still without a report (order[i] < 0) to an unused report of its name. */
static void match_names(const struct survey *s, const char **names, int n, int *order, char *used,
                        int short_name)
{
    int *sorted = util_xmalloc(sizeof(int) * (size_t)(n + 1));
    for (int k = 0; k < n; k++)
        sorted[k] = k;
    sort_names = names;
    sort_short = short_name;
    qsort(sorted, (size_t)n, sizeof(int), by_name);
    for (int i = 0; i < s->nnodes; i++) {
        int lo = 0, hi = n; /* the first report not below the node's name */
        while (order[i] < 0 && lo < hi) {
            int mid = lo + (hi - lo) / 2;
            if (compare_names(names[sorted[mid]], s->nodes[i].host, short_name) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (int k = lo; order[i] < 0 && k < n &&
                         !compare_names(names[sorted[k]], s->nodes[i].host, short_name);
             k++)
            if (!used[sorted[k]]) {
                used[sorted[k]] = 1;
                order[i] = sorted[k];
            }
    }
    free(sorted);
}

/* qsort has no context: the reports' names and each node's report, for by_report_name. */
static const char **same_names_of;
static const int *same_order;

static int by_report_name(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    int c = strcasecmp(same_names_of[same_order[x]], same_names_of[same_order[y]]);
    return c ? c : x - y;
}

/* Two nodes whose reports give one name (one machine listed under two names, or machines cloned
 * with one hostname): the benchmark tells its nodes apart by that name, so their numbers cannot
 * be told apart either. Said once per name, with its first two hosts (sorted: a survey may have
 * tens of thousands of nodes). */
static void same_names(const struct survey *s, const char **names, const int *order)
{
    int *nodes = util_xmalloc(sizeof(int) * ((size_t)s->nnodes + 1)), n = 0;
    for (int i = 0; i < s->nnodes; i++)
        if (order[i] >= 0)
            nodes[n++] = i;
    same_names_of = names;
    same_order = order;
    qsort(nodes, (size_t)n, sizeof(int), by_report_name);
    for (int k = 1; k < n; k++) {
        int i = nodes[k - 1], j = nodes[k];
        if (strcasecmp(names[order[i]], names[order[j]]) ||
            (k > 1 && !strcasecmp(names[order[nodes[k - 2]]], names[order[i]])))
            continue; /* another name, or one already said */
        char shown[72];
        util_warning("hosts '%s' and '%s' both answer the map as '%s': one machine listed twice, "
                     "or machines cloned with one hostname; the benchmark tells nodes apart by "
                     "that name, so their numbers are not each node's: give each machine once, "
                     "each with a name of its own",
                     s->nodes[i].host, s->nodes[j].host,
                     topo_text_into(names[order[i]], shown, sizeof(shown)));
    }
    free(nodes);
}

/*
 * order[i]: the report of node i among the gather's. A launcher may place the hosts in another
 * order than --hosts gives them (a sorted hostfile, Slurm's node order), so each report is the
 * node's that it names: by the whole name, then by the first label (n1 for n1.cluster.local).
 * Those left (an alias such as localhost, an address) are matched in the launch's order, which
 * is then said when it matters.
 */
static void match_reports(const struct survey *s, const json_t *all, int *order)
{
    int n = (int)json_array_size(all), left = 0;
    const char **names = util_xcalloc((size_t)n + 1, sizeof(char *));
    char *used = util_xcalloc((size_t)n + 1, 1);
    for (int k = 0; k < n; k++)
        names[k] = util_json_str(json_array_get(all, (size_t)k), "host", "");
    for (int i = 0; i < s->nnodes; i++)
        order[i] = -1;
    match_names(s, names, n, order, used, 0);
    match_names(s, names, n, order, used, 1);
    for (int i = 0, k = 0; i < s->nnodes; i++) {
        while (order[i] < 0 && k < n && used[k])
            k++;
        if (order[i] < 0 && k < n) {
            used[k] = 1;
            order[i] = k;
            left++;
        }
    }
    if (left > 1)
        util_warning(
            "%d hosts answered the map under other names (such as an alias or an address): "
            "they are matched in the launcher's order, which a launcher may not keep; give "
            "--hosts the names the nodes give themselves (hostname)",
            left);
    same_names(s, names, order);
    free(names);
    free(used);
}

/* A node's name from its report as the survey's files may carry it: controls and escapes
 * replaced (a newline would forge a line of excluded.txt). The caller frees it. */
static char *host_of_report(const char *host)
{
    if (util_valid_host(host))
        return util_xstrdup(host);
    struct util_buf b = UTIL_BUF_INIT;
    util_text_clean(&b, host ? host : "?", host ? strlen(host) : 1, 0);
    char *clean = util_xstrdup(util_buf_str(&b));
    util_buf_release(&b);
    return clean;
}

/* The reports of a gather of nodes lo..hi-1, each matched to its node (rep[i], a new reference;
 * none for a node without one). */
static void keep_reports(const struct survey *s, int lo, int hi, const json_t *all, json_t **rep)
{
    struct survey sub = *s; /* the hosts of this launch only */
    sub.nnodes = hi - lo;
    sub.nodes = s->nodes + lo;
    int *order = util_xcalloc((size_t)(hi - lo) + 1, sizeof(int));
    match_reports(&sub, all, order);
    for (int i = 0; i < hi - lo; i++)
        if (order[i] >= 0)
            rep[lo + i] = json_incref(json_array_get(all, (size_t)order[i]));
    free(order);
}

/* Maps nodes lo..hi-1 in one launch: 1 when their reports came back (kept in rep), 0 when the
 * launch failed; -1 when a signal came. */
static int map_group(struct survey *s, int lo, int hi, double deadline, json_t **rep)
{
    if (util_child_interrupted()) /* a signal ends the map: the caller says so */
        return -1;
    struct util_buf hosts = UTIL_BUF_INIT;
    for (int i = lo; i < hi; i++)
        util_buf_addf(&hosts, "%s%s", i > lo ? "," : "", s->nodes[i].host);
    if (hi - lo == 1)
        util_info("mapping %s alone", s->nodes[lo].host);
    else
        util_info("mapping %d hosts, %s to %s", hi - lo, s->nodes[lo].host, s->nodes[hi - 1].host);
    json_t *all = cluster_gather(util_buf_str(&hosts), "topo", NULL, deadline);
    util_buf_release(&hosts);
    if (all)
        keep_reports(s, lo, hi, all, rep);
    json_decref(all);
    return all != NULL;
}

/*
 * Nodes lo..hi-1, whose launch failed (a host down fails all of Open MPI's): each half in one
 * launch, and a half that fails in halves again, down to single hosts, so a dead host among n
 * costs about 2 log2(n) launches, not n (each 1 to 2 s through ssh, minutes on a large cluster).
 * When both halves fail the fault is not one host (no ssh at all, no topotune-node there):
 * each host alone, n launches, not the 2n of halving on. A signal ends it.
 */
static void map_halves(struct survey *s, int lo, int hi, double deadline, json_t **rep)
{
    int mid = lo + (hi - lo) / 2, a, b;
    if (hi - lo < 2 || (a = map_group(s, lo, mid, deadline, rep)) < 0 ||
        (b = map_group(s, mid, hi, deadline, rep)) < 0)
        return;
    if (!a && !b && hi - lo > 2) { /* not one host's fault: each alone */
        for (int i = lo; i < hi; i++)
            if (map_group(s, i, i + 1, deadline, rep) < 0)
                return;
        return;
    }
    if (!a)
        map_halves(s, lo, mid, deadline, rep);
    if (!b)
        map_halves(s, mid, hi, deadline, rep);
}

/* Maps every host at once; when that fails, halves of them, so the silent ones are named. */
static int launch_map(struct survey *s)
{
    struct launch_ctx *c = s->probe.ctx;
    struct util_buf hosts = UTIL_BUF_INIT;
    for (int i = 0; i < s->nnodes; i++)
        util_buf_addf(&hosts, "%s%s", i ? "," : "", s->nodes[i].host);
    /* a node's deadline to answer: generous, a slow node is not a dead one */
    double deadline = c->l.timeout_s > 60 ? c->l.timeout_s : 60;
    json_t *all = cluster_gather(s->nnodes ? util_buf_str(&hosts) : NULL, "topo", NULL, deadline);
    util_buf_release(&hosts);
    if (!all && !s->nnodes)
        return util_error("cannot map the nodes of the allocation (see above)"), UTIL_EENV;
    int allocation = all && !s->nnodes;
    if (allocation) { /* --allocation: the nodes are those that answered, in their order */
        s->nnodes = (int)json_array_size(all);
        s->nodes = util_xcalloc((size_t)s->nnodes, sizeof(*s->nodes));
        util_info("the allocation's map: %d node(s) answered", s->nnodes);
    }
    json_t **rep = util_xcalloc((size_t)s->nnodes + 1, sizeof(json_t *));
    for (int i = 0; allocation && i < s->nnodes; i++)
        rep[i] = json_incref(json_array_get(all, (size_t)i));
    if (all && !allocation)
        keep_reports(s, 0, s->nnodes, all, rep);
    else if (!all && s->nnodes > 1) {
        util_info("mapping the %d hosts in halves, to name those that do not answer", s->nnodes);
        map_halves(s, 0, s->nnodes, deadline, rep);
    }
    c->gpus = util_xcalloc((size_t)s->nnodes + 1, sizeof(int));
    for (int i = 0; i < s->nnodes && !util_child_interrupted(); i++) {
        json_t *one = rep[i];
        const char *host = util_json_str(one, "host", NULL);
        if (!s->nodes[i].host) /* the allocation's: a name that is no host name is cleaned */
            s->nodes[i].host = host_of_report(host);
        const char *id = json_string_value(
            json_object_get(json_object_get(json_object_get(one, "topology"), "class"), "id"));
        if (util_valid_id(id) && util_valid_host(host)) {
            s->nodes[i].class_id = util_xstrdup(id);
            s->nodes[i].name = util_xstrdup(host);
            json_t *key =
                json_object_get(json_object_get(json_object_get(one, "topology"), "class"), "key");
            if (key && s->class_keys)
                json_object_set(s->class_keys, id, key);
            c->gpus[i] =
                (int)json_array_size(json_object_get(json_object_get(one, "topology"), "gpus"));
            if (s->probe.predict)
                keep_class_map(c, id, json_object_get(one, "topology"), s->nodes[i].name);
        } else {
            /* a node's words, cleaned and cut between characters (the report refuses half of
             * one) */
            topo_text_into(util_json_str(one, "error", NULL)
                               ?: (one ? "its map has no valid node class or host name"
                                       : "no answer to the map within its deadline (see the "
                                         "messages above)"),
                           s->nodes[i].why, sizeof(s->nodes[i].why));
        }
        json_decref(one);
        rep[i] = NULL;
    }
    for (int i = 0; i < s->nnodes; i++)
        json_decref(rep[i]);
    json_decref(all);
    free(rep);
    if (util_child_interrupted())
        return UTIL_EINTR;
    run_doctor(s, deadline);
    return 0;
}

/* busbw of each group from the benchmark's events: the largest size's out-of-place number. */
static int read_groups(const char *path, int n, double *busbw, struct util_buf *why)
{
    json_t *lines = util_jsonl_load(path, UTIL_JSONL_READ);
    int got = 0, ok = 0;
    for (int k = 0; k < n; k++)
        busbw[k] = -1;
    size_t i;
    json_t *e;
    json_array_foreach(lines, i, e) {
        const char *ev = util_json_str(e, "event", "");
        json_t *g = json_object_get(e, "group"), *b = json_object_get(e, "busbw");
        if (!strcmp(ev, "size") && json_is_integer(g) && json_is_number(b) &&
            json_integer_value(g) >= 0 && json_integer_value(g) < n) {
            json_int_t k = json_integer_value(g);
            got += busbw[k] < 0;
            busbw[k] = json_number_value(b);
        }
        if (!strcmp(ev, "end"))
            ok = !strcmp(util_json_str(e, "outcome", ""), "ok");
    }
    json_decref(lines);
    if (!ok || got != n)
        util_buf_addf(why, "%sthe benchmark reported %d of %d groups", why->len ? "; " : "", got,
                      n);
    return ok && got == n ? 0 : 1;
}

/* One launch: hosts (comma-separated), the split (NULL: one communicator), n groups. */
static int run_bench(struct survey *s, const char *hosts, int nhosts, const char *split, int n,
                     double *busbw, struct util_buf *why)
{
    struct launch_ctx *c = s->probe.ctx;
    char json[1200], log[1200], size[32], iters[16], warmup[16], timeout[32];
    int seq = ++c->seq;
    snprintf(json, sizeof(json), "%s/logs/launch-%d-%d.jsonl", s->dir, (int)getpid(), seq);
    snprintf(log, sizeof(log), "%s/logs/launch-%d-%d.log", s->dir, (int)getpid(), seq);
    snprintf(size, sizeof(size), "%zu", s->size);
    snprintf(iters, sizeof(iters), "%d", c->l.iters * (s->longer > 1 ? s->longer : 1));
    snprintf(warmup, sizeof(warmup), "%d", c->l.warmup);
    snprintf(timeout, sizeof(timeout), "%g", c->l.timeout_s);
    unlink(json);
    struct util_buf jarg = UTIL_BUF_INIT;
    util_buf_addf(&jarg, "--json=%s", json);
    char *program[] = {(char *)c->l.bench,
                       "--backend",
                       (char *)s->backend,
                       "-b",
                       size,
                       "-e",
                       size,
                       "-n",
                       iters,
                       "-w",
                       warmup,
                       "-c",
                       "1",
                       "-T",
                       timeout,
                       (char *)util_buf_str(&jarg),
                       split ? "--split" : NULL,
                       (char *)split,
                       NULL};
    struct launch l = {c->l.launcher, nhosts * (c->l.ppn ? c->l.ppn : c->ppn), hosts, c->tcp_env};
    char **argv = launch_argv(&l, program);
    util_buf_release(&jarg);
    if (!argv)
        return util_error("cannot build the launch line for %s", hosts), UTIL_EINVAL;
    /* the benchmark's own deadline covers each wait; the launch's covers start-up and all */
    struct util_child ch = {.argv = argv,
                            .env = c->tcp_env,
                            .log = log,
                            .timeout_s = 3 * c->l.timeout_s + 30,
                            .grace_s = 2};
    util_child_run(&ch);
    launch_argv_free(argv);
    if (util_child_interrupted())
        return UTIL_EINTR;
    int rc = read_groups(json, n, busbw, why);
    if (ch.exit_code == 6) /* BENCH_EXIT_USAGE: no verdict on any node */
        return util_error("topotune-bench refused the launch's options (exit 6): see '%s'", log),
               UTIL_EINVAL;
    if (ch.timed_out || ch.exit_code != 0 || rc) {
        struct util_buf blamed = UTIL_BUF_INIT;
        launch_hosts_blamed(log, hosts, c->l.ppn ? c->l.ppn : c->ppn, &blamed);
        util_buf_addf(why, "%s%s", why->len ? "; " : "",
                      ch.exec_errno  ? "the launcher could not start"
                      : ch.timed_out ? "timeout"
                      : ch.signal    ? "killed by a signal"
                                     : "exited");
        if (ch.exit_code > 0)
            util_buf_addf(why, " %d", ch.exit_code);
        if (blamed.len)
            util_buf_addf(why, "; the launcher's log names %s", util_buf_str(&blamed));
        util_buf_addf(why, " (%s)", log);
        util_buf_release(&blamed);
        return 1;
    }
    return 0;
}

/*
 * nccl without --ppn: a rank per GPU, as many as the launch's node with the fewest has. A class
 * short of GPUs is named node-differs and measured no further, so its nodes do not bring the
 * others down to 7 of 8; a round holds all classes' pairs, so classes of other GPU counts that
 * share it still run at the fewest.
 */
static void launch_ppn(struct launch_ctx *c, const struct survey_group *g, int n)
{
    c->ppn = 0;
    for (int k = 0; k < n; k++)
        for (int e = 0; e < 2; e++) {
            int node = e ? g[k].b : g[k].a;
            if (node >= 0 && c->gpus && c->gpus[node] > 0 && (!c->ppn || c->gpus[node] < c->ppn))
                c->ppn = c->gpus[node];
        }
    if (!c->ppn)
        c->ppn = 1;
}

static int launch_groups(struct survey *s, const struct survey_group *g, int n, double *busbw,
                         struct util_buf *why)
{
    struct util_buf hosts = UTIL_BUF_INIT, split = UTIL_BUF_INIT;
    int nhosts = 0;
    launch_ppn(s->probe.ctx, g, n);
    for (int k = 0; k < n; k++) { /* reached by the user's names, split by the nodes' own */
        util_buf_addf(&split, "%s%s", k ? ";" : "", s->nodes[g[k].a].name);
        util_buf_addf(&hosts, "%s%s", nhosts++ ? "," : "", s->nodes[g[k].a].host);
        if (g[k].b >= 0) {
            util_buf_addf(&split, ",%s", s->nodes[g[k].b].name);
            util_buf_addf(&hosts, ",%s", s->nodes[g[k].b].host);
            nhosts++;
        }
    }
    int rc = run_bench(s, util_buf_str(&hosts), nhosts, util_buf_str(&split), n, busbw, why);
    util_buf_release(&hosts);
    util_buf_release(&split);
    return rc;
}

static int launch_whole(struct survey *s, const int *nodes, int n, double *busbw,
                        struct util_buf *why)
{
    struct util_buf hosts = UTIL_BUF_INIT, split = UTIL_BUF_INIT;
    struct survey_group *g = util_xcalloc((size_t)n + 1, sizeof(*g));
    for (int k = 0; k < n; k++)
        g[k] = (struct survey_group){nodes[k], -1};
    launch_ppn(s->probe.ctx, g, n);
    free(g);
    for (int k = 0; k < n; k++) {
        util_buf_addf(&hosts, "%s%s", k ? "," : "", s->nodes[nodes[k]].host);
        util_buf_addf(&split, "%s%s", k ? "," : "", s->nodes[nodes[k]].name);
    }
    /* one group of every host: the same events as the pairs */
    int rc = run_bench(s, util_buf_str(&hosts), n, util_buf_str(&split), 1, busbw, why);
    util_buf_release(&hosts);
    util_buf_release(&split);
    return rc;
}

static void launch_release(struct survey *s)
{
    struct launch_ctx *c = s->probe.ctx;
    for (int i = 0; c->tcp_env[i]; i++)
        free(c->tcp_env[i]);
    for (int k = 0; k < c->ncls; k++) {
        free(c->cls[k].id);
        topo_release(&c->cls[k].t);
    }
    free(c->cls);
    free(c->gpus);
    free(c);
    s->probe.ctx = NULL;
}

int survey_probe_launch(struct survey *s, const struct survey_launch *l)
{
    struct launch_ctx *c = util_xcalloc(1, sizeof(*c));
    c->l = *l;
    launch_tcp_env(c->tcp_env, !strcmp(s->backend, "mpi"));
    s->probe = (struct survey_probe){.name = s->backend,
                                     .map = launch_map,
                                     .groups = launch_groups,
                                     .whole = launch_whole,
                                     .release = launch_release,
                                     .iters = l->iters,
                                     .timed_max_s = l->timeout_s,
                                     .ctx = c};
    /* nccl without --ppn runs a rank per GPU: a launch of one class runs all of that class's
     * GPUs (mpirun's ppr is one count for every node of a launch) */
    s->probe.per_class = !l->ppn && !strcmp(s->backend, "nccl");
    /* the model predicts NCCL with a rank per GPU: the mpi backend's CPU ranks, or --ppn's share
     * of the GPUs, are not what it predicts */
    if (s->probe.per_class)
        s->probe.predict = launch_predict;
    char logs[1100];
    snprintf(logs, sizeof(logs), "%s/logs", s->dir);
    if (mkdir(logs, 0755) && errno != EEXIST)
        return util_error("cannot create '%s': %s", logs, strerror(errno)), UTIL_EIO;
    struct stat st; /* a planted link would take every launch's files elsewhere */
    if (lstat(logs, &st) || !S_ISDIR(st.st_mode))
        return util_error("'%s' is not the survey's own folder (a link, or a file): remove it "
                          "(the launches' logs are written there)",
                          logs),
               UTIL_EINVAL;
    return 0;
}
