/* SPDX-License-Identifier: MIT */
/* The NCCL tuner plugin: the exported interface structures and the per-communicator decisions. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr, RTLD_DEFAULT, RTLD_NOLOAD */
#endif
#include "tuner/nccl-tuner-abi.h"
#include "tuner/tuner.h"

#include <dirent.h>
#include <pthread.h>
#include <dlfcn.h>
#include <float.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TUNER_EXPORT __attribute__((visibility("default")))

/* The tuner NCCL would have loaded without us, which gets every call the table does not decide
 * (docs/design.md, "The tuner plugin's chain"). */
struct next_tuner {
    void *lib;       /* NULL: none */
    int version;     /* the interface used: 2..6 */
    const void *sym; /* the structure behind ncclTunerPlugin_v<version> */
    void *ctx;       /* its context for this communicator */
    char name[64];   /* its name field, cleaned */
};

/* One communicator's state: written by init only, read by every call, freed by destroy. The
 * `logged` flags alone change after init: each decision is logged the first time it is made. */
struct tuner_ctx {
    tuner_nccl_logger log;
    uint64_t nodes, ranks;
    int version;              /* the interface NCCL called us through */
    int in_use;               /* the table loaded and fits this job */
    int v2_env_algos;         /* NCCL_ALGO or NCCL_PROTO set: v2 applies nothing */
    struct tuner_rule *rules; /* the rows for these nodes and ranks, grouped by collective */
    size_t first[TUNER_NUM_COLLS], count[TUNER_NUM_COLLS];
    atomic_uchar *logged; /* per kept row: its decision was logged */
    atomic_uchar miss_logged[TUNER_NUM_COLLS + 1];
    struct next_tuner next;
    char next_said[200]; /* where the calls the table does not decide go, for the load line */
    int strict;          /* the job named its table (TOPOTUNE_TUNER_DIGEST): apply it or fail */
    int refused;         /* strict, and the table cannot be applied: the init fails */
};

/* What follows a table that is not this job's (none, damaged, another digest): where its calls
 * go, or, when the job named its table, the communicator's failed init. A refusal every rank of
 * a job of one kind makes alike (another kind of node, another NCCL) is not this: those leave the
 * table out with a warning on every rank, as without a digest. */
static const char *then_not_the_table(struct tuner_ctx *c)
{
    if (!c->strict)
        return c->next_said;
    c->refused = 1;
    return "this communicator's init fails: the job was launched with one table "
           "(" TUNER_ENV_DIGEST "), and a rank deciding otherwise than its peers hangs it; give "
           "every node the profile the job was launched with, or launch it without the plugin "
           "(TOPOTUNE_TUNER_PLUGIN=none; an image's: unset NCCL_TUNER_PLUGIN)";
}

#define LOG(ctx, level, subsys, ...)                                                               \
    do {                                                                                           \
        if ((ctx)->log)                                                                            \
            (ctx)->log(level, subsys, __func__, __LINE__, __VA_ARGS__);                            \
    } while (0)
#define WARN(ctx, ...) LOG(ctx, TUNER_NCCL_LOG_WARN, TUNER_NCCL_SUBSYS_ALL, __VA_ARGS__)
#define INFO(ctx, ...)                                                                             \
    LOG(ctx, TUNER_NCCL_LOG_INFO, TUNER_NCCL_SUBSYS_INIT | TUNER_NCCL_SUBSYS_TUNING, __VA_ARGS__)
#define TUNING(ctx, ...) LOG(ctx, TUNER_NCCL_LOG_INFO, TUNER_NCCL_SUBSYS_TUNING, __VA_ARGS__)

/*
 * The version of the NCCL that loaded us, as a code, or 0 when it cannot be told. The logger
 * NCCL hands in lives in the NCCL library itself, so ncclGetVersion is looked up there: that
 * works when NCCL was loaded RTLD_LOCAL (PyTorch) or is linked into a larger library. The
 * function must lie in the logger's own object: one that has the logger but no ncclGetVersion
 * (a static NCCL exporting none) is an NCCL of unknown version, not whatever other NCCL the
 * process holds. Only a logger that cannot be placed at all leaves the process's.
 */
static unsigned nccl_version(tuner_nccl_logger log)
{
    typedef int (*get_version_fn)(int *);
    get_version_fn get = NULL;
    void *lib = NULL;
    Dl_info where, found;
    int placed = log && dladdr((void *)log, &where) && where.dli_fname && where.dli_fname[0];
    if (placed)
        lib = dlopen(where.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (lib)
        get = (get_version_fn)dlsym(lib, "ncclGetVersion");
    else /* a program NCCL is linked into does not reopen by its name */
        get = (get_version_fn)dlsym(RTLD_DEFAULT, "ncclGetVersion");
    /* only the logger's own object's: dlsym searches a library's dependencies too, and the
     * process holds what else it loaded */
    if (get && placed && (!dladdr((void *)get, &found) || found.dli_fbase != where.dli_fbase))
        get = NULL;
    int code = 0;
    if (!get || get(&code) != TUNER_NCCL_SUCCESS || code <= 0)
        code = 0;
    if (lib)
        dlclose(lib);
    return (unsigned)code;
}

/*
 * s as NCCL's log may show it: printable ASCII, every other byte '?'. The table's path, its class
 * and a loader error quote a file and the environment; an escape sequence of theirs must not
 * reach the terminal that shows NCCL's log, nor a newline a line of its own. (The plugin links
 * nothing of topotune's util/: this is the small local form of util_text_clean.)
 */
static const char *shown(const char *s, char *buf, size_t len)
{
    size_t i = 0;
    for (; s && s[i] && i + 1 < len; i++)
        buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    buf[i] = '\0';
    return buf;
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] ? v : NULL;
}

