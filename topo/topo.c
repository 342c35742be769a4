/* SPDX-License-Identifier: MIT */
/* Topology lifecycle, the builders readers share, and loading with format detection. */
#include "topo/internal.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/file.h"
#include "util/log.h"

#include <ctype.h>
#include <libxml/parser.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOPO_MAX_INPUT (64u << 20)

char *topo_strdup(const char *s)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        abort();
    return d;
}

void topo_init(struct topo *t)
{
    memset(t, 0, sizeof(*t));
    t->cpu.sockets = t->cpu.numa_nodes = t->cpu.cores = t->cpu.pus = TOPO_UNKNOWN;
    t->nvswitches = 0;
    t->p2p_source = "none";
    t->system.shm_bytes = TOPO_UNKNOWN;
    t->system.memlock_bytes = TOPO_MEMLOCK_UNKNOWN;
    t->system.container = TOPO_UNKNOWN;
    t->p2p_broken = TOPO_UNKNOWN;
    t->job_nodes = 1;
}

static void free_strings(char **v, int n)
{
    if (!v)
        return;
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void topo_release(struct topo *t)
{
    for (int i = 0; i < t->ngpus; i++) {
        free(t->gpus[i].model);
        free(t->gpus[i].cpuset);
    }
    for (int i = 0; i < t->nnics; i++) {
        free(t->nics[i].name);
        free(t->nics[i].netdev);
        free(t->nics[i].cpuset);
        free(t->nics[i].state);
    }
    int ndev = t->ngpus + t->nnics;
    free_strings(t->matrix, ndev * ndev);
    free_strings(t->p2p, t->ngpus * t->ngpus);
    free(t->gpus);
    free(t->nics);
    free(t->nvlink);
    free(t->nodes);
    free(t->host);
    free(t->source_path);
    free(t->cpu.vendor);
    free(t->cpu.model);
    free(t->system.iommu);
    json_decref(t->system.acs_bridges);
    free(t->software.driver);
    free(t->software.cuda);
    free(t->software.nccl);
    free(t->software.hwloc);
    free(t->software.mpi);
    free(t->software.kernel);
    free(t->class_id);
    json_decref(t->class_key);
    topo_init(t);
}

int topo_add_pnode(struct topo *t, int kind, int parent, int bridges, int numa)
{
    struct topo_pnode *n = realloc(t->nodes, (size_t)(t->nnodes + 1) * sizeof(*n));
    if (!n)
        return -1;
    t->nodes = n;
    n[t->nnodes] = (struct topo_pnode){kind, parent, bridges, numa};
    return t->nnodes++;
}

struct topo_gpu *topo_add_gpu(struct topo *t)
{
    if (t->ngpus + t->nnics >= TOPO_MAX_DEVICES) {
        t->too_many = 1;
        return NULL;
    }
    struct topo_gpu *g = realloc(t->gpus, (size_t)(t->ngpus + 1) * sizeof(*g));
    if (!g)
        return NULL;
    t->gpus = g;
    g = &t->gpus[t->ngpus++];
    memset(g, 0, sizeof(*g));
    g->numa = g->sm = g->pcie_gen = g->pcie_width = g->nvlinks = g->node = TOPO_UNKNOWN;
    g->memory_mib = TOPO_UNKNOWN;
    g->pcie_gbs = -1;
    return g;
}

struct topo_nic *topo_add_nic(struct topo *t)
{
    if (t->ngpus + t->nnics >= TOPO_MAX_DEVICES) {
        t->too_many = 1;
        return NULL;
    }
    struct topo_nic *n = realloc(t->nics, (size_t)(t->nnics + 1) * sizeof(*n));
    if (!n)
        return NULL;
    t->nics = n;
    n = &t->nics[t->nnics++];
    memset(n, 0, sizeof(*n));
    n->numa = n->speed_gbps = n->node = TOPO_UNKNOWN;
    return n;
}

int topo_alloc_nvlink(struct topo *t)
{
    free(t->nvlink);
    t->nvlink = calloc((size_t)(t->ngpus ? t->ngpus * t->ngpus : 1), sizeof(int));
    return t->nvlink ? 0 : UTIL_ENOMEM;
}

const char *topo_nic_kind_name(enum topo_nic_kind kind)
{
    static const char *names[] = {"unknown", "ib", "roce", "efa", "eth"};
    return (unsigned)kind < 5 ? names[kind] : "unknown";
}

static int finish(struct topo *t)
{
    if (t->too_many) {
        error("cannot read topology '%s': more than %d GPUs and NICs: this is not one node",
              t->source_path ? t->source_path : "this machine", TOPO_MAX_DEVICES);
        return UTIL_EINVAL;
    }
    if (!t->nvlink && topo_alloc_nvlink(t))
        return UTIL_ENOMEM;
    int rc = t->matrix ? 0 : topo_compute_matrix(t); /* a topology JSON brings its own */
    return rc ? rc : topo_compute_class(t);
}

static int load_live(struct topo *t)
{
    hwloc_topology_t h;
    if (hwloc_topology_init(&h))
        return error("cannot initialise hwloc"), UTIL_ENOMEM;
    hwloc_topology_set_io_types_filter(h, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(h)) {
        hwloc_topology_destroy(h);
        return error("cannot map this machine: hwloc failed to load its topology"), UTIL_EIO;
    }
    t->source = TOPO_SOURCE_LIVE;
    char host[256] = "";
    if (gethostname(host, sizeof(host) - 1) == 0)
        t->host = topo_strdup(host);
    int rc = topo_read_hwloc(t, h, 1);
    if (!rc)
        rc = topo_probe_nvidia(t, h);
    hwloc_topology_destroy(h);
    if (rc)
        return rc;
    for (int i = 0; i < t->nnics; i++)
        topo_probe_nic(&t->nics[i]);
    topo_probe_system(t);
    topo_probe_software(t);
    return finish(t);
}

/* hwloc 2.x reads exports of version 1.x and 2.x; 3.0 needs hwloc 3. */
static int check_hwloc_version(const char *name, xmlNode *root)
{
    xmlChar *v = xmlGetProp(root, (const xmlChar *)"version");
    int rc = 0;
    if (v && !(v[0] == '1' || v[0] == '2')) {
        error("cannot read topology '%s': hwloc XML version %s is newer than this build's hwloc %s "
              "reads: export it again with lstopo from hwloc 2.x (lstopo --of xml)",
              name, (const char *)v, HWLOC_VERSION);
        rc = UTIL_ENOTSUP;
    }
    xmlFree(v);
    return rc;
}

static int load_hwloc_xml(struct topo *t, const char *name, const char *data, size_t len)
{
    hwloc_topology_t h;
    if (hwloc_topology_init(&h))
        return UTIL_ENOMEM;
    hwloc_topology_set_io_types_filter(h, HWLOC_TYPE_FILTER_KEEP_ALL);
    /* hwloc wants the size including the final NUL, which util_buf guarantees. */
    if (hwloc_topology_set_xmlbuffer(h, data, (int)len + 1) || hwloc_topology_load(h)) {
        hwloc_topology_destroy(h);
        return error("cannot read topology '%s': hwloc rejected the XML export (check that it "
                     "comes from lstopo --of xml)",
                     name),
               UTIL_EINVAL;
    }
    t->source = TOPO_SOURCE_HWLOC_XML;
    int rc = topo_read_hwloc(t, h, 0);
    hwloc_topology_destroy(h);
    return rc;
}

static void xml_silent(void *ctx, const char *msg, ...)
{
    (void)ctx;
    (void)msg;
}

static int load_xml(struct topo *t, const char *name, const char *data, size_t len)
{
    xmlSetGenericErrorFunc(NULL, xml_silent);
    xmlDoc *doc = xmlReadMemory(data, (int)len, name, NULL,
                                XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!doc) {
        const xmlError *e = xmlGetLastError();
        char msg[160] = "unknown parse error";
        if (e && e->message) {
            snprintf(msg, sizeof(msg), "%s", e->message);
            msg[strcspn(msg, "\n")] = '\0';
        }
        error("cannot read topology '%s': not well-formed XML (line %d: %s)", name, e ? e->line : 0,
              msg);
        return UTIL_EINVAL;
    }
    xmlNode *root = xmlDocGetRootElement(doc);
    int rc;
    if (root && xmlStrcmp(root->name, (const xmlChar *)"topology") == 0) {
        rc = check_hwloc_version(name, root);
        if (!rc)
            rc = load_hwloc_xml(t, name, data, len);
    } else if (root && xmlStrcmp(root->name, (const xmlChar *)"system") == 0) {
        t->source = TOPO_SOURCE_NCCL_XML;
        rc = topo_read_nccl_xml(t, name, doc);
    } else {
        error("cannot read topology '%s': neither a hwloc XML export (<topology>) nor an NCCL "
              "topology file (<system version=\"1\">): the root element is <%s>",
              name, root ? (const char *)root->name : "");
        rc = UTIL_EINVAL;
    }
    xmlFreeDoc(doc);
    return rc;
}

/* JSON inputs: a hardware spec or a topology written by `topotune topo --json`. */
static int load_json(struct topo *t, const char *name, const char *data, size_t len)
{
    json_error_t err;
    json_t *doc = json_loadb(data, len, JSON_REJECT_DUPLICATES, &err);
    if (!doc || !json_is_object(doc)) {
        error("cannot read topology '%s': not valid JSON (line %d: %s)", name, doc ? 1 : err.line,
              doc ? "expected an object" : err.text);
        json_decref(doc);
        return UTIL_EINVAL;
    }
    const char *schema = json_string_value(json_object_get(doc, "schema"));
    int rc;
    if (schema && strcmp(schema, "topotune/spec/1") == 0) {
        rc = topo_read_spec(t, name, doc);
    } else if (schema && strcmp(schema, "topotune/topology/1") == 0) {
        t->source = TOPO_SOURCE_SPEC;
        rc = topo_read_json(t, name, doc);
    } else {
        error(
            "cannot read topology '%s': field \"schema\": expected \"topotune/spec/1\" (a hardware "
            "spec) or \"topotune/topology/1\" (topotune topo --json)",
            name);
        rc = UTIL_EINVAL;
    }
    json_decref(doc);
    return rc;
}

int topo_load_buffer(struct topo *t, const char *name, const char *data, size_t len)
{
    size_t i = 0;
    while (i < len && isspace((unsigned char)data[i]))
        i++;
    if (i == len) {
        error("cannot read topology '%s': the file is empty", name);
        return UTIL_EINVAL;
    }
    t->source_path = topo_strdup(name);
    if (data[i] == '{') {
        int rc = load_json(t, name, data, len);
        return rc ? rc : finish(t);
    }
    if (data[i] != '<') {
        error("cannot read topology '%s': not XML: expected a hwloc XML export or an NCCL "
              "topology XML",
              name);
        return UTIL_EINVAL;
    }
    /* Copy so that hwloc gets the NUL it needs whatever the caller passed. */
    struct util_buf copy = UTIL_BUF_INIT;
    if (util_buf_add(&copy, data, len))
        return UTIL_ENOMEM;
    int rc = load_xml(t, name, copy.data, copy.len);
    util_buf_release(&copy);
    return rc ? rc : finish(t);
}

int topo_load_as_this_node(struct topo *t, const char *file)
{
    int rc = topo_load(t, file);
    if (rc)
        return rc;
    char host[256] = "";
    if (gethostname(host, sizeof(host) - 1) == 0) {
        free(t->host);
        t->host = topo_strdup(host);
    }
    topo_probe_system(t);
    if (!t->software.nccl)
        topo_probe_software(t);
    return 0;
}

int topo_load(struct topo *t, const char *input)
{
    const char *described = getenv("TOPOTUNE_TOPOLOGY");
    if (!input && described && *described)
        return topo_load_as_this_node(t, described);
    if (!input)
        return load_live(t);
    struct util_buf data = UTIL_BUF_INIT;
    int rc = util_file_read(input, TOPO_MAX_INPUT, &data);
    if (rc == UTIL_ENOENT)
        error("cannot read topology '%s': no such file", input);
    else if (rc == UTIL_EINVAL)
        error("cannot read topology '%s': larger than 64 MiB", input);
    else if (rc)
        error("cannot read topology '%s': %s", input, util_strerror(rc));
    if (!rc)
        rc = topo_load_buffer(t, input, util_buf_str(&data), data.len);
    util_buf_release(&data);
    return rc;
}

void topo_set_nvlink_totals(struct topo *t, const int *fabric)
{
    for (int i = 0; i < t->ngpus; i++) {
        int total = fabric ? fabric[i] : 0;
        for (int j = 0; j < t->ngpus; j++) {
            if (i == j)
                continue;
            total += t->nvlink[i * t->ngpus + j];
            if (fabric && fabric[i] > 0 && fabric[j] > 0)
                t->nvlink[i * t->ngpus + j] += fabric[i] < fabric[j] ? fabric[i] : fabric[j];
        }
        t->gpus[i].nvlinks = total;
    }
}

int topo_gpus_lack_nvlink(const struct topo *t)
{
    for (int i = 0; i < t->ngpus; i++) {
        const struct topo_gpu_info *gi = topo_gpu_info_by_name(t->gpus[i].model);
        if (!gi || gi->nvlinks != 0)
            return 0;
    }
    return 1;
}

int topo_iface_is_virtual(const char *name)
{
    const char *prefixes[] = {"docker", "virbr", "veth", "br-", "cni", "flannel"};
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}
