/* SPDX-License-Identifier: MIT */
/*
 * `topotune sweep`: load and prune the space, plan the configurations, write
 * DIR/sweep.json (or check it on --resume), run the sweep, print a summary.
 */
#include "bench/bench.h"
#include "cli/cli.h"
#include "cluster/cluster.h"
#include "launch/launch.h"
#include "sweep/sweep.h"
#include "util/child.h"
#include "util/error.h"
#include "util/file.h"
#include "util/json.h"
#include "util/log.h"
#include "util/opts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct sweep_options {
    const char *space, *backend, *np, *out, *strategy, *repeat, *timeout, *launcher, *hosts,
        *topology, *seed, *nodes, *max_configs;
    int resume;
};

static const char sweep_usage[] =
    "--space FILE [--backend B] [--np N] [--out DIR] [--resume]\n"
    "       [--strategy grid|halving] [--repeat R] [--timeout S] [--launcher direct|mpirun|srun]\n"
    "       [--hosts LIST] [--topology FILE] [--nodes N] [--seed S] [--max-configs N]";

static int parse_count(const char *flag, const char *v, int min, int max, int *out)
{
    char *end;
    long x = v ? strtol(v, &end, 10) : 0;
    if (v && (*end || x < min || x > max))
        return error("invalid value '%s' for %s: expected an integer from %d to %d", v, flag, min,
                     max),
               -1;
    if (v)
        *out = (int)x;
    return 0;
}

static int mkdir_p(const char *dir)
{
    char buf[2048];
    if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
        return error("directory name too long: '%s'", dir), -1;
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(buf, 0755);
            *p = '/';
        }
    if (mkdir(buf, 0755) && errno != EEXIST)
        return error("cannot create '%s': %s", dir, strerror(errno)), -1;
    return 0;
}

/* sweep.json: written on a new sweep; on --resume the space, class and backend must match. */
static int sweep_file(struct sweep *sw, const struct topo *t, json_t *pruned, int resume)
{
    char path[1100];
    snprintf(path, sizeof(path), "%s/sweep.json", sw->dir);
    char *hash = util_json_hash(sw->space.doc);
    int rc = 0;
    if (access(path, F_OK) == 0) {
        json_t *old = util_json_load(path);
        const char *oh = json_string_value(json_object_get(old, "space_hash"));
        const char *oc = json_string_value(json_object_get(old, "class"));
        const char *ob = json_string_value(json_object_get(old, "backend"));
        if (!resume)
            rc = error(
                "'%s' already holds a sweep: add --resume to continue it, or give another --out",
                sw->dir);
        else if (!old || !oh || strcmp(oh, hash))
            rc = error(
                "cannot resume '%s': it was swept with another space (the space file changed)",
                sw->dir);
        else if (!oc || strcmp(oc, sw->class_id))
            rc = error("cannot resume '%s': it was swept on node class %s, this topology is %s",
                       sw->dir, oc ? oc : "?", sw->class_id);
        else if (!ob || strcmp(ob, sw->backend))
            rc =
                error("cannot resume '%s': it was swept with --backend %s", sw->dir, ob ? ob : "?");
        json_decref(old);
        free(hash);
        return rc ? 2 : 0;
    }
    char started[32];
    time_t now = time(NULL);
    strftime(started, sizeof(started), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string("topotune/sweep/1"));
    json_object_set_new(doc, "space", json_incref(sw->space.doc));
    json_object_set_new(doc, "space_hash", json_string(hash));
    json_object_set_new(doc, "topology", topo_to_json(t));
    json_object_set_new(doc, "class", json_string(sw->class_id));
    json_object_set_new(doc, "hosts", sw->hosts ? json_string(sw->hosts) : json_null());
    if (sw->host_nodes) { /* what each host was when mapped, and the network chosen from that */
        json_object_set(doc, "host_nodes", sw->host_nodes);
        json_object_set_new(doc, "btl_tcp_if_include",
                            sw->btl_subnet ? json_string(sw->btl_subnet) : json_null());
    }
    json_object_set_new(doc, "versions",
                        json_incref(json_object_get(json_object_get(doc, "topology"), "software")));
    json_object_set_new(doc, "started", json_string(started));
    json_object_set_new(doc, "strategy", json_string(sw->strategy));
    json_object_set_new(doc, "backend", json_string(sw->backend));
    json_object_set_new(doc, "launcher", json_string(sw->launcher));
    json_object_set_new(doc, "np", json_integer(sw->np));
    json_object_set_new(doc, "nodes", json_integer(sw->nodes));
    json_object_set_new(doc, "repeat", json_integer(sw->repeat));
    json_object_set_new(doc, "timeout_s", json_real(sw->timeout_s));
    json_object_set_new(doc, "cv_max", json_real(sw->space.cv_max));
    json_object_set_new(doc, "objective_min", json_integer((json_int_t)sw->space.obj_min));
    json_object_set_new(doc, "objective_max", json_integer((json_int_t)sw->space.obj_max));
    json_object_set_new(doc, "predicted", json_boolean(strcmp(sw->backend, "sim") == 0));
    json_object_set_new(doc, "configs", json_incref(sw->configs));
    json_object_set_new(doc, "pruned", json_incref(pruned));
    rc = util_json_write(path, doc) ? 1 : 0;
    json_decref(doc);
    free(hash);
    return rc;
}

