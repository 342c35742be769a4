/* SPDX-License-Identifier: MIT */
/*
 * Reads a topology JSON (schema topotune/topology/1) back, as `topotune topo
 * --json` wrote it, so a node mapped once can feed the model and comparisons
 * elsewhere. The matrix is taken as written (the PCI tree is not in the JSON).
 * Every number is range-checked before it is narrowed, every string cleaned
 * (topo_text) and every matrix cell is one of nvidia-smi's letters.
 */
#include "topo/internal.h"
#include "util/error.h"
#include "util/log.h"
#include "util/mem.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a file may say: far above any real node, far below int overflow. */
#define MAX_NODES    4096      /* nodes of the class in a job, as specs allow */
#define MAX_NUMA     65535     /* a NUMA node index */
#define MAX_CPUS     (1 << 24) /* sockets, cores, PUs */
#define MAX_MEM_MIB  (1LL << 30)
#define MAX_SHM      (1LL << 60)
#define MAX_SM       1000   /* compute capability x 10 */
#define MAX_PCIE_GEN 6      /* the model's tables stop at Gen6 */
#define MAX_WIDTH    32     /* PCIe lanes */
#define MAX_GBS      10000  /* PCIe GB/s */
#define MAX_SPEED    100000 /* NIC Gb/s */

struct json_reader {
    const char *name;
    int failed;
};

__attribute__((format(printf, 3, 4))) static int bad(struct json_reader *r, const char *field,
                                                     const char *fmt, ...)
{
    if (!r->failed) {
        char msg[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        util_error("cannot read topology '%s': field \"%s\": %s", r->name, field, msg);
    }
    r->failed = 1;
    return -1;
}

/* Optional integer in [min, max]: null or absent is unknown (TOPO_UNKNOWN). */
static long long opt_int(struct json_reader *r, json_t *o, const char *key, const char *field,
                         long long min, long long max)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return TOPO_UNKNOWN;
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max) {
        char f[96];
        snprintf(f, sizeof(f), "%s%s%s", field, *field ? "." : "", key);
        return bad(r, f, "expected an integer from %lld to %lld, or null", min, max);
    }
    return json_integer_value(v);
}

static char *opt_str(struct json_reader *r, json_t *o, const char *key, const char *field)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return NULL;
    if (!json_is_string(v)) {
        char f[96];
        snprintf(f, sizeof(f), "%s%s%s", field, *field ? "." : "", key);
        return bad(r, f, "expected a string or null"), NULL;
    }
    return topo_text(json_string_value(v));
}

/* "0000:18:00.0" as topo writes bus ids (NCCL's virtual ones included), or null. */
static void read_pci(struct json_reader *r, json_t *o, const char *field, char out[16])
{
    json_t *v = json_object_get(o, "pci");
    const char *s = json_string_value(v);
    if (v && !json_is_null(v) && !(s && topo_valid_busid(s))) {
        char f[96];
        snprintf(f, sizeof(f), "%s.pci", field);
        bad(r, f, "expected a PCI bus id such as \"0000:18:00.0\", or null");
        return;
    }
    snprintf(out, 16, "%s", s ? s : "");
}

/* A device or interface name as the schema allows it (safe in a variable), or null. */
static char *opt_ifname(struct json_reader *r, json_t *o, const char *key, const char *field)
{
    json_t *v = json_object_get(o, key);
    const char *s = json_string_value(v);
    if (v && !json_is_null(v) && !(s && topo_valid_ifname(s))) {
        char f[96];
        snprintf(f, sizeof(f), "%s.%s", field, key);
        return bad(r, f,
                   "expected a device or interface name (letters, digits, _ . @ + -, at "
                   "most 64), or null"),
               NULL;
    }
    return topo_strdup(s);
}

/* "0-23,48-71" as hwloc lists CPUs, or null. */
static char *opt_cpuset(struct json_reader *r, json_t *o, const char *field)
{
    json_t *v = json_object_get(o, "cpuset");
    const char *s = json_string_value(v);
    int ok = !v || json_is_null(v) ||
             (s && *s && isdigit((unsigned char)*s) && strspn(s, "0123456789-,") == strlen(s) &&
              strlen(s) <= 4096);
    if (!ok) {
        char f[96];
        snprintf(f, sizeof(f), "%s.cpuset", field);
        return bad(r, f, "expected a CPU list such as \"0-23,48-71\", or null"), NULL;
    }
    return topo_strdup(s);
}

