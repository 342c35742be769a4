/* SPDX-License-Identifier: MIT */
/*
 * `topotune verify PROFILE`: what the profile's per-size table adds. For the profile's class it
 * runs three configurations, the reference (NCCL's defaults with the profile's system
 * variables: its cure), the env-only profile (its variables) and env + the table applied by
 * topotune's tuner plugin, and reports per size the busbw of each and the gain of env + table
 * over env-only and over the reference. With --topology (the sim backend) every number comes from
 * the model and is labelled predicted, and a configuration predicted to hang, fail or corrupt
 * shows that instead of a busbw; with --backend nccl each configuration is measured by
 * topotune-bench under a launcher, in an environment cleared of the shell's NCCL_*, the third
 * with NCCL_TUNER_PLUGIN naming the installed plugin and TOPOTUNE_TUNER_TABLE the table, and this
 * verify's NCCL logs (a nonce in their names) say whether it loaded and which other tuner ran.
 */
#include "bench/bench.h"
#include "cli/cli.h"
#include "gen/gen.h"
#include "launch/launch.h"
#include "model/model.h"
#include "sweep/sweep.h"
#include "topo/topo.h"
#include "tuner/tuner.h"
#include "util/buf.h"
#include "util/child.h"
#include "util/env.h"
#include "util/error.h"
#include "util/file.h"
#include "util/json.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/opts.h"
#include "util/text.h"

#include <errno.h>
#include <glob.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct verify_opts {
    const char *profile, *topology, *backend, *launcher, *hosts, *out;
    int nodes, json, np, repeat;
    double timeout_s;
    size_t min_bytes, max_bytes;
};

/* The profile's variables as NAME -> value, for the model's environment lookups. */
static const char *profile_env(const char *name, void *ctx)
{
    return json_string_value(json_object_get(ctx, name));
}

/* The options of --backend nccl: 0 or UTIL_EUSAGE. */
static int parse_measured(struct verify_opts *o)
{
    if (o->topology)
        return util_error("--topology predicts (sim backend); --backend nccl measures: give one"),
               UTIL_EUSAGE;
    o->launcher = o->launcher ? o->launcher : "mpirun";
    if (launch_check_nodes(o->hosts, 0))
        return UTIL_EUSAGE;
    if (!o->np)
        return util_error(
                   "verify --backend nccl needs --np N: the ranks, one per GPU (1 to 65536)"),
               UTIL_EUSAGE;
    return 0;
}

