/* SPDX-License-Identifier: MIT */
/*
 * `topotune sweep`: load and prune the space, plan the configurations, write
 * DIR/sweep.json (or check it on --resume), run the sweep, print a summary.
 */
#include "bench/bench.h"
#include "cli/cli.h"
#include "cluster/cluster.h"
#include "gen/gen.h"
#include "launch/launch.h"
#include "model/model.h"
#include "ops/ops.h"
#include "sweep/sweep.h"
#include "util/child.h"
#include "util/error.h"
#include "util/file.h"
#include "util/json.h"
#include "util/log.h"
#include "util/opts.h"
#include "workload/workload.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The options as given; numbers left 0 (the seed -1) take the space's or the defaults. */
static const char *resume_as; /* cli_sweep_resume_as */

void cli_sweep_resume_as(const char *command)
{
    resume_as = command;
}

struct sweep_options {
    const char *space, *backend, *out, *strategy, *launcher, *hosts, *topology, *calibration;
    const char *metrics, *workload;
    int np, repeat, nodes, seed, max_configs;
    double timeout;
    int resume, no_cures;
};

static const char sweep_usage[] =
    "--space FILE [--backend B] [--np N] [--out DIR] [--resume]\n"
    "       [--strategy grid|halving|descent] [--repeat R] [--timeout S] [--launcher "
    "direct|mpirun|srun]\n"
    "       [--hosts LIST] [--topology FILE] [--nodes N] [--seed S] [--calibration FILE]\n"
    "       [--max-configs N] [--no-cures] [--metrics FILE] [--workload FILE|PRESET]";

/* The nodes of the Slurm job this runs in (SLURM_JOB_NUM_NODES, or the older SLURM_NNODES), 0
 * when none or not a count. */
static int slurm_nodes(void)
{
    const char *names[] = {"SLURM_JOB_NUM_NODES", "SLURM_NNODES"};
    for (int i = 0; i < 2; i++) {
        long long n;
        if (!util_parse_int(getenv(names[i]), 1, 4096, &n))
            return (int)n;
    }
    return 0;
}

/*
 * The planning parameters a resumed sweep must share with the one it continues: any of them
 * changed would mix results measured another way into one directory.
 */
static json_t *plan_params(const struct sweep *sw)
{
    json_t *p = json_object();
    json_object_set_new(p, "strategy", json_string(sw->strategy));
    json_object_set_new(p, "launcher", json_string(sw->launcher));
    json_object_set_new(p, "hosts", sw->hosts ? json_string(sw->hosts) : json_null());
    json_object_set_new(p, "np", json_integer(sw->np));
    json_object_set_new(p, "nodes", json_integer(sw->nodes));
    json_object_set_new(p, "repeat", json_integer(sw->repeat));
    json_object_set_new(p, "timeout_s", json_real(sw->timeout_s));
    json_object_set_new(p, "seed", json_integer(sw->seed));
    json_object_set_new(p, "sizes",
                        json_pack("{s:I, s:I, s:f}", "min", (json_int_t)sw->space.min_bytes, "max",
                                  (json_int_t)sw->space.max_bytes, "factor", sw->space.factor));
    json_object_set_new(p, "iters", json_integer(sw->space.iters));
    json_object_set_new(p, "warmup", json_integer(sw->space.warmup));
    json_object_set(p, "calibration",
                    sw->calibration_params ? sw->calibration_params : json_null());
    /* what the runs measure and the objective: another workload is another sweep */
    json_object_set(p, "workload", sw->workload ? sw->workload : json_null());
    /* the sim's numbers are the model's: another version's would not mix with them */
    if (!strcmp(sw->backend, "sim"))
        json_object_set_new(p, "model", json_string(MODEL_VERSION));
    return p;
}

/* 1 when file would be written inside the directory dir (its folder is dir, or below it, by
 * real paths where they exist, else as written). */
static int metrics_inside(const char *file, const char *dir)
{
    char folder[4096], *real_dir = realpath(dir, NULL), *real_folder;
    snprintf(folder, sizeof(folder), "%s", file);
    char *slash = strrchr(folder, '/');
    if (slash)
        *(slash == folder ? slash + 1 : slash) = '\0';
    else
        snprintf(folder, sizeof(folder), ".");
    real_folder = realpath(folder, NULL);
    int inside;
    if (real_dir && real_folder) {
        size_t n = strlen(real_dir);
        inside = !strncmp(real_folder, real_dir, n) && (real_folder[n] == '/' || !real_folder[n]);
    } else { /* --out not made yet: as written */
        size_t n = strlen(dir);
        inside = !strncmp(file, dir, n) && file[n] == '/';
    }
    free(real_dir);
    free(real_folder);
    return inside;
}

