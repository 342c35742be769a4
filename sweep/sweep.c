/* SPDX-License-Identifier: MIT */
/*
 * The sweep: every configuration of a search space, each run a fresh
 * supervised process tree (NCCL reads most variables once per process),
 * classified and appended to DIR/results.jsonl before the next run starts.
 * Which configurations run, and how often, is the strategy's (sweep/strategy.c).
 */
#include "bench/bench.h"
#include "launch/launch.h"
#include "model/model.h"
#include "sweep/internal.h"
#include "sweep/sweep.h"
#include "util/buf.h"
#include "util/child.h"
#include "util/env.h"
#include "util/error.h"
#include "util/file.h"
#include "util/json.h"
#include "util/jsonl.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/size.h"
#include "util/text.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* CONFIG-rREP (final) or CONFIG-gRUNG, and -COLLECTIVE for a workload's run. */
static const char *run_name(const struct planned_run *r, const char *coll, char *buf, size_t len)
{
    snprintf(buf, len, "%s-%c%d%s%s", json_string_value(json_object_get(r->config, "id")),
             r->final ? 'r' : 'g', r->final ? r->rep : r->rung, coll ? "-" : "", coll ? coll : "");
    return buf;
}

static void add_arg(char ***argv, int *n, const char *a)
{
    *argv = util_xrealloc(*argv, (size_t)(*n + 2) * sizeof(char *));
    (*argv)[(*n)++] = util_xstrdup(a);
    (*argv)[*n] = NULL;
}

static void add_argf(char ***argv, int *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void add_argf(char ***argv, int *n, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    add_arg(argv, n, buf);
}

static void free_strv(char **v)
{
    for (char **p = v; p && *p; p++)
        free(*p);
    free(v);
}

/* The environment of a run: fixed, then the configuration, then NCCL's own account for nccl. */
static char **run_env(const struct sweep *sw, const struct planned_run *r, const char *name)
{
    char **env = NULL;
    int n = 0;
    const char *k;
    json_t *v;
    json_t *vars = sweep_space_env(&sw->space, r->config);
    json_object_foreach(vars, k, v)
        add_argf(&env, &n, "%s=%s", k, json_string_value(v));
    /* the hosts' shared subnet, unless the space or the user chose the interfaces */
    if (sw->btl_subnet && !json_object_get(vars, "OMPI_MCA_btl_tcp_if_include") &&
        !json_object_get(vars, "OMPI_MCA_btl_tcp_if_exclude") &&
        !getenv("OMPI_MCA_btl_tcp_if_include") && !getenv("OMPI_MCA_btl_tcp_if_exclude"))
        add_argf(&env, &n, "OMPI_MCA_btl_tcp_if_include=%s", sw->btl_subnet);
    json_decref(vars);
    json_t *fixed = json_object_get(sw->space.doc, "fixed");
    for (int i = 0; sw->tcp_env[i]; i++) /* mpirun's channel to its daemons, with --hosts */
        add_arg(&env, &n, sw->tcp_env[i]);
    if (strcmp(sw->backend, "nccl") == 0) {
        if (!json_object_get(fixed, "NCCL_DEBUG"))
            add_arg(&env, &n, "NCCL_DEBUG=INFO");
        if (!json_object_get(fixed, "NCCL_DEBUG_SUBSYS"))
            add_arg(&env, &n, "NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING");
        if (!json_object_get(fixed, "NCCL_DEBUG_FILE"))
            add_argf(&env, &n, "NCCL_DEBUG_FILE=%s/logs/%s.nccl.%%h.%%p.log", sw->dir, name);
    }
    if (!env)
        add_arg(&env, &n, "TOPOTUNE_SWEEP=1"); /* never an empty list */
    char marker[128];
    if (!sweep_run_marker(sw->dir, marker, sizeof(marker)))
        add_arg(&env, &n, marker);
    return env;
}

/*
 * The sizes a run measures: the space's, or for a workload's collective the sizes the workload
 * weights, doubling from the smallest to the first at or above the largest (sweep_workload_grid),
 * up to at least one 16-byte part per rank where the collective is cut in parts (nccl-tests'
 * sizes below measure nothing). Returns how many.
 */
static int run_sizes(const struct sweep *sw, const char *coll, size_t *lo, size_t *hi,
                     double *factor)
{
    *lo = sw->space.min_bytes, *hi = sw->space.max_bytes, *factor = sw->space.factor;
    if (coll) {
        sweep_workload_sizes(sw->workload, coll, lo, hi);
        *factor = 2;
        int parts = model_coll_parts(model_coll_parse(coll));
        size_t least = parts ? 16 * (size_t)(sw->ranks > 0 ? sw->ranks : 1) : 1;
        *hi = *hi < least ? least : *hi;
        sweep_workload_grid(*lo, hi, parts ? least : 4);
    }
    int n = 0;
    for (size_t s = *lo; s <= *hi && s != SIZE_MAX && n < SWEEP_MAX_SIZES;
         s = util_next_size(s, *factor, 0, *hi))
        n++;
    return n ? n : 1;
}

static char **run_argv(const struct sweep *sw, const struct planned_run *r, const char *coll,
                       char **env, const char *name)
{
    char **argv = NULL;
    int n = 0;
    add_arg(&argv, &n, sw->bench);
    add_argf(&argv, &n, "--backend=%s", sw->backend);
    const char *flags[] = {"-b", "-e", "-f", "-n", "-w", "-T", "-d", "-o"};
    char values[8][64];
    size_t lo, hi;
    double factor;
    run_sizes(sw, coll, &lo, &hi, &factor);
    snprintf(values[0], 64, "%zu", lo);
    snprintf(values[1], 64, "%zu", hi);
    snprintf(values[2], 64, "%.17g", factor); /* %g would round 1.0000001 to 1 */
    snprintf(values[3], 64, "%d", r->iters);
    snprintf(values[4], 64, "%d", sw->space.warmup);
    snprintf(values[5], 64, "%g", sw->timeout_s);
    snprintf(values[6], 64, "%s", sw->space.dtype ? sw->space.dtype : "float");
    snprintf(values[7], 64, "%s", sw->space.op ? sw->space.op : "sum");
    for (int i = 0; i < 8; i++) {
        add_arg(&argv, &n, flags[i]);
        add_arg(&argv, &n, values[i]);
    }
    add_argf(&argv, &n, "--json=%s/logs/%s.jsonl", sw->dir, name);
    if (coll)
        add_argf(&argv, &n, "--collective=%s", coll);
    if (strcmp(sw->backend, "sim") == 0) {
        add_argf(&argv, &n, "--topology=%s", sw->topology);
        add_argf(&argv, &n, "--nodes=%d", sw->nodes);
        if (sw->calibration)
            add_argf(&argv, &n, "--calibration=%s", sw->calibration);
        unsigned seed = sw->seed * 7919u + (unsigned)(r->rep * 104729 + r->rung * 1299709);
        for (const char *p = json_string_value(json_object_get(r->config, "id")); *p; p++)
            seed = seed * 31u + (unsigned char)*p;
        add_argf(&argv, &n, "--seed=%u", seed % 2147483647u);
    }
    /* a sim's hosts were only mapped: it predicts their class here, in one process */
    struct launch l = {.launcher = sw->launcher,
                       .np = sw->np,
                       .hosts = strcmp(sw->backend, "sim") ? sw->hosts : NULL,
                       .env = env};
    char **launched = launch_argv(&l, argv);
    free_strv(argv);
    return launched;
}

static const char *signal_name(int sig)
{
    static char buf[16];
    const char *abbrev = sigabbrev_np(sig);
    snprintf(buf, sizeof(buf), "SIG%s", abbrev ? abbrev : "?");
    return buf;
}

/* Up to max bytes from the end of the file at path, into out. */
static void read_end(const char *path, size_t max, struct util_buf *out)
{
    const char *why;
    int fd = util_file_open_input(path, 0, &why);
    struct stat st;
    if (fd < 0)
        return;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        off_t from = st.st_size > (off_t)max ? st.st_size - (off_t)max : 0;
        char buf[8192];
        ssize_t got;
        while (out->len < max && (got = pread(fd, buf, sizeof(buf), from)) > 0) {
            util_buf_add(out, buf, (size_t)got);
            from += got;
        }
    }
    close(fd);
}