/* What this node's NVIDIA driver says about its GPUs: how many, and their model when they all
 * have one. The driver lists each GPU as a directory with an `information` file holding a
 * "Model: NAME" line (TOPOTUNE_DRIVER_GPUS names another directory, for tests). */
struct node_gpus {
    int known; /* the directory could be read */
    unsigned count;
    char model[TUNER_CLASS_MAX + 1]; /* "" when they differ or none says */
    const char *dir;
};

static void read_model(const char *path, char *model, size_t len)
{
    char line[512];
    model[0] = '\0';
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "Model:", 6) != 0)
            continue;
        char *v = line + 6, *end;
        while (*v == ' ' || *v == '\t')
            v++;
        end = v + strlen(v);
        while (end > v && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
            *--end = '\0';
        /* cut to the buffer: a name that long is no GPU's, and cut it matches no table's */
        size_t n = strlen(v) < len ? strlen(v) : len - 1;
        memcpy(model, v, n);
        model[n] = '\0';
        break;
    }
    fclose(f);
}

static void node_gpus_read(struct node_gpus *g)
{
    memset(g, 0, sizeof(*g));
    g->dir = env(TUNER_ENV_DRIVER_GPUS) ? env(TUNER_ENV_DRIVER_GPUS) : TUNER_DRIVER_GPUS;
    DIR *d = opendir(g->dir);
    if (!d)
        return;
    g->known = 1;
    int mixed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096], model[TUNER_CLASS_MAX + 1];
        snprintf(path, sizeof(path), "%s/%s/information", g->dir, e->d_name);
        read_model(path, model, sizeof(model));
        if (g->count++ == 0)
            snprintf(g->model, sizeof(g->model), "%s", model);
        else if (strcmp(g->model, model) != 0)
            mixed = 1;
    }
    closedir(d);
    if (mixed)
        g->model[0] = '\0';
}

/* Is this node of the kind the table was measured on? TOPOTUNE_CLASS, when the job sets it,
 * declares the node's class; the table's gpus= and gpu_model= are compared with what the
 * driver lists on this node. Warns once and returns 0 when not. */
static int table_fits_node(struct tuner_ctx *c, const struct tuner_table *t, const char *path)
{
    const char *want = env(TUNER_ENV_CLASS);
    char p[512];
    path = shown(path, p, sizeof(p));
    char shown_want[TUNER_CLASS_MAX + 1], have[TUNER_CLASS_MAX + 1], cls[TUNER_CLASS_MAX + 1];
    char dir[256];
    if (want && t->class_id[0] && strcmp(want, t->class_id) != 0) {
        shown(want, shown_want, sizeof(shown_want));
        WARN(c, "topotune tuner: ignoring '%s': measured on class %s, this job is %s=%s; %s", path,
             shown(t->class_id, cls, sizeof(cls)), TUNER_ENV_CLASS, shown_want, c->next_said);
        return 0;
    }
    if (!t->gpus && !t->gpu_model[0])
        return 1;
    struct node_gpus g;
    node_gpus_read(&g);
    if (!g.known) {
        INFO(c,
             "topotune tuner: '%s': this node's GPUs cannot be read ('%s'): its kind (%u x %s) "
             "is not checked",
             path, shown(g.dir, dir, sizeof(dir)), t->gpus,
             t->gpu_model[0] ? shown(t->gpu_model, cls, sizeof(cls)) : "any model");
        return 1;
    }
    shown(g.model, have, sizeof(have));
    if (t->gpus && g.count != t->gpus) {
        WARN(c,
             "topotune tuner: ignoring '%s': measured on nodes of %u GPUs, this node has %u "
             "(another kind of node); %s",
             path, t->gpus, g.count, c->next_said);
        return 0;
    }
    if (t->gpu_model[0] && g.model[0] && strcmp(t->gpu_model, g.model) != 0) {
        WARN(c,
             "topotune tuner: ignoring '%s': measured on %s GPUs, this node has %s (another "
             "kind of node); %s",
             path, shown(t->gpu_model, cls, sizeof(cls)), have, c->next_said);
        return 0;
    }
    return 1;
}

/* Does the table fit this job (node kind, NCCL version)? Warns once and returns 0 when not. */
static int table_fits_job(struct tuner_ctx *c, const struct tuner_table *t, const char *path)
{
    char p[512];
    if (!table_fits_node(c, t, path))
        return 0;
    path = shown(path, p, sizeof(p)); /* printable ASCII in NCCL's log, as every line */
    if (!t->nccl_min && !t->nccl_max)
        return 1;
    unsigned have = nccl_version(c->log);
    char v[32], lo[32] = "any", hi[32] = "any";
    tuner_version_format(have, v, sizeof(v));
    if (t->nccl_min)
        tuner_version_format(t->nccl_min, lo, sizeof(lo));
    if (t->nccl_max)
        tuner_version_format(t->nccl_max, hi, sizeof(hi));
    if (!have) {
        INFO(c,
             "topotune tuner: NCCL's version is unknown (no ncclGetVersion): '%s' is for "
             "NCCL %s to %s, not checked",
             path, lo, hi);
        return 1;
    }
    if ((t->nccl_min && have < t->nccl_min) || (t->nccl_max && have > t->nccl_max)) {
        WARN(c, "topotune tuner: ignoring '%s': valid for NCCL %s to %s, this is NCCL %s; %s", path,
             lo, hi, v, c->next_said);
        return 0;
    }
    return 1;
}

