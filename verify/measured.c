/* SPDX-License-Identifier: MIT */
/*
 * The measured comparison (verify/verify.h): each configuration run by topotune-bench with the
 * nccl backend under a launcher, in an environment cleared of the shell's NCCL_*, the third with
 * NCCL_TUNER_PLUGIN naming the installed plugin and TOPOTUNE_TUNER_TABLE the table; this
 * verify's NCCL logs (a nonce in their names) say whether it loaded and which other tuner ran.
 */
#include "gen/gen.h"
#include "launch/launch.h"
#include "model/model.h"
#include "sweep/sweep.h"
#include "tuner/tuner.h"
#include "util/buf.h"
#include "util/child.h"
#include "util/error.h"
#include "util/file.h"
#include "util/json.h"
#include "util/jsonl.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/text.h"
#include "verify/internal.h"
#include "verify/verify.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZES 64
static const char *const config_name[3] = {"reference", "env-only", "env+table"};
static const char *const config_file[3] = {"reference", "env-only", "env-table"};

struct measured {
    int nsizes;
    size_t size[MAX_SIZES];
    double sum[3][MAX_SIZES];
    int runs[3][MAX_SIZES];
    char pair[MAX_SIZES][40]; /* env+table: NCCL's algorithm/protocol, from its log */
    int plugin_loaded;
    char other[3][64]; /* per configuration: the other tuner NCCL's log names, "" none */
    char chained[64];  /* env+table: the tuner our plugin passed the rest to, "" none */
};

static int size_index(struct measured *m, size_t size)
{
    for (int i = 0; i < m->nsizes; i++)
        if (m->size[i] == size)
            return i;
    if (m->nsizes == MAX_SIZES)
        return -1;
    m->size[m->nsizes] = size;
    return m->nsizes++;
}

/* Configuration which's environment: NCCL's log (the same in all three), the reference's
 * system variables (all three), the profile's other variables (not the reference), the plugin
 * and its table (env+table). The shell's NCCL_* were cleared before: nothing else reaches them. */
static char **config_env(const json_t *vars, const json_t *ref, int which, const char *plugin,
                         const char *table, const char *nccl_log)
{
    char **env = util_xcalloc(json_object_size(vars) + 8, sizeof(char *));
    int n = 0;
    env[n++] = util_xstrdup("NCCL_DEBUG=INFO");
    env[n++] = util_xstrdup("NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING");
    struct util_buf f = UTIL_BUF_INIT;
    util_buf_addf(&f, "NCCL_DEBUG_FILE=%s.%%h.%%p", nccl_log);
    env[n++] = util_buf_detach(&f);
    const char *k;
    json_t *v;
    struct util_buf b = UTIL_BUF_INIT;
    json_object_foreach((json_t *)vars, k, v)
        if (which > 0 || json_object_get(ref, k)) {
            util_buf_addf(&b, "%s=%s", k, json_string_value(v));
            env[n++] = util_buf_detach(&b);
        }
    if (which == 2) {
        util_buf_addf(&b, "NCCL_TUNER_PLUGIN=%s", plugin);
        env[n++] = util_buf_detach(&b);
        util_buf_addf(&b, "TOPOTUNE_TUNER_TABLE=%s", table);
        env[n++] = util_buf_detach(&b);
    }
    return env;
}

static void free_env(char **env)
{
    for (char **e = env; e && *e; e++)
        free(*e);
    free(env);
}

/* Copies the name that follows `marker` in `at` (up to a space, quote or parenthesis) into
 * out, cleaned of anything unprintable. */
static void name_after(const char *at, const char *marker, char *out, size_t len)
{
    const char *s = strstr(at, marker);
    size_t n = 0;
    if (!s)
        return;
    for (s += strlen(marker); *s && !strchr(" '\"()\n\r;", *s) && n + 1 < len; s++)
        out[n++] = (*s > 0x20 && *s < 0x7f) ? *s : '?';
    out[n] = '\0';
}

/*
 * What NCCL's log of one run (its files LOG.nccl.HOST.PID, one per process, this verify's
 * nonce in LOG) says: whether the plugin loaded the table with K > 0 rows for the job ("topotune
 * tuner: ... loaded '<table>': R rows, K for ..."), the tuner it passed the rest to ("elsewhere
 * tuner NAME"), and any other tuner NCCL itself loaded ("TUNER/Plugin: Using ...").
 */