static int parse(int argc, char **argv, struct verify_opts *o)
{
    const struct util_opt opts[] = {
        {"topology", 't', UTIL_OPT_STRING, &o->topology, "SPEC",
         "the class's topology or hardware spec: predict with the sim backend"},
        {"backend", 0, UTIL_OPT_CHOICE, &o->backend, "NAME",
         "sim (predict; the default) or nccl (measure, on the GPU machine)", .choices = "sim nccl"},
        {"launcher", 0, UTIL_OPT_CHOICE, &o->launcher, "L",
         "nccl: direct, mpirun (default) or srun", .choices = "direct mpirun srun"},
        {"np", 0, UTIL_OPT_INT, &o->np, "N", "nccl: ranks, one per GPU (required)", .min = 1,
         .max = 65536},
        {"hosts", 0, UTIL_OPT_STRING, &o->hosts, "LIST", "nccl: the nodes, for mpirun"},
        {"repeat", 0, UTIL_OPT_INT, &o->repeat, "R",
         "nccl: runs per configuration, averaged (default 3)", .min = 1, .max = 100},
        {"timeout", 0, UTIL_OPT_DOUBLE, &o->timeout_s, "S",
         "nccl: the benchmark's deadline for one wait (default 120)", .min = 1, .max = 86400},
        {"out", 'o', UTIL_OPT_STRING, &o->out, "DIR",
         "nccl: where the runs' events and logs go (default: a new directory in /tmp)"},
        {"nodes", 0, UTIL_OPT_INT, &o->nodes, "N", "nodes of that kind (default: the spec's)",
         .min = 1, .max = 4096},
        {"minbytes", 'b', UTIL_OPT_SIZE, &o->min_bytes, "SIZE", "smallest size (default 8)",
         .min = 1, .max = 1099511627776.0},
        {"maxbytes", 'e', UTIL_OPT_SIZE, &o->max_bytes, "SIZE", "largest size (default 1G)",
         .min = 1, .max = 1099511627776.0},
        {"json", 0, UTIL_OPT_FLAG, &o->json, NULL, "one JSON document instead of the table"},
        {0},
    };
    const struct util_opts_cmd cmd = {
        "topotune verify",
        "PROFILE --topology SPEC [--nodes N] [-b MIN] [-e MAX] [--json]\n"
        "       PROFILE --backend nccl --np N [--launcher direct|mpirun|srun] [--hosts LIST]\n"
        "       [--repeat R] [--timeout S] [--out DIR] [-b MIN] [-e MAX] [--json]\n\n"
        "Per size (x4), the all_reduce busbw of NCCL's defaults (with the profile's system\n"
        "variables, a cure), of the profile's variables\n"
        "(env-only) and of env + the profile's per-size table (tuner-table.txt, as topotune's\n"
        "tuner plugin applies it), and the gain of env + table over env-only and over the\n"
        "defaults. PROFILE: a profile version directory or its profile.json. With --topology\n"
        "every number is PREDICTED by the model (sim backend); with --backend nccl every number\n"
        "is MEASURED by topotune-bench, R runs per configuration, the third with topotune's tuner\n"
        "plugin loaded by NCCL (NCCL_TUNER_PLUGIN) and the table (TOPOTUNE_TUNER_TABLE).",
        opts, 1, 0};
    int npos = 0, rc = util_opts_parse(&cmd, argc, argv, &npos);
    if (rc == 0 && !npos)
        rc = (util_error("topotune verify needs PROFILE (a profile directory)"), UTIL_EUSAGE);
    if (rc)
        return rc;
    o->profile = argv[1];
    const char *backend = o->backend ? o->backend : "sim";
    if (!strcmp(backend, "nccl"))
        return parse_measured(o);
    if (!o->topology)
        return util_error(
                   "topotune verify needs --topology SPEC for the sim backend (the profile's "
                   "class: a topology file or hardware spec)"),
               UTIL_EUSAGE;
    return 0;
}

/* profile.json and tuner-table.txt of PROFILE (a directory or its profile.json). */
static json_t *load_profile(const char *arg, char *table, size_t len)
{
    struct stat st;
    char path[4096];
    int dir = stat(arg, &st) == 0 && S_ISDIR(st.st_mode);
    snprintf(path, sizeof(path), dir ? "%s/profile.json" : "%s", arg);
    json_error_t jerr = {.text = ""};
    struct util_buf text = UTIL_BUF_INIT;
    const char *why = NULL; /* a FIFO named profile.json is refused, not waited on */
    json_t *p = util_file_read_input(path, 1, 64u << 20, &text, &why)
                    ? NULL
                    : json_loadb(util_buf_str(&text), text.len, JSON_REJECT_DUPLICATES, &jerr);
    util_buf_release(&text);
    if (!json_is_object(p) || !json_is_string(json_object_get(p, "class"))) {
        util_error("cannot read profile '%s': %s", path,
                   p     ? "not a topotune profile"
                   : why ? why
                         : jerr.text);
        json_decref(p);
        return NULL;
    }
    char *slash = strrchr(path, '/');
    if (dir)
        snprintf(table, len, "%s/tuner-table.txt", arg);
    else if (slash)
        snprintf(table, len, "%.*s/tuner-table.txt", (int)(slash - path), path);
    else
        snprintf(table, len, "tuner-table.txt");
    return p;
}

/* The profile's variables as NAME -> value; with `system_only`, only those of role "system"
 * (what cured a failing default or names the fabric: the reference runs with them). */