/* Keeps the rows for this communicator's nodes and ranks, grouped by collective, file order
 * kept within each group (the first match wins). Returns how many, or -1 out of memory. */
static long keep_rules(struct tuner_ctx *c, const struct tuner_table *t)
{
    size_t n = 0, at[TUNER_NUM_COLLS];
    for (size_t i = 0; i < t->nrules; i++)
        if (tuner_rule_fits(&t->rules[i], c->nodes, c->ranks))
            c->count[t->rules[i].coll]++, n++;
    if (n && (!(c->rules = malloc(n * sizeof(*c->rules))) ||
              !(c->logged = calloc(n, sizeof(*c->logged)))))
        return -1;
    for (int k = 0; k < TUNER_NUM_COLLS; k++)
        c->first[k] = at[k] = k ? c->first[k - 1] + c->count[k - 1] : 0;
    for (size_t i = 0; i < t->nrules; i++)
        if (tuner_rule_fits(&t->rules[i], c->nodes, c->ranks))
            c->rules[at[t->rules[i].coll]++] = t->rules[i];
    return (long)n;
}

/* Loads and checks the table for one communicator. Every failure ends here with one WARN. */
static void load_table(struct tuner_ctx *c, uint64_t comm_id)
{
    const char *path = env(TUNER_ENV_TABLE), *named = env(TUNER_ENV_DIGEST);
    c->strict = named != NULL;
    if (!path)
        path = env(TUNER_ENV_NCCL_TABLE);
    if (!path) {
        WARN(c, "topotune tuner: no table: set %s (or %s) to the profile's table; %s",
             TUNER_ENV_TABLE, TUNER_ENV_NCCL_TABLE, then_not_the_table(c));
        return;
    }
    struct tuner_table t = TUNER_TABLE_INIT;
    char err[256], p[512], e[256], cls[160];
    if (tuner_table_load(&t, path, err, sizeof(err)) != 0 ||
        tuner_table_identity(&t, named, err, sizeof(err)) != 0) {
        WARN(c, "topotune tuner: ignoring '%s': %s; %s", shown(path, p, sizeof(p)),
             shown(err, e, sizeof(e)), then_not_the_table(c));
        tuner_table_release(&t);
        return;
    }
    long kept = table_fits_job(c, &t, path) ? keep_rules(c, &t) : -2;
    path = shown(path, p, sizeof(p));
    if (kept == -1)
        WARN(c, "topotune tuner: ignoring '%s': out of memory; %s", path, then_not_the_table(c));
    if (kept >= 0) {
        char comm[40] = ""; /* v5 and later pass the communicator's id */
        if (comm_id)
            snprintf(comm, sizeof(comm), "comm %#llx: ", (unsigned long long)comm_id);
        c->in_use = 1;
        INFO(c,
             "topotune tuner: %sloaded '%s': %zu rows, %ld for %llu nodes x %llu ranks (class "
             "%s); elsewhere %s",
             comm, path, t.nrules, kept, (unsigned long long)c->nodes, (unsigned long long)c->ranks,
             t.class_id[0] ? shown(t.class_id, cls, sizeof(cls)) : "not given", c->next_said);
    }
    tuner_table_release(&t);
}

/* --- The next tuner. ------------------------------------------------------------------------ */

/* dlopen as NCCL opens a plugin: the name as given, then, for a bare name, PREFIX-NAME.so; a
 * name that begins STATIC_PLUGIN (any case, NCCL 2.22.3 on: misc/tuner.cc, plugin_open.cc) is a
 * tuner linked into the application, found in the process's global scope. */
static void *open_like_nccl(const char *prefix, const char *name, char *why, size_t whylen)
{
    size_t n = strlen(name);
    int in_process = n && !strncasecmp(name, "STATIC_PLUGIN", n);
    void *lib = dlopen(in_process ? NULL : name, RTLD_NOW | RTLD_LOCAL);
    if (!lib && !in_process && !strchr(name, '/') &&
        (strncmp(name, "lib", 3) != 0 || n < 3 || strcmp(name + n - 3, ".so") != 0)) {
        char alt[512];
        snprintf(alt, sizeof(alt), "%s-%s.so", prefix, name);
        lib = dlopen(alt, RTLD_NOW | RTLD_LOCAL);
    }
    if (!lib && why) {
        const char *e = dlerror();
        shown(e ? e : "not found", why, whylen);
    }
    return lib;
}

/* Whether s lies in this plugin's own library. Not by comparing with &ncclTunerPlugin_vN: this
 * library's references to its exported symbols resolve through the global scope, where an
 * application's own tuner (STATIC_PLUGIN, its symbols exported) comes first, and the plugin
 * took that tuner for itself and chained to nothing. */
static int in_this_library(const void *s)
{
    Dl_info theirs, mine;
    return dladdr(s, &theirs) && dladdr((const void *)&in_this_library, &mine) &&
           theirs.dli_fbase == mine.dli_fbase;
}

/* Takes the newest interface of `lib` that the NCCL calling us (through c->version) would have
 * used: 0, 1 when the library has none, 2 when it is this plugin. Keeps `lib` on 0. */
