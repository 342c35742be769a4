/* SPDX-License-Identifier: MIT */
/*
 * `topotune check`: this node's health for Slurm (Prolog, Epilog, HealthCheckProgram) and LBNL
 * NHC: doctor, one short benchmark run, each size against its expected band (check/); one line
 * per failure, exit 1 on any. Optionally its JSON, its Prometheus metrics, and the scontrol drain
 * of this node (ops/).
 */
#include "bench/bench.h"
#include "check/check.h"
#include "cli/cli.h"
#include "ops/ops.h"
#include "sweep/sweep.h"
#include "util/buf.h"
#include "util/child.h"
#include "util/error.h"
#include "util/json.h"
#include "util/file.h"
#include "util/log.h"
#include "util/opts.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct check_cli {
    struct check_opts c;
    const char *out, *metrics;
    int json, drain, apply;
    const char *busy; /* --busy skip|run|fail */
    int read;         /* the options were read (they may still not go together) */
};

static const char usage[] =
    "[--profile DIR] [--input FILE] [--backend nccl|mpi|sim] [--np N] [-b MIN] [-e MAX] [-f N]\n"
    "       [-n ITERS] [-T SECONDS] [--deadline SECONDS] [--no-doctor] [--busy skip|run|fail]\n"
    "       [--out DIR] [--json] [--metrics FILE] [--drain [--apply]]\n\n"
    "A fast health check of this node for Slurm (Prolog, Epilog, HealthCheckProgram) and LBNL\n"
    "NHC: doctor's checks, then one short all_reduce run whose busbw at each size must lie within\n"
    "the band this node should measure (the profile's runs, else the model's prediction for its\n"
    "hardware). One line per failure (FAIL CHECK: ...), NOT CHECKED HOST: ... when the check\n"
    "could not be made, or one OK line.\n"
    "Exit: 0 healthy, 1 a failure (even when the drain or a report could not be made: said),\n"
    "2 usage or input, 3 the check could not run.";

static int parse(int argc, char **argv, struct check_cli *o, int *status)
{
    const struct util_opt opts[] = {
        {"profile", 'p', UTIL_OPT_STRING, &o->c.profile, "DIR",
         "the reference: a profile (directory or profile.json), its measured runs and settings"},
        {"input", 'i', UTIL_OPT_STRING, &o->c.input, "FILE",
         "the hardware: a spec, topology or hwloc file (default: this node; the sim needs it)"},
        {"backend", 0, UTIL_OPT_CHOICE, &o->c.backend, "B", "nccl (default), mpi or sim",
         .choices = "nccl mpi sim"},
        {"np", 0, UTIL_OPT_INT, &o->c.np, "N",
         "ranks through mpirun (default: one process; nccl drives every GPU from it)", .min = 1,
         .max = 4096},
        {"minbytes", 'b', UTIL_OPT_SIZE, &o->c.min, "SIZE", "smallest size (default 64M)", .min = 1,
         .max = (double)BENCH_MAX_BYTES},
        {"maxbytes", 'e', UTIL_OPT_SIZE, &o->c.max, "SIZE", "largest size (default 512M)", .min = 1,
         .max = (double)BENCH_MAX_BYTES},
        {"stepfactor", 'f', UTIL_OPT_INT, &o->c.factor, "N",
         "each size N times the last (default 2)", .min = 2, .max = 1024},
        {"iters", 'n', UTIL_OPT_INT, &o->c.iters, "N", "timed operations per size (default 20)",
         .min = 1, .max = 100000},
        {"timeout", 'T', UTIL_OPT_DOUBLE, &o->c.timeout_s, "SECONDS",
         "a wait's deadline in the benchmark (default 30)", .min = 1, .max = 86400},
        {"deadline", 0, UTIL_OPT_DOUBLE, &o->c.deadline_s, "SECONDS",
         "finish within this (20 at least): doctor's peer copies and the benchmark share it, a "
         "benchmark still running at it fails (default: none; Slurm kills a HealthCheckProgram "
         "at 60 s, without a verdict)",
         .min = 20, .max = 86400},
        {"no-doctor", 0, UTIL_OPT_FLAG, &o->c.no_doctor, NULL, "skip doctor's checks"},
        {"busy", 0, UTIL_OPT_CHOICE, &o->busy, "WHAT",
         "when this node's GPUs run compute processes: skip (default: not checked, exit 3), "
         "run, or fail (a Prolog of exclusive nodes: what the last job left)",
         .choices = "skip run fail"},
        {"out", 'o', UTIL_OPT_STRING, &o->out, "DIR",
         "keep the benchmark's events and log there (default: a temporary folder, kept only "
         "when the check fails)"},
        {"json", 0, UTIL_OPT_FLAG, &o->json, NULL,
         "print the report as JSON (topotune/check/1) instead of the lines"},
        {"metrics", 0, UTIL_OPT_STRING, &o->metrics, "FILE",
         "also write Prometheus metrics there (node_exporter's textfile collector)"},
        {"drain", 0, UTIL_OPT_FLAG, &o->drain, NULL,
         "on a failure, print the scontrol command that drains this node (SLURMD_NODENAME, else "
         "the host name)"},
        {"apply", 0, UTIL_OPT_FLAG, &o->apply, NULL, "run the --drain command through scontrol"},
        {0},
    };
    const struct util_opts_cmd cmd = {"topotune check", usage, opts, 0, 0};
    int npos = 0;
    if (cli_parse(&cmd, argc, argv, &npos, status))
        return 1;
    struct check_opts *c = &o->c;
    o->read = 1;
    c->backend = c->backend ? c->backend : "nccl";
    c->busy = !o->busy || !strcmp(o->busy, "skip") ? CHECK_BUSY_SKIP
              : !strcmp(o->busy, "run")            ? CHECK_BUSY_RUN
                                                   : CHECK_BUSY_FAIL;
    c->launcher = c->np > 1 ? "mpirun" : "direct";
    c->np = c->np ? c->np : 1;
    c->min = c->min ? c->min : 64u << 20;
    c->max = c->max ? c->max : 512u << 20;
    c->factor = c->factor ? c->factor : 2;
    c->iters = c->iters ? c->iters : 20;
    c->timeout_s = c->timeout_s ? c->timeout_s : 30;
    const char *why = c->max < c->min ? "-e (--maxbytes) is below -b (--minbytes)"
                      : !strcmp(c->backend, "sim") && !c->input
                          ? "--backend sim predicts the hardware of --input FILE: give it"
                      : o->apply && !o->drain ? "--apply runs what --drain prints: give --drain"
                      : o->drain && c->deadline_s > 0 && c->deadline_s < 20 + CHECK_DRAIN_S
                          ? "--deadline with --drain: 30 s at least (its last 10 s are the drain's)"
                      : o->out && strlen(o->out) > 1000 ? "--out: at most 1000 characters"
                      : o->metrics && !strcmp(o->metrics, "-")
                          ? "--metrics -: standard output holds the check's lines: give a file"
                          : NULL;
    if (why)
        return *status = 2, util_error("%s", why);
    return 0;
}

