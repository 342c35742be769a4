/* SPDX-License-Identifier: MIT */
/* The topology JSON (schema topotune/topology/1) (docs/schemas/topology.schema.json). */
#include "topo/internal.h"
#include "util/json.h"

static const char *source_name(enum topo_source s)
{
    static const char *names[] = {"live", "hwloc-xml", "nccl-xml", "spec"};
    return (unsigned)s < 4 ? names[s] : "unknown";
}

static json_t *gpu_json(const struct topo *t, int i)
{
    const struct topo_gpu *g = &t->gpus[i];
    json_t *o = json_object();
    util_json_set(o, "index", json_integer(i));
    util_json_set(o, "model", util_json_str_or_null(g->model));
    util_json_set(o, "pci", util_json_str_or_null(g->pci[0] ? g->pci : NULL));
    util_json_set(o, "numa", util_json_count_or_null(g->numa));
    util_json_set(o, "cpuset", util_json_str_or_null(g->cpuset));
    util_json_set(o, "memory_mib", util_json_count_or_null(g->memory_mib));
    util_json_set(o, "sm", util_json_count_or_null(g->sm));
    json_t *pcie = json_object();
    util_json_set(pcie, "gen", util_json_count_or_null(g->pcie_gen));
    util_json_set(pcie, "width", util_json_count_or_null(g->pcie_width));
    util_json_set(pcie, "gbs", g->pcie_gbs >= 0 ? json_real(g->pcie_gbs) : json_null());
    util_json_set(o, "pcie", pcie);
    util_json_set(o, "nvlinks",
                  t->nvlink_known ? util_json_count_or_null(g->nvlinks) : json_null());
    return o;
}

static json_t *nic_json(const struct topo *t, int i)
{
    const struct topo_nic *n = &t->nics[i];
    json_t *o = json_object();
    util_json_set(o, "index", json_integer(i));
    util_json_set(o, "name", util_json_str_or_null(n->name));
    util_json_set(o, "netdev", util_json_str_or_null(n->netdev));
    util_json_set(o, "kind", json_string(topo_nic_kind_name(n->kind)));
    util_json_set(o, "pci", util_json_str_or_null(n->pci[0] ? n->pci : NULL));
    util_json_set(o, "numa", util_json_count_or_null(n->numa));
    util_json_set(o, "cpuset", util_json_str_or_null(n->cpuset));
    util_json_set(o, "speed_gbps", util_json_count_or_null(n->speed_gbps));
    util_json_set(o, "state", util_json_str_or_null(n->state));
    return o;
}

static json_t *labels_json(const struct topo *t)
{
    json_t *a = json_array();
    char buf[32];
    for (int i = 0; i < t->ngpus; i++) {
        snprintf(buf, sizeof(buf), "GPU%d", i);
        json_array_append_new(a, json_string(buf));
    }
    for (int i = 0; i < t->nnics; i++) {
        snprintf(buf, sizeof(buf), "NIC%d", i);
        json_array_append_new(a, json_string(buf));
    }
    return a;
}

static json_t *square_json(char **cells, int n)
{
    json_t *rows = json_array();
    for (int i = 0; i < n; i++) {
        json_t *row = json_array();
        for (int j = 0; j < n; j++)
            json_array_append_new(row, util_json_str_or_null(cells ? cells[i * n + j] : NULL));
        json_array_append_new(rows, row);
    }
    return rows;
}

static json_t *system_json(const struct topo *t)
{
    json_t *o = json_object();
    util_json_set(o, "shm_bytes", util_json_count_or_null(t->system.shm_bytes));
    util_json_set(o, "memlock_bytes",
                  t->system.memlock_bytes == TOPO_MEMLOCK_UNKNOWN
                      ? json_null()
                      : json_integer(t->system.memlock_bytes));
    util_json_set(o, "ipc_lock",
                  t->system.ipc_lock < 0 ? json_null() : json_boolean(t->system.ipc_lock));
    util_json_set(o, "container",
                  t->system.container < 0 ? json_null() : json_boolean(t->system.container));
    util_json_set(o, "iommu", util_json_str_or_null(t->system.iommu));
    util_json_set(o, "acs_bridges",
                  t->system.acs_bridges ? json_incref(t->system.acs_bridges) : json_null());
    return o;
}