static int take_next(struct tuner_ctx *c, void *lib, const char *where)
{
    for (int v = c->version; v >= 2; v--) {
        char sym[32];
        snprintf(sym, sizeof(sym), "ncclTunerPlugin_v%d", v);
        const void *s = dlsym(lib, sym);
        if (!s)
            continue;
        const char *name = *(const char *const *)s;
        if (in_this_library(s) || (name && !strcmp(name, TUNER_PLUGIN_NAME))) {
            dlclose(lib);
            return 2;
        }
        c->next.lib = lib;
        c->next.sym = s;
        c->next.version = v;
        shown(name ? name : "?", c->next.name, sizeof(c->next.name));
        char shown_where[96];
        shown(where, shown_where, sizeof(shown_where));
        snprintf(c->next_said, sizeof(c->next_said), "tuner %.63s (%.95s, v%d) decides",
                 c->next.name, shown_where, v);
        return 0;
    }
    dlclose(lib);
    return 1;
}

/* The network plugin's library as the next tuner's, where NCCL looks when no tuner library
 * opens. */
static void net_tuner(struct tuner_ctx *c)
{
    void *lib;
    /* NCCL_NET_PLUGIN is a comma-separated list from NCCL 2.27 (net.cc): NCCL's network is the
     * first of them that loads, and its tuner is that library's */
    const char *net = env("NCCL_NET_PLUGIN");
    if (net && !strcasecmp(net, "none"))
        return;
    if (!net)
        net = "libnccl-net.so";
    for (const char *at = net; *at;) {
        size_t n = strcspn(at, ",");
        char name[512];
        if (n && n < sizeof(name)) {
            memcpy(name, at, n);
            name[n] = '\0';
            if ((lib = open_like_nccl("libnccl-net", name, NULL, 0))) {
                take_next(c, lib, name);
                return;
            }
        }
        at += n + (at[n] == ',');
    }
}

/* Finds the tuner NCCL would have loaded had NCCL_TUNER_PLUGIN not named us, as NCCL looks
 * (plugin/tuner.cc): the library the job named (TOPOTUNE_NEXT_TUNER, saved by the launch
 * scripts; "none": none), else libnccl-tuner.so; a library that opens decides, and one without a
 * tuner NCCL takes means none; one that does not open leaves the network plugin's library
 * (NCCL_NET_PLUGIN, else libnccl-net.so). Never this library: named, NCCL's own search follows. */
static void find_next(struct tuner_ctx *c)
{
    snprintf(c->next_said, sizeof(c->next_said), "NCCL's defaults apply");
    const char *named = env(TUNER_ENV_NEXT);
    char why[256] = "";
    void *lib;
    if (named && !strcasecmp(named, "auto")) /* the fragment's word for "the base named none" */
        named = NULL;
    if (named) {
        if (!strcasecmp(named, "none"))
            return;
        char shown_name[256];
        shown(named, shown_name, sizeof(shown_name));
        int rc = (lib = open_like_nccl("libnccl-tuner", named, why, sizeof(why)))
                     ? take_next(c, lib, named)
                     : -1;
        if (rc == 0)
            return;
        if (rc == 1) {
            WARN(c,
                 "topotune tuner: %s=%s: none of ncclTunerPlugin_v2..v%d (the interfaces this "
                 "NCCL takes) in it; NCCL's defaults apply where the table has no row",
                 TUNER_ENV_NEXT, shown_name, c->version);
            return;
        }
        if (rc == -1) {
            WARN(c,
                 "topotune tuner: %s=%s: %s; the network plugin's tuner, if any, decides where "
                 "the table has no row, as NCCL would",
                 TUNER_ENV_NEXT, shown_name, why);
            net_tuner(c);
            return;
        }
        /* an image built on one that already named us saved us as the next tuner: the tuner
         * the job had is lost, and NCCL's own search finds the one it would load */
        WARN(c,
             "topotune tuner: %s=%s is this plugin (an image built on one that had it?): not "
             "chained to itself; the next tuner is NCCL's own search's",
             TUNER_ENV_NEXT, shown_name);
    }
    /* a libnccl-tuner.so that opens is NCCL's tuner library even without a tuner it takes */
    if ((lib = open_like_nccl("libnccl-tuner", "libnccl-tuner.so", NULL, 0)) &&
        take_next(c, lib, "libnccl-tuner.so") != 2)
        return;
    net_tuner(c);
}

/* The next tuner's init for this communicator. v5 and v6 get NCCL's arguments as we got them. */
static void next_init(struct tuner_ctx *c, uint64_t comm_id, struct tuner_nccl_nvl_domain_info *nvl,
                      struct tuner_nccl_constants_v5 *constants)
{
    struct next_tuner *n = &c->next;
    tuner_nccl_result rc;
    switch (n->version) {
    case 2:
        rc = ((const struct tuner_nccl_v2 *)n->sym)->init(c->ranks, c->nodes, c->log, &n->ctx);
        break;
    case 3:
        rc = ((const struct tuner_nccl_v3 *)n->sym)->init(c->ranks, c->nodes, c->log, &n->ctx);
        break;
    case 4:
        rc = ((const struct tuner_nccl_v4 *)n->sym)->init(c->ranks, c->nodes, c->log, &n->ctx);
        break;
    case 5:
        rc = ((const struct tuner_nccl_v5 *)n->sym)
                 ->init(&n->ctx, comm_id, c->ranks, c->nodes, c->log, nvl, constants);
        break;
    default:
        rc = ((const struct tuner_nccl_v6 *)n->sym)
                 ->init(&n->ctx, comm_id, c->ranks, c->nodes, c->log, nvl, constants);
        break;
    }
    if (rc != TUNER_NCCL_SUCCESS) {
        WARN(c, "topotune tuner: tuner %s failed its init (%d): not used", n->name, (int)rc);
        dlclose(n->lib);
        memset(n, 0, sizeof(*n));
        snprintf(c->next_said, sizeof(c->next_said), "NCCL's defaults apply");
    }
}