static int read_nccl_log(const char *log, struct measured *m, int which)
{
    /* the files by name in log's folder: a pattern (glob) would read a '[' or '*' in --out as
     * its own, and find none */
    const char *slash = strrchr(log, '/');
    char dir[4600], prefix[4600];
    snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - log) : 1, slash ? log : ".");
    snprintf(prefix, sizeof(prefix), "%s.nccl.", slash ? slash + 1 : log);
    DIR *d = opendir(dir[0] ? dir : "/");
    int found = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (strncmp(e->d_name, prefix, strlen(prefix)))
            continue;
        char path[4900];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        struct util_buf text = UTIL_BUF_INIT;
        const char *why;
        util_file_read_regular(path, 64 << 20, &text, &why);
        for (const char *line = text.data; line && *line;) {
            const char *end = strchr(line, '\n');
            size_t len = end ? (size_t)(end - line) : strlen(line);
            char one[1024], name[64] = "";
            snprintf(one, sizeof(one), "%.*s", (int)(len < 1023 ? len : 1023), line);
            const char *at = strstr(one, "topotune tuner: ");
            long kept = 0;
            const char *rows = at ? strstr(at, " rows, ") : NULL;
            if (rows && strstr(at, "loaded '") && strstr(at, "loaded '") < rows &&
                sscanf(rows, " rows, %ld for", &kept) == 1) {
                found |= kept > 0;
                name_after(at, "elsewhere tuner ", m->chained, sizeof(m->chained));
            }
            if (strstr(one, "TUNER/Plugin: Using tuner plugin "))
                name_after(one, "TUNER/Plugin: Using tuner plugin ", name, sizeof(name));
            else if (strstr(one, "TUNER/Plugin: Using "))
                name_after(one, "TUNER/Plugin: Using ", name, sizeof(name));
            /* "Using internal tuner plugin.": NCCL's own model, what no plugin leaves */
            if (name[0] && strcmp(name, TUNER_PLUGIN_NAME) && strcmp(name, "internal"))
                snprintf(m->other[which], sizeof(m->other[which]), "%s", name);
            line = end ? end + 1 : NULL;
        }
        util_buf_release(&text);
    }
    if (d)
        closedir(d);
    return found;
}

/* One run of topotune-bench: its size events into m. 0, or UTIL_EENV (UTIL_EINVAL: no launch
 * line) after an error naming its log. */