/*
 * The last lines of the run's log, for the result (the whole log stays in
 * DIR/logs): at most 10 lines and 2000 bytes, cleaned, so what a child prints
 * (NUL, bytes that are not UTF-8, escape sequences) never makes a line that
 * JSON or a terminal takes differently.
 */
static json_t *log_tail(const char *path)
{
    struct util_buf b = UTIL_BUF_INIT, clean = UTIL_BUF_INIT;
    read_end(path, 8192, &b);
    const char *s = util_buf_str(&b);
    size_t len = b.len, start = util_text_tail(s, &len, 10);
    if (len - start > 2000)
        start = len - 2000;
    while (start < len && ((unsigned char)s[start] & 0xc0) == 0x80) /* not mid-character */
        start++;
    util_text_clean(&clean, s + start, len - start, 1);
    size_t from = clean.len > 2000 ? clean.len - 2000 : 0;
    while (from < clean.len && ((unsigned char)clean.data[from] & 0xc0) == 0x80)
        from++;
    json_t *t = json_stringn(util_buf_str(&clean) + from, clean.len - from);
    util_buf_release(&clean);
    util_buf_release(&b);
    return t ? t : json_string("");
}

/* A string of a child's event, cleaned to one line of at most max bytes; NULL if not a string. */
static json_t *child_text(json_t *v, size_t max)
{
    if (!json_is_string(v))
        return NULL;
    struct util_buf b = UTIL_BUF_INIT;
    util_text_clean(&b, json_string_value(v), json_string_length(v), 0);
    size_t n = b.len > max ? max : b.len;
    while (n < b.len && n && ((unsigned char)b.data[n] & 0xc0) == 0x80) /* not mid-character */
        n--;
    json_t *t = json_stringn(util_buf_str(&b), n);
    util_buf_release(&b);
    return t;
}

static int int_in(json_t *v, json_int_t min, json_int_t max)
{
    return json_is_integer(v) && json_integer_value(v) >= min && json_integer_value(v) <= max;
}

static int number_in(json_t *v, double min, double max)
{
    return json_is_number(v) && json_number_value(v) >= min && json_number_value(v) <= max;
}

/* NCCL's algorithm or protocol name ("RING", "LL128"), else null. */
static json_t *child_choice(json_t *v)
{
    const char *s = json_string_value(v);
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > 15 ||
        strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                  "0123456789_") != n)
        return json_null();
    return json_string(s);
}

/* A start event's hosts, nodes and ranks into result; 0 when they are not what the bench writes. */
static int take_start(json_t *e, json_t *result)
{
    json_t *hosts = json_object_get(e, "hosts"), *h, *clean;
    size_t i;
    if (!json_is_array(hosts) || json_array_size(hosts) > 1000000 ||
        !int_in(json_object_get(e, "nodes"), 1, SWEEP_MAX_NODES) ||
        !int_in(json_object_get(e, "ranks"), 1, SWEEP_MAX_RANKS))
        return 0;
    clean = json_array();
    json_array_foreach(hosts, i, h) {
        json_t *t = child_text(h, 255);
        json_array_append_new(clean, t ? t : json_string("?"));
    }
    json_object_set_new(result, "hosts", clean);
    json_object_set(result, "nodes", json_object_get(e, "nodes"));
    json_object_set(result, "ranks", json_object_get(e, "ranks"));
    return 1;
}