/* Outcomes counted, and the best final configuration against the baseline. */
static int summary(const struct sweep *sw)
{
    const char *names[] = {"ok", "wrong", "error", "crash", "timeout", "launch-failed"};
    int counts[6] = {0}, baseline_ok = 0;
    size_t i;
    json_t *r;
    double best = -1, base = -1;
    const char *best_id = NULL;
    json_array_foreach(sw->results, i, r)
    {
        const char *o = json_string_value(json_object_get(r, "outcome"));
        for (int k = 0; k < 6; k++)
            counts[k] += o && !strcmp(o, names[k]);
        if (!json_is_true(json_object_get(r, "final")) || !o || strcmp(o, "ok"))
            continue;
        double obj = sweep_objective(r, sw->space.obj_min, sw->space.obj_max);
        if (json_object_size(json_object_get(r, "env")) == 0) {
            baseline_ok = 1;
            base = base < 0 || obj < base ? obj : base; /* the baseline's worst run */
        }
        if (obj > best) {
            best = obj;
            best_id = json_string_value(json_object_get(r, "config_id"));
        }
    }
    fprintf(stderr, "topotune: sweep '%s': %zu runs:", sw->dir, json_array_size(sw->results));
    for (int k = 0; k < 6; k++)
        if (counts[k])
            fprintf(stderr, " %d %s", counts[k], names[k]);
    fprintf(stderr, "\n");
    if (best_id)
        fprintf(stderr,
                "topotune: best%s: %s at %.2f GB/s mean busbw (baseline %.2f); 'topotune gen' "
                "decides on stability\n",
                strcmp(sw->backend, "sim") == 0 ? " (predicted)" : "", best_id, best, base);
    if (!baseline_ok)
        fprintf(stderr, "topotune: the NCCL-defaults baseline never ran ok: see DIR/logs\n");
    return baseline_ok ? 0 : 1;
}

/* The sim backend predicts the hosts' class from its topology, written into the run directory. */
static int hosts_topology_file(struct sweep *sw)
{
    static char path[1200];
    if (!sw->host_topology || sw->topology)
        return 0;
    snprintf(path, sizeof(path), "%s/topology.json", sw->dir);
    if (util_file_write_atomic(path, sw->host_topology, strlen(sw->host_topology)))
        return 1;
    sw->topology = path;
    return 0;
}