/* --drain: this node's drain with the failures' checks as its reason. 0, or 3. */
static int drain(const struct check_cli *o, const json_t *report)
{
    char host[256] = "";
    const char *node = getenv("SLURMD_NODENAME");
    if (!node || !*node) {
        gethostname(host, sizeof(host) - 1);
        host[strcspn(host, ".")] = '\0'; /* Slurm's node names are short */
        node = host;
    }
    struct util_buf checks = UTIL_BUF_INIT;
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(report, "failures"), i, f) {
        const char *name = json_string_value(json_object_get(f, "check"));
        size_t len = strlen(name);
        int seen = 0; /* each check once: "busbw", not one per size */
        for (const char *p = util_buf_str(&checks); *p; p += strcspn(p, ","), p += *p == ',')
            seen |= !strncmp(p, name, len) && (p[len] == ',' || !p[len]);
        if (!seen)
            util_buf_addf(&checks, "%s%s", checks.len ? "," : "", name);
    }
    json_t *survey =
        json_pack("{s:b,s:[{s:s,s:[s],s:{s:s},s:s}],s:[]}", "predicted",
                  !strcmp(json_string_value(json_object_get(report, "source")), "predicted"),
                  "verdicts", "kind", "check-fails", "hosts", node, "evidence", "checks",
                  util_buf_str(&checks), "text", "", "nodes");
    /* Slurm's two commands (sinfo, scontrol) in what is left of --deadline, 2 s each to stop: a
     * slow slurmctld took 64 s more, and Slurm killed the health check before its drain */
    double left = o->c.deadline_s > 0 ? o->c.deadline_s - (util_clock_s() - o->c.started_s) : 0;
    double each = o->c.deadline_s > 0 ? fmax(1, fmin(30, (left - 4) / 2)) : 30; /* 2 s to stop */
    /* with --json, standard output holds the report alone */
    int rc =
        ops_slurm_step(survey, 1, 0, o->apply, o->out, o->json ? stderr : stdout, each) ? 3 : 0;
    json_decref(survey);
    util_buf_release(&checks);
    return rc;
}

/* The report of a check that could not start (bad input, exit 2; this node unmapped, 3): its
 * reason the last error printed. */
static json_t *not_checked(const struct check_cli *o, int status)
{
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    /* a host name or a reason naming a path is any bytes: json_pack refused them, and no
     * report meant an "OK" line and a metrics file left to say ok */
    return json_pack("{s:s,s:o,s:s,s:s,s:[],s:[],s:{s:i,s:s,s:b,s:s},s:{s:o,s:i},s:b,s:I}",
                     "schema", "topotune/check/1", "host", util_json_shown(host), "backend",
                     o->c.backend, "source", strcmp(o->c.backend, "sim") ? "measured" : "predicted",
                     "failures", "sizes", "bench", "exit_code", -1, "outcome", "none", "timed_out",
                     0, "log", "", "error", "text", util_json_shown(util_error_last()), "status",
                     status == 3 ? 3 : 2, "ok", 0, "time", (json_int_t)time(NULL));
}

