/* SPDX-License-Identifier: MIT */
/* `topotune check`: doctor, one short benchmark run, each size against its expected band. */
#include "check/check.h"
#include "doctor/doctor.h"
#include "expect/expect.h"
#include "gen/gen.h"
#include "launch/launch.h"
#include "model/model.h"
#include "topo/topo.h"
#include "util/buf.h"
#include "util/child.h"
#include "util/env.h"
#include "util/error.h"
#include "util/json.h"
#include "util/jsonl.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/text.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void fail(json_t *report, const char *check, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(json_t *report, const char *check, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    struct util_buf shown = UTIL_BUF_INIT;
    json_array_append_new(
        json_object_get(report, "failures"),
        json_pack("{s:s,s:s}", "check", check, "text", util_text_shown(&shown, text)));
    util_buf_release(&shown);
}

/* The check could not be made as asked (status 2: its input; 3: the environment): said once. */
static void cannot(json_t *report, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void cannot(json_t *report, int status, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    if (!json_object_get(report, "error"))
        json_object_set_new(
            report, "error",
            json_pack("{s:o,s:i}", "text", util_json_shown(text), "status", status));
}

/* What is left of the check's --deadline (HUGE_VAL: none). */
static double left_s(const struct check_opts *o)
{
    return o->deadline_s > 0 ? o->deadline_s - o->reserve_s - (util_clock_s() - o->started_s)
                             : HUGE_VAL;
}

/* doctor's checks of this node; each that fails is a failure, its fix with it. */
static void doctor_part(const struct check_opts *o, json_t *report, const struct topo *t,
                        const json_t *profile)
{
    /* under a deadline, the peer copies get two fifths of what is left, never more than their
     * own default (a hung copy waited 120 s of 300) nor what is left less the 2 s a child gets
     * to stop once told (the check ended past its deadline) */
    double copy_s = o->deadline_s > 0 ? fmin(doctor_copy_timeout_s(t),
                                             fmax(1, fmin(0.4 * left_s(o), left_s(o) - 3)))
                                      : 0;
    json_t *checks = doctor_run(t, profile, copy_s), *c;
    size_t i;
    json_array_foreach(checks, i, c) {
        if (strcmp(util_json_str(c, "status", ""), "fail"))
            continue;
        char name[96];
        snprintf(name, sizeof(name), "doctor-%.80s", util_json_str(c, "name", "?"));
        fail(report, name, "%s (fix: %s)", util_json_str(c, "evidence", ""),
             util_json_str(c, "fix", ""));
    }
    json_object_set_new(report, "doctor", checks);
}

/* The NCCL variables of this process the model reads, as the benchmark gets them: a site's
 * NCCL_P2P_DISABLE=1 or NCCL_ALGO (a profile.d, /etc/nccl.conf) priced as NCCL's defaults
 * failed healthy nodes. Each read is kept as NAME=VALUE words for the report, once, while they
 * fit; one that a configuration file of NCCL's sets is said on standard error. */
struct read_env {
    char words[480];
    char conf[480]; /* those from a file of NCCL's: NAME=VALUE (FILE), while they fit */
    int files;      /* NCCL's files read too: the benchmark is NCCL on this node */
};

static const char *this_env(const char *name, void *ctx)
{
    struct read_env *r = ctx;
    /* names of this node's devices (NCCL_SOCKET_IFNAME=bond0, NCCL_IB_HCA) are checked against
     * the devices the hardware lists, which a bond or a spec does not: a fault, no reference, and
     * a node of degraded NVLink passed. One node's run prices none of them. */
    const char *from = NULL;
    const char *value = strncmp(name, "NCCL_", 5) || util_env_per_node(name) ? NULL
                        : r->files ? util_env_nccl(name, &from)
                                   : getenv(name);
    if (!value)
        return NULL;
    char word[480];
    size_t used = strlen(r->words);
    int n = snprintf(word, sizeof(word), "%s=%s", name, value);
    for (const char *at = r->words; n > 0 && (at = strstr(at, word)); at++)
        if ((at == r->words || at[-1] == ' ') && (at[n] == ' ' || !at[n]))
            return value; /* read before, said before */
    size_t had = strlen(r->conf);
    if (from)
        snprintf(r->conf + had, sizeof(r->conf) - had, "%s%.64s=%.64s (%.200s)", had ? ", " : "",
                 name, value, from);
    if (n <= 0 || used + (size_t)n + 2 > sizeof(r->words) || strpbrk(value, " \n"))
        return value; /* the model reads it all the same; the words only say it while they fit */
    if (used)
        r->words[used++] = ' ';
    memcpy(r->words + used, word, (size_t)n + 1);
    return value;
}

/* What this node should measure: the profile's runs, or the model's prediction for one node of
 * t. 0 with e filled; 1 when there is no reference (said in the report); or an error code. */
static int expectation(const struct check_opts *o, const struct topo *t, struct expect *e,
                       json_t *report)
{
    if (o->profile)
        return expect_measured(e, o->profile, o->min, o->max) ? UTIL_EINVAL : 0;
    struct model m;
    /* the sim predicts another machine's NCCL, whose files are not this host's */
    struct read_env read = {"", "", !strcmp(o->backend, "nccl")};
    int none = model_init(&m, t, 1, this_env, &read);
    if (read.conf[0])
        util_warning("NCCL's configuration files set %s: the benchmark's NCCL reads them, and "
                     "the reference prices them",
                     read.conf);
    if (none) {
        json_object_set_new(report, "reference_missing",
                            json_string("no GPU in the hardware: busbw is not judged without a "
                                        "profile (--profile)"));
        return 1;
    }
    if (m.fault != MODEL_FAULT_NONE) {
        json_object_set_new(report, "reference_missing",
                            json_sprintf("the model predicts no bandwidth with %s "
                                         "(%s): busbw is not judged without a profile",
                                         read.words[0] ? read.words : "NCCL's defaults", m.why));
        return 1;
    }
    if (m.gpus_unknown) {
        json_object_set_new(report, "reference_missing",
                            json_sprintf("%d of the %d GPUs have no model the catalog knows: "
                                         "busbw is not judged without a profile (--profile)",
                                         m.gpus_unknown, m.ppn));
        return 1;
    }
    if (!t->nvlink_known && t->ngpus > 1) { /* expect would refuse: no reference, no verdict */
        json_object_set_new(report, "reference_missing",
                            json_string("the hardware does not describe NVLink between its GPUs "
                                        "(NCCL adds it at run time): busbw is not judged "
                                        "without a profile (--profile) or a spec"));
        return 1;
    }
    /* the model prices NCCL on the GPUs: host MPI's numbers held to it failed every node */
    if (!strcmp(o->backend, "mpi")) {
        json_object_set_new(report, "reference_missing",
                            json_string("the mpi backend measures host MPI between processes, "
                                        "not NCCL on the GPUs the model prices: busbw is judged "
                                        "only against a profile (--profile) measured with it"));
        return 1;
    }
    /* one GPU: busbw counts traffic between ranks, 0 at one rank; every band passed it */
    if (m.nranks < 2) {
        json_object_set_new(report, "reference_missing",
                            json_string("one GPU: busbw is 0 at one rank (it counts the traffic "
                                        "between ranks), so no run can be below a band: busbw "
                                        "is not judged"));
        return 1;
    }
    return expect_predicted(e, &m, t, o->input ? o->input : "this node", read.words,
                            MODEL_ALL_REDUCE, o->min, o->max, o->factor)
               ? UTIL_EINVAL
               : 0;
}

/* This process's NCCL variables the profile does not set reach the run, which its runs were not
 * measured with (a site's profile.d or /etc/nccl.conf): said, since a failure may be theirs. */
static void warn_unmeasured(const struct check_opts *o, const json_t *profile)
{
    /* NCCL on this node reads its files too */
    json_t *here = util_env_nccl_reaching(!strcmp(o->backend, "nccl")), *v, *value;
    struct util_buf names = UTIL_BUF_INIT;
    const char *name;
    json_object_foreach(here, name, value) {
        int set = 0;
        size_t i;
        json_array_foreach(json_object_get(profile, "variables"), i, v)
            set |= !strcmp(util_json_str(v, "name", ""), name);
        if (!set)
            util_buf_addf(&names, "%s%.64s%s%.200s%s", names.len ? ", " : "", name,
                          json_is_array(value) ? " (set in " : "",
                          json_is_array(value) ? json_string_value(json_array_get(value, 1)) : "",
                          json_is_array(value) ? ")" : "");
    }
    json_decref(here);
    if (names.len)
        util_warning("this environment's %.400s reach the benchmark, which the profile's runs "
                     "were not measured with: a failure may be theirs",
                     util_buf_str(&names));
    util_buf_release(&names);
}

/* The profile's variables (system and tuning roles) as NAME=VALUE, each allowed by name; those
 * that name devices (util_env_per_node) as this node resolves them, not as measured elsewhere. */
static char **profile_env(const json_t *profile)
{
    const json_t *vars = json_object_get(profile, "variables");
    json_t *notes, *here = doctor_node_env(profile, 0, &notes);
    char **env = util_xcalloc(json_array_size(vars) + 1, sizeof(char *));
    size_t i, n = 0;
    json_t *v;
    json_array_foreach(vars, i, v) {
        const char *name = util_json_str(v, "name", ""), *value = util_json_str(v, "value", "");
        if (util_env_per_node(name))
            value = json_string_value(json_object_get(here, name));
        if (!value || !strcmp(util_json_str(v, "role", ""), "debug") || util_env_refused(name) ||
            strchr(value, '\n'))
            continue;
        struct util_buf b = UTIL_BUF_INIT;
        util_buf_addf(&b, "%s=%s", name, value);
        env[n++] = util_buf_detach(&b);
    }
    json_decref(here);
    json_decref(notes);
    return env;
}

static void env_free(char **env)
{
    for (char **p = env; p && *p; p++)
        free(*p);
    free(env);
}

/* The benchmark's argv (before the launcher) for o on hardware t, its watchdog at watch_s. */
static void bench_args(const struct check_opts *o, const struct topo *t, double watch_s,
                       char args[][4200], char **argv)
{
    int n = 0, k = 0;
    argv[n++] = (char *)o->bench;
    argv[n++] = "--backend";
    argv[n++] = (char *)o->backend;
    snprintf(args[k], 4200, "-b%zu", o->min);
    argv[n++] = args[k++];
    snprintf(args[k], 4200, "-e%zu", o->max);
    argv[n++] = args[k++];
    snprintf(args[k], 4200, "-f%d", o->factor);
    argv[n++] = args[k++];
    snprintf(args[k], 4200, "-n%d", o->iters);
    argv[n++] = args[k++];
    argv[n++] = "-w2";
    snprintf(args[k], 4200, "-T%g", watch_s);
    argv[n++] = args[k++];
    snprintf(args[k], 4200, "--json=%s/check-bench.jsonl", o->dir);
    argv[n++] = args[k++];
    if (!strcmp(o->backend, "sim")) {
        snprintf(args[k], 4200, "--topology=%s", o->input);
        argv[n++] = args[k++];
        argv[n++] = "--nodes=1";
    } else if (!strcmp(o->backend, "nccl") && !strcmp(o->launcher, "direct") && t->ngpus > 1) {
        snprintf(args[k], 4200, "-g%d", t->ngpus); /* one process drives every GPU */
        argv[n++] = args[k++];
    }
    argv[n] = NULL;
}

/* The least time a benchmark is started with under a deadline: NCCL's init alone takes seconds. */
#define CHECK_BENCH_MIN_S 10

/* Above any fabric's busbw (GB/s): a child's number past it is damaged output, not a pass. */
#define CHECK_MAX_BUSBW 1e9

/* The run's events ev read: its ranks, each size's busbw into sizes ({size: busbw}), the outcome
 * of its end. NULL, or what makes them damaged: a child's ranks below 1 or busbw out of range
 * were copied into a report its schema refused, and a second value of one size hid the first
 * (a size far below its band, then fine, passed). The order too, as the benchmark writes them
 * (start, sizes, end; an error and end alone when it could not start): results without a start
 * had no ranks to check the reference's against, and passed. */
static const char *read_events(const json_t *ev, json_t *sizes, json_int_t *ranks,
                               const char **outcome)
{
    const json_t *e;
    size_t i;
    int started = 0, ended = 0;
    json_array_foreach(ev, i, e) {
        const char *kind = util_json_str(e, "event", "");
        json_t *size = json_object_get(e, "size"), *busbw = json_object_get(e, "busbw");
        if (ended)
            return "events after its end";
        if (!strcmp(kind, "start") && started++)
            return "two starts";
        if (!strcmp(kind, "size") && !started)
            return "a size before the start";
        if (!strcmp(kind, "start")) {
            *ranks = json_integer_value(json_object_get(e, "ranks"));
            if (*ranks < 1 || *ranks > 1 << 24)
                return *ranks = 0, "a start whose ranks are not a count of 1 or more";
        } else if (!strcmp(kind, "end")) {
            *outcome = util_json_str(e, "outcome", "?");
            ended = 1;
        } else if (!strcmp(kind, "size") && json_is_integer(size) && json_is_number(busbw)) {
            double v = json_number_value(busbw);
            char key[32];
            snprintf(key, sizeof(key), "%" JSON_INTEGER_FORMAT, json_integer_value(size));
            if (!(v >= 0 && v <= CHECK_MAX_BUSBW))
                return "a size whose busbw is below 0 or past any fabric's";
            if (json_object_get(sizes, key))
                return "two values of one size";
            json_object_set_new(sizes, key, json_real(v));
        }
    }
    return NULL;
}

/* One short run; its busbw per size into sizes ({size: busbw}). 0, or the failure is said. */
static void bench_part(const struct check_opts *o, const struct topo *t, const json_t *profile,
                       json_t *report, json_t *sizes)
{
    char args[8][4200], log[4200], events[4200];
    char *program[24];
    /* under a deadline, the benchmark's watchdog at half of what is left, to say a hang itself
     * before the deadline stops it */
    double left = left_s(o) - 3, run_s = fmin(o->timeout_s * 20 + 30, left); /* 2 s to stop */
    bench_args(o, t, fmax(1, fmin(o->timeout_s, left / 2)), args, program);
    snprintf(log, sizeof(log), "%s/check-bench.log", o->dir);
    snprintf(events, sizeof(events), "%s/check-bench.jsonl", o->dir);
    /* nothing for the nccl backend to run on: the node's environment, not its health */
    /* nor for the sim, on a file of no NVIDIA GPU: the input's, no verdict (its run failed, and
     * a Prolog drained a CPU-only node) */
    int sim = !strcmp(o->backend, "sim");
    if ((sim || !strcmp(o->backend, "nccl")) && t->ngpus == 0) {
        json_object_set_new(report, "bench",
                            json_pack("{s:i,s:s,s:b,s:s}", "exit_code", -1, "outcome", "none",
                                      "timed_out", 0, "log", ""));
        json_object_set_new(report, "ranks", json_integer(0));
        if (sim)
            cannot(report, 2,
                   "'%s' has no NVIDIA GPU%s for the sim backend to predict (give a hardware "
                   "file with GPUs, or --backend mpi to check the launch and the network)",
                   o->input, t->other_gpus ? " (its GPUs are of another vendor)" : "");
        else
            cannot(report, 3,
                   "no GPU on this node for the nccl backend (give --backend mpi to check the "
                   "launch and the network without one)");
        return;
    }
    /* the log is never written through a link (the child opens it O_NOFOLLOW): a planted one
     * was said as the benchmark that could not run */
    struct stat st;
    if (!lstat(log, &st) && (!S_ISREG(st.st_mode) || st.st_nlink > 1)) {
        json_object_set_new(report, "bench",
                            json_pack("{s:i,s:s,s:b,s:o}", "exit_code", -1, "outcome", "none",
                                      "timed_out", 0, "log", util_json_shown(log)));
        cannot(report, 2,
               "'%s' is a link or not a file of its own: remove it, or give --out "
               "another folder",
               log);
        return;
    }
    if (unlink(events) && errno != ENOENT) {
        fail(report, "bench", "cannot remove the last check's '%s': %s", events, strerror(errno));
        return;
    }
    if (profile)
        warn_unmeasured(o, profile);
    char **env = profile ? profile_env(profile) : NULL;
    struct launch l = {o->launcher, o->np, NULL, env};
    char **argv = launch_argv(&l, program);
    /* SIGTERM 3 s before the deadline, SIGKILL 2 s later, its end awaited 1 s more */
    struct util_child c = {
        .argv = argv, .env = env, .log = log, .timeout_s = run_s, .grace_s = 2, .kill_wait_s = 1};
    char started[256] = "";                  /* what was run: the benchmark, or its launcher */
    if (argv && run_s < CHECK_BENCH_MIN_S) { /* no time to tell a slow start from a hang */
        /* a doctor check that failed (a peer copy that hung) is the verdict; else none */
        if (!json_array_size(json_object_get(report, "failures")))
            cannot(report, 3,
                   "%.0f s of the check's --deadline of %g s were left for the benchmark, less "
                   "than %d: not run (doctor's checks or the drain's share took the rest; give a "
                   "longer --deadline)",
                   fmax(0, run_s), o->deadline_s, CHECK_BENCH_MIN_S);
        json_object_set_new(report, "bench",
                            json_pack("{s:i,s:s,s:b,s:s}", "exit_code", -1, "outcome", "none",
                                      "timed_out", 0, "log", ""));
        launch_argv_free(argv);
        env_free(env);
        json_object_set_new(report, "ranks", json_integer(0));
        return;
    }
    if (argv) {
        snprintf(started, sizeof(started), "%s", argv[0]);
        util_child_run(&c);
    }
    launch_argv_free(argv);
    env_free(env);
    /* ranks SIGKILL did not end (one asleep in the GPU driver), the benchmark itself ended */
    const char *behind = c.left_behind && !c.stuck
                             ? ", but some of its processes did not end after "
                               "SIGKILL (" UTIL_CHILD_LEFT_WHY "), left behind"
                             : "";
    json_t *ev = util_jsonl_load(events, UTIL_JSONL_READ);
    const char *outcome = "none";
    json_int_t ranks = 0;
    const char *damaged = read_events(ev, sizes, &ranks, &outcome);
    json_object_set_new(report, "bench",
                        json_pack("{s:i,s:o,s:b,s:o}", "exit_code", c.exit_code, "outcome",
                                  util_json_shown(outcome), "timed_out", c.timed_out, "log",
                                  util_json_shown(log)));
    /* a benchmark that could not start says nothing of the node: the check did not run */
    if (!argv)
        cannot(report, 2, "cannot build the %s launch of %d ranks", o->launcher, o->np);
    else if (c.exec_errno)
        cannot(report, 3, "cannot run %s: %s", started, strerror(c.exec_errno));
    /* 126 and 127 before any event: the program could not be loaded (its libnccl.so.2 not
     * found), as exec failing is: the environment's, no verdict on the node, never a drain */
    else if (!c.timed_out && !json_array_size(ev) && (c.exit_code == 126 || c.exit_code == 127))
        cannot(report, 3,
               "%s could not be started (exit %d before its run began: a library it needs "
               "missing?): see '%s'",
               started, c.exit_code, log);
    else if (damaged) /* what the node's benchmark said is no measurement to judge */
        fail(report, "bench", "topotune-bench's events are damaged (%s)%s: see '%s'", damaged,
             behind, events);
    else if (c.stuck) /* the GPU driver holds it (a GPU off the bus): the node's fault */
        fail(report, "bench",
             "topotune-bench had not ended %g s after SIGKILL (" UTIL_CHILD_LEFT_WHY
             "), left behind (outcome %s): see '%s'",
             c.kill_wait_s, outcome, log);
    else if (c.timed_out && run_s < o->timeout_s * 20 + 30)
        fail(report, "bench",
             "topotune-bench still ran at the check's --deadline of %g s, stopped%s (outcome %s): "
             "see '%s'",
             o->deadline_s, behind, outcome, log);
    else if (c.timed_out || c.exit_code)
        fail(report, "bench", "topotune-bench %s%s (outcome %s): see '%s'",
             c.timed_out ? "passed its deadline" : "failed", behind, outcome, log);
    else if (strcmp(outcome, "ok")) /* exit 0 but no result: nothing was measured to judge */
        fail(report, "bench",
             "topotune-bench exited 0 without ending its run (outcome %s)%s: see '%s'", outcome,
             behind, log);
    else if (*behind) /* its numbers stand, but a rank holds a GPU in the driver */
        fail(report, "bench", "topotune-bench ended its run%s: see '%s'", behind, log);
    json_object_set_new(report, "ranks", json_integer(ranks));
    json_decref(ev);
}

/* The profile's class key (hardware.class_key) could be this node's machine: the same CPUs and
 * GPU model where both are known. A node given another machine's profile is no loss. */
static int same_machine(const json_t *key, const struct topo *t)
{
    const json_t *cpu = json_object_get(key, "cpu");
    const char *vendor = json_string_value(json_object_get(cpu, "vendor")),
               *model = json_string_value(json_object_get(cpu, "model"));
    const json_t *sockets = json_object_get(cpu, "sockets");
    if ((vendor && t->cpu.vendor && strcmp(vendor, t->cpu.vendor)) ||
        (model && t->cpu.model && strcmp(model, t->cpu.model)) ||
        (json_is_integer(sockets) && t->cpu.sockets > 0 &&
         json_integer_value(sockets) != t->cpu.sockets))
        return 0;
    const json_t *models = json_object_get(json_object_get(key, "gpu"), "models");
    for (int g = 0; g < t->ngpus; g++) {
        int known = 0;
        size_t i;
        const json_t *m;
        json_array_foreach(models, i, m)
            known |= !strcmp(json_string_value(m) ? json_string_value(m) : "",
                             t->gpus[g].model ? t->gpus[g].model : "?");
        if (!known)
            return 0;
    }
    return 1;
}

/* NICs of kind (its name) in a class key's "kind:speed" list. */
static int key_nics(const json_t *nics, const char *kind)
{
    int n = 0;
    size_t i, len = strlen(kind);
    const json_t *v;
    json_array_foreach(nics, i, v) {
        const char *s = json_string_value(v);
        n += s && !strncmp(s, kind, len) && s[len] == ':';
    }
    return n;
}

/*
 * The hardware this node, the same machine as its profile's class, has less of (a GPU off the
 * bus, an InfiniBand, RoCE or EFA NIC or an NVSwitch gone): said in why, 1. The profile names the
 * class the node is meant to be, so a loss is a verdict. Plain Ethernet ports are not counted
 * (management ports, virtual functions and netdevs a container does not see come and go); a NIC
 * that is down changes its class by its speed, not its count: doctor's checks say it.
 */
static int hardware_lost(const json_t *profile, const struct topo *t, char *why, size_t n)
{
    const json_t *key = json_object_get(json_object_get(profile, "hardware"), "class_key");
    why[0] = '\0';
    if (!json_is_object(key) || !same_machine(key, t))
        return 0;
    struct util_buf b = UTIL_BUF_INIT;
    const json_t *gpus = json_object_get(json_object_get(key, "gpu"), "count"),
                 *nvs = json_object_get(key, "nvswitches"), *nics = json_object_get(key, "nics");
    if (json_is_integer(gpus) && t->ngpus < json_integer_value(gpus))
        util_buf_addf(&b, "%d GPU(s) where the class has %lld", t->ngpus,
                      (long long)json_integer_value(gpus));
    if (json_is_integer(nvs) && t->nvswitches != TOPO_UNKNOWN &&
        t->nvswitches < json_integer_value(nvs))
        util_buf_addf(&b, "%s%d NVSwitch(es) where the class has %lld", b.len ? ", " : "",
                      t->nvswitches, (long long)json_integer_value(nvs));
    int have[TOPO_NIC_NKINDS] = {0};
    for (int i = 0; i < t->nnics; i++)
        have[t->nics[i].kind]++;
    for (int k = 0; k < TOPO_NIC_NKINDS; k++) {
        const char *kind = topo_nic_kind_name((enum topo_nic_kind)k);
        int want = key_nics(nics, kind);
        if (topo_nic_rdma((enum topo_nic_kind)k) && have[k] < want)
            util_buf_addf(&b, "%s%d %s NIC(s) where the class has %d", b.len ? ", " : "", have[k],
                          kind, want);
    }
    snprintf(why, n, "%s", util_buf_str(&b));
    util_buf_release(&b);
    return why[0] != '\0';
}

/* The report of a check that ran nothing (no benchmark, no sizes), ended. */
static json_t *ended_unrun(json_t *report)
{
    json_object_set_new(report, "bench",
                        json_pack("{s:i,s:s,s:b,s:s}", "exit_code", -1, "outcome", "none",
                                  "timed_out", 0, "log", ""));
    json_object_set_new(report, "sizes", json_array());
    json_object_set_new(report, "ok", json_false());
    json_object_set_new(report, "time", json_integer((json_int_t)time(NULL)));
    return report;
}

/* A failure of that check is already listed. */
static int failed(const json_t *report, const char *check)
{
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(report, "failures"), i, f)
        if (!strcmp(util_json_str(f, "check", ""), check))
            return 1;
    return 0;
}