/* A size event as the result records it, or NULL when a field is not what the bench writes. */
static json_t *take_size(json_t *e)
{
    json_t *wrong = json_object_get(e, "wrong");
    if (!int_in(json_object_get(e, "size"), 0, (json_int_t)BENCH_MAX_BYTES) ||
        !int_in(json_object_get(e, "count"), 0, (json_int_t)BENCH_MAX_BYTES) ||
        !number_in(json_object_get(e, "time_us"), 0, SWEEP_MAX_TIME_US) ||
        !number_in(json_object_get(e, "algbw"), 0, SWEEP_MAX_BUSBW) ||
        !number_in(json_object_get(e, "busbw"), 0, SWEEP_MAX_BUSBW) ||
        !(json_is_null(wrong) || int_in(wrong, 0, INT64_MAX)))
        return NULL;
    json_t *s = json_object();
    static const char *keys[] = {"size", "count", "time_us", "algbw", "busbw", "wrong"};
    for (int k = 0; k < 6; k++)
        json_object_set(s, keys[k], json_object_get(e, keys[k]));
    json_object_set_new(s, "algo", child_choice(json_object_get(e, "algo")));
    json_object_set_new(s, "proto", child_choice(json_object_get(e, "proto")));
    return s;
}

/* A stage as the bench names one: init, warmup, check or size:N. */
static int valid_stage(const char *s)
{
    if (!s)
        return 0;
    if (!strcmp(s, "init") || !strcmp(s, "warmup") || !strcmp(s, "check"))
        return 1;
    size_t digits = strncmp(s, "size:", 5) ? 0 : strspn(s + 5, "0123456789");
    return digits && digits <= 16 && !s[5 + digits];
}

/* NCCL_ variables NCCL's log showed as applied, values cleaned; null when not an object. */
static json_t *take_effective_env(json_t *env)
{
    if (!json_is_object(env))
        return json_null();
    json_t *out = json_object(), *v;
    const char *k;
    json_object_foreach(env, k, v) {
        json_t *t = child_text(v, 255);
        if (t && !strncmp(k, "NCCL_", 5) && strlen(k) <= 128 && sweep_valid_name(k))
            json_object_set_new(out, k, t);
        else
            json_decref(t);
    }
    return out;
}

/* INVALID: a size event with a value no benchmark writes (a busbw of 10^12 GB/s, a size of
 * text, a size below the one before or above -e, a busbw at size 0, a size after the end
 * event): the run is an error, and the value is not recorded. WRONG: a size with wrong results,
 * which the bench follows with a nonzero exit (a run that exits 0 after one is INVALID). */
enum { EVENTS_STARTED = 1, EVENTS_ENDED = 2, EVENTS_INVALID = 4, EVENTS_WRONG = 8 };

/* A size event the bench could have written after those in sizes: the bench measures the sizes
 * in order, none above the -e it was given (max); two requested sizes that round to one part
 * size give that size twice, as nccl-tests prints them. A process it left behind, or a forged
 * line, writes otherwise. */
static int size_follows(const json_t *sizes, const json_t *sz, size_t max)
{
    json_int_t size = json_integer_value(json_object_get(sz, "size"));
    json_t *last = json_array_get(sizes, json_array_size(sizes) - 1);
    int moved = size > 0 || json_number_value(json_object_get(sz, "busbw")) == 0;
    return (size_t)size <= max && moved &&
           (!last || size >= json_integer_value(json_object_get(last, "size")));
}

/*
 * Reads the run's JSON events into the result: sizes, stage reached, hosts,
 * effective_env. The child wrote them: every field is checked against what the
 * bench writes (others are left out) and strings are cleaned, so the result is
 * a line the results loader and its schema accept. Returns EVENTS_* flags:
 * the start event came, the end event came, a size event was refused, a size was wrong.
 */
static int read_events(const char *path, size_t max, json_t *result, char *stage, size_t stagelen)
{
    struct util_buf b = UTIL_BUF_INIT;
    const char *why;
    util_file_read_regular(path, 64u << 20, &b, &why);
    json_t *sizes = json_array();
    int flags = 0;
    snprintf(stage, stagelen, "init");
    json_object_set_new(result, "effective_env", json_null()); /* until an end event says */
    /* by length: a NUL byte the child wrote must not hide the lines after it */
    for (size_t at = 0; at < b.len;) {
        const char *line = b.data + at, *nl = memchr(line, '\n', b.len - at);
        size_t len = nl ? (size_t)(nl - line) : b.len - at;
        at += len + 1;
        json_t *e = json_loadb(line, len, 0, NULL), *sz;
        const char *ev = json_string_value(json_object_get(e, "event"));
        const char *named = json_string_value(json_object_get(e, "stage"));
        if (ev && (flags & EVENTS_ENDED)) { /* the bench writes nothing after its end event */
            flags |= !strcmp(ev, "size") ? EVENTS_INVALID : 0;
        } else if (ev && !strcmp(ev, "start") && !(flags & EVENTS_STARTED) &&
                   take_start(e, result)) {
            flags |= EVENTS_STARTED;
            snprintf(stage, stagelen, "warmup");
        } else if (ev && !strcmp(ev, "size") &&
                   (!(sz = take_size(e)) || !size_follows(sizes, sz, max))) {
            json_decref(sz);
            flags |= EVENTS_INVALID;
        } else if (ev && !strcmp(ev, "size")) {
            snprintf(stage, stagelen, "after size:%lld",
                     (long long)json_integer_value(json_object_get(sz, "size")));
            flags |= json_integer_value(json_object_get(sz, "wrong")) > 0 ? EVENTS_WRONG : 0;
            json_array_append_new(sizes, sz);
        } else if (ev && !strcmp(ev, "error") && valid_stage(named)) {
            snprintf(stage, stagelen, "%s", named);
        } else if (ev && !strcmp(ev, "end")) {
            flags |= EVENTS_ENDED;
            json_object_set_new(result, "effective_env",
                                take_effective_env(json_object_get(e, "effective_env")));
        }
        json_decref(e);
    }
    json_object_set_new(result, "sizes", sizes);
    util_buf_release(&b);
    return flags;
}