/* A parameter's value as the user would write it, into buf. */
static const char *param_text(const json_t *v, char *buf, size_t len)
{
    char *s = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    snprintf(buf, len, "%s", !v ? "(not recorded)" : json_is_string(v) ? json_string_value(v) : s);
    free(s);
    return buf;
}

/* 0 when every planning parameter of old matches now, else an error naming the first that does
 * not and both values. Numbers compare as numbers (timeout 30 and 30.0 are one value). */
static int same_plan(const char *dir, const json_t *old, const json_t *now)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)now, k, v) {
        json_t *o = json_object_get(old, k);
        char why[200];
        if (!strcmp(k, "workload") && json_is_object(o) && json_is_object(v)) {
            if (!workload_differs(o, v, why, sizeof(why)))
                continue;
            return util_error("cannot resume '%s': it was swept with another workload (%s): give "
                              "the same workload, or another --out",
                              dir, why);
        }
        if (!strcmp(k, "workload") && json_is_object(o) != json_is_object(v)) /* one side none */
            return util_error("cannot resume '%s': it was swept %s, this sweep %s: give the same "
                              "--workload, or another --out",
                              dir,
                              json_is_object(o) ? "for a workload (--workload)"
                                                : "for all_reduce alone (no --workload)",
                              json_is_object(v) ? "gives --workload" : "gives none");
        int same = o && (json_equal(o, v) || (json_is_number(o) && json_is_number(v) &&
                                              json_number_value(o) == json_number_value(v)));
        if (!same) {
            char a[256], b[256];
            return util_error(
                "cannot resume '%s': it was swept with %s %s, this sweep asks for %s: "
                "give the same %s, or another --out",
                dir, k, param_text(o, a, sizeof(a)), param_text(v, b, sizeof(b)), k);
        }
    }
    return 0;
}

/* Whether every variable pruned list a drops, list b drops too. */
static int drops_all(const json_t *a, const json_t *b)
{
    size_t i, j;
    json_t *x, *y;
    json_array_foreach(a, i, x) {
        int found = 0;
        json_array_foreach(b, j, y)
            found |= json_equal(json_object_get(x, "var"), json_object_get(y, "var"));
        if (!found)
            return 0;
    }
    return 1;
}

/* The names of a pruned list's variables, comma-separated ("none"), into out. */
static void pruned_names(const json_t *pruned, struct util_buf *out)
{
    size_t i;
    json_t *p;
    json_array_foreach(pruned, i, p) {
        const char *var = json_string_value(json_object_get(p, "var"));
        util_buf_addf(out, "%s%s", i ? ", " : "", var ? var : "?");
    }
    if (!json_array_size(pruned))
        util_buf_adds(out, "none");
}

/* A resumed sweep's runs would be measured under other inherited NCCL variables than its first
 * runs (a shell's NCCL_ALGO, a site's /etc/nccl.conf edited between): said, 1. A sweep.json of an
 * older topotune, without the record, is not judged. */
static int inherited_differs(const char *dir, const json_t *then, const json_t *now)
{
    if (!then || json_equal((json_t *)then, (json_t *)now))
        return 0;
    char *was = sweep_inherited_text(then), *is = sweep_inherited_text(now);
    util_error("cannot resume '%s': its runs inherited [%s], these would inherit [%s]: their "
               "numbers would not compare; set the same, or give another --out",
               dir, was ? was : "", is ? is : "");
    free(was);
    free(is);
    return 1;
}

/* sweep.json: written on a new sweep; on --resume the space, class, backend, NCCL release (when
 * both are known), every planning parameter (plan_params) and the variables dropped must match.
 */