static int setup(struct sweep_options *o, struct sweep *sw, struct topo *t)
{
    if (!o->space)
        return error("topotune sweep needs --space FILE (see profiles/spaces/)"), 2;
    if (sweep_space_load(&sw->space, o->space))
        return 2;
    sw->backend = o->backend ? o->backend : sw->space.backend ? sw->space.backend : "nccl";
    sw->strategy = o->strategy ? o->strategy : "grid";
    sw->np = 1;
    sw->nodes = 0;
    sw->repeat = sw->space.repeat;
    sw->timeout_s = sw->space.timeout_s;
    sw->seed = 1;
    int seed = 1;
    if (strcmp(sw->backend, "nccl") && strcmp(sw->backend, "mpi") && strcmp(sw->backend, "sim"))
        return error("invalid value '%s' for --backend: expected nccl, mpi or sim", sw->backend), 2;
    if (strcmp(sw->strategy, "grid") && strcmp(sw->strategy, "halving"))
        return error("invalid value '%s' for --strategy: expected grid or halving", sw->strategy),
               2;
    int max_configs = SWEEP_MAX_CONFIGS;
    if (parse_count("--np", o->np, 1, 4096, &sw->np) ||
        parse_count("--repeat", o->repeat, 1, 100, &sw->repeat) ||
        parse_count("--nodes", o->nodes, 1, 4096, &sw->nodes) ||
        parse_count("--seed", o->seed, 0, 1 << 30, &seed) ||
        parse_count("--max-configs", o->max_configs, 1, 10000000, &max_configs))
        return 2;
    sw->seed = (unsigned)seed;
    sw->space.max_configs = (size_t)max_configs;
    if (o->timeout) {
        char *end;
        sw->timeout_s = strtod(o->timeout, &end);
        if (*end || !(sw->timeout_s > 0 && sw->timeout_s <= 86400))
            return error("invalid value '%s' for --timeout: expected seconds from 1 to 86400",
                         o->timeout),
                   2;
    }
    sw->launcher = o->launcher ? o->launcher : sw->np > 1 || o->hosts ? "mpirun" : "direct";
    if (strcmp(sw->launcher, "direct") && strcmp(sw->launcher, "mpirun") &&
        strcmp(sw->launcher, "srun"))
        return error("invalid value '%s' for --launcher: expected direct, mpirun or srun",
                     sw->launcher),
               2;
    if (!strcmp(sw->launcher, "direct") && sw->np > 1)
        return error("--np %d needs --launcher mpirun or srun", sw->np), 2;
    if (!strcmp(sw->backend, "sim") && !o->topology && !o->hosts)
        return error("--backend sim needs --topology FILE (a topology or hardware spec to "
                     "predict) or --hosts (their class is predicted)"),
               2;
    sw->hosts = o->hosts;
    sw->topology = o->topology;
    if (o->hosts) {
        int nhosts = launch_count_hosts(o->hosts);
        if (launch_check_nodes(o->hosts, 0))
            return 2;
        if (strcmp(sw->launcher, "mpirun"))
            return error("--hosts goes with --launcher mpirun (under srun, the allocation names "
                         "the nodes)"),
                   2;
        if (!o->np)
            sw->np = nhosts; /* one rank per host */
        if (sw->np % nhosts)
            return error("--np %d is not a multiple of the %d host(s): every host runs the same "
                         "number of ranks",
                         sw->np, nhosts),
                   2;
        sw->nhosts = nhosts;
        launch_tcp_env(sw->tcp_env, 0); /* read once: the same for every run */
        if (!o->topology) {
            util_child_setup();
            int rc = sweep_map_hosts(sw, t);
            if (rc)
                return rc;
            if (!sw->nodes)
                sw->nodes = nhosts;
        }
    }
    if (!sw->host_nodes && topo_load(t, o->topology))
        return 2;
    if (!sw->nodes)
        sw->nodes = !strcmp(sw->backend, "sim") ? t->job_nodes : 1;
    sw->class_id = t->class_id;
    return 0;
}