static void classify(const struct util_child *ch, int events, const char *stage, json_t *result)
{
    const char *outcome;
    int started = events & EVENTS_STARTED;
    if (ch->exec_errno)
        outcome = "launch-failed";
    else if (ch->timed_out)
        outcome = "timeout";
    else if (ch->signal)
        outcome = "crash";
    else if (ch->exit_code == 0 && !started) {
        /* the launcher exits 0 without the benchmark's events: rank 0 wrote them on a host
         * whose filesystem is not this one (--out must be shared by every host) */
        outcome = "error";
        stage = "results-missing";
    } else if (ch->exit_code == 0 && (events & (EVENTS_INVALID | EVENTS_WRONG))) {
        outcome = "error"; /* what gen would refuse as damage is never an ok run */
        stage = "results-invalid";
    } else if (ch->exit_code == 0 && !(events & EVENTS_ENDED)) {
        /* its events stop before the end the benchmark writes last: the sizes it has are some
         * of those asked for, and a mean over them is no configuration's */
        outcome = "error";
        stage = "results-incomplete";
    } else if (ch->exit_code == 0)
        outcome = "ok";
    else if (ch->exit_code == BENCH_EXIT_TIMEOUT)
        outcome = "timeout";
    else if (ch->exit_code == BENCH_EXIT_WRONG)
        outcome = "wrong";
    else if (ch->exit_code > 128 && ch->exit_code < 160) /* a launcher reporting a rank's signal */
        outcome = "crash";
    else if (!started && !(events & EVENTS_ENDED) && ch->exit_code != BENCH_EXIT_CUDA &&
             ch->exit_code != BENCH_EXIT_COMM && ch->exit_code != BENCH_EXIT_USAGE)
        outcome = "launch-failed"; /* the launcher ran but never started the benchmark */
    else
        outcome = "error";
    json_object_set_new(result, "outcome", json_string(outcome));
    json_object_set_new(result, "stage", strcmp(outcome, "ok") ? json_string(stage) : json_null());
    int sig = ch->signal ? ch->signal
                         : (ch->exit_code > 128 && ch->exit_code < 160 ? ch->exit_code - 128 : 0);
    json_object_set_new(result, "signal",
                        !strcmp(outcome, "crash") && sig ? json_string(signal_name(sig))
                                                         : json_null());
    json_object_set_new(result, "exit_code",
                        ch->exec_errno || ch->exit_code < 0 ? json_null()
                                                            : json_integer(ch->exit_code));
}

/* Requested NCCL variables NCCL's log does not show as applied (nccl backend only). */
static void flag_not_applied(json_t *result, json_t *env)
{
    json_t *eff = json_object_get(result, "effective_env"), *missing = json_array();
    const char *k;
    json_t *v;
    if (json_is_object(eff))
        json_object_foreach(env, k, v)
            if (!strncmp(k, "NCCL_", 5) && !json_object_get(eff, k))
                json_array_append_new(missing, json_string(k));
    json_object_set_new(result, "not_applied", missing);
}

double sweep_objective(const json_t *result, size_t min, size_t max)
{
    json_t *own = json_object_get(result, "objective"); /* a workload view's */
    if (json_is_number(own))
        return json_number_value(own);
    double sum = 0;
    int n = 0;
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(result, "sizes"), i, s) {
        json_int_t size = json_integer_value(json_object_get(s, "size"));
        if ((size_t)size >= min && (size_t)size <= max) {
            sum += json_number_value(json_object_get(s, "busbw"));
            n++;
        }
    }
    return n ? sum / n : 0;
}