/* bytes is a size the run measures: -b times a power of -f up to -e, as a whole number of floats
 * (nccl-tests' count of a size). */
static int asked(const struct check_opts *o, size_t bytes)
{
    size_t f = o->factor > 1 ? (size_t)o->factor : 2;
    for (size_t b = o->min ? o->min : 1; b <= o->max; b *= f) {
        if (expect_run_size(b) == bytes)
            return 1;
        if (b > o->max / f)
            break;
    }
    return 0;
}

/* Each size measured against its band: below the low edge is a failure, and so is a size the
 * benchmark was asked for and left unmeasured. */
static void judge(json_t *report, const struct expect *e, const json_t *sizes, int predicted,
                  const struct check_opts *o)
{
    json_t *rows = json_array();
    int compared = 0;
    for (int i = 0; e && i < e->n; i++) {
        const struct expect_row *r = &e->rows[i];
        char key[32];
        snprintf(key, sizeof(key), "%zu", r->bytes);
        json_t *got = json_object_get(sizes, key);
        int below = got && json_number_value(got) < r->low;
        compared += got != NULL;
        json_array_append_new(rows,
                              json_pack("{s:I,s:o,s:f,s:f,s:f,s:b}", "size", (json_int_t)r->bytes,
                                        "busbw", got ? json_incref(got) : json_null(), "expected",
                                        r->busbw, "low", r->low, "high", r->high, "below", below));
        if (below)
            fail(report, "busbw",
                 "all_reduce at %zu B: %.2f GB/s %s, below the band %.2f-%.2f GB/s (%s)", r->bytes,
                 json_number_value(got), predicted ? "predicted" : "measured", r->low, r->high,
                 e->measured ? "measured by the profile" : "predicted by the model");
    }
    json_object_set_new(report, "sizes", rows);
    /* a size the run was asked for and gave no busbw: nothing says it is healthy (a run never
     * started, a doctor failure past --deadline's time for it, measured nothing to list) */
    int bench_failed =
        failed(report, "bench") ||
        json_integer_value(json_object_get(json_object_get(report, "bench"), "exit_code")) == -1;
    for (int i = 0; e && !bench_failed && (compared || !json_object_size(sizes)) && i < e->n; i++) {
        char key[32];
        snprintf(key, sizeof(key), "%zu", e->rows[i].bytes);
        if (!json_object_get(sizes, key) && asked(o, e->rows[i].bytes))
            fail(report, "bench", "all_reduce at %zu B: the benchmark gave no busbw for it",
                 e->rows[i].bytes);
    }
    if (e && !compared && !json_object_get(report, "error") && json_object_size(sizes))
        cannot(report, 2,
               "the reference (%s) has none of the sizes this check measured: give -b, -e and -f "
               "that include its sizes",
               e->measured ? "the profile's runs" : "the model");
}

