/* SPDX-License-Identifier: MIT */
/* Topology lifecycle, the builders readers share, and loading with format detection. */
#include "topo/internal.h"
#include "util/buf.h"
#include "util/child.h"
#include "util/file.h"
#include "util/error.h"
#include "util/log.h"
#include "util/mem.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <libxml/parser.h>
#include <libxml/SAX2.h>
#include <libxml/parserInternals.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define TOPO_MAX_INPUT (64u << 20)

char *topo_strdup(const char *s)
{
    if (!s)
        return NULL;
    return util_xstrdup(s);
}

/*
 * Length of the character at p (at most n bytes): a well-formed UTF-8
 * sequence, or 1 for a byte that starts none. *shown says whether it prints
 * as itself: not for control characters (C0, DEL, C1: every terminal escape
 * starts with one), bidirectional overrides, or bytes that are not UTF-8.
 */
static size_t next_char(const unsigned char *p, size_t n, int *shown)
{
    *shown = p[0] >= 0x20 && p[0] < 0x7f;
    if (p[0] < 0x80)
        return 1;
    size_t len = p[0] >= 0xc2 && p[0] <= 0xdf   ? 2
                 : (p[0] & 0xf0) == 0xe0        ? 3
                 : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4
                                                : 0;
    if (len == 0 || len > n)
        return 1;
    unsigned cp = p[0] & (0x7f >> len);
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 1;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 1; /* overlong, surrogate or out of range: not UTF-8 */
    *shown = cp >= 0xa0 && !(cp >= 0x202a && cp <= 0x202e) && !(cp >= 0x2066 && cp <= 0x2069);
    return len;
}