static void read_gpus(struct json_reader *r, struct topo *t, json_t *list)
{
    size_t i;
    json_t *e;
    char f[64];
    json_array_foreach(list, i, e) {
        snprintf(f, sizeof(f), "gpus[%zu]", i);
        if (!json_is_object(e)) {
            bad(r, f, "expected an object");
            return;
        }
        struct topo_gpu *g = topo_add_gpu(t);
        if (!g)
            return;
        g->model = opt_str(r, e, "model", f);
        g->cpuset = opt_cpuset(r, e, f);
        read_pci(r, e, f, g->pci);
        g->numa = (int)opt_int(r, e, "numa", f, 0, MAX_NUMA);
        g->memory_mib = opt_int(r, e, "memory_mib", f, 0, MAX_MEM_MIB);
        g->sm = (int)opt_int(r, e, "sm", f, 0, MAX_SM);
        g->nvlinks = (int)opt_int(r, e, "nvlinks", f, 0, TOPO_MAX_NVLINKS);
        json_t *pcie = json_object_get(e, "pcie");
        char pf[80];
        snprintf(pf, sizeof(pf), "%s.pcie", f);
        if (pcie && !json_is_object(pcie) && !json_is_null(pcie)) {
            bad(r, pf, "expected an object with gen, width and gbs");
            return;
        }
        g->pcie_gen = (int)opt_int(r, pcie, "gen", pf, 1, MAX_PCIE_GEN);
        g->pcie_width = (int)opt_int(r, pcie, "width", pf, 1, MAX_WIDTH);
        json_t *gbs = json_object_get(pcie, "gbs");
        if (gbs && !json_is_null(gbs) &&
            (!json_is_number(gbs) || !(json_number_value(gbs) >= 0) ||
             json_number_value(gbs) > MAX_GBS)) {
            snprintf(pf, sizeof(pf), "%s.pcie.gbs", f);
            bad(r, pf, "expected a number from 0 to %d, or null", MAX_GBS);
            return;
        }
        g->pcie_gbs = json_is_number(gbs) ? json_number_value(gbs) : -1;
    }
}

static void read_nics(struct json_reader *r, struct topo *t, json_t *list)
{
    size_t i;
    json_t *e;
    char f[64];
    json_array_foreach(list, i, e) {
        snprintf(f, sizeof(f), "nics[%zu]", i);
        if (!json_is_object(e)) {
            bad(r, f, "expected an object");
            return;
        }
        struct topo_nic *n = topo_add_nic(t);
        if (!n)
            return;
        n->name = opt_ifname(r, e, "name", f);
        n->netdev = opt_ifname(r, e, "netdev", f);
        n->cpuset = opt_cpuset(r, e, f);
        read_pci(r, e, f, n->pci);
        n->numa = (int)opt_int(r, e, "numa", f, 0, MAX_NUMA);
        n->speed_gbps = (int)opt_int(r, e, "speed_gbps", f, 0, MAX_SPEED);
        json_t *state = json_object_get(e, "state");
        const char *s = json_string_value(state);
        char sf[80];
        if (s && (strcmp(s, "up") == 0 || strcmp(s, "down") == 0)) {
            n->state = topo_strdup(s);
        } else if (state && !json_is_null(state)) {
            snprintf(sf, sizeof(sf), "%s.state", f);
            bad(r, sf, "expected \"up\", \"down\" or null");
        }
        const char *kind = json_string_value(json_object_get(e, "kind"));
        int k = 0;
        while (kind && k < TOPO_NIC_NKINDS &&
               strcmp(kind, topo_nic_kind_name((enum topo_nic_kind)k)) != 0)
            k++;
        if (!kind || k == TOPO_NIC_NKINDS) {
            snprintf(sf, sizeof(sf), "%s.kind", f);
            bad(r, sf, "expected \"ib\", \"roce\", \"efa\", \"eth\", \"cxi\" or \"unknown\"");
            return;
        }
        n->kind = (enum topo_nic_kind)k;
    }
}