static void next_destroy(struct next_tuner *n)
{
    if (!n->lib)
        return;
    switch (n->version) {
    case 2:
        ((const struct tuner_nccl_v2 *)n->sym)->destroy(n->ctx);
        break;
    case 3:
        ((const struct tuner_nccl_v3 *)n->sym)->destroy(n->ctx);
        break;
    case 4:
        ((const struct tuner_nccl_v4 *)n->sym)->destroy(n->ctx);
        break;
    case 5:
        ((const struct tuner_nccl_v5 *)n->sym)->finalize(n->ctx);
        break;
    default:
        ((const struct tuner_nccl_v6 *)n->sym)->finalize(n->ctx);
        break;
    }
    dlclose(n->lib);
    memset(n, 0, sizeof(*n));
}

/* Is `algo` with Simple not ignored (-1) in NCCL's cost table? What NCCL's v2 adapter asks for
 * its support flags: NVLS for NVLS or NVLS tree, CollNet for CollNet chain. */
static int simple_listed(const float *t, int num_algo, int num_proto, int algo)
{
    return t && algo < num_algo && TUNER_PROTO_SIMPLE < num_proto &&
           t[algo * num_proto + TUNER_PROTO_SIMPLE] != -1.0f;
}

/* A cost-table call the table does not decide, passed on; its result is the next tuner's, which
 * NCCL would have had from it without us (an error fails the collective there, as it would). A
 * v2 next tuner (under NCCL 2.22 and later) gets the support flags the table implies, and its
 * choice becomes the cheapest entry, unless it failed (NCCL's own adapter checks first). */
static tuner_nccl_result next_cost_call(const struct tuner_ctx *c, int coll, size_t bytes,
                                        int pipe_ops, float **table, int num_algo, int num_proto,
                                        int reg_buff, int *n_channels)
{
    const struct next_tuner *n = &c->next;
    switch (n->version) {
    case 2: {
        /* the flags NCCL's own v2 adapter passes (plugin/tuner/tuner_v2.cc, 2.22 and later) */
        float *t = (float *)table;
        int a = -1, p = -1;
        int collnet = simple_listed(t, num_algo, num_proto, TUNER_ALGO_COLLNET_CHAIN);
        int nvls = simple_listed(t, num_algo, num_proto, TUNER_ALGO_NVLS) ||
                   simple_listed(t, num_algo, num_proto, TUNER_ALGO_NVLS_TREE);
        tuner_nccl_result rc =
            ((const struct tuner_nccl_v2 *)n->sym)
                ->get_coll_info(n->ctx, coll, bytes, collnet, nvls, pipe_ops, &a, &p, n_channels);
        if (rc != TUNER_NCCL_SUCCESS)
            return rc;
        if (t && a >= 0 && a < num_algo && p >= 0 && p < num_proto && t[a * num_proto + p] >= 0) {
            for (int i = 0; i < num_algo * num_proto; i++)
                if (i != a * num_proto + p && t[i] == 0.0f)
                    t[i] = FLT_MIN;
            t[a * num_proto + p] = 0.0f;
        }
        return TUNER_NCCL_SUCCESS;
    }
    case 3:
        return ((const struct tuner_nccl_v3 *)n->sym)
            ->get_coll_info(n->ctx, coll, bytes, pipe_ops, table, num_algo, num_proto, n_channels);
    case 4:
        return ((const struct tuner_nccl_v4 *)n->sym)
            ->get_coll_info(n->ctx, coll, bytes, pipe_ops, table, num_algo, num_proto, reg_buff,
                            n_channels);
    case 5:
        return ((const struct tuner_nccl_v5 *)n->sym)
            ->get_coll_info(n->ctx, coll, bytes, pipe_ops, table, num_algo, num_proto, reg_buff,
                            n_channels);
    default:
        return ((const struct tuner_nccl_v6 *)n->sym)
            ->get_coll_info(n->ctx, coll, bytes, pipe_ops, table, num_algo, num_proto, reg_buff,
                            n_channels);
    }
}

static tuner_nccl_result destroy(void *context);

/* The threads now inside a next tuner's init, by pthread_self (0: a free slot): a few slots
 * rather than thread-local storage, whose static block a dlopened library may find full (and
 * then not load). More threads at once than slots: the rest are not guarded. */
#define CHAINING_SLOTS 64
static atomic_ulong chaining[CHAINING_SLOTS];

static int chaining_here(void)
{
    unsigned long self = (unsigned long)pthread_self();
    for (int i = 0; i < CHAINING_SLOTS; i++)
        if (atomic_load(&chaining[i]) == self)
            return 1;
    return 0;
}

static int chaining_enter(void)
{
    unsigned long self = (unsigned long)pthread_self();
    for (int i = 0; i < CHAINING_SLOTS; i++) {
        unsigned long free_slot = 0;
        if (atomic_compare_exchange_strong(&chaining[i], &free_slot, self))
            return i;
    }
    return -1;
}