const char *topo_text_into(const char *s, char *out, size_t size)
{
    const unsigned char *text = (const unsigned char *)(s ? s : "");
    size_t n = strlen((const char *)text), o = 0, need = 0;
    int shown;
    if (size < 4) /* no room for "..." */
        return size ? (out[0] = '\0', out) : out;
    for (size_t i = 0, len; i < n; i += len) {
        len = next_char(text + i, n - i, &shown);
        need += shown ? len : 1;
    }
    for (size_t i = 0, len; i < n; i += len) {
        len = next_char(text + i, n - i, &shown);
        size_t put = shown ? len : 1;
        if (need >= size && o + put + 4 > size) { /* keep room for "..." and the NUL */
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        if (shown)
            memcpy(out + o, text + i, len);
        else
            out[o] = '?';
        o += put;
    }
    out[o] = '\0';
    return out;
}

char *topo_text(const char *s)
{
    if (!s)
        return NULL;
    char buf[TOPO_MAX_TEXT + 1];
    return topo_strdup(topo_text_into(s, buf, sizeof(buf)));
}

char *topo_model_squeeze(char *m)
{
    size_t o = 0;
    for (size_t i = 0; m && m[i]; i++)
        if (m[i] != ' ' || (o && m[o - 1] != ' '))
            m[o++] = m[i];
    while (o && m[o - 1] == ' ')
        o--;
    if (m)
        m[o] = '\0';
    return m;
}

#define ALNUM "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

int topo_valid_busid(const char *s)
{
    static const char hex[] = "0123456789abcdefABCDEF";
    size_t domain = strspn(s, hex);
    const char *p = s + domain;
    size_t bus = *p == ':' ? strspn(p + 1, hex) : 0;
    p += 1 + bus;
    size_t dev = bus && *p == ':' ? strspn(p + 1, hex) : 0;
    p += 1 + dev;
    size_t fn = dev && *p == '.' ? strspn(p + 1, hex) : 0;
    return domain >= 1 && domain <= 8 && bus >= 1 && bus <= 4 && dev >= 1 && dev <= 4 && fn >= 1 &&
           fn <= 2 && p[1 + fn] == '\0' && strlen(s) <= 15;
}

int topo_valid_ifname(const char *s)
{
    size_t len = strlen(s);
    return len >= 1 && len <= 64 && strchr(ALNUM "_", s[0]) && strspn(s, ALNUM "_.@+-") == len;
}

int topo_valid_version(const char *s)
{
    size_t len = strlen(s);
    return len <= 64 && strspn(s, ALNUM ".+~_-") == len;
}

void topo_init(struct topo *t)
{
    memset(t, 0, sizeof(*t));
    t->cpu.sockets = t->cpu.numa_nodes = t->cpu.cores = t->cpu.pus = TOPO_UNKNOWN;
    t->nvswitches = 0;
    t->p2p_source = "none";
    t->system.shm_bytes = TOPO_UNKNOWN;
    t->system.memlock_bytes = TOPO_MEMLOCK_UNKNOWN;
    t->system.ipc_lock = TOPO_UNKNOWN;
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
    t->nodes = util_xrealloc(t->nodes, (size_t)(t->nnodes + 1) * sizeof(*t->nodes));
    t->nodes[t->nnodes] = (struct topo_pnode){kind, parent, bridges, numa};
    return t->nnodes++;
}

struct topo_gpu *topo_add_gpu(struct topo *t)
{
    if (t->ngpus + t->nnics >= TOPO_MAX_DEVICES) {
        t->too_many = 1;
        return NULL;
    }
    t->gpus = util_xrealloc(t->gpus, (size_t)(t->ngpus + 1) * sizeof(*t->gpus));
    struct topo_gpu *g = &t->gpus[t->ngpus++];
    memset(g, 0, sizeof(*g));
    g->numa = g->sm = g->pcie_gen = g->pcie_width = g->nvlinks = g->node = TOPO_UNKNOWN;
    g->memory_mib = TOPO_UNKNOWN;
    g->pcie_gbs = -1;
    return g;
}

double topo_pcie_lane_gbs(int gen)
{
    static const double lane[] = {0, 0.25, 0.5, 0.985, 1.969, 3.938, 7.563};
    return gen >= 1 && gen <= 6 ? lane[gen] : 0;
}

double topo_pcie_link_gbs(int gen, long width)
{
    return topo_pcie_lane_gbs(gen) > 0 && width > 0 ? topo_pcie_lane_gbs(gen) * (double)width : -1;
}

int topo_pcie_rate(double gbs, int *gen, int *width)
{
    for (int w = 16; w >= 1 && gbs > 0; w /= 2)
        for (int g = 1; g <= 6; g++)
            if (fabs(gbs / w / topo_pcie_lane_gbs(g) - 1) < 0.03) {
                *gen = g;
                *width = w;
                return 1;
            }
    return 0;
}

int topo_pcie_gen_of(double gts)
{
    return gts >= 60 ? 6 : gts >= 30 ? 5 : gts >= 15 ? 4 : gts >= 7 ? 3 : gts >= 4 ? 2 : gts > 0;
}

int topo_gpu_pcie_link(const struct topo_gpu *g, int *gen, int *width)
{
    int rg, rw;
    *gen = 3, *width = 16;
    if (g->pcie_gen >= 1 && g->pcie_gen <= 6) {
        *gen = g->pcie_gen, *width = g->pcie_width > 0 ? g->pcie_width : 16;
        return 1;
    }
    if (topo_pcie_rate(g->pcie_gbs, &rg, &rw) &&
        topo_pcie_link_gbs(rg, rw) >= topo_pcie_link_gbs(3, 16)) {
        *gen = rg, *width = rw;
        return 1;
    }
    /* a rate below gen 3 x16: the GPU was at rest when the export was made */
    const struct topo_gpu_info *gi = g->pcie_gbs > 0 ? topo_gpu_info_by_name(g->model) : NULL;
    if (gi)
        *gen = gi->pcie_gen;
    return 0;
}

struct topo_nic *topo_add_nic(struct topo *t)
{
    if (t->ngpus + t->nnics >= TOPO_MAX_DEVICES) {
        t->too_many = 1;
        return NULL;
    }
    t->nics = util_xrealloc(t->nics, (size_t)(t->nnics + 1) * sizeof(*t->nics));
    struct topo_nic *n = &t->nics[t->nnics++];
    memset(n, 0, sizeof(*n));
    n->numa = n->speed_gbps = n->node = n->pci_vendor = n->pci_device = TOPO_UNKNOWN;
    n->pcie_gbs = -1;
    return n;
}

void topo_alloc_nvlink(struct topo *t)
{
    free(t->nvlink);
    t->nvlink = util_xcalloc((size_t)(t->ngpus ? t->ngpus * t->ngpus : 1), sizeof(int));
}

const char *topo_nic_kind_name(enum topo_nic_kind kind)
{
    static const char *names[TOPO_NIC_NKINDS] = {"unknown", "ib", "roce", "efa", "eth", "cxi"};
    return (unsigned)kind < TOPO_NIC_NKINDS ? names[kind] : "unknown";
}

int topo_is_cassini(long vendor, long device)
{
    return (vendor == 0x17db && device == 0x0501) || (vendor == 0x1590 && device == 0x0371);
}

int topo_nic_libfabric(enum topo_nic_kind kind)
{
    return kind == TOPO_NIC_EFA || kind == TOPO_NIC_CXI;
}

int topo_nic_verbs(enum topo_nic_kind kind)
{
    return topo_nic_rdma(kind) && !topo_nic_libfabric(kind);
}

int topo_libfabric_nics(const struct topo *t)
{
    int n = 0;
    for (int i = 0; i < t->nnics; i++)
        n += topo_nic_libfabric(t->nics[i].kind);
    return n;
}

int topo_nic_rdma(enum topo_nic_kind kind)
{
    return kind == TOPO_NIC_IB || kind == TOPO_NIC_ROCE || kind == TOPO_NIC_EFA ||
           kind == TOPO_NIC_CXI;
}

static int finish(struct topo *t)
{
    if (t->too_many) {
        util_error("cannot read topology '%s': more than %d GPUs and NICs: this is not one node",
                   t->source_path ? t->source_path : "this machine", TOPO_MAX_DEVICES);
        return UTIL_EINVAL;
    }
    if (!t->nvlink)
        topo_alloc_nvlink(t);
    for (int i = 0; t->source != TOPO_SOURCE_LIVE && i < t->nnics; i++) {
        const struct topo_nic *n = &t->nics[i];
        const char *name = n->name && !topo_valid_ifname(n->name) ? n->name : n->netdev;
        if (name && !topo_valid_ifname(name)) { /* it may end up in a variable or a script */
            util_error(
                "cannot read topology '%s': NIC%d is named \"%s\": not a device or interface "
                "name (letters, digits, _ . @ + -, at most 64 bytes)",
                t->source_path, i, name);
            return UTIL_EINVAL;
        }
    }
    for (int i = 0; i < t->ngpus; i++) {
        int links = t->gpus[i].nvlinks;
        for (int j = 0; j < t->ngpus; j++)
            links = t->nvlink[i * t->ngpus + j] > links ? t->nvlink[i * t->ngpus + j] : links;
        if (links > TOPO_MAX_NVLINKS) {
            util_error("cannot read topology '%s': GPU%d has %d NVLinks: no GPU has more than %d",
                       t->source_path ? t->source_path : "this machine", i, links,
                       TOPO_MAX_NVLINKS);
            return UTIL_EINVAL;
        }
    }
    /* NCCL finds a file's GPUs by bus id: one each (a live machine's are its own) */
    for (int i = 0; t->source != TOPO_SOURCE_LIVE && i < t->ngpus; i++)
        for (int j = 0; t->gpus[i].pci[0] && j < i; j++)
            if (!strcasecmp(t->gpus[i].pci, t->gpus[j].pci)) { /* hex: either case */
                util_error("cannot read topology '%s': GPU%d and GPU%d are both at PCI bus id "
                           "%s: each device has its own (an edited or damaged file)",
                           t->source_path ? t->source_path : "this machine", j, i, t->gpus[i].pci);
                return UTIL_EINVAL;
            }
    int rc = t->matrix ? 0 : topo_compute_matrix(t); /* a topology JSON brings its own */
    return rc ? rc : topo_compute_class(t);
}

/*
 * What every load of ours asks hwloc for: the I/O devices (io: the important ones of this
 * machine, every one of a file), and the whole machine, the CPUs and memory a job may not use
 * included. Inside a job's cgroup (a Slurm allocation of some cores), or from an export made
 * there (its allowed_cpuset a part), hwloc leaves the others out: the GPUs under a socket the job
 * has none of lost their NUMA node and affinity, and the node's class depended on the job.
 */
static void whole_machine(hwloc_topology_t h, enum hwloc_type_filter_e io)
{
    hwloc_topology_set_io_types_filter(h, io);
    hwloc_topology_set_flags(h, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
}

static int load_live(struct topo *t)
{
    hwloc_topology_t h;
    if (hwloc_topology_init(&h))
        return util_error("cannot initialise hwloc"), UTIL_ENOMEM;
    whole_machine(h, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(h)) {
        hwloc_topology_destroy(h);
        return util_error("cannot map this machine: hwloc failed to load its topology"), UTIL_EIO;
    }
    t->source = TOPO_SOURCE_LIVE;
    char host[256] = "";
    if (gethostname(host, sizeof(host) - 1) == 0)
        t->host = topo_text(host);
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

/* This build's hwloc reads exports of its own major version and older ones: 1.x, 2.x. */
static int check_hwloc_version(const char *name, xmlNode *root)
{
    xmlChar *v = xmlGetProp(root, (const xmlChar *)"version");
    long newest = HWLOC_API_VERSION >> 16; /* hwloc 2.9's API version is 0x00020800 */
    char *end = NULL, shown[32];
    long major = v ? strtol((const char *)v, &end, 10) : 1;
    int rc = 0;
    if (v && (end == (char *)v || major < 1 || (*end && *end != '.'))) {
        util_error("cannot read topology '%s': <topology version=\"%s\">: not a hwloc XML version: "
                   "export the node again with lstopo --of xml",
                   name, topo_text_into((const char *)v, shown, sizeof(shown)));
        rc = UTIL_EINVAL;
    } else if (major > newest) {
        util_error(
            "cannot read topology '%s': hwloc XML version %s is newer than this build's hwloc "
            "%s reads: convert it with lstopo from hwloc %ld (lstopo -i '%s' --of v2xml "
            "converted.xml), or export the node with lstopo --of v2xml",
            name, topo_text_into((const char *)v, shown, sizeof(shown)), HWLOC_VERSION, major,
            name);
        rc = UTIL_ENOTSUP;
    }
    xmlFree(v);
    return rc;
}

#define HWLOC_IMPORT_TIMEOUT_S 60 /* hwloc reads a 64 MiB export in a few seconds */

/* In the child: 0 when hwloc imports xml, 1 when it refuses it; a crash kills it. */
static void __attribute__((noreturn)) hwloc_import_child(const char *xml, int len)
{
    /* The parent's handlers are not this process's, nor a sanitizer's: a crash ends it. */
    static const int sigs[] = {SIGINT, SIGTERM, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        signal(sigs[i], SIG_DFL);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    struct rlimit no_core = {0, 0}, cpu = {HWLOC_IMPORT_TIMEOUT_S, HWLOC_IMPORT_TIMEOUT_S};
    setrlimit(RLIMIT_CORE, &no_core); /* a crash here is reported, not dumped */
    setrlimit(RLIMIT_CPU, &cpu);
    hwloc_topology_t h;
    int ok = hwloc_topology_init(&h) == 0;
    if (ok) {
        whole_machine(h, HWLOC_TYPE_FILTER_KEEP_ALL);
        ok = hwloc_topology_set_xmlbuffer(h, xml, len + 1) == 0 && hwloc_topology_load(h) == 0;
    }
    _exit(ok ? 0 : 1);
}

/*
 * hwloc's XML import trusts the file: hwloc 2.9 dereferences the DOCTYPE's
 * system id without checking it (<!DOCTYPE topology> crashed it) and crashes
 * in hwloc_topology_load on a NUMA node without complete_nodeset (found by
 * tests/fuzz/fuzz-hwloc-xml.c). So hwloc imports xml first in a child process:
 * a crash or a hang there is a damaged file, reported as such, and this
 * process imports only what hwloc imported there (the same bytes, the same
 * library: the same outcome). Returns 0, or prints why not.
 */
static int hwloc_import_probe(const char *name, const char *xml, int len)
{
    int fds[2]; /* the child holds the write end: EOF when it is gone */
    if (pipe2(fds, O_CLOEXEC))
        return util_error("cannot read topology '%s': %s", name, strerror(errno)), UTIL_EIO;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        hwloc_import_child(xml, len);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return util_error("cannot read topology '%s': %s", name, strerror(errno)), UTIL_EIO;
    }
    double deadline = util_clock_s() + HWLOC_IMPORT_TIMEOUT_S;
    int timed_out = 0;
    for (;;) {
        struct pollfd p = {.fd = fds[0], .events = POLLIN};
        int left_ms = (int)((deadline - util_clock_s()) * 1000);
        int ready = left_ms > 0 ? poll(&p, 1, left_ms) : 0;
        char byte;
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready > 0 && read(fds[0], &byte, 1) > 0)
            continue; /* nothing is written; only EOF or the deadline end the wait */
        timed_out = ready == 0;
        break;
    }
    close(fds[0]);
    if (timed_out)
        kill(pid, SIGKILL);
    int status = 0;
    pid_t got;
    while ((got = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    if (timed_out)
        return util_error(
                   "cannot read topology '%s': hwloc did not finish importing it in %d s: the "
                   "export is damaged or edited; export the node again with lstopo --of xml",
                   name, HWLOC_IMPORT_TIMEOUT_S),
               UTIL_EINVAL;
    if (got == pid && WIFSIGNALED(status))
        return util_error("cannot read topology '%s': hwloc crashed importing it (signal %d): the "
                          "export is damaged or edited; export the node again with lstopo --of xml",
                          name, WTERMSIG(status)),
               UTIL_EINVAL;
    if (got == pid && WEXITSTATUS(status) != 0)
        return util_error("cannot read topology '%s': hwloc rejected the XML export (check that it "
                          "comes from lstopo --of xml)",
                          name),
               UTIL_EINVAL;
    return 0; /* or reaped by someone else (SIGCHLD ignored): the import below decides */
}

/* The largest os_index a PU or NUMA node may have: the largest machines hwloc describes have a
 * few tens of thousands of PUs. */
#define HWLOC_MAX_OS_INDEX (1 << 20)

/*
 * hwloc sets bit os_index of a bitmap for every PU and NUMA node, and takes a missing os_index
 * for the largest unsigned: one such object costs half a GiB and seconds, a few exhaust the
 * machine (found by tests/fuzz/fuzz-hwloc-xml.c). hwloc writes os_index for every PU and NUMA
 * node it exports, so one without it, or beyond any machine, is a damaged file. The type is read
 * by hwloc's own parser, which takes any case and aliases ("numanode", "NUMA", "node"). Returns
 * 0, or prints why not.
 */
static int check_os_indexes(const char *name, xmlNode *node)
{
    for (; node; node = node->next) {
        if (node->type != XML_ELEMENT_NODE)
            continue;
        xmlChar *type = xmlStrcmp(node->name, (const xmlChar *)"object") == 0
                            ? xmlGetProp(node, (const xmlChar *)"type")
                            : NULL;
        hwloc_obj_type_t kind_of;
        int indexed = type && hwloc_type_sscanf((const char *)type, &kind_of, NULL, 0) == 0 &&
                      (kind_of == HWLOC_OBJ_PU || kind_of == HWLOC_OBJ_NUMANODE);
        xmlChar *v = indexed ? xmlGetProp(node, (const xmlChar *)"os_index") : NULL;
        char *end = NULL, shown[32], kind[16];
        long index = v ? strtol((const char *)v, &end, 10) : -1;
        int bad =
            indexed && (!v || end == (char *)v || *end || index < 0 || index >= HWLOC_MAX_OS_INDEX);
        if (bad) {
            topo_text_into((const char *)type, kind, sizeof(kind));
            if (v)
                util_error("cannot read topology '%s': line %ld: <object type=\"%s\"> has "
                           "os_index=\"%s\", not an index below %d: the export is damaged or "
                           "edited; export the node again with lstopo --of xml",
                           name, xmlGetLineNo(node), kind,
                           topo_text_into((const char *)v, shown, sizeof(shown)),
                           HWLOC_MAX_OS_INDEX);
            else
                util_error("cannot read topology '%s': line %ld: <object type=\"%s\"> has no "
                           "os_index, which hwloc writes for every one it exports: the export is "
                           "damaged or edited; export the node again with lstopo --of xml",
                           name, xmlGetLineNo(node), kind);
        }
        xmlFree(v);
        xmlFree(type);
        if (bad || check_os_indexes(name, node->children))
            return UTIL_EINVAL;
    }
    return 0;
}

/* 1 when an object below node, or node, is of type (any case, as hwloc reads it). */
static int has_object(xmlNode *node, const char *type)
{
    for (; node; node = node->next) {
        if (node->type != XML_ELEMENT_NODE || xmlStrcmp(node->name, (const xmlChar *)"object"))
            continue;
        xmlChar *t = xmlGetProp(node, (const xmlChar *)"type");
        int found = t && !xmlStrcasecmp(t, (const xmlChar *)type);
        xmlFree(t);
        if (found || has_object(node->children, type))
            return 1;
    }
    return 0;
}

/* 1 for hwloc 1.x's export of several machines: a System root holding Machines (one machine's
 * root is its Machine; hwloc 2 takes a System root alone as one), which hwloc 2 refuses ("invalid
 * normal object Machine P#0 without cpuset", hidden with its other complaints). */
static int several_machines(xmlNode *topology)
{
    for (xmlNode *n = topology ? topology->children : NULL; n; n = n->next)
        if (n->type == XML_ELEMENT_NODE && !xmlStrcmp(n->name, (const xmlChar *)"object")) {
            xmlChar *type = xmlGetProp(n, (const xmlChar *)"type");
            int system = type && !xmlStrcasecmp(type, (const xmlChar *)"System");
            xmlFree(type);
            return system && has_object(n->children, "Machine");
        }
    return 0;
}

/*
 * hwloc gets our parse written back as UTF-8 without any DOCTYPE (it would
 * honour whatever encoding the file declares), imported first in a child
 * (hwloc_import_probe), then here.
 */
static int load_hwloc_xml(struct topo *t, const char *name, xmlDoc *doc)
{
    if (check_os_indexes(name, xmlDocGetRootElement(doc)))
        return UTIL_EINVAL;
    if (several_machines(xmlDocGetRootElement(doc)))
        return util_error("cannot read topology '%s': an hwloc 1.x export of several machines (its "
                          "root object a System), which hwloc 2 cannot import: export each node "
                          "alone (lstopo --of xml on it)",
                          name),
               UTIL_EINVAL;
    xmlDtd *dtd = xmlGetIntSubset(doc);
    if (dtd) {
        xmlUnlinkNode((xmlNode *)dtd);
        xmlFreeDtd(dtd);
    }
    xmlChar *xml = NULL;
    int len = 0;
    xmlDocDumpMemoryEnc(doc, &xml, &len, "UTF-8");
    if (!xml)
        return UTIL_ENOMEM;
    /* hwloc boxes its complaints about a file in a dozen stderr lines; ours is one line. */
    setenv("HWLOC_HIDE_ERRORS", "2", 0);
    hwloc_topology_t h;
    int rc = hwloc_import_probe(name, (const char *)xml, len);
    if (!rc && hwloc_topology_init(&h))
        rc = UTIL_ENOMEM;
    if (rc) {
        xmlFree(xml);
        return rc;
    }
    whole_machine(h, HWLOC_TYPE_FILTER_KEEP_ALL);
    /* hwloc wants the size including the final NUL. */
    if (hwloc_topology_set_xmlbuffer(h, (const char *)xml, len + 1) || hwloc_topology_load(h)) {
        hwloc_topology_destroy(h);
        xmlFree(xml);
        return util_error("cannot read topology '%s': hwloc rejected the XML export (check that it "
                          "comes from lstopo --of xml)",
                          name),
               UTIL_EINVAL;
    }
    xmlFree(xml);
    t->source = TOPO_SOURCE_HWLOC_XML;
    rc = topo_read_hwloc(t, h, 0);
    hwloc_topology_destroy(h);
    return rc;
}

static void xml_silent(void *ctx, const char *msg, ...)
{
    (void)ctx;
    (void)msg;
}

/* What the parse of one XML file met first: an error, or a DTD declaration we refuse. */
struct xml_guard {
    int line;
    char what[200];
};

static void guard_stop(xmlParserCtxt *c, const char *what)
{
    struct xml_guard *g = c->_private;
    if (!g->what[0]) {
        g->line = c->input ? c->input->line : 0;
        snprintf(g->what, sizeof(g->what), "%s", what);
    }
    xmlStopParser(c);
}

/*
 * Neither hwloc exports nor NCCL topology files have an internal DTD subset,
 * and one is the only place a file can declare entities (billion laughs). The
 * parse stops at its '[', before any declaration in it is read.
 */
static void guard_internal_subset(void *ctx, const xmlChar *name, const xmlChar *external_id,
                                  const xmlChar *system_id)
{
    xmlParserCtxt *c = ctx;
    if (c->input && c->input->cur && *c->input->cur == '[') {
        guard_stop(c, "the DOCTYPE has an internal DTD subset ([...]), which no hwloc export or "
                      "NCCL topology file has: remove it");
        return;
    }
    xmlSAX2InternalSubset(ctx, name, external_id, system_id);
}

static void guard_entity_decl(void *ctx, const xmlChar *name, int type, const xmlChar *public_id,
                              const xmlChar *system_id, xmlChar *content)
{
    (void)name;
    (void)type;
    (void)public_id;
    (void)system_id;
    (void)content;
    guard_stop(ctx, "the file declares an entity, which no topology file does: remove it");
}

/* libxml2 reports errors in order; the first is the cause, the rest follow from it. */
static void guard_error(void *ctx, xmlError *e)
{
    xmlParserCtxt *c = ctx;
    struct xml_guard *g = c->_private;
    if (g->what[0] || !e || e->level < XML_ERR_ERROR || !e->message)
        return;
    char raw[160], msg[160];
    snprintf(raw, sizeof(raw), "%s", e->message);
    raw[strcspn(raw, "\n")] = '\0'; /* libxml2's messages end in a newline */
    topo_text_into(raw, msg, sizeof(msg));
    g->line = e->line;
    if (strstr(e->message, "too long") || strstr(e->message, "Huge input lookup"))
        snprintf(g->what, sizeof(g->what),
                 "%s longer than %d bytes (libxml2's limit): no topology file has one; check "
                 "that this is the file you meant",
                 e->code == XML_ERR_ATTRIBUTE_NOT_FINISHED ? "an attribute value"
                                                           : "a name, text or comment",
                 XML_MAX_TEXT_LENGTH);
    else
        snprintf(g->what, sizeof(g->what), "not well-formed XML: %s", msg);
}

/*
 * Parses data with nothing loaded from the network or disk, no entity
 * substituted and libxml2's size limits on (no XML_PARSE_HUGE). Returns the
 * document (caller frees it with xmlFreeDoc) or NULL after printing the first
 * problem with its line.
 */
static xmlDoc *parse_xml(const char *name, const char *data, size_t len)
{
    struct xml_guard g = {0};
    xmlSetGenericErrorFunc(NULL, xml_silent);
    xmlParserCtxt *c = xmlNewParserCtxt();
    if (!c)
        return NULL;
    c->_private = &g;
    c->sax->internalSubset = guard_internal_subset;
    c->sax->entityDecl = guard_entity_decl;
    c->sax->serror = guard_error;
    xmlDoc *doc = xmlCtxtReadMemory(c, data, (int)len, name, NULL,
                                    XML_PARSE_NONET | XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES);
    if (doc && (g.what[0] || !c->wellFormed)) {
        xmlFreeDoc(doc);
        doc = NULL;
    }
    if (!doc)
        util_error("cannot read topology '%s': line %d: %s", name, g.line,
                   g.what[0] ? g.what : "not well-formed XML");
    xmlFreeParserCtxt(c);
    return doc;
}

static int load_xml(struct topo *t, const char *name, const char *data, size_t len)
{
    xmlDoc *doc = parse_xml(name, data, len);
    if (!doc)
        return UTIL_EINVAL;
    xmlNode *root = xmlDocGetRootElement(doc);
    int rc;
    if (root && xmlStrcmp(root->name, (const xmlChar *)"topology") == 0) {
        rc = check_hwloc_version(name, root);
        if (!rc)
            rc = load_hwloc_xml(t, name, doc);
    } else if (root && xmlStrcmp(root->name, (const xmlChar *)"system") == 0) {
        t->source = TOPO_SOURCE_NCCL_XML;
        rc = topo_read_nccl_xml(t, name, doc);
    } else {
        char shown[64];
        util_error("cannot read topology '%s': neither a hwloc XML export (<topology>) nor an NCCL "
                   "topology file (<system version=\"1\">): the root element is <%s>",
                   name,
                   topo_text_into(root ? (const char *)root->name : "", shown, sizeof(shown)));
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
        char shown[sizeof(err.text)];
        util_error("cannot read topology '%s': not valid JSON (line %d: %s)", name,
                   doc ? 1 : err.line,
                   doc ? "expected an object" : topo_text_into(err.text, shown, sizeof(shown)));
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
        util_error(
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
    const char *nul = memchr(data, '\0', len);
    if (len > TOPO_MAX_INPUT) {
        util_error("cannot read topology '%s': larger than 64 MiB, far more than any topology file",
                   name);
        return UTIL_EINVAL;
    }
    if (len >= 2 &&
        ((data[0] == '\xff' && data[1] == '\xfe') || (data[0] == '\xfe' && data[1] == '\xff'))) {
        util_error(
            "cannot read topology '%s': UTF-16 text (a Windows editor's): convert it to UTF-8 "
            "(iconv -f UTF-16 -t UTF-8 FILE)",
            name);
        return UTIL_EINVAL;
    }
    if (nul) {
        util_error("cannot read topology '%s': a NUL byte at offset %zu: not a text file (topology "
                   "files are XML or JSON text)",
                   name, (size_t)(nul - data));
        return UTIL_EINVAL;
    }
    if (len >= 3 && !memcmp(data, "\xef\xbb\xbf", 3)) { /* UTF-8's byte order mark, as editors
                                                         * save it: the text starts after it */
        data += 3;
        len -= 3;
    }
    while (i < len && isspace((unsigned char)data[i]))
        i++;
    if (i == len) {
        util_error("cannot read topology '%s': the file is empty", name);
        return UTIL_EINVAL;
    }
    t->source_path = topo_strdup(name);
    if (data[i] == '{') {
        int rc = load_json(t, name, data, len);
        return rc ? rc : finish(t);
    }
    if (data[i] != '<') {
        util_error("cannot read topology '%s': not XML: expected a hwloc XML export or an NCCL "
                   "topology XML",
                   name);
        return UTIL_EINVAL;
    }
    int rc = load_xml(t, name, data, len);
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
        t->host = topo_text(host);
    }
    topo_probe_system(t);
    if (!t->software.nccl)
        topo_probe_software(t);
    return 0;
}

/* The file named is not there: said, with the shipped spec of that name where one is installed
 * (README's examples name profiles/specs/X.json, the source tree's: installed, they live under
 * PREFIX/share/topotune/specs/). */
static void not_found(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    struct util_buf rel = UTIL_BUF_INIT, found = UTIL_BUF_INIT;
    util_buf_addf(&rel, "specs/%s%s", base, strchr(base, '.') ? "" : ".json");
    if (*base && strcmp(base, ".") && strcmp(base, "..") && !strchr(base, '/') &&
        !util_data_file(util_buf_str(&rel), &found) && strcmp(util_buf_str(&found), path))
        util_error("cannot read topology '%s': no such file (the shipped spec of that name is "
                   "'%s')",
                   path, util_buf_str(&found));
    else
        util_error("cannot read topology '%s': no such file", path);
    util_buf_release(&rel);
    util_buf_release(&found);
}

/*
 * Reads a topology file into out: a regular file only, opened without blocking
 * (a FIFO without a writer would wait forever), at most TOPO_MAX_INPUT bytes.
 * Prints the reason and returns a UTIL_E* code otherwise.
 */
static int read_input(const char *path, struct util_buf *out)
{
    static const char kinds[] = "a hwloc XML export (lstopo --of xml), an NCCL topology XML, a "
                                "hardware spec or a topology JSON";
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT || e == ENOTDIR)
            not_found(path);
        else if (e == EACCES || e == EPERM)
            util_error(
                "cannot read topology '%s': permission denied: make it readable (chmod a+r) or "
                "run as a user who may read it",
                path);
        else
            util_error("cannot read topology '%s': %s", path, strerror(e));
        return e == ENOENT || e == ENOTDIR ? UTIL_ENOENT : e == ENOMEM ? UTIL_ENOMEM : UTIL_EIO;
    }
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st)) {
        util_error("cannot read topology '%s': %s", path, strerror(errno));
        rc = UTIL_EIO;
    } else if (S_ISDIR(st.st_mode)) {
        util_error("cannot read topology '%s': a directory: give a file, %s", path, kinds);
        rc = UTIL_EINVAL;
    } else if (!S_ISREG(st.st_mode)) {
        util_error("cannot read topology '%s': not a regular file (a FIFO, socket or device): save "
                   "the topology to a file first",
                   path);
        rc = UTIL_EINVAL;
    } else if ((unsigned long long)st.st_size > TOPO_MAX_INPUT) {
        util_error("cannot read topology '%s': larger than 64 MiB: %s is far smaller", path, kinds);
        rc = UTIL_EINVAL;
    }
    char chunk[65536];
    while (!rc) {
        ssize_t n = read(fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            util_error("cannot read topology '%s': %s", path, strerror(errno));
            rc = UTIL_EIO;
        } else if (n == 0) {
            break;
        } else if (out->len + (size_t)n > TOPO_MAX_INPUT) { /* it grew while being read */
            util_error("cannot read topology '%s': larger than 64 MiB: %s is far smaller", path,
                       kinds);
            rc = UTIL_EINVAL;
        } else if (util_buf_add(out, chunk, (size_t)n)) {
            rc = UTIL_ENOMEM;
        }
    }
    close(fd);
    return rc;
}

int topo_load(struct topo *t, const char *input)
{
    const char *described = getenv("TOPOTUNE_TOPOLOGY");
    if (!input && described && *described)
        return topo_load_as_this_node(t, described);
    if (!input)
        return load_live(t);
    struct util_buf data = UTIL_BUF_INIT;
    int rc = read_input(input, &data);
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

void topo_infer_nvlink(struct topo *t)
{
    const struct topo_gpu_info *model = NULL;
    if (t->nvlink_known || t->ngpus < 1 || !t->nvlink)
        return;
    for (int i = 0; i < t->ngpus; i++) {
        const struct topo_gpu_info *gi = topo_gpu_info_by_name(t->gpus[i].model);
        if (!gi || gi->nvlinks <= 0 || (model && gi != model))
            return; /* unknown, PCIe or bridged, or mixed: nothing safe to assume */
        model = gi;
    }
    if (!(t->nvswitches > 0 || model->switched))
        return; /* an SXM board without switches (DGX-1's cube mesh): its links vary */
    int *fabric = util_xcalloc((size_t)t->ngpus, sizeof(int));
    for (int i = 0; i < t->ngpus; i++)
        fabric[i] = model->nvlinks;
    topo_set_nvlink_totals(t, fabric);
    free(fabric);
    if (t->nvswitches <= 0)
        t->nvswitches = TOPO_UNKNOWN; /* in the rack, not on this host's PCI: present, uncounted */
    t->nvlink_known = t->nvlink_inferred = 1;
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

int topo_visible_gpus(const struct topo *t, int *limited)
{
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    if (limited)
        *limited = v != NULL;
    if (!v)
        return t->ngpus;
    int n = 0;
    for (const char *q = v; *q; q += strcspn(q, ","), q += *q == ',')
        n += strcspn(q, ",") > 0;
    return t->ngpus > 0 && n > t->ngpus ? t->ngpus : n; /* none seen here: the variable's */
}

int topo_iface_is_virtual(const char *name)
{
    const char *prefixes[] = {"docker", "virbr", "veth", "br-", "cni", "flannel", "cali", "lxc"};
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}