json_t *check_run(const struct check_opts *opts, int *status)
{
    struct check_opts run = *opts; /* the deadline counts from here */
    const struct check_opts *o = &run;
    run.started_s = run.started_s > 0 ? run.started_s : util_clock_s();
    struct topo t;
    topo_init(&t);
    /* a file stands for this node's hardware: its system facts are this machine's, for doctor */
    if (o->input ? topo_load_as_this_node(&t, o->input) : topo_load(&t, NULL)) {
        topo_release(&t);
        *status = o->input ? 2 : 3; /* this node that cannot be mapped is the environment's */
        return NULL;
    }
    char path[4200];
    json_t *profile = o->profile ? gen_profile_read(o->profile, path, sizeof(path)) : NULL;
    const char *want = json_string_value(json_object_get(profile, "class"));
    char lost[512] = "";
    if (profile && t.class_id && want && strcmp(want, t.class_id) &&
        !hardware_lost(profile, &t, lost, sizeof(lost))) {
        util_error("the profile '%s' is of class %s, this node of %s: give this class's profile",
                   path, want, t.class_id);
        json_decref(profile);
        profile = NULL;
    }
    /* a profile of another NCCL is no reference here either (an upgrade would drain the whole
     * class at once, and a prolog reads the host's libnccl, not the job image's): no verdict */
    const char *nccl =
        json_string_value(json_object_get(json_object_get(profile, "software"), "nccl"));
    if (profile && !lost[0] && nccl && t.software.nccl && strcmp(nccl, t.software.nccl)) {
        util_error("the profile '%s' was measured with NCCL %s, this node has %s: it is no "
                   "reference here; sweep this NCCL (topotune sweep, then gen) for one",
                   path, nccl, t.software.nccl);
        json_decref(profile);
        profile = NULL;
    }
    /* a profile of another backend measured something else (host MPI, or NCCL on GPUs); the
     * sim's profile is a prediction for NCCL, a reference for the nccl backend too */
    const char *pb = json_string_value(json_object_get(profile, "backend"));
    if (profile && !lost[0] && pb && strcmp(pb, o->backend) &&
        (strcmp(pb, "sim") || strcmp(o->backend, "nccl"))) {
        util_error("the profile '%s' was measured with the %s backend, this check runs %s: give "
                   "--backend %s (or the profile of this backend)",
                   path, pb, o->backend, pb);
        json_decref(profile);
        profile = NULL;
    }
    if (o->profile && !profile) {
        topo_release(&t);
        *status = 2;
        return NULL;
    }
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    int predicted = !strcmp(o->backend, "sim");
    /* a host name is any bytes (sethostname): one JSON refused made no report at all, exit 0 */
    struct util_buf shown = UTIL_BUF_INIT;
    json_t *report =
        json_pack("{s:s,s:s,s:s?,s:s,s:s,s:o}", "schema", "topotune/check/1", "host",
                  util_text_shown(&shown, host), "class", t.class_id, "backend", o->backend,
                  "source", predicted ? "predicted" : "measured", "failures", json_array());
    util_buf_release(&shown);
    if (profile)
        json_object_set_new(report, "profile",
                            json_pack("{s:o,s:O*}", "path", util_json_shown(path), "version",
                                      json_is_integer(json_object_get(profile, "version"))
                                          ? json_object_get(profile, "version")
                                          : NULL));
    if (lost[0]) { /* no band applies to other hardware: the loss is the verdict, no run */
        fail(report, "hardware",
             "this node has %s of its profile's class %s (now %s): a device lost or not seen "
             "(check nvidia-smi, lspci and dmesg)",
             lost, want, t.class_id);
        if (!o->no_doctor)
            doctor_part(o, report, &t, NULL);
        json_decref(profile);
        topo_release(&t);
        return ended_unrun(report);
    }
    /* a job on the GPUs (Slurm runs its HealthCheckProgram on busy nodes, a shared node's Prolog
     * while another job runs): its contention, and its /dev/shm, are no measure of the node */
    int busy = o->busy == CHECK_BUSY_RUN || !strcmp(o->backend, "sim") ? -1 : topo_gpu_processes();
    if (busy > 0 && o->busy == CHECK_BUSY_FAIL) /* a Prolog of exclusive nodes: the last job's */
        fail(report, "busy",
             "this node's GPUs run %d compute process(es) before the job: left by the last job "
             "(stuck after an Xid error, or holding memory)? see nvidia-smi",
             busy);
    else if (busy > 0)
        cannot(report, 3,
               "this node's GPUs run %d compute process(es), a job's: not measured (--busy run "
               "measures anyway)",
               busy);
    if (busy > 0) {
        json_object_set_new(report, "busy", json_integer(busy));
        json_decref(profile);
        topo_release(&t);
        return ended_unrun(report);
    }
    if (!o->no_doctor)
        doctor_part(o, report, &t, profile);
    struct expect e;
    int rc = expectation(o, &t, &e, report);
    if (rc < 0) { /* a profile that holds none of these sizes, said */
        *status = 2;
        json_decref(report);
        json_decref(profile);
        topo_release(&t);
        return NULL;
    }
    if (!rc)
        json_object_set_new(report, "reference",
                            json_pack("{s:s,s:s}", "kind", e.measured ? "measured" : "predicted",
                                      "basis", e.basis));
    json_t *sizes = json_object();
    bench_part(o, &t, profile, report, sizes);
    json_int_t ranks = json_integer_value(json_object_get(report, "ranks"));
    if (!rc && o->profile && ranks && e.nranks && ranks != e.nranks && predicted)
        /* the sim's ranks are its --input's GPUs on one node: --np changes nothing */
        cannot(report, 2,
               "the profile was measured with %d rank(s), this check ran %lld: the sim backend "
               "runs one node of --input's GPUs; give the profile of that shape",
               e.nranks, (long long)ranks);
    else if (!rc && o->profile && ranks && e.nranks && ranks != e.nranks)
        cannot(report, 2,
               "the profile was measured with %d rank(s), this check ran %lld: give --np %d (or "
               "the profile of this shape)",
               e.nranks, (long long)ranks, e.nranks);
    else if (!rc && ranks && e.nranks && ranks != e.nranks) /* the model's: one rank per GPU */
        cannot(report, 2,
               "the model's reference is for %d rank(s), one per GPU of this node, this check ran "
               "%lld: give --np %d",
               e.nranks, (long long)ranks, e.nranks);
    judge(report, rc || json_object_get(report, "error") ? NULL : &e, sizes, predicted, o);
    json_decref(sizes);
    if (!rc)
        expect_release(&e);
    json_object_set_new(report, "ok",
                        json_boolean(!json_array_size(json_object_get(report, "failures")) &&
                                     !json_object_get(report, "error")));
    json_object_set_new(report, "time", json_integer((json_int_t)time(NULL)));
    json_decref(profile);
    topo_release(&t);
    return report;
}

