/* SPDX-License-Identifier: MIT */
/*
 * Reads a topology JSON (schema topotune/topology/1) back, as `topotune topo
 * --json` wrote it, so a node mapped once can feed the model and comparisons
 * elsewhere. The matrix is taken as written (the PCI tree is not in the JSON).
 */
#include "topo/internal.h"
#include "util/error.h"
#include "util/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct json_reader {
    const char *name;
    int failed;
};

static int bad(struct json_reader *r, const char *field, const char *want)
{
    if (!r->failed)
        error("cannot read topology '%s': field \"%s\": %s", r->name, field, want);
    r->failed = 1;
    return -1;
}

/* Optional integer: null or absent is unknown (-1); anything but an integer is an error. */
static long long opt_int(struct json_reader *r, json_t *o, const char *key, const char *field)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return TOPO_UNKNOWN;
    if (!json_is_integer(v) || json_integer_value(v) < -1)
        return bad(r, field, "expected an integer or null");
    return json_integer_value(v);
}

static char *opt_str(struct json_reader *r, json_t *o, const char *key, const char *field)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return NULL;
    if (!json_is_string(v))
        return bad(r, field, "expected a string or null"), NULL;
    return topo_strdup(json_string_value(v));
}

static void read_pci(json_t *o, char out[16])
{
    const char *pci = json_string_value(json_object_get(o, "pci"));
    snprintf(out, 16, "%s", pci ? pci : "");
}

static void read_gpus(struct json_reader *r, struct topo *t, json_t *list)
{
    size_t i;
    json_t *e;
    char f[64];
    json_array_foreach(list, i, e)
    {
        struct topo_gpu *g = topo_add_gpu(t);
        if (!g || !json_is_object(e)) {
            snprintf(f, sizeof(f), "gpus[%zu]", i);
            bad(r, f, "expected an object");
            return;
        }
        snprintf(f, sizeof(f), "gpus[%zu]", i);
        g->model = opt_str(r, e, "model", f);
        g->cpuset = opt_str(r, e, "cpuset", f);
        read_pci(e, g->pci);
        g->numa = (int)opt_int(r, e, "numa", f);
        g->memory_mib = opt_int(r, e, "memory_mib", f);
        g->sm = (int)opt_int(r, e, "sm", f);
        g->nvlinks = (int)opt_int(r, e, "nvlinks", f);
        json_t *pcie = json_object_get(e, "pcie");
        g->pcie_gen = (int)opt_int(r, pcie, "gen", f);
        g->pcie_width = (int)opt_int(r, pcie, "width", f);
        json_t *gbs = json_object_get(pcie, "gbs");
        g->pcie_gbs = json_is_number(gbs) ? json_number_value(gbs) : -1;
    }
}

static void read_nics(struct json_reader *r, struct topo *t, json_t *list)
{
    static const char *kinds[] = {"unknown", "ib", "roce", "efa", "eth"};
    size_t i;
    json_t *e;
    char f[64];
    json_array_foreach(list, i, e)
    {
        struct topo_nic *n = topo_add_nic(t);
        snprintf(f, sizeof(f), "nics[%zu]", i);
        if (!n || !json_is_object(e)) {
            bad(r, f, "expected an object");
            return;
        }
        n->name = opt_str(r, e, "name", f);
        n->netdev = opt_str(r, e, "netdev", f);
        n->cpuset = opt_str(r, e, "cpuset", f);
        n->state = opt_str(r, e, "state", f);
        read_pci(e, n->pci);
        n->numa = (int)opt_int(r, e, "numa", f);
        n->speed_gbps = (int)opt_int(r, e, "speed_gbps", f);
        const char *kind = json_string_value(json_object_get(e, "kind"));
        for (int k = 0; kind && k < 5; k++)
            if (strcmp(kind, kinds[k]) == 0)
                n->kind = (enum topo_nic_kind)k;
    }
}

static void read_matrix(struct json_reader *r, struct topo *t, json_t *rows)
{
    int n = t->ngpus + t->nnics;
    if (t->too_many)
        return;
    if (!json_is_array(rows) || (int)json_array_size(rows) != n)
        return (void)bad(r, "matrix.rows", "expected one row per GPU and NIC");
    t->matrix = calloc((size_t)(n ? n * n : 1), sizeof(char *));
    if (!t->matrix || topo_alloc_nvlink(t))
        return;
    for (int i = 0; i < n; i++) {
        json_t *row = json_array_get(rows, (size_t)i);
        if (!json_is_array(row) || (int)json_array_size(row) != n)
            return (void)bad(r, "matrix.rows", "expected a square matrix");
        for (int j = 0; j < n; j++) {
            json_t *c = json_array_get(row, (size_t)j);
            const char *s = json_string_value(c);
            if (!s && !json_is_null(c))
                return (void)bad(r, "matrix.rows", "cells are nvidia-smi letters or null");
            t->matrix[i * n + j] = topo_strdup(s);
            if (s && i < t->ngpus && j < t->ngpus && strncmp(s, "NV", 2) == 0)
                t->nvlink[i * t->ngpus + j] = atoi(s + 2);
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
    json_t *cpu = json_object_get(doc, "cpu");
    if (!r.failed) {
        t->host = opt_str(&r, doc, "host", "host");
        t->cpu.vendor = opt_str(&r, cpu, "vendor", "cpu.vendor");
        t->cpu.model = opt_str(&r, cpu, "model", "cpu.model");
        t->cpu.sockets = (int)opt_int(&r, cpu, "sockets", "cpu.sockets");
        t->cpu.numa_nodes = (int)opt_int(&r, cpu, "numa_nodes", "cpu.numa_nodes");
        t->cpu.cores = (int)opt_int(&r, cpu, "cores", "cpu.cores");
        t->cpu.pus = (int)opt_int(&r, cpu, "pus", "cpu.pus");
        t->nvswitches = (int)opt_int(&r, doc, "nvswitches", "nvswitches");
        t->nvlink_known = json_is_true(json_object_get(doc, "nvlink_known"));
        json_t *broken = json_object_get(doc, "p2p_broken");
        t->p2p_broken = json_is_boolean(broken) ? json_is_true(broken) : TOPO_UNKNOWN;
        t->system.shm_bytes =
            opt_int(&r, json_object_get(doc, "system"), "shm_bytes", "system.shm_bytes");
        long long nodes = opt_int(&r, doc, "nodes", "nodes");
        t->job_nodes = nodes > 0 ? (int)nodes : 1;
        read_gpus(&r, t, gpus);
        read_nics(&r, t, nics);
    }
    if (!r.failed)
        read_matrix(&r, t, json_object_get(json_object_get(doc, "matrix"), "rows"));
    return r.failed ? UTIL_EINVAL : 0;
}