int sweep_run_marker(const char *dir, char *out, size_t len)
{
    struct stat st;
    if (stat(dir, &st))
        return UTIL_EIO;
    snprintf(out, len, "TOPOTUNE_SWEEP_RUN=%llu:%llu", (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino);
    return 0;
}

/*
 * DIR/sweep.pid: this sweep's pid and the process group of its run in progress, so a later
 * sweep of the directory can end what an earlier one left (cmd-sweep: --resume).
 */
static void record_group(const struct sweep *sw, pid_t pgid)
{
    char path[1100], line[64];
    snprintf(path, sizeof(path), "%s/sweep.pid", sw->dir);
    int len = snprintf(line, sizeof(line), "%d %d\n", (int)getpid(), (int)pgid);
    if (util_file_write_atomic(path, line, (size_t)len))
        util_warning("cannot write '%s': a sweep that resumes this one cannot check for its runs",
                     path);
}

/*
 * NCCL opens its NCCL_DEBUG_FILE (DIR/logs/NAME.nccl.HOST.PID.log) with fopen, following links:
 * whatever lies at those names from an earlier sweep, or was planted there in a reused --out, is
 * unlinked before the run (a link itself, never what it points at), so NCCL creates fresh files.
 */
static void clear_nccl_logs(const char *dir, const char *name)
{
    char logs[1100], prefix[80];
    snprintf(logs, sizeof(logs), "%s/logs", dir);
    int plen = snprintf(prefix, sizeof(prefix), "%s.nccl.", name);
    DIR *d = opendir(logs);
    for (struct dirent *e; d && (e = readdir(d));)
        if (!strncmp(e->d_name, prefix, (size_t)plen))
            unlinkat(dirfd(d), e->d_name, 0);
    if (d)
        closedir(d);
}

static json_t *run_one(struct sweep *sw, const struct planned_run *r, const char *coll)
{
    char name[96], logpath[1200], events[1200];
    run_name(r, coll, name, sizeof(name));
    snprintf(logpath, sizeof(logpath), "%s/logs/%s.log", sw->dir, name);
    snprintf(events, sizeof(events), "%s/logs/%s.jsonl", sw->dir, name);
    /* a resumed run starts clean; what cannot be removed (a directory planted there) would be
     * read as the run's events, or keep the benchmark from writing them: the folder's fault, not
     * the configuration's, as for a log that cannot be opened */
    if (unlink(events) && errno != ENOENT) {
        int err = errno;
        json_t *res = json_object();
        json_object_set_new(res, "capture_errno", json_integer(err));
        json_object_set_new(res, "capture_path", json_string(events));
        return res;
    }
    clear_nccl_logs(sw->dir, name);
    char **env = run_env(sw, r, name);
    char **argv = run_argv(sw, r, coll, env, name);
    size_t lo, hi;
    double factor;
    int nsizes = run_sizes(sw, coll, &lo, &hi, &factor); /* the deadline grows with them */
    struct util_child ch = {.argv = argv,
                            .env = env,
                            .log = logpath,
                            .grace_s = 3,
                            .timeout_s = sw->timeout_s * (1 + nsizes / 4.0)};
    if (getenv("TOPOTUNE_TRACE")) {
        struct util_buf t = UTIL_BUF_INIT;
        for (char **e = env; *e; e++)
            util_buf_addf(&t, "%s ", *e);
        for (char **a = argv; a && *a; a++)
            util_buf_addf(&t, "%s ", *a);
        fprintf(stderr, "topotune: trace: %s\n", util_buf_str(&t));
        util_buf_release(&t);
    }
    if (util_child_start(&ch) == 0) {
        record_group(sw, ch.pid);
        util_child_wait(&ch);
        /* the runs after it may find its GPUs held: the numbers or failures that follow are
         * suspect, said where they are made (a GPU in the driver's hang stays so) */
        if (ch.stuck || ch.left_behind)
            util_warning("run %s left processes SIGKILL had not ended (" UTIL_CHILD_LEFT_WHY
                         "): the runs after it may find its GPUs still held",
                         util_json_str(r->config, "id", "?"));
    }
    json_t *res = json_object();
    if (ch.capture_errno) { /* its log could not be opened: nothing ran, nothing to record */
        json_object_set_new(res, "capture_errno", json_integer(ch.capture_errno));
        launch_argv_free(argv); /* and the hostfile it names */
        free_strv(env);
        return res;
    }
    json_object_set(res, "config_id", json_object_get(r->config, "id"));
    json_object_set(res, "env", json_object_get(r->config, "env"));
    json_object_set_new(res, "rep", json_integer(r->rep));
    json_object_set_new(res, "rung", json_integer(r->rung));
    json_object_set_new(res, "final", json_boolean(r->final));
    json_object_set_new(res, "iters", json_integer(r->iters));
    if (coll)
        json_object_set_new(res, "collective", json_string(coll));
    char stage[64];
    int flags = read_events(events, hi, res, stage, sizeof(stage));
    classify(&ch, flags, stage, res);
    if (ch.exec_errno)
        json_object_set_new(res, "stderr_tail",
                            json_sprintf("cannot run '%s': %s", argv ? argv[0] : "(no launch line)",
                                         strerror(ch.exec_errno)));
    else
        json_object_set_new(res, "stderr_tail", log_tail(logpath));
    if (strcmp(sw->backend, "nccl") == 0)
        flag_not_applied(res, json_object_get(r->config, "env"));
    json_object_set_new(res, "class", json_string(sw->class_id));
    json_object_set_new(res, "wall_s", json_real(ch.wall_s));
    json_object_set_new(res, "deadline_s", json_real(ch.timeout_s));
    json_object_set_new(res, "log", json_sprintf("logs/%s.log", name));
    json_object_set_new(res, "predicted", json_boolean(strcmp(sw->backend, "sim") == 0));
    launch_argv_free(argv); /* and the hostfile it names */
    free_strv(env);
    return res;
}

char *sweep_bench_program(void)
{
    return util_sibling_program("topotune-bench", "TOPOTUNE_BENCH_PROGRAM");
}

/* the progress line's best so far: a run of this sweep or one a resumed sweep reuses */
static double note_best(struct sweep *sw, const json_t *res, const char *id)
{
    const char *outcome = json_string_value(json_object_get(res, "outcome"));
    double obj = sweep_objective(res, sw->space.obj_min, sw->space.obj_max);
    if (outcome && id && !strcmp(outcome, "ok") && obj > sw->best) {
        sw->best = obj;
        snprintf(sw->best_id, sizeof(sw->best_id), "%s", id);
    }
    return obj;
}

static void progress(struct sweep *sw, const struct planned_run *r, const json_t *res)
{
    const char *outcome = json_string_value(json_object_get(res, "outcome"));
    double obj = note_best(sw, res, json_string_value(json_object_get(r->config, "id")));
    sw->done++;
    sw->spent_s += json_real_value(json_object_get(res, "wall_s"));
    /* the defaults' probe for cures runs before the plan: its count and time left are unknown */
    char count[32], eta[32] = "?";
    if (sw->total >= sw->done) {
        snprintf(count, sizeof(count), "%d/%d", sw->done, sw->total);
        snprintf(eta, sizeof(eta), "%.0fs",
                 sw->ran ? sw->spent_s / sw->ran * (sw->total - sw->done) : 0);
    } else {
        snprintf(count, sizeof(count), "%d/?", sw->done);
    }
    struct util_buf env = UTIL_BUF_INIT;
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(r->config, "env"), k, v)
        util_buf_addf(&env, "%s%s=%s", env.len ? " " : "", k, json_string_value(v));
    /* the configuration that sets nothing: the library's own defaults (the sim models NCCL) */
    const char *what = env.len                           ? util_buf_str(&env)
                       : strcmp(sw->backend, "mpi") == 0 ? "(MPI defaults)"
                                                         : "(NCCL defaults)";
    const char *pred = strcmp(sw->backend, "sim") == 0 ? " predicted" : "";
    /* two decimals, or three significant digits below 0.1 (a mix of small calls: its effective
     * algbw read 0.00 on every line) */
    struct util_buf now = UTIL_BUF_INIT, best = UTIL_BUF_INIT;
    obj<0.1 && obj> 0 ? util_text_number(&now, obj, 3) : util_buf_addf(&now, "%.2f", obj);
    sw->best<0.1 && sw->best> 0 ? util_text_number(&best, sw->best, 3)
                                : util_buf_addf(&best, "%.2f", sw->best);
    if (util_log_level() >= UTIL_LOG_INFO)
        fprintf(stderr, "%s[%s] %s %s %s%d: %s %s GB/s%s | best %s GB/s%s (%s) | ETA %s%s",
                isatty(STDERR_FILENO) ? "\r\033[K" : "", count,
                json_string_value(json_object_get(r->config, "id")), what, r->final ? "r" : "rung ",
                r->final ? r->rep : r->rung, outcome, util_buf_str(&now), pred, util_buf_str(&best),
                pred, sw->best_id[0] ? sw->best_id : "-", eta, isatty(STDERR_FILENO) ? "" : "\n");
    util_buf_release(&now);
    util_buf_release(&best);
    util_buf_release(&env);
}