/*
 * NVLinks of an "NV#" cell, 0 for the other letters nvidia-smi prints, -1 for
 * anything else (digits are read only up to TOPO_MAX_NVLINKS: no overflow).
 */
static int cell_links(const char *s)
{
    static const char *letters[] = {"X", "SYS", "NODE", "PHB", "PXB", "PIX"};
    for (size_t i = 0; i < sizeof(letters) / sizeof(letters[0]); i++)
        if (strcmp(s, letters[i]) == 0)
            return 0;
    if (strncmp(s, "NV", 2) != 0 || s[2] < '1' || s[2] > '9')
        return -1;
    int links = 0;
    for (const char *p = s + 2; *p; p++) {
        if (!isdigit((unsigned char)*p))
            return -1;
        links = links * 10 + (*p - '0');
        if (links > TOPO_MAX_NVLINKS)
            return -1;
    }
    return links;
}

static void read_matrix(struct json_reader *r, struct topo *t, json_t *rows)
{
    int n = t->ngpus + t->nnics;
    if (t->too_many)
        return;
    if (!json_is_array(rows) || (int)json_array_size(rows) != n)
        return (void)bad(r, "matrix.rows", "expected one row per GPU and NIC");
    t->matrix = util_xcalloc((size_t)(n ? n * n : 1), sizeof(char *));
    topo_alloc_nvlink(t);
    for (int i = 0; i < n; i++) {
        json_t *row = json_array_get(rows, (size_t)i);
        if (!json_is_array(row) || (int)json_array_size(row) != n)
            return (void)bad(r, "matrix.rows", "expected a square matrix");
        for (int j = 0; j < n; j++) {
            json_t *c = json_array_get(row, (size_t)j);
            const char *s = json_string_value(c);
            int links = s ? cell_links(s) : 0;
            if ((!s && !json_is_null(c)) || links < 0 || (s && (i == j) != !strcmp(s, "X"))) {
                char f[64];
                snprintf(f, sizeof(f), "matrix.rows[%d][%d]", i, j);
                return (void)bad(r, f,
                                 "expected X on the diagonal only, SYS, NODE, PHB, PXB, PIX, "
                                 "NV1 to NV%d or null",
                                 TOPO_MAX_NVLINKS);
            }
            if (links > 0 && (i >= t->ngpus || j >= t->ngpus)) {
                char f[64];
                snprintf(f, sizeof(f), "matrix.rows[%d][%d]", i, j);
                return (void)bad(r, f, "NVLink joins GPUs only, not NICs");
            }
            t->matrix[i * n + j] = topo_strdup(s);
            if (links > 0)
                t->nvlink[i * t->ngpus + j] = links;
        }
    }
}