static void chaining_leave(int slot)
{
    if (slot >= 0)
        atomic_store(&chaining[slot], 0);
}

/* What every init does. Fails towards NCCL only when the job named its table and this rank
 * cannot apply it (then_not_the_table); without memory the context is NULL and every call leaves
 * NCCL's choice (or, the table named, the init fails). */
static tuner_nccl_result ctx_new(void **context, int version, size_t n_ranks, size_t n_nodes,
                                 uint64_t comm_id, tuner_nccl_logger log,
                                 struct tuner_nccl_nvl_domain_info *nvl,
                                 struct tuner_nccl_constants_v5 *constants)
{
    struct tuner_ctx *c = calloc(1, sizeof(*c));
    *context = NULL;
    if (!c) {
        if (log)
            log(TUNER_NCCL_LOG_WARN, TUNER_NCCL_SUBSYS_ALL, __func__, __LINE__,
                "topotune tuner: out of memory; NCCL's defaults apply");
        return env(TUNER_ENV_DIGEST) ? TUNER_NCCL_INTERNAL_ERROR : TUNER_NCCL_SUCCESS;
    }
    c->log = log;
    c->version = version;
    c->nodes = n_nodes;
    c->ranks = n_ranks;
    c->v2_env_algos = env("NCCL_ALGO") || env("NCCL_PROTO");
    /* A next tuner that chains to a tuner of its own (one that names ours) calls this init
     * again from inside next_init: that instance must not chain, or the loop never ends. */
    if (chaining_here()) {
        snprintf(c->next_said, sizeof(c->next_said), "NCCL's defaults apply");
        INFO(c, "topotune tuner: called again from the init of the tuner it chains to (a cycle "
                "of tuners): this one chains to none");
    } else {
        find_next(c);
    }
    if (c->next.lib) {
        int slot = chaining_enter();
        next_init(c, comm_id, nvl, constants);
        chaining_leave(slot);
    }
    load_table(c, comm_id);
    if (c->refused) {
        destroy(c);
        return TUNER_NCCL_INTERNAL_ERROR;
    }
    *context = c;
    return TUNER_NCCL_SUCCESS;
}

static const struct tuner_rule *find(const struct tuner_ctx *c, int coll, size_t bytes)
{
    if (coll < 0 || coll >= TUNER_NUM_COLLS)
        return NULL;
    for (size_t i = c->first[coll], end = i + c->count[coll]; i < end; i++)
        if (bytes >= c->rules[i].min_bytes && bytes <= c->rules[i].max_bytes)
            return &c->rules[i];
    return NULL;
}

/* 1 the first time the decision `flag` stands for is made in this communicator. */
static int first_time(atomic_uchar *flag)
{
    return !atomic_exchange_explicit(flag, 1, memory_order_relaxed);
}

/* The row for a call, or NULL with the miss logged (once per collective). */
static const struct tuner_rule *row_for(struct tuner_ctx *c, int coll, size_t bytes)
{
    const struct tuner_rule *r = c->in_use ? find(c, coll, bytes) : NULL;
    int k = coll >= 0 && coll < TUNER_NUM_COLLS ? coll : TUNER_NUM_COLLS;
    if (!r && first_time(&c->miss_logged[k]))
        TUNING(c, "topotune tuner: %s %zu bytes: %s, %s (said once per collective)",
               tuner_coll_name(coll), bytes, c->in_use ? "no row" : "no table in use",
               c->next.lib ? c->next.name : "NCCL's choice");
    return r;
}

static int rule_first_time(struct tuner_ctx *c, const struct tuner_rule *r)
{
    return first_time(&c->logged[r - c->rules]);
}

static void log_skip(struct tuner_ctx *c, const struct tuner_rule *r, size_t bytes, const char *why)
{
    if (rule_first_time(c, r))
        TUNING(c, "topotune tuner: %s %zu bytes: line %u wants %s/%s, %s; %s",
               tuner_coll_name(r->coll), bytes, r->line, tuner_algo_name(r->algo),
               tuner_proto_name(r->proto), why, c->next.lib ? c->next.name : "NCCL's choice");
}

/* CollNet, and NVLS across nodes: NCCL schedules such a call on the channel count it is given,
 * unchecked against its own (enqueue.cc, scheduleCollTasksToPlan: isCollnet), so a row's count
 * is never passed for them. Nor, to NCCL 2.21 (interface v2), for NVLS and NVLS tree anywhere:
 * it caps a tuned call at the group's largest count, not at its NVLS channels (2.22 on does). */
static int unbounded_channels(const struct tuner_ctx *c, const struct tuner_rule *r)
{
    int nvls = r->algo == TUNER_ALGO_NVLS || r->algo == TUNER_ALGO_NVLS_TREE;
    return r->algo == TUNER_ALGO_COLLNET_DIRECT || r->algo == TUNER_ALGO_COLLNET_CHAIN ||
           (r->algo == TUNER_ALGO_NVLS && c->nodes > 1) || (nvls && c->version == 2);
}

/* The row's channel count within what NCCL runs for any algorithm: MAXCHANNELS, 32 in the
 * releases with the smallest (the table allows up to TUNER_MAX_CHANNELS); 0: NCCL's own. */
static int row_channels(const struct tuner_ctx *c, const struct tuner_rule *r)
{
    if (unbounded_channels(c, r))
        return 0;
    return r->channels > TUNER_NCCL_MAX_CHANNELS ? TUNER_NCCL_MAX_CHANNELS : r->channels;
}