static json_t *variables_of(const json_t *profile, int system_only)
{
    json_t *env = json_object(), *v;
    size_t i;
    json_array_foreach(json_object_get(profile, "variables"), i, v) {
        const char *name = json_string_value(json_object_get(v, "name"));
        const char *value = json_string_value(json_object_get(v, "value"));
        const char *role = json_string_value(json_object_get(v, "role"));
        if (name && value && (!system_only || (role && !strcmp(role, "system"))))
            json_object_set_new(env, name, json_string(value));
    }
    return env;
}

static json_t *variables(const json_t *profile)
{
    return variables_of(profile, 0);
}

/* "NAME=value, NAME=value" of an env object, for the header. */
static void env_words(const json_t *env, struct util_buf *out)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)env, k, v) {
        util_buf_addf(out, "%s%s=", out->len ? ", " : "", k);
        util_buf_adds(out, json_string_value(v));
    }
}

static double gain(double a, double b)
{
    return b > 0 ? 100 * (a / b - 1) : 0;
}

/* What the model predicts for one configuration at one size: "ok", or how it goes wrong. */
static const char *predicted_outcome(const struct model *m, size_t size, struct model_prediction *p)
{
    switch (m->fault) {
    case MODEL_FAULT_HANG_INIT:
        return "hangs";
    case MODEL_FAULT_FAIL_INIT:
    case MODEL_FAULT_FAIL_COLL:
        return "fails";
    case MODEL_FAULT_CRASH:
        return "crashes";
    default:
        break;
    }
    if (model_predict(m, size, p))
        return "fails";
    return p->wrong ? "corrupts" : "ok";
}

/* The per-size rows, printed or gathered into json (when not NULL). Returns how many sizes the
 * env+table configuration is predicted not to run correctly. */
static int report(const struct verify_opts *o, const struct model m[3], json_t *json)
{
    int bad = 0;
    if (!json)
        printf("#            %12s  %13s  %13s  %13s  %-15s  %17s  %17s\n", "size (B)", "reference",
               "env-only", "env+table", "env+table pair", "gain vs env-only", "gain vs reference");
    for (size_t size = o->min_bytes; size <= o->max_bytes; size *= 4) {
        struct model_prediction p[3];
        const char *out[3];
        for (int i = 0; i < 3; i++) {
            memset(&p[i], 0, sizeof(p[i]));
            out[i] = predicted_outcome(&m[i], size, &p[i]);
        }
        int ok[3] = {!strcmp(out[0], "ok"), !strcmp(out[1], "ok"), !strcmp(out[2], "ok")};
        bad += !ok[2];
        double g_env = gain(p[2].busbw, p[1].busbw), g_def = gain(p[2].busbw, p[0].busbw);
        if (json) {
            json_t *row = json_pack("{s:I,s:s,s:s,s:s,s:s,s:s,s:b}", "size", (json_int_t)size,
                                    "outcome_reference", out[0], "outcome_env", out[1],
                                    "outcome_env_table", out[2], "algo", p[2].algo ? p[2].algo : "",
                                    "proto", p[2].proto ? p[2].proto : "", "table_row", p[2].tuned);
            static const char *const keys[3] = {"busbw_defaults", "busbw_env", "busbw_env_table"};
            for (int i = 0; i < 3; i++)
                json_object_set_new(row, keys[i], ok[i] ? json_real(p[i].busbw) : json_null());
            json_object_set_new(row, "gain_vs_env_pct",
                                ok[1] && ok[2] ? json_real(g_env) : json_null());
            json_object_set_new(row, "gain_vs_defaults_pct",
                                ok[0] && ok[2] ? json_real(g_def) : json_null());
            json_array_append_new(json, row);
            continue;
        }
        char pair[40], cell[3][40], g[2][40];
        snprintf(pair, sizeof(pair), "%s/%s%s", p[2].algo ? p[2].algo : "-",
                 p[2].proto ? p[2].proto : "-", p[2].tuned ? "*" : "");
        for (int i = 0; i < 3; i++)
            if (ok[i])
                snprintf(cell[i], sizeof(cell[i]), "%8.2f GB/s", p[i].busbw);
            else
                snprintf(cell[i], sizeof(cell[i]), "%13s", out[i]);
        if (ok[1] && ok[2])
            snprintf(g[0], sizeof(g[0]), "predicted %+6.1f%%", g_env);
        else
            snprintf(g[0], sizeof(g[0]), "%17s", "no gain");
        if (ok[0] && ok[2])
            snprintf(g[1], sizeof(g[1]), "predicted %+6.1f%%", g_def);
        else
            snprintf(g[1], sizeof(g[1]), "%17s", "no gain");
        printf("   predicted %12zu  %s  %s  %s  %-15s  %s  %s\n", size, cell[0], cell[1], cell[2],
               pair, g[0], g[1]);
    }
    return bad;
}