static int report_lines(const struct check_cli *o, const json_t *report)
{
    if (o->json) {
        json_dumpf(report, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(6));
        putchar('\n');
    } else {
        check_print(report, stdout);
    }
    return fflush(stdout) || ferror(stdout);
}

/* --metrics FILE, after the drain: a folder that cannot take it never keeps a node in service. */
static int write_metrics(const struct check_cli *o, const json_t *report)
{
    struct ops_metrics m;
    ops_metrics_init(&m);
    check_metrics(&m, report);
    int rc = ops_metrics_write(&m, o->metrics) ? 3 : 0;
    ops_metrics_release(&m);
    return rc;
}

/* No check made (status 2 or 3), said as every check's end is: its line or JSON, and its metrics
 * (topotune_check_ok 0), so that a metrics file of an earlier check does not stay to say OK. */
static int not_made(const struct check_cli *o, int status)
{
    json_t *report = not_checked(o, status);
    int rc = report_lines(o, report) ? 3 : status;
    /* "-" was refused: standard output holds the line (or the JSON) */
    if (o->metrics && strcmp(o->metrics, "-") && write_metrics(o, report))
        rc = 3;
    json_decref(report);
    return rc;
}

int cmd_check(int argc, char **argv)
{
    struct check_cli o = {0};
    int status = 0;
    if (parse(argc, argv, &o, &status)) {
        if (status != 2) /* --help */
            return status;
        if (!o.read) { /* options that did not read: only the line, in its plainest form */
            o.c.backend = "nccl";
            o.json = 0;
            o.metrics = NULL;
        }
        return not_made(&o, 2);
    }
    char tmp[4096] = "";
    struct stat st;
    int unmade = 0; /* the folder the check writes in cannot be had: no check, said */
    if (!o.out) {
        const char *base = getenv("TMPDIR");
        snprintf(tmp, sizeof(tmp), "%s/topotune-check.XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(tmp))
            unmade = 3,
            util_error("cannot create a folder in '%s': %s", base ? base : "/tmp", strerror(errno));
        else
            o.out = tmp;
    } else if (util_mkdir_p(o.out)) {
        unmade = 3, util_error("cannot create '%s': %s", o.out, strerror(errno));
    } else if (stat(o.out, &st) || !S_ISDIR(st.st_mode)) {
        unmade = 2,
        util_error("--out '%s' is not a folder: give a folder for the check's files", o.out);
    }
    if (unmade)
        return not_made(&o, unmade);
    o.c.dir = o.out;
    char *bench = sweep_bench_program();
    o.c.bench = bench;
    util_child_supervise();
    status = 0;
    o.c.started_s = util_clock_s(); /* --deadline counts from here, the drain included */
    /* --drain's two Slurm commands get 3 s each and 2 s to stop within the deadline: after a
     * benchmark that hung to its end they had 1 s, and a slow slurmctld took the drain past it */
    o.c.reserve_s = o.drain ? CHECK_DRAIN_S : 0;
    json_t *report = check_run(&o.c, &status);
    int started = report != NULL;
    if (!started) /* no verdict, said where a wrapper reads it (the reason is on stderr too) */
        report = not_checked(&o, status);
    const json_t *error = json_object_get(report, "error");
    int rc = !report ? status
             : error ? (int)json_integer_value(json_object_get(error, "status"))
             : json_is_true(json_object_get(report, "ok")) ? 0
                                                           : 1;
    if (error && started) /* no verdict on the node: it is not drained */
        util_error("the check could not be made: %s",
                   json_string_value(json_object_get(error, "text")));
    /* the drain is the verdict's, whatever became of the report: a prolog with its standard
     * output closed drains a failing node all the same */
    int verdict = rc;
    if (report && report_lines(&o, report))
        rc = 3;
    if (verdict == 1 && o.drain && drain(&o, report))
        rc = 3;
    /* a busy node's skipped check leaves the last check's metrics, their time saying how old
     * they are: a "not ok" every hour alerted on every node running a job */
    if (report && o.metrics && json_object_get(report, "busy") && error)
        util_info("'%s' left as the last check wrote it: nothing was measured", o.metrics);
    else if (report && o.metrics && write_metrics(&o, report))
        rc = 3;
    /* a failing node stays failed when a report could not be written: exit 3 is no verdict, and
     * a Prolog passing it put a node that failed back in service (a full disk, Slurm away) */
    if (verdict == 1)
        rc = 1;
    if (verdict == 1 && tmp[0])
        util_info("the benchmark's events and log are kept in '%s'", tmp);
    else if (tmp[0])
        util_remove_tree_at(AT_FDCWD, tmp, 2);
    json_decref(report);
    free(bench);
    return rc;
}