static void read_top(struct json_reader *r, struct topo *t, json_t *doc)
{
    json_t *cpu = json_object_get(doc, "cpu");
    if (cpu && !json_is_object(cpu) && !json_is_null(cpu))
        bad(r, "cpu", "expected an object");
    t->host = opt_str(r, doc, "host", "");
    t->cpu.vendor = opt_str(r, cpu, "vendor", "cpu");
    t->cpu.model = topo_model_squeeze(opt_str(r, cpu, "model", "cpu")); /* as an export's */
    t->cpu.sockets = (int)opt_int(r, cpu, "sockets", "cpu", 0, MAX_CPUS);
    t->cpu.numa_nodes = (int)opt_int(r, cpu, "numa_nodes", "cpu", 0, MAX_NUMA + 1);
    t->cpu.cores = (int)opt_int(r, cpu, "cores", "cpu", 0, MAX_CPUS);
    t->cpu.pus = (int)opt_int(r, cpu, "pus", "cpu", 0, MAX_CPUS);
    t->nvswitches = (int)opt_int(r, doc, "nvswitches", "", 0, TOPO_MAX_DEVICES);
    long long other = opt_int(r, doc, "other_gpus", "", 0, TOPO_MAX_DEVICES);
    t->other_gpus = other > 0 ? (int)other : 0;
    json_t *known = json_object_get(doc, "nvlink_known"),
           *broken = json_object_get(doc, "p2p_broken");
    if (known && !json_is_boolean(known))
        bad(r, "nvlink_known", "expected true or false");
    if (broken && !json_is_boolean(broken) && !json_is_null(broken))
        bad(r, "p2p_broken", "expected true, false or null");
    t->nvlink_known = json_is_true(known);
    json_t *inferred = json_object_get(doc, "nvlink_inferred");
    if (inferred && !json_is_boolean(inferred))
        bad(r, "nvlink_inferred", "expected true or false");
    t->nvlink_inferred = t->nvlink_known && json_is_true(inferred);
    t->p2p_broken = json_is_boolean(broken) ? json_is_true(broken) : TOPO_UNKNOWN;
    json_t *system = json_object_get(doc, "system");
    t->system.shm_bytes = opt_int(r, system, "shm_bytes", "system", 0, MAX_SHM);
    long long nodes = opt_int(r, doc, "nodes", "", 1, MAX_NODES);
    t->job_nodes = nodes > 0 ? (int)nodes : 1;
    t->nvlink_domain = (int)opt_int(r, doc, "nvlink_domain", "", 0, MAX_NODES);
}

/* The P2P table as its source reported it (a pair NS stays off P2P in the model): X on the
 * diagonal, OK, NS, DIS or null elsewhere; any other source than cuda, nvml or spec is none. */
static void read_p2p(struct json_reader *r, struct topo *t, json_t *p2p)
{
    static const char *const sources[] = {"cuda", "nvml", "spec"};
    const char *src = json_string_value(json_object_get(p2p, "source"));
    json_t *rows = json_object_get(p2p, "rows");
    int n = t->ngpus, k = 0;
    while (src && k < 3 && strcmp(src, sources[k]))
        k++;
    if (!src || k == 3 || !json_is_array(rows))
        return;
    if ((int)json_array_size(rows) != n)
        return (void)bad(r, "p2p.rows", "expected one row per GPU");
    t->p2p = util_xcalloc((size_t)n * n + 1, sizeof(char *));
    t->p2p_source = sources[k];
    for (int i = 0; i < n; i++) {
        json_t *row = json_array_get(rows, (size_t)i);
        if (!json_is_array(row) || (int)json_array_size(row) != n)
            return (void)bad(r, "p2p.rows", "expected a square table");
        for (int j = 0; j < n; j++) {
            json_t *c = json_array_get(row, (size_t)j);
            const char *v = json_string_value(c);
            int ok = v ? (i == j) == !strcmp(v, "X") && (!strcmp(v, "X") || !strcmp(v, "OK") ||
                                                         !strcmp(v, "NS") || !strcmp(v, "DIS"))
                       : json_is_null(c);
            if (!ok) {
                char f[64];
                snprintf(f, sizeof(f), "p2p.rows[%d][%d]", i, j);
                return (void)bad(r, f, "expected X on the diagonal only, OK, NS, DIS or null");
            }
            t->p2p[i * n + j] = topo_strdup(v);
        }
    }
}

int topo_read_json(struct topo *t, const char *name, json_t *doc)
{
    struct json_reader r = {.name = name};
    json_t *gpus = json_object_get(doc, "gpus"), *nics = json_object_get(doc, "nics");
    if (!json_is_array(gpus))
        bad(&r, "gpus", "expected a list");
    if (!json_is_array(nics))
        bad(&r, "nics", "expected a list");
    if (!r.failed)
        read_top(&r, t, doc);
    if (!r.failed)
        read_gpus(&r, t, gpus);
    if (!r.failed)
        read_nics(&r, t, nics);
    json_t *matrix = json_object_get(doc, "matrix");
    if (!r.failed)
        read_matrix(&r, t, json_object_get(matrix, "rows"));
    if (!r.failed)
        read_p2p(&r, t, json_object_get(doc, "p2p"));
    return r.failed ? UTIL_EINVAL : 0;
}