static int verify(const struct verify_opts *o, const json_t *profile, const char *table_path,
                  const struct topo *t)
{
    struct tuner_table table = TUNER_TABLE_INIT;
    char err[256];
    const char *class_id = json_string_value(json_object_get(profile, "class"));
    if (tuner_table_load(&table, table_path, err, sizeof(err)))
        return util_error("cannot use the tuner table '%s': %s", table_path, err), 2;
    if (table.class_id[0] && strcmp(table.class_id, class_id))
        util_warning("tuner table '%s' is for class %s, the profile for %s", table_path,
                     table.class_id, class_id);
    if (t->class_id && strcmp(t->class_id, class_id))
        util_warning("'%s' is class %s, the profile is for %s: the prediction is for the topology",
                     o->topology, t->class_id, class_id);
    json_t *env = variables(profile), *ref = variables_of(profile, 1);
    struct model m[3];
    int rc = 0;
    if (model_init(&m[0], t, o->nodes, profile_env, ref) ||
        model_init(&m[1], t, o->nodes, profile_env, env) ||
        model_init(&m[2], t, o->nodes, profile_env, env)) {
        util_error("topology '%s' has no GPU: nothing to predict", o->topology);
        rc = 2;
        goto out;
    }
    m[2].table = &table;
    size_t fitting = 0; /* the rows the plugin would keep for this run's nodes x ranks */
    for (size_t i = 0; i < table.nrules; i++)
        fitting += tuner_rule_fits(&table.rules[i], (uint64_t)m[2].nodes, (uint64_t)m[2].nranks);
    static const char *const what[3] = {"reference", "env-only", "env+table"};
    json_t *doc = o->json ? json_object() : NULL, *rows = o->json ? json_array() : NULL;
    if (!o->json) {
        struct util_buf words = UTIL_BUF_INIT;
        env_words(ref, &words);
        printf("# PREDICTED all_reduce (float, sum) by the topotune model (sim backend): no "
               "measurement\n");
        struct util_buf cls = UTIL_BUF_INIT; /* the profile's words, one clean line */
        printf("# profile %s (class %s), topology %s: %d node(s) x %d GPU(s)\n", o->profile,
               util_text_shown(&cls, class_id), o->topology, m[0].nodes, m[0].ppn);
        util_buf_release(&cls);
        printf("# reference: NCCL's defaults%s%s%s; env-only: the profile's %zu variable(s); "
               "env+table: the same with\n# %s applied as topotune's tuner plugin does (* = a "
               "row chose the pair): %zu of its %zu row(s) fit %d node(s) x %d rank(s)\n",
               words.len ? " with the profile's system variable(s) " : "", util_buf_str(&words),
               words.len ? " (what the defaults need here)" : "", json_object_size(env), table_path,
               fitting, table.nrules, m[2].nodes, m[2].nranks);
        if (!fitting)
            printf("# no row fits this run: env+table is env-only here, no gain is the table's\n");
        for (int i = 0; i < 3; i++)
            if (m[i].fault != MODEL_FAULT_NONE)
                printf("# %s is predicted not to run: %s (no busbw, no gain)\n", what[i], m[i].why);
        util_buf_release(&words);
    }
    int bad = report(o, m, rows);
    if (o->json) {
        json_object_set_new(doc, "predicted", json_true());
        json_object_set_new(doc, "profile", json_string(o->profile));
        json_object_set_new(doc, "class", json_string(class_id));
        json_object_set_new(doc, "topology", json_string(o->topology));
        json_object_set_new(doc, "table", json_string(table_path));
        json_object_set_new(doc, "table_rows", json_integer((json_int_t)table.nrules));
        json_object_set_new(doc, "table_rows_fitting", json_integer((json_int_t)fitting));
        json_object_set(doc, "env", env);
        json_object_set(doc, "reference_env", ref);
        json_object_set_new(doc, "sizes", json_incref(rows));
        json_dumpf(doc, stdout, JSON_INDENT(2));
        printf("\n");
    }
    if (bad) {
        util_error("env + table is predicted not to run correctly at %d size(s) (%s): it gains "
                   "nothing there",
                   bad, m[2].fault != MODEL_FAULT_NONE ? m[2].why : "see the table");
        rc = 1;
    }
    json_decref(rows);
    json_decref(doc);
out:
    json_decref(env);
    json_decref(ref);
    tuner_table_release(&table);
    return rc;
}