static int measure_one(const struct verify_opts *o, const char *bench, const char *dir,
                       const char *nonce, int which, int rep, char **env, struct measured *m)
{
    char json[4400], log[4400], nlog[4500], b[32], e[32], t[32], jarg[4500], carg[64];
    snprintf(json, sizeof(json), "%s/%s-r%d.jsonl", dir, config_file[which], rep);
    snprintf(log, sizeof(log), "%s/%s-r%d.log", dir, config_file[which], rep);
    snprintf(nlog, sizeof(nlog), "%s/%s-r%d.%s.log", dir, config_file[which], rep, nonce);
    if (unlink(json) && errno != ENOENT) /* an earlier verify's events are not this run's */
        return util_error("cannot remove '%s': %s", json, strerror(errno)), UTIL_EENV;
    snprintf(b, sizeof(b), "%zu", o->min_bytes);
    snprintf(e, sizeof(e), "%zu", o->max_bytes);
    snprintf(t, sizeof(t), "%g", o->timeout_s);
    snprintf(jarg, sizeof(jarg), "--json=%s", json);
    snprintf(carg, sizeof(carg), "--collective=%s", model_coll_name(o->coll));
    char *program[] = {(char *)bench, "--backend", "nccl", "-b", b,   "-e", e, "-f", "4",  "-n",
                       "20",          "-w",        "5",    "-c", "1", "-T", t, carg, jarg, NULL};
    struct launch l = {o->launcher, o->np, o->hosts, env};
    char **argv = launch_argv(&l, program);
    if (!argv)
        return util_error("cannot build the %s launch of %d ranks", o->launcher, o->np),
               UTIL_EINVAL;
    struct util_child ch = {
        .argv = argv, .env = env, .log = log, .timeout_s = o->timeout_s * 20 + 60, .grace_s = 2};
    util_info("%s, run %d of %d", config_name[which], rep + 1, o->repeat);
    util_child_run(&ch);
    launch_argv_free(argv);
    json_t *events = util_jsonl_load(json, UTIL_JSONL_READ), *ev;
    size_t i;
    int ok = 0;
    json_array_foreach(events, i, ev) {
        const char *kind = json_string_value(json_object_get(ev, "event"));
        json_t *size = json_object_get(ev, "size"), *busbw = json_object_get(ev, "busbw");
        if (kind && !strcmp(kind, "end"))
            ok = !strcmp(util_json_str(ev, "outcome", ""), "ok");
        if (!kind || strcmp(kind, "size") || !json_is_integer(size) || !json_is_number(busbw))
            continue;
        int k = size_index(m, (size_t)json_integer_value(size));
        if (k < 0)
            continue;
        m->sum[which][k] += json_number_value(busbw);
        m->runs[which][k]++;
        if (which == 2) { /* the child's words: cleaned before a table shows them */
            struct util_buf a = UTIL_BUF_INIT, p = UTIL_BUF_INIT;
            snprintf(m->pair[k], sizeof(m->pair[k]), "%s/%s",
                     util_text_shown(&a, util_json_str(ev, "algo", "?")),
                     util_text_shown(&p, util_json_str(ev, "proto", "?")));
            util_buf_release(&a);
            util_buf_release(&p);
        }
    }
    json_decref(events);
    if (!ok || ch.exit_code != 0)
        return util_error("the %s run %s (exit %d): see '%s'", config_name[which],
                          ch.timed_out ? "passed its deadline" : "failed", ch.exit_code, log),
               UTIL_EENV;
    /* only this verify's logs (its nonce in their names) prove anything */
    int loaded = read_nccl_log(nlog, m, which);
    if (which == 2)
        m->plugin_loaded += loaded;
    return 0;
}

static void print_measured(const struct verify_opts *o, const struct measured *m, json_t *rows)
{
    if (!rows)
        printf("#            %12s  %13s  %13s  %13s  %-15s  %16s  %16s\n", "size (B)", "reference",
               "env-only", "env+table", "env+table pair", "gain vs env-only", "gain vs reference");
    for (int k = 0; k < m->nsizes; k++) {
        double bw[3];
        for (int c = 0; c < 3; c++)
            bw[c] = m->runs[c][k] ? m->sum[c][k] / m->runs[c][k] : 0;
        double g_env = verify_gain(bw[2], bw[1]), g_def = verify_gain(bw[2], bw[0]);
        if (rows)
            json_array_append_new(
                rows, json_pack("{s:I,s:f,s:f,s:f,s:s,s:f,s:f,s:i}", "size", (json_int_t)m->size[k],
                                "busbw_defaults", bw[0], "busbw_env", bw[1], "busbw_env_table",
                                bw[2], "pair", m->pair[k], "gain_vs_env_pct", g_env,
                                "gain_vs_defaults_pct", g_def, "runs", o->repeat));
        else
            printf("    measured %12zu  %8.2f GB/s  %8.2f GB/s  %8.2f GB/s  %-15s  measured "
                   "%+6.1f%%  measured %+6.1f%%\n",
                   m->size[k], bw[0], bw[1], bw[2], m->pair[k], g_env, g_def);
    }
}

/* Unsets every NCCL_* variable of this shell, and the plugin's own, so that each run's
 * environment is exactly what it claims; their names, for the header. */
static void clear_shell(struct util_buf *cleared)
{
    extern char **environ;
    for (int again = 1; again;) {
        again = 0;
        for (char **e = environ; e && *e; e++) {
            size_t n = strcspn(*e, "=");
            char name[256];
            if (n == 0 || n >= sizeof(name))
                continue;
            memcpy(name, *e, n);
            name[n] = '\0';
            if (strncmp(name, "NCCL_", 5) && strcmp(name, TUNER_ENV_TABLE) &&
                strcmp(name, TUNER_ENV_CLASS) && strcmp(name, TUNER_ENV_NEXT) &&
                strcmp(name, TUNER_ENV_DIGEST))
                continue;
            util_buf_addf(cleared, "%s%.64s", cleared->len ? ", " : "", name);
            unsetenv(name); /* environ changed: start over */
            again = 1;
            break;
        }
    }
}

