/* SPDX-License-Identifier: MIT */
/*
 * A simulated cluster for `survey --backend sim` (schema topotune/sim-cluster/1): nodes of
 * specs, faults injected by host, the model's predictions times the faults' factors times
 * noise. Every number it gives is a prediction. The file is untrusted: specs are plain file
 * names, looked up next to it and then among the shipped specs, never a path.
 */
#include "model/model.h"
#include "survey/internal.h"
#include "survey/survey.h"
#include "topo/topo.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/file.h"
#include "util/json.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/text.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define SIM_MAX_NODES  65536
#define SIM_MAX_FAULTS 4096
#define SIM_MAX_SPECS  16

struct sim_class {
    char *class_id;
    struct topo t;
    double alone, pair, pair_time_us; /* predicted busbw (GB/s) and one pair operation's time */
};

struct sim_link {
    int a, b;
    double factor;
};

struct sim {
    struct sim_class cls[SIM_MAX_SPECS];
    int ncls;
    int *cls_of;            /* per node */
    double *node_f, *nic_f; /* per node: 1, or the injected factor */
    double *stall_f;        /* per node: 1, or what a first measurement alone keeps of busbw */
    char *dead, *hang;
    struct sim_link *links;
    int nlinks;
    double noise;
    uint64_t state;
};