/* ---- --backend nccl: measured ---- */

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
    char pattern[4600];
    snprintf(pattern, sizeof(pattern), "%s.nccl.*", log);
    glob_t g;
    int found = 0;
    if (glob(pattern, 0, NULL, &g) != 0)
        return 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        struct util_buf text = UTIL_BUF_INIT;
        const char *why;
        util_file_read_regular(g.gl_pathv[i], 64 << 20, &text, &why);
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
    globfree(&g);
    return found;
}

/* One run of topotune-bench: its size events into m. 0, or 3 after an error naming its log. */
static int measure_one(const struct verify_opts *o, const char *bench, const char *dir,
                       const char *nonce, int which, int rep, char **env, struct measured *m)
{
    char json[4400], log[4400], nlog[4500], b[32], e[32], t[32], jarg[4500];
    snprintf(json, sizeof(json), "%s/%s-r%d.jsonl", dir, config_file[which], rep);
    snprintf(log, sizeof(log), "%s/%s-r%d.log", dir, config_file[which], rep);
    snprintf(nlog, sizeof(nlog), "%s/%s-r%d.%s.log", dir, config_file[which], rep, nonce);
    if (unlink(json) && errno != ENOENT) /* an earlier verify's events are not this run's */
        return util_error("cannot remove '%s': %s", json, strerror(errno)), 3;
    snprintf(b, sizeof(b), "%zu", o->min_bytes);
    snprintf(e, sizeof(e), "%zu", o->max_bytes);
    snprintf(t, sizeof(t), "%g", o->timeout_s);
    snprintf(jarg, sizeof(jarg), "--json=%s", json);
    char *program[] = {(char *)bench, "--backend", "nccl", "-b", b,   "-e", e, "-f", "4", "-n",
                       "20",          "-w",        "5",    "-c", "1", "-T", t, jarg, NULL};
    struct launch l = {o->launcher, o->np, o->hosts, env};
    char **argv = launch_argv(&l, program);
    if (!argv)
        return util_error("cannot build the %s launch of %d ranks", o->launcher, o->np), 2;
    struct util_child ch = {
        .argv = argv, .env = env, .log = log, .timeout_s = o->timeout_s * 20 + 60, .grace_s = 2};
    util_info("%s, run %d of %d", config_name[which], rep + 1, o->repeat);
    util_child_run(&ch);
    launch_argv_free(argv);
    json_t *events = sweep_results_load(json, SWEEP_RESULTS_READ), *ev;
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
               3;
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
        double g_env = gain(bw[2], bw[1]), g_def = gain(bw[2], bw[0]);
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
                strcmp(name, TUNER_ENV_CLASS) && strcmp(name, TUNER_ENV_NEXT))
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