/*
 * 0 when DIR/logs takes a page of data now, else the errno of the write that failed (a full
 * disk, a quota, a read-only remount). A run that did not end ok is checked: its events or log
 * could have been lost to the disk, and a run the tool failed to record is no verdict on its
 * configuration.
 */
static int cannot_record(const char *dir)
{
    char path[1200], page[4096];
    snprintf(path, sizeof(path), "%s/logs/.probe-%d", dir, (int)getpid());
    const char *why;
    int fd = util_file_open_output(path, UTIL_FILE_TRUNC, &why);
    if (fd < 0)
        return errno;
    memset(page, 0, sizeof(page));
    ssize_t n = write(fd, page, sizeof(page));
    int err = n < 0 ? errno : n != (ssize_t)sizeof(page) ? ENOSPC : fsync(fd) ? errno : 0;
    close(fd);
    unlink(path);
    return err;
}

/* A line reused is this sweep's: its class, a collective exactly when a workload is swept, and no
 * run twice (gen refuses a directory that has one; seen holds the runs of the lines before).
 * UTIL_EINVAL after an error naming it. */
static int resumed_line_check(const struct sweep *sw, const json_t *r, json_t *seen,
                              const char *path, size_t line)
{
    const char *cls = json_string_value(json_object_get(r, "class"));
    const char *coll = json_string_value(json_object_get(r, "collective"));
    char key[600], run[512];
    sweep_run_key(r, run, sizeof(run));
    snprintf(key, sizeof(key), "%s/%s", run, coll ? coll : "");
    if (cls && strcmp(cls, sw->class_id)) {
        struct util_buf shown = UTIL_BUF_INIT;
        util_error("%s: line %zu: class '%s' is not this sweep's (%s): the file was edited or "
                   "is another sweep's; give another --out",
                   path, line, util_text_shown(&shown, cls), sw->class_id);
        util_buf_release(&shown);
        return UTIL_EINVAL;
    }
    if (!sw->workload != !coll)
        return util_error("%s: line %zu: %s, and this sweep %s: the file was edited or is another "
                          "sweep's; give another --out",
                          path, line, coll ? "a workload's line (a collective)" : "no collective",
                          sw->workload ? "runs a workload" : "runs no workload"),
               UTIL_EINVAL;
    if (json_object_get(seen, key))
        return util_error("%s: line %zu: the same run as an earlier line (configuration, "
                          "repetition, rung%s): gen refuses a directory that has one; give "
                          "another --out",
                          path, line, coll ? ", collective" : ""),
               UTIL_EINVAL;
    json_object_set_new(seen, key, json_true());
    return 0;
}

/* The line on file for r (and coll: NULL, none), or NULL. */
static json_t *on_file(const struct sweep *sw, const struct planned_run *r, const char *coll)
{
    size_t i;
    json_t *x;
    const char *id = json_string_value(json_object_get(r->config, "id"));
    json_array_foreach(sw->results, i, x) {
        const char *c = json_string_value(json_object_get(x, "collective"));
        int same_coll = c && coll ? !strcmp(c, coll) : !c && !coll;
        if (!strcmp(json_string_value(json_object_get(x, "config_id")), id) &&
            json_integer_value(json_object_get(x, "rep")) == r->rep &&
            json_integer_value(json_object_get(x, "rung")) == r->rung && same_coll)
            return x;
    }
    return NULL;
}