int cmd_sweep(int argc, char **argv)
{
    struct sweep_options o = {0};
    const struct util_opt opts[] = {
        {"space", 's', UTIL_OPT_STRING, &o.space, "FILE", "search space (topotune/space/1)"},
        {"backend", 0, UTIL_OPT_STRING, &o.backend, "B", "nccl, mpi or sim (default: the space's)"},
        {"np", 0, UTIL_OPT_STRING, &o.np, "N", "ranks per run (mpirun or srun)"},
        {"out", 'o', UTIL_OPT_STRING, &o.out, "DIR", "run directory (default: sweeps/CLASS-TIME)"},
        {"resume", 0, UTIL_OPT_FLAG, &o.resume, NULL,
         "continue the sweep in --out, skipping finished runs"},
        {"strategy", 0, UTIL_OPT_STRING, &o.strategy, "S", "grid (default) or halving"},
        {"repeat", 0, UTIL_OPT_STRING, &o.repeat, "R",
         "runs per configuration (default: the space's)"},
        {"timeout", 0, UTIL_OPT_STRING, &o.timeout, "SECONDS",
         "per-wait deadline (default: the space's)"},
        {"launcher", 0, UTIL_OPT_STRING, &o.launcher, "L", "direct, mpirun or srun"},
        {"hosts", 0, UTIL_OPT_STRING, &o.hosts, "LIST", "hosts for mpirun (h1,h2)"},
        {"topology", 0, UTIL_OPT_STRING, &o.topology, "FILE", "topology or spec (sim: required)"},
        {"nodes", 0, UTIL_OPT_STRING, &o.nodes, "N", "sim: number of nodes"},
        {"seed", 0, UTIL_OPT_STRING, &o.seed, "S", "sim: noise seed"},
        {"max-configs", 0, UTIL_OPT_STRING, &o.max_configs, "N",
         "refuse a space of more configurations (default 100000)"},
        {0},
    };
    char **pos = calloc((size_t)argc + 1, sizeof(char *));
    int npos = 0, rc = util_opts_parse("topotune sweep", sweep_usage, opts, argc, argv, pos, &npos);
    free(pos);
    if (rc)
        return rc > 0 ? 0 : 2;
    struct sweep sw;
    memset(&sw, 0, sizeof(sw));
    struct topo t;
    topo_init(&t);
    rc = setup(&o, &sw, &t);
    json_t *pruned = NULL;
    char dir[1024];
    if (!rc) {
        pruned = sweep_space_prune(&sw.space, &t, sw.nodes);
        size_t i;
        json_t *p;
        json_array_foreach(pruned, i, p)
            info("dropped %s: %s", json_string_value(json_object_get(p, "var")),
                 json_string_value(json_object_get(p, "reason")));
        sw.configs = sweep_space_configs(&sw.space);
        if (!sw.configs || sweep_configs_check(&sw.space, sw.configs))
            rc = 2; /* before anything is written */
    }
    if (!rc) {
        if (o.out) {
            snprintf(dir, sizeof(dir), "%s", o.out);
        } else {
            char stamp[32];
            time_t now = time(NULL);
            strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", gmtime(&now));
            snprintf(dir, sizeof(dir), "sweeps/%s-%s", t.class_id, stamp);
        }
        sw.dir = dir;
        char logs[1100];
        snprintf(logs, sizeof(logs), "%s/logs", dir);
        rc = mkdir_p(logs) ? 1 : hosts_topology_file(&sw);
        if (!rc)
            rc = sweep_file(&sw, &t, pruned, o.resume);
    }
    if (!rc) {
        sw.bench = sweep_bench_program();
        info("sweep: %zu configurations x %d (%s, %s backend, %s launcher) into '%s'",
             json_array_size(sw.configs), sw.repeat, sw.strategy, sw.backend, sw.launcher, sw.dir);
        int run = sweep_run(&sw);
        rc = run == UTIL_EINVAL ? 2 : run ? 1 : summary(&sw);
        free((char *)sw.bench);
    }
    json_decref(pruned);
    json_decref(sw.host_nodes);
    free(sw.host_topology);
    free(sw.btl_subnet);
    for (int i = 0; sw.tcp_env[i]; i++)
        free(sw.tcp_env[i]);
    json_decref(sw.configs);
    json_decref(sw.results);
    sweep_space_release(&sw.space);
    topo_release(&t);
    return rc;
}