static int verify_measured(const struct verify_opts *o, const json_t *profile,
                           const char *table_arg)
{
    char plugin[4096], table[PATH_MAX], dir[4200], nonce[40];
    gen_tuner_plugin_path(plugin, sizeof(plugin));
    if (!plugin[0])
        return util_error(
                   "topotune's tuner plugin (libnccl-tuner-topotune.so) is not installed next "
                   "to this program: build topotune with CUDA and NCCL, or install its package"),
               2;
    if (!realpath(table_arg, table))
        return util_error("cannot find the profile's table '%s': %s", table_arg, strerror(errno)),
               2;
    json_t *vars = variables(profile), *ref = variables_of(profile, 1);
    const char *k;
    json_t *v;
    json_object_foreach(vars, k, v) {
        const char *why = util_env_refused(k);
        if (why || !sweep_valid_value(json_string_value(v))) { /* k is vars': said first */
            util_error("the profile sets %.64s, which verify does not set: %s", k,
                       why ? why : "its value is not of [A-Za-z0-9_.,:=^/+-]*");
            json_decref(vars);
            json_decref(ref);
            return 2;
        }
    }
    snprintf(dir, sizeof(dir), "%s", o->out ? o->out : "/tmp/topotune-verify-XXXXXX");
    if (o->out ? (mkdir(dir, 0755) && errno != EEXIST) : !mkdtemp(dir)) {
        json_decref(vars);
        json_decref(ref);
        return util_error("cannot create '%s': %s", dir, strerror(errno)), 3;
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
                   3;
        return util_error("cannot open or lock '%s/.lock': %s", dir, strerror(errno)), 3;
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
            rc = util_child_interrupted() ? 128 + util_child_interrupted() : rc;
        }
    free(bench);
    if (!rc && m.plugin_loaded < o->repeat)
        rc = (util_error(
                  "NCCL's log of %d of the %d env+table runs has no 'topotune tuner: ... "
                  "loaded ...: R rows, K for' line with K > 0: the table was not applied (see "
                  "'%s/env-table-r*.%s.log.nccl.*')",
                  o->repeat - m.plugin_loaded, o->repeat, dir, nonce),
              3);
    if (!rc) {
        say_tuners(&m);
        json_t *rows = o->json ? json_array() : NULL;
        struct util_buf words = UTIL_BUF_INIT;
        env_words(ref, &words);
        if (!o->json) {
            printf("# MEASURED all_reduce (float, sum) by topotune-bench, nccl backend, %d rank(s) "
                   "through %s, %d run(s) each, interleaved\n# profile %s; reference: NCCL's "
                   "defaults%s%s; env+table: NCCL_TUNER_PLUGIN=%s (loaded, says NCCL's log)\n",
                   o->np, o->launcher, o->repeat, o->profile,
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
        }
        print_measured(o, &m, rows);
        if (o->json) {
            json_t *doc = json_pack("{s:b,s:s,s:s,s:i,s:i,s:s,s:s,s:b,s:s,s:O,s:O,s:o}",
                                    "predicted", 0, "backend", "nccl", "launcher", o->launcher,
                                    "np", o->np, "runs", o->repeat, "profile", o->profile, "table",
                                    table, "plugin_loaded", m.plugin_loaded == o->repeat, "logs",
                                    dir, "env", vars, "reference_env", ref, "sizes", rows);
            json_object_set_new(doc, "cleared", json_string(util_buf_str(&cleared)));
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

int cmd_verify(int argc, char **argv)
{
    struct verify_opts o = {.min_bytes = 8, .max_bytes = 1u << 30, .repeat = 3, .timeout_s = 120};
    int rc = parse(argc, argv, &o);
    if (rc)
        return cli_status(rc);
    char table_path[4200];
    json_t *profile = load_profile(o.profile, table_path, sizeof(table_path));
    if (!profile)
        return 2;
    if (o.backend && !strcmp(o.backend, "nccl")) {
        rc = verify_measured(&o, profile, table_path);
        json_decref(profile);
        return rc;
    }
    struct topo t;
    topo_init(&t);
    rc = topo_load(&t, o.topology) ? 2 : verify(&o, profile, table_path, &t);
    topo_release(&t);
    json_decref(profile);
    return rc;
}