/* Runs r (for coll) unless its line is on file, and appends its result. *ran: it ran. */
static int measure_one(struct sweep *sw, const struct planned_run *r, const char *coll,
                       json_t **result, int *ran)
{
    *ran = 0;
    if ((*result = on_file(sw, r, coll))) {
        /* gen takes final lines only: a line this sweep plans final that is not (or the other
         * way) was taken for done here and ignored there */
        if (json_is_true(json_object_get(*result, "final")) == !!r->final)
            return 0;
        char name[96];
        util_error("%s/results.jsonl: run %s is on file with \"final\": %s, and this sweep plans "
                   "it %s: the file was edited or is another strategy's; give another --out",
                   sw->dir, run_name(r, coll, name, sizeof(name)), r->final ? "false" : "true",
                   r->final ? "final" : "not final");
        *result = NULL;
        return UTIL_EINVAL;
    }
    if (util_child_interrupted())
        return UTIL_EINTR;
    json_t *res = run_one(sw, r, coll);
    if (util_child_interrupted()) { /* cut by the signal: no verdict on the configuration */
        run_name(r, coll, sw->cut, sizeof(sw->cut));
        json_decref(res);
        return UTIL_EINTR;
    }
    if (json_object_get(res, "capture_errno")) { /* the folder, not the configuration */
        char name[96];
        const char *at = json_string_value(json_object_get(res, "capture_path"));
        char logs[1100];
        snprintf(logs, sizeof(logs), "%s/logs", sw->dir);
        util_error("run %s: cannot write its %s '%s': %s: the run is not recorded; remove what "
                   "is in the way and run 'topotune sweep --resume'",
                   run_name(r, coll, name, sizeof(name)), at ? "events" : "log in", at ? at : logs,
                   strerror((int)json_integer_value(json_object_get(res, "capture_errno"))));
        json_decref(res);
        return UTIL_EIO;
    }
    sw->ran++;
    char path[1100], name[96];
    int err;
    if (strcmp(json_string_value(json_object_get(res, "outcome")), "ok") &&
        (err = cannot_record(sw->dir))) {
        /* its events or log may have been lost to this, not to the configuration */
        util_error("run %s: cannot write into '%s/logs': %s: the run is not recorded, and "
                   "'topotune sweep --resume' runs it again once there is room",
                   run_name(r, coll, name, sizeof(name)), sw->dir, strerror(err));
        json_decref(res);
        return UTIL_EIO;
    }
    snprintf(path, sizeof(path), "%s/results.jsonl", sw->dir);
    int rc = util_jsonl_append(path, res);
    if (rc) {
        json_decref(res);
        return rc;
    }
    json_array_append_new(sw->results, res);
    *result = res;
    *ran = 1;
    return 0;
}

/* Runs r unless a finished run of it is on file; appends its result (a workload's: a line per
 * collective, and *result its view). 0, UTIL_EIO, or UTIL_EINTR when a signal came
 * (util_child_supervise): the run it cut is not recorded. */
int sweep_measure(struct sweep *sw, const struct planned_run *r, json_t **result)
{
    int ran = 0, any = 0, rc = 0;
    if (!sw->workload) {
        rc = measure_one(sw, r, NULL, result, &ran);
        if (!rc && ran)
            progress(sw, r, *result);
        else if (!rc)
            sw->done++;
        return rc;
    }
    *result = NULL;
    json_t *colls = sweep_workload_collectives(sw->workload), *parts = json_object(), *c;
    size_t i;
    json_array_foreach(colls, i, c) {
        json_t *line;
        if ((rc = measure_one(sw, r, json_string_value(c), &line, &ran)))
            break;
        any |= ran;
        json_object_set(parts, json_string_value(c), line);
    }
    if (!rc) {
        json_t *view = sweep_workload_view(sw->workload, parts);
        if (!sw->views)
            sw->views = json_array();
        json_array_append_new(sw->views, view);
        *result = view;
        if (!sw->ref_view && !json_object_size(json_object_get(r->config, "env")) &&
            !strcmp(json_string_value(json_object_get(view, "outcome")), "ok"))
            sw->ref_view = view;
        if (any)
            progress(sw, r, view);
        else
            sw->done++;
    }
    json_decref(parts);
    json_decref(colls);
    return rc;
}

/*
 * The known cures of defaults that fail before the first collective, in the order the field
 * applies them (NCCL's own troubleshooting): peer-to-peer over a path where it is broken hangs
 * at init (P2P off), then the SHM transport outgrows a container's /dev/shm (SHM off).
 */
static const char *const cure_steps[][2] = {{"NCCL_P2P_DISABLE", "1"}, {"NCCL_SHM_DISABLE", "1"}};

/* NCCL's defaults failed before the first collective. A run that could not be launched at all
 * (launch-failed: the program or the launcher did not start) says nothing of NCCL: no cure. */
static int failed_early(const json_t *res)
{
    const char *outcome = json_string_value(json_object_get(res, "outcome"));
    const char *stage = json_string_value(json_object_get(res, "stage"));
    return strcmp(outcome, "ok") && strcmp(outcome, "launch-failed") &&
           (!strcmp(outcome, "crash") ||
            (stage &&
             (!strcmp(stage, "init") || !strncmp(stage, "size:", 5) || !strcmp(stage, "warmup"))));
}

static json_t *config_of(json_t *env)
{
    char id[16];
    sweep_config_id(env, id);
    return json_pack("{s:s,s:O}", "id", id, "env", env);
}

/* Every configuration with the cure's variables added (its own values win), deduplicated; the
 * baseline stays first and unchanged, the cure alone second. */
static json_t *with_cure(const json_t *configs, json_t *cure)
{
    json_t *out = json_array(), *seen = json_object(), *c;
    size_t i;
    json_array_foreach(configs, i, c) {
        json_t *env = json_object_get(c, "env");
        json_t *merged = i == 0 ? json_deep_copy(env) : json_deep_copy(cure);
        if (i > 0)
            json_object_update(merged, env);
        json_t *cc = config_of(merged);
        const char *id = json_string_value(json_object_get(cc, "id"));
        if (!json_object_get(seen, id)) {
            json_object_set_new(seen, id, json_true());
            json_array_append(out, cc);
        }
        json_decref(cc);
        json_decref(merged);
        if (i == 0) { /* the cure alone: the defaults plus what they needed */
            json_t *alone = config_of(cure);
            id = json_string_value(json_object_get(alone, "id"));
            if (!json_object_get(seen, id)) {
                json_object_set_new(seen, id, json_true());
                json_array_append(out, alone);
            }
            json_decref(alone);
        }
    }
    json_decref(seen);
    return out;
}