void check_print(const json_t *report, FILE *out)
{
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(report, "failures"), i, f)
        fprintf(out, "FAIL %s: %s\n", util_json_str(f, "check", "?"), util_json_str(f, "text", ""));
    json_t *error = json_object_get(report, "error");
    if (error) /* the check could not be made: no verdict either way */
        fprintf(out, "NOT CHECKED %s: %s\n", util_json_str(report, "host", "?"),
                util_json_str(error, "text", ""));
    else if (!json_array_size(json_object_get(report, "failures")))
        fprintf(out, "OK %s: %s\n", util_json_str(report, "host", "?"),
                json_object_get(report, "reference_missing")
                    ? util_json_str(report, "reference_missing", "")
                    : "every size within its expected band");
}

void check_metrics(struct ops_metrics *m, const json_t *report)
{
    const char *cls = util_json_str(report, "class", ""),
               *src = util_json_str(report, "source", "");
    const char *ref = util_json_str(json_object_get(report, "reference"), "kind", "predicted");
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(report, "sizes"), i, r) {
        char size[32];
        snprintf(size, sizeof(size), "%" JSON_INTEGER_FORMAT,
                 json_integer_value(json_object_get(r, "size")));
        if (json_is_number(json_object_get(r, "busbw")))
            ops_metric(m, OPS_BUSBW, "gauge", OPS_BUSBW_HELP,
                       json_number_value(json_object_get(r, "busbw")) * 1e9, "collective",
                       "all_reduce", "class", cls, "nodes", "1", "size", size, "source", src,
                       "backend", util_json_str(report, "backend", ""), "program", "check",
                       OPS_END);
        static const char *const bounds[] = {"low", "expected", "high"};
        for (int k = 0; k < 3; k++)
            ops_metric(m, OPS_EXPECTED, "gauge", OPS_EXPECTED_HELP,
                       json_number_value(json_object_get(r, bounds[k])) * 1e9, "collective",
                       "all_reduce", "class", cls, "nodes", "1", "size", size, "bound", bounds[k],
                       "source", ref, OPS_END);
    }
    /* the sim backend's verdict is a prediction's: labelled so, it never alerts (expect's rules) */
    const char *pred = strcmp(src, "predicted") ? "" : "predicted";
    ops_metric(m, "topotune_check_ok", "gauge", "1 when the last check found nothing wrong",
               json_is_true(json_object_get(report, "ok")), "class", cls, "source", pred, OPS_END);
    ops_metric(m, "topotune_check_failures", "gauge", "failures the last check found",
               (double)json_array_size(json_object_get(report, "failures")), "class", cls, "source",
               pred, OPS_END);
    const json_t *p = json_object_get(report, "profile");
    if (p) {
        char version[32] = "unknown"; /* a profile gen wrote without one */
        if (json_is_integer(json_object_get(p, "version")))
            snprintf(version, sizeof(version), "v%" JSON_INTEGER_FORMAT,
                     json_integer_value(json_object_get(p, "version")));
        ops_metric(m, "topotune_profile_info", "gauge",
                   "the profile the last check measured against", 1, "class", cls, "version",
                   version, OPS_END);
    }
    ops_metric(m, "topotune_check_last_run_timestamp_seconds", "gauge",
               "when the last check ended, in seconds since the epoch",
               json_number_value(json_object_get(report, "time")), "class", cls, "source", pred,
               OPS_END);
}