static void log_apply(struct tuner_ctx *c, const struct tuner_rule *r, size_t bytes)
{
    char clamped[80] = "";
    if (r->channels && unbounded_channels(c, r))
        snprintf(clamped, sizeof(clamped),
                 " (the row's %u not passed: NCCL does not bound it here)", (unsigned)r->channels);
    else if (r->channels > TUNER_NCCL_MAX_CHANNELS)
        snprintf(clamped, sizeof(clamped), " (the row's %u is above NCCL's limit)",
                 (unsigned)r->channels);
    if (rule_first_time(c, r))
        TUNING(c, "topotune tuner: %s %zu bytes -> %s/%s, %s%d channels%s (line %u)",
               tuner_coll_name(r->coll), bytes, tuner_algo_name(r->algo),
               tuner_proto_name(r->proto), row_channels(c, r) ? "" : "NCCL's ", row_channels(c, r),
               clamped, r->line);
}

/*
 * The cost-table decision (v3 to v6). `table` is NCCL's float[num_algo][num_proto], passed as
 * float**. The chosen entry becomes 0 so that it is the smallest; an entry NCCL set to exactly 0
 * would still win a tie if it came first, so such entries become the smallest positive float.
 * Returns 1 when the table decided the call, 0 when it is the next tuner's (or NCCL's).
 */
static int decide(struct tuner_ctx *c, int coll, size_t bytes, float **cost_table, int num_algo,
                  int num_proto, int *n_channels)
{
    const struct tuner_rule *r = row_for(c, coll, bytes);
    if (!r)
        return 0;
    float *t = (float *)cost_table;
    const char *why = NULL;
    if (!t || num_algo <= 0 || num_proto <= 0 || num_algo > 64 || num_proto > 64)
        why = "no usable cost table";
    else if (r->algo >= num_algo || r->proto >= num_proto)
        why = "not in this NCCL's cost table";
    else if (!(t[r->algo * num_proto + r->proto] >= 0.0f))
        why = "unavailable here";
    if (why) {
        log_skip(c, r, bytes, why);
        return 0;
    }
    int chosen = r->algo * num_proto + r->proto;
    for (int i = 0; i < num_algo * num_proto; i++)
        if (i != chosen && t[i] == 0.0f)
            t[i] = FLT_MIN;
    t[chosen] = 0.0f;
    if (row_channels(c, r) && n_channels)
        *n_channels = row_channels(c, r);
    log_apply(c, r, bytes);
    return 1;
}

/* A cost-table call: the table's row, else the next tuner (its result). */
static tuner_nccl_result cost_call(void *context, int coll, size_t bytes, int pipe_ops,
                                   float **table, int num_algo, int num_proto, int reg_buff,
                                   int *n_channels)
{
    struct tuner_ctx *c = context;
    if (c && !decide(c, coll, bytes, table, num_algo, num_proto, n_channels) && c->next.lib)
        return next_cost_call(c, coll, bytes, pipe_ops, table, num_algo, num_proto, reg_buff,
                              n_channels);
    return TUNER_NCCL_SUCCESS;
}

/*
 * Which rows v2 may apply. NCCL 2.21 takes a v2 plugin's algorithm and protocol without
 * checking them, and gives only two support flags, so only pairs it always builds are used
 * (its src/graph/tuning.cc and topoGetAlgoInfo in src/enqueue.cc at v2.21.5-1).
 */
static const char *v2_refusal(const struct tuner_ctx *c, const struct tuner_rule *r, int collnet,
                              int nvls)
{
    int allreduce = r->coll == TUNER_COLL_ALLREDUCE, simple = r->proto == TUNER_PROTO_SIMPLE;
    if (c->v2_env_algos)
        return "NCCL_ALGO or NCCL_PROTO is set (v2 cannot see what they exclude)";
    if (r->proto == TUNER_PROTO_LL128)
        return "LL128 is not applied through v2 (its availability is not passed)";
    switch (r->algo) {
    case TUNER_ALGO_RING:
        return NULL;
    case TUNER_ALGO_TREE:
        return allreduce ? NULL : "tree is for allreduce only";
    case TUNER_ALGO_NVLS:
        if (!simple || !nvls)
            return "NVLS needs Simple and NCCL's NVLS support";
        if (c->nodes == 1)
            return allreduce || r->coll == TUNER_COLL_ALLGATHER ||
                           r->coll == TUNER_COLL_REDUCESCATTER
                       ? NULL
                       : "NVLS does not do this collective";
        return allreduce && collnet ? NULL : "NVLS across nodes needs CollNet and allreduce";
    case TUNER_ALGO_NVLS_TREE:
        return simple && nvls && allreduce && c->nodes > 1
                   ? NULL
                   : "NVLS tree needs Simple, NVLS support, allreduce and several nodes";
    default:
        return "CollNet and PAT are not applied through v2";
    }
}

/* --- The entry points, one set per interface version. ------------------------------------ */

static tuner_nccl_result init_v2(size_t n_ranks, size_t n_nodes, tuner_nccl_logger log,
                                 void **context)
{
    return ctx_new(context, 2, n_ranks, n_nodes, 0, log, NULL, NULL);
}

static tuner_nccl_result init_v3(size_t n_ranks, size_t n_nodes, tuner_nccl_logger log,
                                 void **context)
{
    return ctx_new(context, 3, n_ranks, n_nodes, 0, log, NULL, NULL);
}