static int sweep_file(struct sweep *sw, const struct topo *t, json_t *pruned, json_t *inherited,
                      int resume)
{
    char path[1100];
    snprintf(path, sizeof(path), "%s/sweep.json", sw->dir);
    char *hash = util_json_hash(sw->space.doc);
    json_t *plan = plan_params(sw);
    int rc = 0;
    struct stat st;
    if (lstat(path, &st) == 0) { /* a link or a FIFO planted there is refused, not followed */
        json_t *old = util_json_load_regular(path);
        if (!old && resume) {
            json_decref(plan);
            free(hash);
            return 2;
        }
        const char *oh = json_string_value(json_object_get(old, "space_hash"));
        const char *oc = json_string_value(json_object_get(old, "class"));
        const char *ob = json_string_value(json_object_get(old, "backend"));
        const char *on =
            json_string_value(json_object_get(json_object_get(old, "versions"), "nccl"));
        if (!resume)
            rc = util_error(
                "'%s' already holds a sweep: add --resume to continue it, or give another --out",
                sw->dir);
        else if (!old || !oh || strcmp(oh, hash))
            rc = util_error(
                "cannot resume '%s': it was swept with another space (the space file changed)",
                sw->dir);
        else if (!oc || strcmp(oc, sw->class_id))
            rc =
                util_error("cannot resume '%s': it was swept on node class %s, this topology is %s",
                           sw->dir, oc ? oc : "?", sw->class_id);
        else if (!ob || strcmp(ob, sw->backend))
            rc = util_error("cannot resume '%s': it was swept with --backend %s", sw->dir,
                            ob ? ob : "?");
        else if (on && t->software.nccl && strcmp(on, t->software.nccl))
            rc = util_error("cannot resume '%s': it was swept with NCCL %s, the runs now load NCCL "
                            "%s: their numbers would not compare (and the variables dropped "
                            "differ); give another --out",
                            sw->dir, on, t->software.nccl);
        else if (inherited_differs(sw->dir, json_object_get(old, "inherited"), inherited))
            rc = 2;
        else
            rc = same_plan(sw->dir, old, plan);
        const json_t *dropped = json_object_get(old, "pruned");
        if (!rc && !(drops_all(dropped, pruned) && drops_all(pruned, dropped))) {
            struct util_buf was = UTIL_BUF_INIT, now = UTIL_BUF_INIT;
            pruned_names(dropped, &was);
            pruned_names(pruned, &now);
            /* which variables a release reads drops some: known on one side only, say so */
            char why[160] = "another topotune's rules";
            if (!on != !t->software.nccl)
                snprintf(why, sizeof(why),
                         "the NCCL release, which decides some, was %s then, %s now",
                         on ? on : "unknown", t->software.nccl ? t->software.nccl : "unknown");
            rc = util_error("cannot resume '%s': it dropped [%s]; this sweep drops [%s] (%s): its "
                            "configurations would differ; give another --out",
                            sw->dir, util_buf_str(&was), util_buf_str(&now), why);
            util_buf_release(&was);
            util_buf_release(&now);
        }
        json_decref(old);
        json_decref(plan);
        free(hash);
        return rc ? 2 : 0;
    }
    char results[1100];
    snprintf(results, sizeof(results), "%s/results.jsonl", sw->dir);
    if (lstat(results, &st) == 0) { /* its runs would pass for ours */
        if (S_ISREG(st.st_mode))
            util_error("'%s' holds results.jsonl but no sweep.json: a damaged or partial sweep "
                       "directory whose runs would pass for this sweep's; give another --out",
                       sw->dir);
        else /* refused before sweep.json is written: it blocked the folder as a sweep's */
            util_error("'%s' is %s, never written through: remove it, or give another --out",
                       results, S_ISLNK(st.st_mode) ? "a symbolic link" : "not a regular file");
        json_decref(plan);
        free(hash);
        return 2;
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
    if (sw->host_nodes) { /* what each host was when mapped, and the network chosen from that */
        json_object_set(doc, "host_nodes", sw->host_nodes);
        json_object_set_new(doc, "btl_tcp_if_include",
                            sw->btl_subnet ? json_string(sw->btl_subnet) : json_null());
    }
    json_object_set_new(doc, "versions",
                        json_incref(json_object_get(json_object_get(doc, "topology"), "software")));
    json_object_set_new(doc, "started", json_string(started));
    json_object_set_new(doc, "backend", json_string(sw->backend));
    json_object_update(doc, plan);
    json_object_set_new(doc, "cv_max", json_real(sw->space.cv_max));
    json_object_set_new(doc, "objective_min", json_integer((json_int_t)sw->space.obj_min));
    json_object_set_new(doc, "objective_max", json_integer((json_int_t)sw->space.obj_max));
    json_object_set_new(doc, "predicted", json_boolean(strcmp(sw->backend, "sim") == 0));
    json_object_set_new(doc, "configs", json_incref(sw->configs));
    json_object_set_new(doc, "pruned", json_incref(pruned));
    json_object_set_new(doc, "inherited", json_incref(inherited));
    rc = util_json_write(path, doc) ? 1 : 0;
    json_decref(doc);
    json_decref(plan);
    free(hash);
    return rc;
}

/*
 * DIR/.lock, flock'ed for the sweep's life (the descriptor is close-on-exec: the runs never hold
 * it), with the holder's pid in it for the message a second sweep gets. Returns the descriptor,
 * or -1 after an error: 3 in *rc when another sweep holds the directory, 1 when the lock file
 * cannot be opened.
 */
static int lock_dir(const char *dir, int *rc)
{
    char holder[32];
    int fd = util_lock_dir(dir, holder, sizeof(holder));
    if (fd >= 0)
        return fd;
    if (errno != EWOULDBLOCK)
        return *rc = 1, util_error("cannot open or lock '%s/.lock': %s", dir, strerror(errno));
    *rc = 3;
    return util_error("'%s' is in use by another sweep (pid %s): wait for it to end, or give "
                      "another --out",
                      dir, holder);
}

/*
 * What an earlier sweep of DIR left running (it was killed, or its host lost power): the
 * process group of its last run, from DIR/sweep.pid, ended before anything is measured next to
 * it. Called with the directory locked, so that sweep is no longer alive.
 */
static void end_leftovers(const char *dir)
{
    char path[1100], line[64], marker[128];
    const char *why;
    snprintf(path, sizeof(path), "%s/sweep.pid", dir);
    /* a FIFO, link or folder planted there is not waited on or followed; it is removed (the
     * entry itself, never what a link points at: the folder is locked, the name the sweep's
     * own), so that every run can record its group there again */
    int fd = util_file_open_input(path, 0, &why);
    if (fd < 0) {
        int planted = errno == ELOOP || errno == EISDIR || errno == EINVAL || errno == ENXIO;
        if (errno == ENOENT)
            return;
        if (!planted)
            util_warning("cannot read '%s': %s; what an earlier run left, if anything, is not "
                         "ended",
                         path, why);
        else if (!unlink(path) || (errno == EISDIR && !rmdir(path)))
            util_warning("ignoring '%s': %s; removed", path, why);
        else
            util_warning("ignoring '%s': %s; cannot remove it (%s): remove it, or the runs "
                         "cannot record their process groups there",
                         path, why, strerror(errno));
        return;
    }
    ssize_t len = read(fd, line, sizeof(line) - 1);
    close(fd);
    line[len > 0 ? len : 0] = '\0';
    int pid = 0, pgid = 0, killed;
    if (sscanf(line, "%d %d", &pid, &pgid) != 2 || pgid <= 1 || pgid == getpgrp() ||
        pgid == getsid(0) || sweep_run_marker(dir, marker, sizeof(marker)))
        return;
    /* only processes that carry this folder's run marker: the file may name anyone's session */
    int n = util_child_end_session((pid_t)pgid, marker, 3, &killed);
    if (n)
        util_warning("the earlier sweep of '%s' (pid %d) left %d process%s of its last run "
                     "(process group %d): %s",
                     dir, pid, n, n > 1 ? "es" : "", pgid,
                     killed ? "killed (SIGKILL, after 3 s of SIGTERM)" : "stopped (SIGTERM)");
}

/* After a signal: what was interrupted, and where the results are. */
static void say_interrupted(const struct sweep *sw)
{
    int sig = util_child_interrupted();
    const char *name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP";
    if (isatty(STDERR_FILENO))
        fputc('\n', stderr);
    if (sw->cut[0])
        fprintf(stderr,
                "topotune: sweep interrupted by %s during run %s: its processes were ended and "
                "it is not recorded\n",
                name, sw->cut);
    else
        fprintf(stderr, "topotune: sweep interrupted by %s\n", name);
    if (resume_as)
        fprintf(stderr,
                "topotune: %zu finished runs are in '%s/results.jsonl'; continue with: %s\n",
                sw->results ? json_array_size(sw->results) : 0, sw->dir, resume_as);
    else
        fprintf(stderr,
                "topotune: %zu finished runs are in '%s/results.jsonl'; 'topotune sweep --resume "
                "--out %s' with the same options continues\n",
                sw->results ? json_array_size(sw->results) : 0, sw->dir, sw->dir);
}

/* What gen will judge from this sweep, by gen's own rule (the best single run may belong to an
 * unstable configuration gen rejects): its summary line, or nothing when gen cannot judge it. */
/* What gen will choose from the sweep (said), as its profile content; NULL when it cannot. */
static json_t *say_choice(const struct sweep *sw)
{
    json_t *sweeps = json_array(), *results = json_array(), *p = NULL;
    if (!gen_load_sweep(sw->dir, sweeps, results))
        p = gen_select(sweeps, results, sw->class_id);
    if (p)
        fprintf(stderr, "topotune: gen will choose: %s\n",
                json_string_value(json_object_get(p, "summary")));
    json_decref(sweeps);
    json_decref(results);
    return p;
}

/* One configuration's busbw per size (a profile's per_size) as topotune_busbw_bytes_per_second. */
static void per_size_metrics(struct ops_metrics *m, const json_t *per_size, const char *config,
                             const char *cls, const char *nodes, const char *backend)
{
    const char *source = !strcmp(backend, "sim") ? "predicted" : "measured";
    size_t i;
    json_t *s;
    json_array_foreach(per_size, i, s) {
        char size[32];
        snprintf(size, sizeof(size), "%" JSON_INTEGER_FORMAT,
                 json_integer_value(json_object_get(s, "size")));
        ops_metric(m, OPS_BUSBW, "gauge", OPS_BUSBW_HELP,
                   json_number_value(json_object_get(s, "busbw")) * 1e9, "collective", "all_reduce",
                   "class", cls, "nodes", nodes, "size", size, "source", source, "backend", backend,
                   "config", config, OPS_END);
    }
}

/* --metrics: the runs by outcome, the defaults' and the choice's busbw per size, the time. */
static int sweep_metrics(const struct sweep *sw, const json_t *choice, const char *const *names,
                         const int *counts, int n, const char *path)
{
    struct ops_metrics m;
    ops_metrics_init(&m);
    const char *cls = sw->class_id;
    char nodes[16];
    snprintf(nodes, sizeof(nodes), "%" JSON_INTEGER_FORMAT,
             json_integer_value(json_object_get(json_object_get(choice, "sweep"), "nodes")));
    for (int k = 0; k < n; k++)
        ops_metric(&m, "topotune_sweep_runs", "gauge", "runs of the last sweep by outcome",
                   counts[k], "class", cls, "outcome", names[k], OPS_END);
    per_size_metrics(&m, json_object_get(json_object_get(choice, "baseline"), "per_size"),
                     "defaults", cls, nodes, sw->backend);
    per_size_metrics(&m, json_object_get(json_object_get(choice, "winner"), "per_size"), "chosen",
                     cls, nodes, sw->backend);
    ops_metric(&m, "topotune_sweep_last_run_timestamp_seconds", "gauge",
               "when the last sweep ended, in seconds since the epoch", (double)time(NULL), "class",
               cls, OPS_END);
    int rc = ops_metrics_write(&m, path);
    ops_metrics_release(&m);
    return rc;
}

/* Outcomes counted, and what gen will choose from them; --metrics FILE written from both. */
static int summary(const struct sweep *sw, const char *metrics)
{
    const char *names[] = {"ok", "wrong", "error", "crash", "timeout", "launch-failed"};
    int counts[6] = {0}, baseline_ok = 0;
    size_t i;
    /* runs are counted, not lines: a workload's run is a line per collective */
    json_t *r, *runs = sweep_run_outcomes(sw->results), *v;
    json_array_foreach(sw->results, i, r) { /* a full-effort baseline run that was ok */
        char key[512];
        sweep_run_key(r, key, sizeof(key));
        baseline_ok |= json_is_true(json_object_get(r, "final")) &&
                       json_object_size(json_object_get(r, "env")) == 0 &&
                       !strcmp(json_string_value(json_object_get(runs, key)), "ok");
    }
    const char *key;
    json_object_foreach(runs, key, v)
        for (int k = 0; k < 6; k++)
            counts[k] += !strcmp(json_string_value(v), names[k]);
    size_t nruns = json_object_size(runs), nlines = json_array_size(sw->results);
    json_decref(runs);
    fprintf(stderr, "topotune: sweep '%s': %zu runs", sw->dir, nruns);
    if (nlines != nruns)
        fprintf(stderr, " (%zu lines, one per collective of the workload)", nlines);
    fprintf(stderr, ":");
    for (int k = 0; k < 6; k++)
        if (counts[k])
            fprintf(stderr, " %d %s", counts[k], names[k]);
    fprintf(stderr, "\n");
    json_t *choice = say_choice(sw);
    int lost = metrics && sweep_metrics(sw, choice, names, counts, 6, metrics);
    json_decref(choice);
    if (lost)
        return 1;
    if (!baseline_ok && sw->cures)
        fprintf(stderr, "topotune: NCCL's defaults failed here; the sweep went on with the cure "
                        "recorded in sweep.json (cures)\n");
    else if (!baseline_ok)
        fprintf(stderr, "topotune: the NCCL-defaults baseline never ran ok: see DIR/logs\n");
    return baseline_ok || sw->cures ? 0 : 1; /* a cured sweep did its work */
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

/* The mpi backend reduces through MPI, which has no half or bfloat16 and no average: a sweep
 * whose runs would all fail at init is refused before the first, naming the collective. */
static int mpi_cannot(const struct sweep *sw)
{
    const char *dt = sw->space.dtype ? sw->space.dtype : "float", *op = sw->space.op;
    int small = !strcmp(dt, "half") || !strcmp(dt, "bfloat16"), avg = op && !strcmp(op, "avg");
    if (strcmp(sw->backend, "mpi") || (!small && !avg))
        return 0;
    json_t *colls =
        sw->workload ? sweep_workload_collectives(sw->workload) : json_pack("[s]", "all_reduce");
    const char *bad = NULL;
    size_t i;
    json_t *c;
    json_array_foreach(colls, i, c)
        if (!bad && model_coll_reduces(model_coll_parse(json_string_value(c))))
            bad = json_string_value(c);
    int rc =
        bad ? util_error("the mpi backend cannot run %s with %s %s: MPI has no %s; give "
                         "the space another %s, or the nccl backend",
                         bad, avg ? "op" : "dtype", avg ? op : dt,
                         avg ? "avg reduction" : "half or bfloat16 reduction", avg ? "op" : "dtype")
            : 0;
    json_decref(colls);
    return rc;
}

static int setup(struct sweep_options *o, struct sweep *sw, struct topo *t)
{
    if (!o->space)
        return util_error("topotune sweep needs --space FILE (see profiles/spaces/)"), 2;
    if (sweep_space_load(&sw->space, o->space))
        return 2;
    sw->backend = o->backend ? o->backend : sw->space.backend ? sw->space.backend : "nccl";
    sw->strategy = o->strategy ? o->strategy : "grid";
    sw->np = 1;
    sw->nodes = 0;
    sw->repeat = sw->space.repeat;
    sw->timeout_s = sw->space.timeout_s;
    if (strcmp(sw->backend, "nccl") && strcmp(sw->backend, "mpi") && strcmp(sw->backend, "sim"))
        return util_error("the space's backend '%s' is none of nccl, mpi or sim: give --backend",
                          sw->backend),
               2;
    sw->np = o->np ? o->np : 1;
    sw->repeat = o->repeat ? o->repeat : sw->repeat;
    sw->nodes = o->nodes;
    sw->seed = o->seed >= 0 ? (unsigned)o->seed : 1;
    sw->space.max_configs = (size_t)(o->max_configs ? o->max_configs : SWEEP_MAX_CONFIGS);
    if (o->workload && !(sw->workload = workload_load(o->workload)))
        return 2;
    if (mpi_cannot(sw))
        return 2;
    if (o->calibration) { /* read once here: a bad file is one error, not one per run */
        static char path[PATH_MAX];
        struct model_params mp;
        if (strcmp(sw->backend, "sim"))
            return util_error("--calibration sets the sim backend's model; this sweep is %s",
                              sw->backend),
                   2;
        if (model_params_load(&mp, o->calibration) || !realpath(o->calibration, path))
            return 2;
        sw->calibration = path;
        sw->calibration_params = model_params_json(&mp);
    }
    if (o->timeout)
        sw->timeout_s = o->timeout;
    /* the sim predicts a whole job in one process, without MPI: more processes would each
     * write the same run's log */
    if (!strcmp(sw->backend, "sim") && sw->np > 1)
        return util_error("--np %d: the sim backend predicts a whole job in one process; --nodes N "
                          "sets how many nodes it predicts",
                          sw->np),
               2;
    sw->launcher = o->launcher ? o->launcher : sw->np > 1 || o->hosts ? "mpirun" : "direct";
    if (!strcmp(sw->launcher, "direct") && sw->np > 1)
        return util_error("--np %d needs --launcher mpirun or srun", sw->np), 2;
    if (launch_usable(sw->launcher)) /* said once, not as every run's launch-failed */
        return cli_status(UTIL_EENV);
    if (!strcmp(sw->backend, "sim") && !o->topology && !o->hosts)
        return util_error("--backend sim needs --topology FILE (a topology or hardware spec to "
                          "predict) or --hosts (their class is predicted)"),
               2;
    sw->hosts = o->hosts;
    sw->topology = o->topology;
    if (o->hosts) {
        int nhosts = launch_count_hosts(o->hosts);
        if (launch_check_nodes(o->hosts, 0))
            return 2;
        if (strcmp(sw->launcher, "mpirun"))
            return util_error(
                       "--hosts goes with --launcher mpirun (under srun, the allocation names "
                       "the nodes)"),
                   2;
        int sim = !strcmp(sw->backend, "sim"); /* the runs are predictions, here */
        if (!o->np && !sim)
            sw->np = nhosts; /* one rank per host */
        if (!sim && sw->np % nhosts)
            return util_error(
                       "--np %d is not a multiple of the %d host(s): every host runs the same "
                       "number of ranks",
                       sw->np, nhosts),
                   2;
        sw->nhosts = nhosts;
        if (!sim) /* read once: the same for every run (a sim's runs start no MPI) */
            launch_tcp_env(sw->tcp_env, 0);
        if (!o->topology) {
            util_child_supervise();
            int rc = sweep_map_hosts(sw, t);
            if (rc)
                return cli_status(rc);
            if (!sw->nodes)
                sw->nodes = nhosts;
        }
        if (sim)
            sw->launcher = "direct"; /* the hosts were mapped: their class is predicted here */
    }
    if (!sw->host_nodes && topo_load(t, o->topology))
        return 2;
    if (!sw->nodes && !strcmp(sw->launcher, "srun") && slurm_nodes() > 0)
        sw->nodes = slurm_nodes(); /* the allocation's nodes, not one */
    if (!sw->nodes)
        sw->nodes = !strcmp(sw->backend, "sim") ? t->job_nodes : 1;
    sw->class_id = t->class_id;
    sw->ranks = !strcmp(sw->backend, "sim") ? t->ngpus * sw->nodes : sw->np;
    if (sw->workload)
        sweep_workload_ranks(sw->workload, sw->ranks);
    return 0;
}

int cmd_sweep(int argc, char **argv)
{
    struct sweep_options o = {.seed = -1};
    const struct util_opt opts[] = {
        {"space", 's', UTIL_OPT_STRING, &o.space, "FILE", "search space (topotune/space/1)"},
        {"backend", 0, UTIL_OPT_CHOICE, &o.backend, "B", "nccl, mpi or sim (default: the space's)",
         .choices = "nccl mpi sim"},
        {"np", 0, UTIL_OPT_INT, &o.np, "N", "ranks per run (mpirun or srun)", .min = 1,
         .max = 4096},
        {"out", 'o', UTIL_OPT_STRING, &o.out, "DIR", "run directory (default: sweeps/CLASS-TIME)"},
        {"resume", 0, UTIL_OPT_FLAG, &o.resume, NULL,
         "continue the sweep in --out, skipping finished runs"},
        {"no-cures", 0, UTIL_OPT_FLAG, &o.no_cures, NULL,
         "when NCCL's defaults fail, measure the space as it is (no P2P/SHM cure added)"},
        {"metrics", 0, UTIL_OPT_STRING, &o.metrics, "FILE",
         "also write Prometheus metrics there at the end (node_exporter's textfile collector), or "
         "-"},
        {"strategy", 0, UTIL_OPT_CHOICE, &o.strategy, "S", "grid (default), halving or descent",
         .choices = "grid halving descent"},
        {"repeat", 0, UTIL_OPT_INT, &o.repeat, "R", "runs per configuration (default: the space's)",
         .min = 1, .max = 100},
        {"timeout", 0, UTIL_OPT_DOUBLE, &o.timeout, "SECONDS",
         "per-wait deadline (default: the space's)", .min = 0.01, .max = 86400},
        {"launcher", 0, UTIL_OPT_CHOICE, &o.launcher, "L", "direct, mpirun or srun",
         .choices = "direct mpirun srun"},
        {"hosts", 0, UTIL_OPT_STRING, &o.hosts, "LIST", "hosts for mpirun (h1,h2)"},
        {"topology", 0, UTIL_OPT_STRING, &o.topology, "FILE", "topology or spec (sim: required)"},
        {"nodes", 0, UTIL_OPT_INT, &o.nodes, "N", "sim: number of nodes", .min = 1, .max = 4096},
        {"seed", 0, UTIL_OPT_INT, &o.seed, "S", "sim: noise seed", .max = 1 << 30},
        {"calibration", 0, UTIL_OPT_STRING, &o.calibration, "FILE",
         "sim: the model's parameters (topotune/calibration/1)"},
        {"workload", 0, UTIL_OPT_STRING, &o.workload, "FILE|PRESET",
         "optimise for a job's mix: topotune workload's file, or dp, fsdp, tp, moe"},
        {"max-configs", 0, UTIL_OPT_INT, &o.max_configs, "N",
         "refuse a space of more configurations (default 100000)", .min = 1,
         .max = SWEEP_MAX_CONFIGS_LIMIT},
        {0},
    };
    const struct util_opts_cmd cmd = {"topotune sweep", sweep_usage, opts, 0, 0};
    int npos = 0, status, rc = 0;
    if (cli_parse(&cmd, argc, argv, &npos, &status))
        return status;
    if (o.out && !o.out[0])
        return util_error("--out: an empty directory name (give one, or leave --out out for "
                          "sweeps/CLASS-TIME)"),
               2;
    /* --metrics is written after the whole sweep: what would refuse it then is refused now */
    const char *inputs[] = {o.space, o.topology, o.calibration, o.workload};
    for (size_t i = 0; o.metrics && i < sizeof(inputs) / sizeof(inputs[0]); i++)
        if (util_file_same(o.metrics, inputs[i]))
            return util_error("--metrics '%s' is an input of the sweep: give the metrics another "
                              "name",
                              o.metrics),
                   2;
    if (o.metrics && (util_file_replaceable(o.metrics) || util_file_folder_exists(o.metrics)))
        return 2;
    if (o.metrics && o.out && metrics_inside(o.metrics, o.out))
        return util_error("--metrics '%s' is inside --out '%s': the sweep's own files are there "
                          "(results.jsonl, sweep.json); give the metrics a file elsewhere (the "
                          "textfile collector's folder)",
                          o.metrics, o.out),
               2;
    /* its runs' logs and events go under it, named on launch lines: a longer one was cut there,
     * and every run ended "results-missing" */
    if (o.out && strlen(o.out) > SWEEP_MAX_DIR)
        return util_error("--out: a directory name of %zu bytes, more than %d: give a shorter "
                          "path (a relative one, or a link to the folder)",
                          strlen(o.out), SWEEP_MAX_DIR),
               2;
    struct sweep sw;
    memset(&sw, 0, sizeof(sw));
    struct topo t;
    topo_init(&t);
    rc = setup(&o, &sw, &t);
    json_t *pruned = NULL, *inherited = NULL;
    char dir[1024];
    int lockfd = -1;
    if (!rc) {
        pruned = sweep_space_prune(&sw.space, &t, sw.nodes);
        json_t *colls =
            sw.workload ? sweep_workload_collectives(sw.workload) : json_pack("[s]", "all_reduce");
        sweep_space_prune_unused(&sw.space, colls, model_nccl_nodes(&t, sw.nodes), pruned);
        json_decref(colls);
        sweep_space_version_warnings(&sw.space, &t, sw.backend);
        inherited = sweep_space_inherited(&sw.space, sw.backend);
        char *names = sweep_inherited_text(inherited);
        if (names)
            util_warning("%s reach every run, the defaults' too: the runs, and a profile of them, "
                         "are measured with them (unset them, or give them in the space's "
                         "\"fixed\" to make them the profile's)",
                         names);
        free(names);
        size_t i;
        json_t *p;
        json_array_foreach(pruned, i, p)
            util_info("dropped %s: %s", json_string_value(json_object_get(p, "var")),
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
        struct stat st;
        rc = util_mkdir_p(logs) ? 1 : 0;
        if (rc)
            util_error("cannot create '%s': %s", logs, strerror(errno));
        else if (lstat(logs, &st) || !S_ISDIR(st.st_mode)) /* a planted link: writes elsewhere */
            rc = 2, util_error("'%s' is a link, not the sweep's own folder: remove it (the runs' "
                               "logs are written there)",
                               logs);
        if (!rc && (lockfd = lock_dir(dir, &rc)) >= 0) {
            end_leftovers(dir);
            rc = hosts_topology_file(&sw);
        }
        if (!rc)
            rc = sweep_file(&sw, &t, pruned, inherited, o.resume);
    }
    if (!rc) {
        sw.bench = sweep_bench_program();
        sw.no_cures = o.no_cures;
        util_info("sweep: %zu configurations x %d (%s, %s backend, %s launcher) into '%s'",
                  json_array_size(sw.configs), sw.repeat, sw.strategy, sw.backend, sw.launcher,
                  sw.dir);
        int run = sweep_run(&sw);
        if (run == UTIL_EINTR)
            say_interrupted(&sw);
        rc = run ? cli_status(run) : summary(&sw, o.metrics);
        free((char *)sw.bench);
    }
    if (lockfd >= 0)
        close(lockfd); /* the lock goes with it */
    json_decref(pruned);
    json_decref(inherited);
    json_decref(sw.host_nodes);
    free(sw.host_topology);
    free(sw.btl_subnet);
    for (int i = 0; sw.tcp_env[i]; i++)
        free(sw.tcp_env[i]);
    json_decref(sw.configs);
    json_decref(sw.cures);
    json_decref(sw.results);
    json_decref(sw.calibration_params);
    json_decref(sw.workload);
    json_decref(sw.views);
    sweep_space_release(&sw.space);
    topo_release(&t);
    if (util_child_interrupted()) { /* die of it, as the shell that started us expects */
        fflush(NULL);
        signal(util_child_interrupted(), SIG_DFL);
        raise(util_child_interrupted());
        return cli_status(UTIL_EINTR);
    }
    return rc;
}