static json_t *software_json(const struct topo *t)
{
    json_t *o = json_object();
    util_json_set(o, "driver", util_json_str_or_null(t->software.driver));
    util_json_set(o, "cuda", util_json_str_or_null(t->software.cuda));
    util_json_set(o, "nccl", util_json_str_or_null(t->software.nccl));
    util_json_set(o, "hwloc", util_json_str_or_null(t->software.hwloc));
    util_json_set(o, "mpi", util_json_str_or_null(t->software.mpi));
    util_json_set(o, "kernel", util_json_str_or_null(t->software.kernel));
    return o;
}

json_t *topo_to_json(const struct topo *t)
{
    json_t *o = json_object();
    util_json_set(o, "schema", json_string("topotune/topology/1"));
    util_json_set(o, "host", util_json_str_or_null(t->host));
    json_t *src = json_object();
    util_json_set(src, "kind", json_string(source_name(t->source)));
    util_json_set(src, "path", util_json_str_or_null(t->source_path));
    util_json_set(o, "source", src);
    json_t *cpu = json_object();
    util_json_set(cpu, "vendor", util_json_str_or_null(t->cpu.vendor));
    util_json_set(cpu, "model", util_json_str_or_null(t->cpu.model));
    util_json_set(cpu, "sockets", util_json_count_or_null(t->cpu.sockets));
    util_json_set(cpu, "numa_nodes", util_json_count_or_null(t->cpu.numa_nodes));
    util_json_set(cpu, "cores", util_json_count_or_null(t->cpu.cores));
    util_json_set(cpu, "pus", util_json_count_or_null(t->cpu.pus));
    util_json_set(o, "cpu", cpu);
    json_t *gpus = json_array(), *nics = json_array();
    for (int i = 0; i < t->ngpus; i++)
        json_array_append_new(gpus, gpu_json(t, i));
    for (int i = 0; i < t->nnics; i++)
        json_array_append_new(nics, nic_json(t, i));
    util_json_set(o, "gpus", gpus);
    util_json_set(o, "nics", nics);
    util_json_set(o, "nvswitches", util_json_count_or_null(t->nvswitches));
    util_json_set(o, "nvlink_known", json_boolean(t->nvlink_known));
    if (t->nvlink_inferred)
        util_json_set(o, "nvlink_inferred", json_true());
    util_json_set(o, "unclassified_pci", json_integer(t->unclassified_pci));
    if (t->other_gpus)
        util_json_set(o, "other_gpus", json_integer(t->other_gpus));
    util_json_set(o, "p2p_broken", t->p2p_broken < 0 ? json_null() : json_boolean(t->p2p_broken));
    util_json_set(o, "nodes", json_integer(t->job_nodes));
    if (t->nvlink_domain > 0)
        util_json_set(o, "nvlink_domain", json_integer(t->nvlink_domain));
    json_t *m = json_object();
    util_json_set(m, "labels", labels_json(t));
    util_json_set(m, "rows", square_json(t->matrix, t->ngpus + t->nnics));
    util_json_set(o, "matrix", m);
    json_t *p2p = json_object();
    util_json_set(p2p, "source", json_string(t->p2p_source));
    util_json_set(p2p, "rows", t->p2p ? square_json(t->p2p, t->ngpus) : json_null());
    util_json_set(o, "p2p", p2p);
    util_json_set(o, "system", system_json(t));
    util_json_set(o, "software", software_json(t));
    json_t *cls = json_object();
    util_json_set(cls, "id", util_json_str_or_null(t->class_id));
    util_json_set(cls, "key", t->class_key ? json_incref(t->class_key) : json_null());
    util_json_set(o, "class", cls);
    return o;
}