static int bad(const char *file, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bad(const char *file, const char *where, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    util_error(
        "%s: %s: %s (schema topotune/sim-cluster/1; see docs/schemas/sim-cluster.schema.json)",
        file, where, msg);
    return UTIL_EINVAL;
}

/*
 * The keys docs/schemas/sim-cluster.schema.json allows at each level (additionalProperties
 * false): a misspelt "factr" or "nodse" is an error, not a fault or a node silently left out.
 */
static const char *const doc_keys[] = {"schema", "nodes", "faults", "noise", "seed", NULL};
static const char *const node_keys[] = {"spec", "count", "prefix", NULL};
static const char *const fault_keys[] = {"kind", "hosts", "factor", NULL};

static int unknown_key(const char *file, const char *where, json_t *obj, const char *const *keys)
{
    const char *key;
    json_t *v;
    if (!json_is_object(obj))
        return bad(file, where, "an object expected");
    json_object_foreach(obj, key, v) {
        int known = 0;
        for (const char *const *k = keys; *k && !known; k++)
            known = !strcmp(*k, key);
        if (!known) {
            struct util_buf clean = UTIL_BUF_INIT;
            util_text_clean(&clean, key, strnlen(key, 64), 0);
            int rc = bad(file, where,
                         "unknown key \"%s\": check the spelling "
                         "(docs/schemas/sim-cluster.schema.json)",
                         util_buf_str(&clean));
            util_buf_release(&clean);
            return rc;
        }
    }
    return 0;
}

/*
 * Why the model predicts no number for nodes of t: their predicted outcome at NCCL's defaults
 * (a survey sets no variable), or no GPU.
 */
static int no_prediction(const char *file, const char *name, const struct topo *t)
{
    static const char *const outcome[] = {
        [MODEL_FAULT_HANG_INIT] = "hangs at init",
        [MODEL_FAULT_FAIL_INIT] = "fails at init",
        [MODEL_FAULT_FAIL_COLL] = "fails at the first collective",
        [MODEL_FAULT_CRASH] = "crashes at the first collective",
    };
    struct model m;
    if (model_init(&m, t, 2, model_env_none, NULL))
        return bad(file, "nodes[].spec", "'%s' has no GPU: the model predicts nothing", name);
    if (m.fault == MODEL_FAULT_NONE)
        return bad(file, "nodes[].spec", "the model predicts no busbw for '%s'", name);
    return bad(file, "nodes[].spec",
               "the model predicts that every launch on '%s' %s with NCCL's defaults, which a "
               "survey runs (%s): it would name every node; give a spec whose defaults run",
               name, outcome[m.fault], m.why);
}

static int plain_name(const char *s)
{
    size_t n = strlen(s);
    if (!n || n > 128 || s[0] == '.')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(s[i] == '-' || s[i] == '_' || s[i] == '.' || (s[i] >= 'a' && s[i] <= 'z') ||
              (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')))
            return 0;
    return 1;
}

/* A spec by plain file name: next to the cluster file, else a shipped one. */
static int load_spec(struct sim_class *c, const char *file, const char *name, size_t size)
{
    struct util_buf path = UTIL_BUF_INIT;
    const char *slash = strrchr(file, '/');
    util_buf_addf(&path, "%.*s%s", slash ? (int)(slash - file + 1) : 0, file, name);
    /* found inside a folder: a link or a FIFO there is refused, not followed or waited on */
    const char *why = NULL;
    int fd = util_file_open_input(util_buf_str(&path), 0, &why);
    if (fd >= 0) {
        close(fd);
    } else if (errno != ENOENT) {
        int rc = bad(file, "nodes[].spec", "'%s' next to the file: %s", name, why);
        util_buf_release(&path);
        return rc;
    } else {
        util_buf_release(&path);
        struct util_buf rel = UTIL_BUF_INIT;
        util_buf_addf(&rel, "specs/%s", name);
        int rc = util_data_file(util_buf_str(&rel), &path);
        util_buf_release(&rel);
        if (rc) {
            util_buf_release(&path);
            return bad(file, "nodes[].spec",
                       "no spec '%s' next to the file or among the shipped "
                       "specs",
                       name);
        }
    }
    topo_init(&c->t);
    int rc = topo_load(&c->t, util_buf_str(&path));
    util_buf_release(&path);
    if (!rc) {
        c->alone = survey_model_busbw(&c->t, 1, size, NULL);
        c->pair = survey_model_busbw(&c->t, 2, size, &c->pair_time_us);
        if (c->alone <= 0 || c->pair <= 0)
            rc = no_prediction(file, name, &c->t);
    }
    if (rc) { /* not counted in ncls: released here */
        topo_release(&c->t);
        return UTIL_EINVAL;
    }
    c->class_id = util_xstrdup(c->t.class_id);
    return 0;
}

static int host_index(const struct survey *s, const char *host)
{
    for (int i = 0; i < s->nnodes; i++)
        if (!strcasecmp(s->nodes[i].host, host)) /* host names ignore case, as the prefixes */
            return i;
    return -1;
}

static double factor_of(const char *file, json_t *f, size_t k, int *rc)
{
    json_t *v = json_object_get(f, "factor");
    double x = json_is_number(v) ? json_number_value(v) : -1;
    if (x <= 0 || x > 1) {
        char where[64];
        snprintf(where, sizeof(where), "faults[%zu].factor", k);
        *rc = bad(file, where, "a number in (0, 1]: the fraction of the normal busbw");
    }
    return x;
}

static int load_faults(struct survey *s, struct sim *m, const char *file, json_t *faults)
{
    size_t k;
    json_t *f;
    if (faults && (!json_is_array(faults) || json_array_size(faults) > SIM_MAX_FAULTS))
        return bad(file, "faults", "an array of at most %d faults", SIM_MAX_FAULTS);
    json_array_foreach(faults, k, f) {
        char where[64];
        snprintf(where, sizeof(where), "faults[%zu]", k);
        if (unknown_key(file, where, f, fault_keys))
            return UTIL_EINVAL;
        const char *kind = util_json_str(f, "kind", "");
        json_t *hosts = json_object_get(f, "hosts");
        int link = !strcmp(kind, "slow-path");
        int a = -1, b = -1, rc = 0;
        if (!json_is_array(hosts) || json_array_size(hosts) != (link ? 2u : 1u))
            return bad(file, where, "\"hosts\": %s", link ? "two host names" : "one host name");
        const char *ha = json_string_value(json_array_get(hosts, 0));
        const char *hb = json_string_value(json_array_get(hosts, 1));
        a = ha ? host_index(s, ha) : -1;
        if (link)
            b = hb ? host_index(s, hb) : -1;
        if (!ha || (link && !hb))
            return bad(file, where, "\"hosts\": host names are text");
        if (a < 0 || (link && b < 0))
            return bad(file, where, "a host that is not in the cluster (names: PREFIX0001...)");
        if (link && b == a)
            return bad(file, where, "a path between a host and itself: name two hosts");
        /* faults of one kind on one host compound: their factors multiply (a stall's lost
         * times add), as every measurement is the prediction times the faults' factors */
        if (!strcmp(kind, "slow-node")) {
            m->node_f[a] *= factor_of(file, f, k, &rc);
        } else if (!strcmp(kind, "slow-link")) {
            m->nic_f[a] *= factor_of(file, f, k, &rc);
        } else if (link) {
            m->links[m->nlinks++] = (struct sim_link){a, b, factor_of(file, f, k, &rc)};
        } else if (!strcmp(kind, "stalls")) {
            double x = factor_of(file, f, k, &rc);
            m->stall_f[a] = rc ? 1 : 1 / (1 / m->stall_f[a] + 1 / x - 1);
        } else if (!strcmp(kind, "dead") || !strcmp(kind, "hang")) {
            /* no factor to take, but one given is held to the schema's range (7 was taken) */
            if (json_object_get(f, "factor"))
                factor_of(file, f, k, &rc);
            (!strcmp(kind, "dead") ? m->dead : m->hang)[a] = 1;
        } else {
            return bad(file, where,
                       "kind '%s': expected slow-node, slow-link, slow-path, stalls, "
                       "dead or hang",
                       kind);
        }
        if (rc)
            return rc;
    }
    return 0;
}

/* A measurement's noise factor; one that times k times more operations (s->longer) averages
 * them: its sigma is sqrt(k) smaller. */
static double noisy(const struct survey *s, struct sim *m)
{
    double k = s->longer > 1 ? s->longer : 1;
    return m->noise > 0 ? model_noise(&m->state, m->noise / sqrt(k)) : 1;
}

/* A node that stalls loses a fixed time in every measurement alone (a daemon waking, a
 * preemption): f of its busbw in a first one, k / (k + 1/f - 1) in one timing k times more. */
static double stalled(const struct survey *s, double f)
{
    double k = s->longer > 1 ? s->longer : 1;
    return k / (k + 1 / f - 1);
}

static int sim_map(struct survey *s)
{
    struct sim *m = s->probe.ctx;
    for (int i = 0; i < s->nnodes; i++) {
        if (m->dead[i])
            snprintf(s->nodes[i].why, sizeof(s->nodes[i].why),
                     "no answer within the deadline (simulated: dead)");
        else
            s->nodes[i].class_id = util_xstrdup(m->cls[m->cls_of[i]].class_id);
    }
    for (int c = 0; c < m->ncls; c++) { /* each class's key: its facts tell a part lost */
        if (m->cls[c].t.class_key)
            json_object_set(s->class_keys, m->cls[c].class_id, m->cls[c].t.class_key);
    }
    return 0;
}

/* A path's factor: its faults' product. */
static double link_f(const struct sim *m, int a, int b)
{
    double f = 1;
    for (int l = 0; l < m->nlinks; l++)
        if ((m->links[l].a == a && m->links[l].b == b) ||
            (m->links[l].a == b && m->links[l].b == a))
            f *= m->links[l].factor;
    return f;
}

static int sim_groups(struct survey *s, const struct survey_group *g, int n, double *busbw,
                      struct util_buf *why)
{
    struct sim *m = s->probe.ctx;
    for (int k = 0; k < n; k++) {
        int a = g[k].a, b = g[k].b;
        if (m->dead[a] || m->hang[a] || (b >= 0 && (m->dead[b] || m->hang[b]))) {
            util_buf_addf(why, "timeout: a rank on %s stopped answering (simulated hang)",
                          s->nodes[m->hang[a] || m->dead[a] ? a : b].host);
            return 1;
        }
        const struct sim_class *c = &m->cls[m->cls_of[a]];
        if (b < 0) {
            busbw[k] = c->alone * m->node_f[a] * stalled(s, m->stall_f[a]) * noisy(s, m);
            continue;
        }
        double f = fmin(fmin(m->node_f[a], m->node_f[b]), fmin(m->nic_f[a], m->nic_f[b]));
        busbw[k] = c->pair * fmin(f, link_f(m, a, b)) * noisy(s, m);
    }
    return 0;
}

static int sim_whole(struct survey *s, const int *nodes, int n, double *busbw, struct util_buf *why)
{
    struct sim *m = s->probe.ctx;
    double f = 1;
    char *in = util_xcalloc((size_t)s->nnodes, 1);
    for (int k = 0; k < n; k++) {
        if (m->dead[nodes[k]] || m->hang[nodes[k]]) {
            util_buf_addf(why, "timeout: %s stopped answering (simulated hang)",
                          s->nodes[nodes[k]].host);
            free(in);
            return 1;
        }
        in[nodes[k]] = 1;
        f = fmin(f, fmin(m->node_f[nodes[k]], m->nic_f[nodes[k]]));
    }
    for (int l = 0; l < m->nlinks; l++)
        if (in[m->links[l].a] && in[m->links[l].b])
            f = fmin(f, link_f(m, m->links[l].a, m->links[l].b));
    free(in);
    const struct sim_class *c = &m->cls[m->cls_of[nodes[0]]];
    double bw = survey_model_busbw(&c->t, n, s->size, NULL);
    *busbw = bw > 0 ? bw * f * noisy(s, m) : 0;
    return 0;
}

static double sim_predict(struct survey *s, const char *class_id, int n)
{
    struct sim *m = s->probe.ctx;
    for (int c = 0; c < m->ncls; c++)
        if (!strcmp(m->cls[c].class_id, class_id))
            return survey_model_busbw(&m->cls[c].t, n, s->size, NULL);
    return -1;
}

/* A launch: start-up (mpirun, NCCL's init: 10 s, as on a large cluster) plus 25 operations of
 * the pair's size. */
static double sim_launch_s(struct survey *s, int n)
{
    struct sim *m = s->probe.ctx;
    (void)n;
    return 10.0 + 25 * m->cls[0].pair_time_us * 1e-6;
}

static void sim_release(struct survey *s)
{
    struct sim *m = s->probe.ctx;
    for (int c = 0; c < m->ncls; c++) {
        topo_release(&m->cls[c].t);
        free(m->cls[c].class_id);
    }
    free(m->cls_of);
    free(m->node_f);
    free(m->stall_f);
    free(m->nic_f);
    free(m->dead);
    free(m->hang);
    free(m->links);
    free(m);
    s->probe.ctx = NULL;
}

static int load_nodes(struct survey *s, struct sim *m, const char *file, json_t *nodes)
{
    size_t k;
    json_t *e;
    if (!json_is_array(nodes) || !json_array_size(nodes) || json_array_size(nodes) > SIM_MAX_SPECS)
        return bad(file, "nodes", "an array of 1 to %d entries {spec, count, prefix}",
                   SIM_MAX_SPECS);
    long long total = 0;
    json_array_foreach(nodes, k, e) {
        if (unknown_key(file, "nodes[]", e, node_keys))
            return UTIL_EINVAL;
        json_t *count = json_object_get(e, "count");
        if (!json_is_integer(count) || json_integer_value(count) < 1 ||
            json_integer_value(count) > SIM_MAX_NODES - total) /* checked before it is added */
            return bad(file, "nodes[].count", "1 or more, at most %d nodes in all", SIM_MAX_NODES);
        total += json_integer_value(count);
        json_t *prefix = json_object_get(e, "prefix");
        if (prefix && !json_is_string(prefix)) /* util_json_str would take the default */
            return bad(file, "nodes[].prefix", "a string: the start of each node's name");
    }
    s->nodes = util_xcalloc((size_t)total, sizeof(*s->nodes));
    m->cls_of = util_xcalloc((size_t)total, sizeof(int));
    json_array_foreach(nodes, k, e) {
        const char *spec = util_json_str(e, "spec", ""),
                   *prefix = util_json_str(e, "prefix", "node");
        if (!plain_name(spec))
            return bad(file, "nodes[].spec", "'%.64s': a plain file name ([A-Za-z0-9._-])", spec);
        /* names are PREFIX and digits: a prefix ending in a digit could make another's names */
        size_t plen = strlen(prefix);
        if (!plain_name(prefix) || plen > 32 ||
            (prefix[plen - 1] >= '0' && prefix[plen - 1] <= '9'))
            return bad(file, "nodes[].prefix",
                       "a plain name of at most 32 characters, not ending in a digit");
        for (size_t j = 0; j < k; j++)
            if (!strcasecmp(prefix, util_json_str(json_array_get(nodes, j), "prefix", "node")))
                return bad(file, "nodes[].prefix",
                           "'%s' twice (host names ignore case): give each entry its own prefix",
                           prefix);
        int rc = load_spec(&m->cls[m->ncls], file, spec, s->size);
        if (rc)
            return rc;
        for (json_int_t i = 0; i < json_integer_value(json_object_get(e, "count")); i++) {
            char host[64];
            snprintf(host, sizeof(host), "%s%04lld", prefix, (long long)i + 1);
            m->cls_of[s->nnodes] = m->ncls;
            s->nodes[s->nnodes].host = util_xstrdup(host);
            s->nodes[s->nnodes].name = util_xstrdup(host);
            s->nnodes++;
        }
        m->ncls++;
    }
    return 0;
}

int survey_probe_sim(struct survey *s, const char *file)
{
    json_error_t jerr;
    struct util_buf text = UTIL_BUF_INIT;
    const char *why = NULL; /* a path the user named: a link is followed, a FIFO refused */
    if (util_file_read_input(file, 1, 4 << 20, &text, &why)) {
        util_buf_release(&text);
        return bad(file, "file", "cannot read it: %s", why ? why : "?");
    }
    if (!text.len) { /* Jansson said "line -1: wrong arguments" of an empty buffer */
        util_buf_release(&text);
        return bad(file, "file", "empty: give a sim cluster document");
    }
    json_t *doc = json_loadb(text.data, text.len, JSON_REJECT_DUPLICATES, &jerr);
    util_buf_release(&text);
    if (!doc)
        return bad(file, "line", "%d: %s", jerr.line, jerr.text);
    struct sim *m = util_xcalloc(1, sizeof(*m));
    s->probe = (struct survey_probe){.name = "sim",
                                     .predicted = 1,
                                     .map = sim_map,
                                     .groups = sim_groups,
                                     .whole = sim_whole,
                                     .predict = sim_predict,
                                     .launch_s = sim_launch_s,
                                     .release = sim_release,
                                     .ctx = m};
    int rc = 0;
    json_t *noise = json_object_get(doc, "noise");
    if (!json_is_object(doc) || strcmp(util_json_str(doc, "schema", ""), "topotune/sim-cluster/1"))
        rc = bad(file, "schema", "\"topotune/sim-cluster/1\" expected");
    else if (unknown_key(file, "document", doc, doc_keys))
        rc = UTIL_EINVAL;
    else if (json_object_get(doc, "seed") && !json_is_integer(json_object_get(doc, "seed")))
        rc = bad(file, "seed", "an integer (ignored: the survey's --seed drives the noise)");
    else if (noise && (!json_is_number(noise) || json_number_value(noise) < 0 ||
                       json_number_value(noise) > 0.5))
        rc = bad(file, "noise", "a relative sigma from 0 to 0.5");
    if (!rc)
        rc = load_nodes(s, m, file, json_object_get(doc, "nodes"));
    if (!rc) {
        m->node_f = util_xmalloc(sizeof(double) * (size_t)s->nnodes);
        m->stall_f = util_xmalloc(sizeof(double) * (size_t)s->nnodes);
        m->nic_f = util_xmalloc(sizeof(double) * (size_t)s->nnodes);
        for (int i = 0; i < s->nnodes; i++)
            m->node_f[i] = m->nic_f[i] = m->stall_f[i] = 1;
        m->dead = util_xcalloc((size_t)s->nnodes, 1);
        m->hang = util_xcalloc((size_t)s->nnodes, 1);
        m->links = util_xcalloc(SIM_MAX_FAULTS, sizeof(*m->links));
        m->noise = noise ? json_number_value(noise) : 0.02;
        m->state = 0x2545F4914F6CDD1DULL ^ ((uint64_t)s->seed * 0x9E3779B97F4A7C15ULL);
        rc = load_faults(s, m, file, json_object_get(doc, "faults"));
    }
    if (!rc && s->settings) { /* its numbers depend on the file: --resume must have the same */
        char *hash = util_json_hash(doc);
        json_object_set_new(s->settings, "cluster", json_string(hash));
        free(hash);
    }
    json_decref(doc);
    return rc;
}