static tuner_nccl_result init_v4(size_t n_ranks, size_t n_nodes, tuner_nccl_logger log,
                                 void **context)
{
    return ctx_new(context, 4, n_ranks, n_nodes, 0, log, NULL, NULL);
}

/* v5 and v6: the table is keyed by nodes and ranks only, and NCCL's model constants are left
 * as they are; both go to the next tuner as NCCL passed them. */
static tuner_nccl_result init_v5(void **context, uint64_t comm_id, size_t n_ranks, size_t n_nodes,
                                 tuner_nccl_logger log, struct tuner_nccl_nvl_domain_info *nvl,
                                 struct tuner_nccl_constants_v5 *constants)
{
    return ctx_new(context, 5, n_ranks, n_nodes, comm_id, log, nvl, constants);
}

static tuner_nccl_result init_v6(void **context, uint64_t comm_id, size_t n_ranks, size_t n_nodes,
                                 tuner_nccl_logger log, struct tuner_nccl_nvl_domain_info *nvl,
                                 struct tuner_nccl_constants_v5 *constants)
{
    return ctx_new(context, 6, n_ranks, n_nodes, comm_id, log, nvl, constants);
}

static tuner_nccl_result coll_info_v2(void *context, tuner_nccl_func coll, size_t n_bytes,
                                      int collnet_support, int nvls_support, int num_pipe_ops,
                                      int *algorithm, int *protocol, int *n_channels)
{
    struct tuner_ctx *c = context;
    if (!c)
        return TUNER_NCCL_SUCCESS;
    const struct tuner_rule *r = row_for(c, coll, n_bytes);
    const char *why = r ? v2_refusal(c, r, collnet_support == 1, nvls_support == 1) : NULL;
    if (r && !why && (!algorithm || !protocol))
        why = "no algorithm/protocol outputs";
    if (r && why)
        log_skip(c, r, n_bytes, why);
    if (!r || why) {
        if (c->next.lib) /* NCCL 2.21 resolves v2 only: so is the next tuner's (its result) */
            return ((const struct tuner_nccl_v2 *)c->next.sym)
                ->get_coll_info(c->next.ctx, coll, n_bytes, collnet_support, nvls_support,
                                num_pipe_ops, algorithm, protocol, n_channels);
        return TUNER_NCCL_SUCCESS;
    }
    *algorithm = r->algo;
    *protocol = r->proto;
    if (row_channels(c, r) && n_channels)
        *n_channels = row_channels(c, r);
    log_apply(c, r, n_bytes);
    return TUNER_NCCL_SUCCESS;
}

static tuner_nccl_result coll_info_v3(void *context, tuner_nccl_func coll, size_t n_bytes,
                                      int num_pipe_ops, float **cost_table, int num_algo,
                                      int num_proto, int *n_channels)
{
    return cost_call(context, coll, n_bytes, num_pipe_ops, cost_table, num_algo, num_proto, 0,
                     n_channels);
}

static tuner_nccl_result coll_info_v4(void *context, tuner_nccl_func coll, size_t n_bytes,
                                      int num_pipe_ops, float **cost_table, int num_algo,
                                      int num_proto, int reg_buff, int *n_channels)
{
    return cost_call(context, coll, n_bytes, num_pipe_ops, cost_table, num_algo, num_proto,
                     reg_buff, n_channels);
}

static tuner_nccl_result destroy(void *context)
{
    struct tuner_ctx *c = context;
    if (c) {
        next_destroy(&c->next);
        free(c->rules);
        free(c->logged);
    }
    free(c);
    return TUNER_NCCL_SUCCESS;
}

/* NCCL 2.30's chunk-size hook: the table sets no chunk size, so the next tuner's hook, where it
 * has one, keeps deciding it (NCCL's own where neither does: *chunk_size left as it came). */
static tuner_nccl_result chunk_size_v6(void *context, tuner_nccl_func coll, size_t n_bytes,
                                       int algorithm, int protocol, int n_channels,
                                       size_t *chunk_size)
{
    const struct tuner_ctx *c = context;
    const struct tuner_nccl_v6 *n =
        c && c->next.version == 6 ? (const struct tuner_nccl_v6 *)c->next.sym : NULL;
    if (!n || !n->get_chunk_size)
        return TUNER_NCCL_SUCCESS;
    return n->get_chunk_size(c->next.ctx, coll, n_bytes, algorithm, protocol, n_channels,
                             chunk_size);
}

/* Not const: NCCL holds them through non-const pointers (2.28 and 2.29 use v5 in place, 2.30
 * v6). */
TUNER_EXPORT struct tuner_nccl_v2 ncclTunerPlugin_v2 = {TUNER_PLUGIN_NAME, init_v2, coll_info_v2,
                                                        destroy};
TUNER_EXPORT struct tuner_nccl_v3 ncclTunerPlugin_v3 = {TUNER_PLUGIN_NAME, init_v3, coll_info_v3,
                                                        destroy};
TUNER_EXPORT struct tuner_nccl_v4 ncclTunerPlugin_v4 = {TUNER_PLUGIN_NAME, init_v4, coll_info_v4,
                                                        destroy};
TUNER_EXPORT struct tuner_nccl_v5 ncclTunerPlugin_v5 = {TUNER_PLUGIN_NAME, init_v5, coll_info_v4,
                                                        destroy};
TUNER_EXPORT struct tuner_nccl_v6 ncclTunerPlugin_v6 = {TUNER_PLUGIN_NAME, init_v6, coll_info_v4,
                                                        destroy, chunk_size_v6};