/* The note on other tuners, once the runs are done: said, and in the JSON. */
static void say_tuners(const struct measured *m)
{
    for (int c = 0; c < 2; c++)
        if (m->other[c][0])
            util_warning("the %s runs had tuner %s (NCCL's log): %s", config_name[c], m->other[c],
                         m->chained[0] && !strcmp(m->chained, m->other[c])
                             ? "env+table passed every call without a row to it"
                             : "env+table did not pass calls to it: the difference is not the "
                               "table's alone");
    if (!m->other[0][0] && !m->other[1][0] && m->chained[0])
        util_warning("env+table passed calls without a row to tuner %s, which the other runs did "
                     "not load",
                     m->chained);
}

int verify_measured(const struct verify_opts *o, const json_t *profile, const char *table_arg)
{
    char plugin[4096], table[PATH_MAX], dir[4200], nonce[40];
    gen_tuner_plugin_path(plugin, sizeof(plugin));
    if (!plugin[0])
        return util_error(
                   "topotune's tuner plugin (libnccl-tuner-topotune.so) is not installed next "
                   "to this program: build topotune with CUDA and NCCL, or install its package"),
               UTIL_ENOTSUP;
    if (!realpath(table_arg, table))
        return util_error("cannot find the profile's table '%s': %s", table_arg, strerror(errno)),
               UTIL_ENOENT;
    /* the collective's rows, read as the plugin reads them: the header says what this run
     * can show (the plugin's "K for" line counts every collective's) */
    struct tuner_table parsed = TUNER_TABLE_INIT;
    char err[256];
    size_t own, others[TUNER_NUM_COLLS];
    if (tuner_table_load(&parsed, table, err, sizeof(err)))
        return util_error("cannot use the tuner table '%s': %s", table, err), UTIL_EINVAL;
    verify_count_rows(&parsed, o->coll, &own, others);
    size_t nrules = parsed.nrules;
    tuner_table_release(&parsed);
    json_t *vars = verify_variables(profile, 0), *ref = vars ? verify_variables(profile, 1) : NULL;
    if (!ref) {
        json_decref(vars);
        return UTIL_EINVAL;
    }
    const char *tmp = getenv("TMPDIR"); /* where temporary files go (the man page, ENVIRONMENT) */
    if (o->out)
        snprintf(dir, sizeof(dir), "%s", o->out);
    else
        snprintf(dir, sizeof(dir), "%s/topotune-verify-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (o->out ? (mkdir(dir, 0755) && errno != EEXIST) : !mkdtemp(dir)) {
        json_decref(vars);
        json_decref(ref);
        return util_error("cannot create '%s': %s", dir, strerror(errno)), UTIL_EENV;
    }
    char holder[32];
    int lock = util_lock_dir(dir, holder, sizeof(holder));
    if (lock < 0) {
        int busy = errno == EWOULDBLOCK;
        json_decref(vars);
        json_decref(ref);
        if (busy)
            return util_error(
                       "'%s' is in use by another verify (pid %s): wait for it to end, or give "
                       "another --out",
                       dir, holder),
                   UTIL_EENV;
        return util_error("cannot open or lock '%s/.lock': %s", dir, strerror(errno)), UTIL_EENV;
    }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    snprintf(nonce, sizeof(nonce), "%lx%lx", (unsigned long)getpid(),
             (unsigned long)(now.tv_sec ^ now.tv_nsec));
    struct util_buf cleared = UTIL_BUF_INIT;
    clear_shell(&cleared);
    char *bench = sweep_bench_program();
    struct measured m = {0};
    int rc = 0;
    util_child_supervise();
    for (int rep = 0; !rc && rep < o->repeat; rep++)
        for (int c = 0; !rc && c < 3; c++) { /* interleaved: drift hits all three alike */
            char nccl_log[4500];
            snprintf(nccl_log, sizeof(nccl_log), "%s/%s-r%d.%s.log.nccl", dir, config_file[c], rep,
                     nonce);
            char **env = config_env(vars, ref, c, plugin, table, nccl_log);
            rc = measure_one(o, bench, dir, nonce, c, rep, env, &m);
            free_env(env);
            rc = util_child_interrupted() ? UTIL_EINTR : rc;
        }
    free(bench);
    if (!rc && m.plugin_loaded < o->repeat)
        rc = (util_error(
                  "NCCL's log of %d of the %d env+table runs has no 'topotune tuner: ... "
                  "loaded ...: R rows, K for' line with K > 0: the table was not applied (see "
                  "'%s/env-table-r*.%s.log.nccl.*')",
                  o->repeat - m.plugin_loaded, o->repeat, dir, nonce),
              UTIL_EENV);
    if (!rc) {
        say_tuners(&m);
        if (o->np == 1) /* seen on a real GPU: every number 0, every gain 0 */
            util_warning("one rank: its %s is a local copy, with a busbw of 0 and no "
                         "algorithm for NCCL or the table to choose, so no gain can show; give "
                         "--np 2 or more (one rank per GPU)",
                         model_coll_name(o->coll));
        json_t *rows = o->json ? json_array() : NULL;
        struct util_buf words = UTIL_BUF_INIT;
        verify_env_words(ref, &words);
        if (!o->json) {
            printf("# MEASURED %s (float%s) by topotune-bench, nccl backend, %d rank(s) "
                   "through %s, %d run(s) each, interleaved\n# profile %s; reference: NCCL's "
                   "defaults%s%s; env+table: NCCL_TUNER_PLUGIN=%s (loaded, says NCCL's log)\n",
                   model_coll_name(o->coll), model_coll_reduces(o->coll) ? ", sum" : "", o->np,
                   o->launcher, o->repeat, o->profile,
                   words.len ? " with the profile's system variable(s) " : "", util_buf_str(&words),
                   plugin);
            if (cleared.len)
                printf("# cleared from this shell for every run: %s\n", util_buf_str(&cleared));
            for (int c = 0; c < 2; c++)
                if (m.other[c][0])
                    printf("# the %s runs had tuner %s (NCCL's log)\n", config_name[c], m.other[c]);
            printf("# env+table: calls without a row went to %s\n# runs and logs in %s (this "
                   "verify's: %s)\n",
                   m.chained[0] ? m.chained : "NCCL's defaults", dir, nonce);
            printf("# the table has %zu %s row(s)\n", own, model_coll_name(o->coll));
            verify_print_others(others);
            if (!own)
                printf("# no row is this run's: env+table is env-only here, no gain is the "
                       "table's\n");
        }
        print_measured(o, &m, rows);
        if (o->json) {
            json_t *doc =
                json_pack("{s:b,s:s,s:s,s:s,s:i,s:i,s:s,s:s,s:b,s:s,s:O,s:O,s:o}", "predicted", 0,
                          "collective", model_coll_name(o->coll), "backend", "nccl", "launcher",
                          o->launcher, "np", o->np, "runs", o->repeat, "profile", o->profile,
                          "table", table, "plugin_loaded", m.plugin_loaded == o->repeat, "logs",
                          dir, "env", vars, "reference_env", ref, "sizes", rows);
            json_object_set_new(doc, "cleared", json_string(util_buf_str(&cleared)));
            json_object_set_new(doc, "table_rows", json_integer((json_int_t)nrules));
            json_object_set_new(doc, "table_rows_collective", json_integer((json_int_t)own));
            json_object_set_new(doc, "table_rows_not_verified",
                                json_integer((json_int_t)(nrules - own)));
            json_object_set_new(doc, "other_tuner",
                                m.other[0][0] || m.other[1][0]
                                    ? json_string(m.other[0][0] ? m.other[0] : m.other[1])
                                    : json_null());
            json_object_set_new(doc, "chained_to",
                                m.chained[0] ? json_string(m.chained) : json_null());
            json_dumpf(doc, stdout, JSON_INDENT(2));
            printf("\n");
            json_decref(doc);
        }
        util_buf_release(&words);
    }
    util_buf_release(&cleared);
    close(lock);
    json_decref(vars);
    json_decref(ref);
    return rc;
}