/* sweep.json gets the cures and the configurations as they will run. */
static int record_cures(struct sweep *sw)
{
    char path[1100];
    snprintf(path, sizeof(path), "%s/sweep.json", sw->dir);
    json_t *meta = util_json_load_regular(path);
    if (!meta)
        return UTIL_EIO;
    json_object_set(meta, "configs", sw->configs);
    json_object_set(meta, "cures", sw->cures);
    int rc = util_json_write(path, meta);
    json_decref(meta);
    return rc;
}

/*
 * When NCCL's defaults fail before the first collective completes, measure the known cures
 * one after the other (each adding to the previous) until one runs ok, then carry on with
 * every configuration plus that cure: a sweep on a box where the defaults hang still ends with
 * a working profile, and the profile says which variables the hardware needs (gen marks them
 * system). Resumes reuse the recorded probe runs. 0, UTIL_EINTR (cut by a signal) or an error code.
 */
static int find_cures(struct sweep *sw)
{
    json_t *base = json_array_get(sw->configs, 0), *res;
    if (sw->no_cures || !strcmp(sw->backend, "mpi") || !base ||
        json_object_size(json_object_get(base, "env")))
        return 0;
    struct planned_run r = {base, 0, 0, sw->space.iters, 1};
    int rc = sweep_measure(sw, &r, &res);
    if (rc || !failed_early(res))
        return rc;
    json_t *cure = json_object();
    struct util_buf why = UTIL_BUF_INIT;
    util_buf_addf(&why, "NCCL's defaults: %s at %s",
                  json_string_value(json_object_get(res, "outcome")),
                  json_string_value(json_object_get(res, "stage"))
                      ? json_string_value(json_object_get(res, "stage"))
                      : "?");
    for (size_t k = 0; !rc && k < sizeof(cure_steps) / sizeof(cure_steps[0]); k++) {
        json_object_set_new(cure, cure_steps[k][0], json_string(cure_steps[k][1]));
        json_t *probe = config_of(cure);
        struct planned_run p = {probe, 0, 0, sw->space.iters, 1};
        rc = sweep_measure(sw, &p, &res);
        int ok = !rc && !strcmp(json_string_value(json_object_get(res, "outcome")), "ok");
        if (!rc)
            util_buf_addf(&why, "; with %s=%s: %s", cure_steps[k][0], cure_steps[k][1],
                          json_string_value(json_object_get(res, "outcome")));
        json_decref(probe);
        if (!ok)
            continue;
        json_t *configs = with_cure(sw->configs, cure);
        json_decref(sw->configs);
        sw->configs = configs;
        json_decref(sw->cures);
        sw->cures = json_pack("[{s:O,s:s}]", "vars", cure, "evidence", util_buf_str(&why));
        util_info("the defaults failed (%s): every configuration now runs with the cure, as system "
                  "variables",
                  util_buf_str(&why));
        rc = record_cures(sw);
        break;
    }
    if (!rc && !sw->cures)
        util_warning("the defaults failed and no known cure helped (%s): see DIR/logs",
                     util_buf_str(&why));
    util_buf_release(&why);
    json_decref(cure);
    return rc;
}

int sweep_configs_check(const struct sweep_space *s, const json_t *configs)
{
    size_t i;
    json_t *c;
    json_array_foreach(configs, i, c) {
        json_t *env = sweep_space_env(s, c), *v;
        const char *k, *why = NULL;
        json_object_foreach(env, k, v) {
            why = util_env_refused(k);
            if (!why && !(json_is_string(v) && sweep_valid_value(json_string_value(v))))
                why = "its value is not of [A-Za-z0-9_.,:=^/+-]*";
            if (why) {
                struct util_buf name = UTIL_BUF_INIT;
                util_text_clean(&name, k, strnlen(k, 128), 0);
                util_error("configuration %s: cannot set %s: %s",
                           json_string_value(json_object_get(c, "id")), util_buf_str(&name), why);
                util_buf_release(&name);
                break;
            }
        }
        json_decref(env);
        if (why)
            return UTIL_EINVAL;
    }
    return 0;
}

int sweep_run(struct sweep *sw)
{
    if (sweep_configs_check(&sw->space, sw->configs))
        return UTIL_EINVAL;
    util_child_supervise();
    char path[1100];
    snprintf(path, sizeof(path), "%s/results.jsonl", sw->dir);
    sw->results = util_jsonl_load(path, UTIL_JSONL_REPAIR);
    struct stat st;
    if (!sw->results) /* a link, FIFO or directory planted there is bad input, not a failure */
        return lstat(path, &st) == 0 && !S_ISREG(st.st_mode) ? UTIL_EINVAL : UTIL_EIO;
    /* every line reused is checked as gen checks it, and as this sweep's: an edited one stops
     * the resume here (a line it took for done that gen ignores or refuses chose otherwise) */
    size_t i;
    json_t *r, *seen = json_object();
    json_array_foreach(sw->results, i, r)
        if (sweep_result_check(r, path, i + 1) || resumed_line_check(sw, r, seen, path, i + 1)) {
            json_decref(seen);
            return UTIL_EINVAL;
        }
    json_decref(seen);
    /* a workload's lines are one collective each: its runs are their views, with the mix's
     * objective, as progress() sees them */
    json_t *reused =
        sw->workload ? sweep_workload_views(sw->workload, sw->results) : json_incref(sw->results);
    json_array_foreach(reused, i, r)
        note_best(sw, r, json_string_value(json_object_get(r, "config_id")));
    json_decref(reused);
    if (json_array_size(sw->results))
        util_info("resuming: %zu runs already in '%s' are not measured again",
                  json_array_size(sw->results), path);
    int rc = find_cures(sw);
    if (!rc)
        rc = !strcmp(sw->strategy, "halving")   ? sweep_run_halving(sw)
             : !strcmp(sw->strategy, "descent") ? sweep_run_descent(sw)
                                                : sweep_run_grid(sw);
    if (isatty(STDERR_FILENO) && util_log_level() >= UTIL_LOG_INFO)
        fputc('\n', stderr);
    return rc;
}
