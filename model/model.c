/* SPDX-License-Identifier: MIT */
/*
 * The analytic all_reduce model. Constants are NCCL's (src/graph/tuning.cc and
 * src/graph/topo.h in NVIDIA/nccl, cited in docs/model.md); link rates come from the topology.
 * Calibrated from those alone: published end-to-end results are kept aside to
 * validate it (docs/model.md).
 */
#include "model/model.h"
#include "util/log.h"
#include "util/mem.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum arch { VOLTA, AMPERE, HOPPER, BLACKWELL };

/* Base latency (us) per algorithm and protocol (LL, LL128, Simple). */
static const double base_lat[MODEL_NALGOS][MODEL_NPROTOS] = {
    {6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {8.0, 8.0, 8.0}};
/* Hardware latency per step: NVLink, PCI, network. */
static const double nvl_lat[MODEL_NALGOS][MODEL_NPROTOS] = {
    {.6, 1.25, 4.0}, {.6, 1.9, 3.4}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0}};
static const double pci_lat[MODEL_NALGOS][MODEL_NPROTOS] = {
    {1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}};
static const double net_lat[MODEL_NALGOS][MODEL_NPROTOS] = {
    {5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 14}};

/* Caps per channel (GB/s); columns: 1 node, 2 nodes, more. */
static const double ll_max_1node[4] = {39.0, 87.7, 141.0, 282.0};
static const double ll_max_multi[2][2] = {{39.0, 20.4}, {22.5, 19.0}}; /* Intel, AMD */
static const double ring_ll128_cap[4] = {20, 20, 36.7, 40};
static const double tree_ll128_cap[4][3] = {
    {20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
static const double tree_cap[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
static const double nvlstree_cap[4][3] = {{0, 0, 0}, {0, 0, 0}, {0, 57.7, 45.5}, {0, 96.0, 80.0}};
static const double nvls_eff[4] = {0, 0, 0.85, 0.74};

/* treeCorrectionFactor[proto][log2(bytes/64)] */
static const double tree_correction[MODEL_NPROTOS][24] = {
    {1, 1, 1, 1, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1, 1, 1, 1, 1},
    {1, 1, 1, 1, 1, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1, 1, 1},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
     .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};

static const char *algo_names[MODEL_NALGOS] = {"TREE", "RING", "NVLS", "NVLSTREE", "PAT"};

/* Per collective: nccl-tests' name, NCCL's function name in NCCL_ALGO/NCCL_PROTO (NULL: a
 * point-to-point pattern), the tuner table's function (-1: none), whether it reduces, has a root
 * and is cut in a part per rank. */
static const struct {
    const char *name, *func;
    int tuner, reduces, rooted, parts;
} colls[MODEL_NCOLLS] = {
    [MODEL_ALL_REDUCE] = {"all_reduce", "allreduce", TUNER_COLL_ALLREDUCE, 1, 0, 0},
    [MODEL_ALL_GATHER] = {"all_gather", "allgather", TUNER_COLL_ALLGATHER, 0, 0, 1},
    [MODEL_REDUCE_SCATTER] = {"reduce_scatter", "reducescatter", TUNER_COLL_REDUCESCATTER, 1, 0, 1},
    [MODEL_BROADCAST] = {"broadcast", "broadcast", TUNER_COLL_BROADCAST, 0, 1, 0},
    [MODEL_REDUCE] = {"reduce", "reduce", TUNER_COLL_REDUCE, 1, 1, 0},
    [MODEL_ALLTOALL] = {"alltoall", NULL, -1, 0, 0, 1},
    [MODEL_SENDRECV] = {"sendrecv", NULL, -1, 0, 0, 0},
};

const char *model_coll_name(int coll)
{
    return coll >= 0 && coll < MODEL_NCOLLS ? colls[coll].name : NULL;
}

/* name without underscores, in lower case, and without a trailing "perf" (at most len - 1). */
static void coll_key(const char *name, char *out, size_t len)
{
    size_t n = 0;
    for (; *name && n + 1 < len; name++)
        if (*name != '_')
            out[n++] = (char)tolower((unsigned char)*name);
    out[n] = '\0';
    if (n > 4 && !strcmp(out + n - 4, "perf"))
        out[n - 4] = '\0';
}

int model_coll_parse(const char *name)
{
    char want[32], have[32];
    if (!name || strlen(name) >= sizeof(want))
        return -1;
    coll_key(name, want, sizeof(want)); /* all_gather, all_gather_perf, AllGather, allgather */
    for (int c = 0; c < MODEL_NCOLLS; c++) {
        coll_key(colls[c].name, have, sizeof(have));
        if (!strcmp(want, have))
            return c;
    }
    return -1;
}

const char *model_coll_names(void)
{
    return "all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv";
}

int model_coll_reduces(int coll)
{
    return coll >= 0 && coll < MODEL_NCOLLS && colls[coll].reduces;
}

int model_coll_rooted(int coll)
{
    return coll >= 0 && coll < MODEL_NCOLLS && colls[coll].rooted;
}

int model_coll_parts(int coll)
{
    return coll >= 0 && coll < MODEL_NCOLLS && colls[coll].parts;
}

int model_coll_tuner(int coll)
{
    return coll >= 0 && coll < MODEL_NCOLLS ? colls[coll].tuner : -1;
}

int model_coll_p2p(int coll)
{
    return coll >= 0 && coll < MODEL_NCOLLS && !colls[coll].func;
}

int model_coll_runs(int coll, int algo, int nodes, int collnet)
{
    if (coll < 0 || coll >= MODEL_NCOLLS || !colls[coll].func)
        return 0;
    int ar = coll == MODEL_ALL_REDUCE,
        ag_rs = coll == MODEL_ALL_GATHER || coll == MODEL_REDUCE_SCATTER;
    switch (algo) {
    case MODEL_ALGO_RING:
        return 1;
    case MODEL_ALGO_TREE:
        return ar;
    case MODEL_ALGO_NVLS:
        return (ar || ag_rs) && (nodes <= 1 || collnet);
    case MODEL_ALGO_NVLSTREE:
        return ar && nodes > 1;
    case MODEL_ALGO_PAT:
        return ag_rs;
    default:
        return 0;
    }
}

double model_coll_bus_factor(int coll, int nranks)
{
    double n = nranks > 0 ? nranks : 1;
    switch (coll) {
    case MODEL_ALL_REDUCE:
        return 2 * (n - 1) / n;
    case MODEL_ALL_GATHER:
    case MODEL_REDUCE_SCATTER:
    case MODEL_ALLTOALL:
        return (n - 1) / n;
    default: /* broadcast, reduce, sendrecv */
        return 1;
    }
}
static const char *proto_names[MODEL_NPROTOS] = {"LL", "LL128", "SIMPLE"};

const char *model_env_none(const char *name, void *ctx)
{
    (void)name, (void)ctx;
    return NULL;
}

const char *model_fault_words(enum model_fault f)
{
    return f == MODEL_FAULT_HANG_INIT   ? "hang at init"
           : f == MODEL_FAULT_FAIL_INIT ? "error at init"
           : f == MODEL_FAULT_CRASH     ? "crash (SIGBUS) at the first collective"
                                        : "error at the first collective";
}

const char *model_algo_name(int algo)
{
    return algo_names[algo];
}

const char *model_proto_name(int proto)
{
    return proto_names[proto];
}

static enum arch arch_of(int sm)
{
    return sm >= 100 ? BLACKWELL : sm >= 90 ? HOPPER : sm >= 80 ? AMPERE : VOLTA;
}

/* NCCL's NVLink bandwidth per link (GB/s) by SM. */
static double nvlink_link_bw(int sm)
{
    if (sm >= 100)
        return 40.1;
    if (sm >= 90)
        return 20.6;
    if (sm == 86 || sm == 89)
        return 12.0;
    if (sm >= 70)
        return 20.0;
    return 18.0;
}

/* NCCL's PCIe bandwidth: width x per-lane speed / 80 (Gen3 x16 = 12, Gen4 = 24, Gen5 = 48). */
static double pcie_bw(const struct topo_gpu *g)
{
    static const double lane[] = {60, 15, 30, 60, 120, 240, 480};
    int gen, width;
    topo_gpu_pcie_link(g, &gen, &width);
    return width * lane[gen] / 80.0;
}

/* Inter-socket bandwidth (GB/s) NCCL assigns by CPU. */
static double cpu_bw(const struct topo *t)
{
    const char *v = t->cpu.vendor ? t->cpu.vendor : "";
    if (strstr(v, "AMD"))
        return 16;
    if (strstr(v, "IBM") || (t->cpu.model && strstr(t->cpu.model, "POWER")))
        return 32;
    if (strstr(v, "ARM"))
        return 6;
    return 10; /* Intel Skylake-class QPI/UPI */
}

/* Path levels in NCCL's order, for P2P and GDR levels. */
static int level_of(const char *s)
{
    static const char *names[] = {"LOC", "NVL", "NVB", "PIX", "PXB", "PHB", "SYS"};
    if (!s)
        return -1;
    if (strncmp(s, "NV", 2) == 0 && isdigit((unsigned char)s[2]))
        return 1;
    if (strcmp(s, "NODE") == 0)
        return 5;
    for (int i = 0; i < 7; i++)
        if (strcasecmp(s, names[i]) == 0)
            return i;
    if (isdigit((unsigned char)s[0])) { /* legacy integers 0..4: LOC PIX PXB PHB SYS */
        static const int legacy[] = {0, 3, 4, 5, 6};
        int v = atoi(s);
        return legacy[v < 0 ? 0 : v > 4 ? 4 : v];
    }
    return -1;
}

/*
 * NCCL_ALGO / NCCL_PROTO: "Ring,Tree", "^NVLS", or per function
 * "allreduce:ring;broadcast:tree" (the first entry may omit the function).
 * Fills allowed[] for function func's entry ("allreduce", "allgather"...), and *listed with 1
 * when an inclusion list applies to it (not "^...", not an entry of other functions only).
 * Returns 0, or -1 for a name NCCL does not know (written to bad).
 */
static int parse_list(const char *value, const char *func, const char *const *names, int n,
                      int *allowed, int *listed, char *bad, size_t badlen)
{
    *listed = 0;
    for (int i = 0; i < n; i++)
        allowed[i] = 1;
    if (!value || !*value)
        return 0;
    char buf[256];
    const char *list = NULL;
    snprintf(buf, sizeof(buf), "%s", value);
    char *save = NULL;
    for (char *part = strtok_r(buf, ";", &save); part; part = strtok_r(NULL, ";", &save)) {
        char *colon = strchr(part, ':');
        if (!colon && !list)
            list = part;
        else if (colon && (size_t)(colon - part) == strlen(func) &&
                 strncasecmp(part, func, (size_t)(colon - part)) == 0)
            list = colon + 1;
    }
    if (!list)
        return 0;
    int exclude = list[0] == '^';
    *listed = !exclude;
    for (int i = 0; i < n; i++)
        allowed[i] = exclude;
    char items[256];
    snprintf(items, sizeof(items), "%s", list + exclude);
    char *save2 = NULL;
    for (char *it = strtok_r(items, ",", &save2); it; it = strtok_r(NULL, ",", &save2)) {
        int found = 0;
        for (int i = 0; i < n; i++)
            if (strcasecmp(it, names[i]) == 0) {
                allowed[i] = !exclude;
                found = 1;
            }
        if (!found && strcasecmp(it, "CollNetDirect") && strcasecmp(it, "CollNetChain")) {
            snprintf(bad, badlen, "%s", it);
            return -1;
        }
    }
    return 0;
}

/*
 * NCCL_SOCKET_IFNAME / NCCL_IB_HCA matching: comma list of prefixes, "^"
 * excludes, "=" asks for exact names. 1 when some name of names[] is selected.
 */
static int selects_any(const char *spec, const char *const *names, int n)
{
    int exclude = spec[0] == '^';
    const char *s = spec + exclude;
    int exact = s[0] == '=';
    s += exact;
    for (int i = 0; i < n; i++) {
        int match = 0;
        char buf[256];
        snprintf(buf, sizeof(buf), "%s", s);
        char *save = NULL;
        for (char *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
            char *port = strchr(it, ':'); /* IB_HCA entries may name a port: mlx5_0:1 */
            if (port)
                *port = '\0';
            match |= exact ? strcmp(names[i], it) == 0 : strncmp(names[i], it, strlen(it)) == 0;
        }
        if (match != exclude)
            return 1;
    }
    return 0;
}

static const char *cell(const struct topo *t, int a, int b)
{
    return t->matrix[a * (t->ngpus + t->nnics) + b];
}

static void fault(struct model *m, enum model_fault f, const char *why)
{
    if (m->fault == MODEL_FAULT_NONE) {
        m->fault = f;
        snprintf(m->why, sizeof(m->why), "%s", why);
    }
}

static int is_rdma(const struct topo_nic *n)
{
    return topo_nic_rdma(n->kind);
}

/* Interface and HCA names a setting can select; a fault when it selects none. */
static void check_names(struct model *m, const struct topo *t, model_env_fn env, void *ctx)
{
    const char *names[512];
    int n = 0;
    const char *ifname = env("NCCL_SOCKET_IFNAME", ctx);
    if (ifname && *ifname) {
        names[n++] = "lo";
        for (int i = 0; i < t->nnics && n < 511; i++)
            if (t->nics[i].netdev || t->nics[i].kind == TOPO_NIC_ETH)
                names[n++] = t->nics[i].netdev ? t->nics[i].netdev : t->nics[i].name;
        if (!selects_any(ifname, names, n)) {
            char why[256];
            snprintf(why, sizeof(why),
                     "NCCL_SOCKET_IFNAME=%s matches no network interface: bootstrap "
                     "has no socket to listen on (NCCL: no socket interface found)",
                     ifname);
            fault(m, MODEL_FAULT_FAIL_INIT, why);
        }
    }
    const char *hca = env("NCCL_IB_HCA", ctx);
    n = 0;
    for (int i = 0; i < t->nnics && n < 512; i++)
        if (topo_nic_verbs(t->nics[i].kind) && t->nics[i].name)
            names[n++] = t->nics[i].name;
    /* beside EFA or Slingshot NCCL runs on its plugin, which does not read NCCL_IB_HCA */
    if (hca && *hca && !topo_libfabric_nics(t) && !selects_any(hca, names, n)) {
        char why[256];
        snprintf(why, sizeof(why),
                 "NCCL_IB_HCA=%s matches no RDMA device of this node (NCCL: NET/IB no "
                 "device found)",
                 hca);
        fault(m, MODEL_FAULT_FAIL_INIT, why);
    }
}

static int env_int(model_env_fn env, void *ctx, const char *name, int dflt)
{
    const char *v = env(name, ctx);
    return v && *v ? (int)strtol(v, NULL, 0) : dflt;
}

/*
 * The intra-node ring: NVLink where every pair has it and P2P may use it;
 * otherwise PCIe (P2P) or host memory (SHM), limited by the CPU interconnect
 * when the GPUs span sockets; the network when P2P and SHM are both off.
 * Also decides whether P2P would run over a path where it is broken.
 */
/* The driver reports no P2P between GPUs i and j (NVML's or CUDA's NS): NCCL's
 * ncclTopoCheckP2p then keeps the pair off P2P, and its path goes through host memory. */
static int p2p_refused(const struct topo *t, int i, int j)
{
    const char *s = t->p2p ? t->p2p[i * t->ngpus + j] : NULL;
    return s && strcmp(s, "NS") == 0;
}

/* A path level below one PCIe switch: PIX or PXB. */
static int below_switch(int level)
{
    return level == 3 || level == 4;
}

/* GPUs i and j behind one PCIe switch (on the PCIe tree, NVLinks aside). */
static int is_switch_mate(const struct topo *t, int i, int j)
{
    return i != j && below_switch(level_of(topo_gpu_pci_path(t, i, j)));
}

/*
 * Through host memory (SHM) every send goes up the GPU's PCIe switch's link to the CPU and every
 * receive comes down it, a switch-mate's too: GPUs behind one switch (PIX or PXB to each other on
 * the PCIe tree) share that link, taken as wide as their own. NCCL's search counts it so: a path
 * between GPUs without P2P goes through the CPU (paths.cc, addInterStep), and followPath
 * (search.cc) takes each path's bandwidth from every link it crosses, each direction its own.
 *
 * What goes through host memory is a group of GPUs joined by NVLinks in use (group[i], the
 * group's lowest index; NULL: each GPU its own): the ring enters it at one GPU and leaves it from
 * another (a lone GPU: the same). A group wholly behind a switch puts a send up its link and a
 * receive down it; one with a single GPU elsewhere puts one end there, up or down as the ring
 * chooses; one with two or more elsewhere can keep both ends away. So a switch carries at least
 * whole + half the forced ends each way, at most senders in all (a ring: every group; a chain of
 * the node's GPUs: one fewer). The slowest GPU's rate.
 */
static double shm_rate(const struct topo *t, const char *mate, const int *group, int senders)
{
    double rate = 1e9;
    int n = t->ngpus;
    int *in = util_xcalloc((size_t)n, sizeof(int)), *out = util_xcalloc((size_t)n, sizeof(int));
    for (int i = 0; i < n; i++) {
        for (int x = 0; x < n; x++)
            in[x] = out[x] = 0;
        for (int x = 0; x < n; x++) /* each group's GPUs behind i's switch, and elsewhere */
            (x == i || mate[i * n + x] ? in : out)[group ? group[x] : x]++;
        int whole = 0, forced = 0;
        for (int g = 0; g < n; g++) {
            whole += in[g] > 0 && out[g] == 0;
            forced += in[g] > 0 && out[g] == 1;
        }
        int k = whole + (forced + 1) / 2;
        k = k < senders ? k : senders;
        rate = fmin(rate, pcie_bw(&t->gpus[i]) / (k > 1 ? k : 1));
    }
    free(in);
    free(out);
    return rate;
}

/* The groups of GPUs joined by NVLinks (group[i]: the lowest index of GPU i's group). */
static void nvlink_groups(const struct topo *t, int *group)
{
    int n = t->ngpus;
    for (int i = 0; i < n; i++)
        group[i] = i;
    for (int changed = 1; changed;) { /* join until stable: n is small */
        changed = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                if (t->nvlink && t->nvlink[i * n + j] > 0 && group[j] < group[i]) {
                    group[i] = group[j];
                    changed = 1;
                }
    }
}

static int groups_of(const int *group, int n)
{
    int count = 0;
    for (int i = 0; i < n; i++)
        count += group[i] == i;
    return count;
}

/* Whether every pair of GPUs has NVLink, each pair as many links as pair (0, 1). */
static int even_mesh(const struct topo *t)
{
    int n = t->ngpus;
    if (!t->nvlink || n < 2)
        return 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j && (t->nvlink[i * n + j] <= 0 || t->nvlink[i * n + j] != t->nvlink[1]))
                return 0;
    return 1;
}

/* GPU i's NVLinks to the other GPUs (not its total: a topology JSON may state that apart). */
static int peer_links(const struct topo *t, int i)
{
    int n = t->ngpus, sum = 0;
    for (int j = 0; j < n; j++)
        if (j != i && t->nvlink[i * n + j] > 0)
            sum += t->nvlink[i * n + j];
    return sum;
}

static void intra(struct model *m, const struct topo *t, model_env_fn env, void *ctx)
{
    int n = t->ngpus, all_nvl = 1, spans_numa = 0;
    int amd = m->amd && n <= 2;
    int level =
        env_int(env, ctx, "NCCL_P2P_DISABLE", 0) == 1 ? 0 : level_of(env("NCCL_P2P_LEVEL", ctx));
    if (level < 0)
        level = amd ? 6 : 4; /* default PXB; SYS on AMD with two GPUs or fewer */
    double pcie = 1e9, link = nvlink_link_bw(m->sm), nvl = 1e9;
    int p2p_pcie = 0;
    for (int i = 0; i < n; i++) {
        pcie = fmin(pcie, pcie_bw(&t->gpus[i]));
        for (int j = 0; j < n; j++) {
            if (i == j)
                continue;
            int lv = level_of(cell(t, i, j));
            int links = t->nvlink ? t->nvlink[i * n + j] : 0;
            all_nvl &= links > 0;
            spans_numa |= lv == 6;
            if (links == 0 && lv >= 0 && lv <= level && !p2p_refused(t, i, j))
                p2p_pcie = 1;
            /* through switches a GPU's own links; unstated (a topology JSON may leave it
             * null), its pair's, which nvidia-smi prints as the GPU's links into the switches */
            if (links > 0)
                nvl = fmin(nvl, t->nvswitches != 0 && t->gpus[i].nvlinks > 0
                                    ? t->gpus[i].nvlinks * link
                                    : links * link);
        }
    }
    if (p2p_pcie && t->p2p_broken == 1)
        fault(
            m, MODEL_FAULT_HANG_INIT,
            "P2P is enabled over PCIe between GPUs whose P2P is broken (consumer GPUs or PCIe ACS "
            "redirect): NCCL hangs at init; set NCCL_P2P_DISABLE=1");
    int shm_off = env_int(env, ctx, "NCCL_SHM_DISABLE", 0) == 1;
    /* SHM buffers live in /dev/shm: per local peer a send and a receive side of
     * the Simple buffer plus the LL/LL128 ones (about 5 MiB). Containers default
     * to 64 MB, and NCCL dies of SIGBUS when the file cannot be backed. */
    int buff = env_int(env, ctx, "NCCL_BUFFSIZE", 4 << 20);
    double shm_need = (double)n * 2 * ((buff > 0 ? buff : 4 << 20) + 5.0 * (1 << 20));
    int uses_shm = !(all_nvl && level >= 1) && !p2p_pcie && !shm_off && n > 1;
    if (uses_shm && t->system.shm_bytes > 0 && (double)t->system.shm_bytes < shm_need) {
        char why[256];
        snprintf(
            why, sizeof(why),
            "the SHM transport needs about %.0f MB of /dev/shm for %d GPUs but it has %.0f MB: "
            "NCCL dies of SIGBUS (raise --shm-size, use --ipc=host, or a memory-backed volume)",
            shm_need / 1e6, n, (double)t->system.shm_bytes / 1e6);
        fault(m, MODEL_FAULT_CRASH, why);
    }
    double ring = pcie, chain = pcie, busy = pcie;
    if (uses_shm && n <= TOPO_MAX_DEVICES) {
        int group[TOPO_MAX_DEVICES];
        nvlink_groups(t, group);
        int *used = level >= 1 ? group : NULL; /* NVLinks carry their pairs unless P2P is off */
        int senders = used ? groups_of(group, n) : n;
        char *mate = util_xcalloc((size_t)n * (size_t)n, 1); /* behind one switch */
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                mate[i * n + j] = (char)is_switch_mate(t, i, j);
        ring = shm_rate(t, mate, used, senders);
        chain = shm_rate(t, mate, used, senders - 1);
        busy = shm_rate(t, mate, NULL, n); /* alltoall: every GPU sends through host memory */
        free(mate);
    }
    double cpu = spans_numa ? cpu_bw(t) : 1e9; /* the CPU interconnect carries one ring each way */
    if (all_nvl && n > 1 && level >= 1) {
        /* Through switches (or between two GPUs) each GPU drives all its links. In a mesh
         * without switches NCCL's search tries lower speeds per channel while its channels
         * carry less than a GPU's links (search.cc); where every pair has as many links, the
         * rings through all GPUs can share every link (4 H100s, 6 links a pair: all 6 directed
         * rings at 60 GB/s, 360 of 370.8, 24 channels once doubled, as NCCL logs). An uneven
         * mesh: half of a GPU's links to its peers each way. */
        m->intra_bw = nvl;
        m->pair_bw = nvl;
        if (t->nvswitches == 0 && n > 2) {
            double share = even_mesh(t) ? 1 : 0.5;
            m->intra_bw = 1e9;
            for (int i = 0; i < n; i++)
                m->intra_bw = fmin(m->intra_bw, peer_links(t, i) * link * share);
        }
        m->intra_nvlink = 1;
    } else if (p2p_pcie || !shm_off) {
        /* SHM: a copy through host memory */
        m->intra_bw = p2p_pcie && !spans_numa ? pcie : fmin(ring, cpu) * 0.8;
        if (uses_shm) {
            m->shm_busy_bw = fmin(busy, cpu) * 0.8;
            m->shm_chain_bw = fmin(chain, cpu) * 0.8;
        }
    } else {
        m->intra_net = 1;
        m->intra_bw = 0; /* filled from the network */
    }
}

/* NCCL's network of RDMA NICs: where libfabric's are (EFA, Slingshot), NCCL runs through the
 * aws-ofi-nccl plugin and sees only theirs, so verbs HCAs beside them carry nothing (a p6-b200's
 * two ConnectX-7 that manage its NVSwitches); else the verbs HCAs unless NCCL_IB_DISABLE. */
static int carries(const struct topo_nic *nic, int libfabric, int ib_off)
{
    return topo_nic_libfabric(nic->kind) || (!libfabric && !ib_off && is_rdma(nic));
}

/* The network between nodes: usable RDMA NICs (GDR or staged), or sockets. */
static void inter(struct model *m, const struct topo *t, model_env_fn env, void *ctx)
{
    int ib_off = env_int(env, ctx, "NCCL_IB_DISABLE", 0) == 1, libfabric = topo_libfabric_nics(t);
    int gdr_level = level_of(env("NCCL_NET_GDR_LEVEL", ctx));
    if (gdr_level < 0)
        gdr_level = 4; /* PXB */
    double rdma = 0, eth = 0, ipoib = 0;
    int gdr = 1, other_rdma = 0, rdma_unknown = 0, socket_unknown = 0;
    for (int i = 0; i < t->nnics; i++) {
        const struct topo_nic *nic = &t->nics[i];
        if (libfabric && nic->kind != TOPO_NIC_ETH && !topo_nic_libfabric(nic->kind))
            continue; /* not NCCL's network, nor its sockets' */
        double gbs = (nic->speed_gbps > 0 ? nic->speed_gbps : 10) / 8.0; /* NCCL: Mb/s / 8000 */
        m->nic_bw = fmax(m->nic_bw, gbs);
        if (nic->kind == TOPO_NIC_ETH) {
            eth += gbs;
            socket_unknown += nic->speed_gbps <= 0;
        } else if (carries(nic, libfabric, ib_off)) {
            rdma += gbs;
            m->net_nics += m->clique;
            m->net_nic_bw = fmax(m->net_nic_bw, gbs);
            rdma_unknown += nic->speed_gbps <= 0;
            other_rdma |= nic->kind != TOPO_NIC_EFA;
        } else {
            ipoib += gbs * 0.3; /* IB disabled: its IP interface over sockets */
            socket_unknown += nic->speed_gbps <= 0;
        }
        int best = 6;
        for (int g = 0; g < t->ngpus; g++) {
            int lv = level_of(cell(t, g, t->ngpus + i));
            best = lv >= 0 && lv < best ? lv : best;
        }
        if (carries(nic, libfabric, ib_off) && best > gdr_level)
            gdr = 0;
    }
    /* the NICs of no stated speed that carry the traffic: RDMA's, else the sockets' */
    m->nics_unknown = rdma > 0 ? rdma_unknown : socket_unknown;
    rdma *= m->clique, eth *= m->clique, ipoib *= m->clique; /* a clique's nodes' NICs */
    m->efa = rdma > 0 && !other_rdma; /* NCCL's net plugin is aws-ofi-nccl: EFA only */
    /* each GPU's NIC below its own switch, reached by GPUDirect RDMA: the NICs' traffic never
     * crosses a switch's link to the CPU */
    int below = rdma > 0 && gdr;
    for (int g = 0; below && g < t->ngpus; g++) {
        int has = 0;
        for (int i = 0; i < t->nnics && !has; i++) {
            int lv = level_of(cell(t, g, t->ngpus + i));
            has = carries(&t->nics[i], libfabric, ib_off) && below_switch(lv) && lv <= gdr_level;
        }
        below = has;
    }
    m->gdr_below = below;
    if (rdma > 0)
        m->inter_bw =
            rdma * (gdr ? 1.0 : 0.75); /* without GDR data is staged through host memory */
    else
        m->inter_bw = fmax(eth + ipoib, 1.25) * 0.6; /* sockets: TCP costs; at least a 10G port */
}

/* NCCL_BUFFSIZE: the Simple pipeline's step is buffsize/8; small steps cost per-step overhead. */
static double simple_eff(int buffsize)
{
    if (buffsize <= 0)
        return 1;
    double f = (double)buffsize / (buffsize + 262144.0), d = 4194304.0 / (4194304.0 + 262144.0);
    return f / d;
}

/* Which (algorithm, protocol) pairs NCCL would use for collective coll under NCCL_ALGO and
 * NCCL_PROTO, by its enable rules (src/graph/tuning.cc); fills m->enabled_coll[coll]. Returns -1
 * after a name NCCL does not know (a fault already set). */
static int enable_coll(struct model *m, const struct topo *t, model_env_fn env, void *ctx, int coll)
{
    int algo_ok[MODEL_NALGOS], proto_ok[MODEL_NPROTOS], algo_listed, proto_listed;
    char bad[64] = "", why[256];
    const char *func = colls[coll].func ? colls[coll].func : "allreduce";
    if (parse_list(env("NCCL_ALGO", ctx), func, algo_names, MODEL_NALGOS, algo_ok, &algo_listed,
                   bad, sizeof(bad))) {
        snprintf(why, sizeof(why),
                 "NCCL_ALGO names an unknown algorithm '%s' (NCCL: invalid usage)", bad);
        fault(m, MODEL_FAULT_FAIL_INIT, why);
        return -1;
    }
    if (parse_list(env("NCCL_PROTO", ctx), func, proto_names, MODEL_NPROTOS, proto_ok,
                   &proto_listed, bad, sizeof(bad))) {
        snprintf(why, sizeof(why),
                 "NCCL_PROTO names an unknown protocol '%s' (NCCL: invalid usage)", bad);
        fault(m, MODEL_FAULT_FAIL_INIT, why);
        return -1;
    }
    /* LL128 named for this function (NCCL keeps its own rule where the string is silent) */
    int ll128_forced = proto_listed && proto_ok[MODEL_PROTO_LL128];
    int ll128_safe = m->intra_nvlink && m->sm >= 70 && (m->nodes == 1 || m->sm >= 90);
    int nvls_ok = t->nvswitches != 0 && m->sm >= 90 && m->ppn >= 2 && !m->intra_net &&
                  env_int(env, ctx, "NCCL_NVLS_ENABLE", 2) != 0 && m->intra_nvlink;
    /* PAT: SM60 on; by default only with one GPU per node (ncclPatEnable) */
    int pat = env_int(env, ctx, "NCCL_PAT_ENABLE", 2);
    int pat_ok = m->sm >= 60 && pat != 0 && (pat == 1 || m->ppn == 1) && m->nranks > 1;
    for (int a = 0; a < MODEL_NALGOS; a++)
        for (int p = 0; p < MODEL_NPROTOS; p++) {
            /* the function's algorithms; CollNet is not modelled */
            int on = algo_ok[a] && proto_ok[p] && model_coll_runs(coll, a, m->nodes, 0);
            if (a == MODEL_ALGO_NVLS || a == MODEL_ALGO_NVLSTREE)
                on &= p == MODEL_PROTO_SIMPLE && nvls_ok;
            if (a == MODEL_ALGO_PAT)
                on &= p == MODEL_PROTO_SIMPLE && pat_ok;
            if (p == MODEL_PROTO_LL128)
                on &= ll128_safe || ll128_forced;
            m->enabled_coll[coll][a][p] = on;
        }
    if (coll == MODEL_ALL_REDUCE)
        m->ll128_unsafe = ll128_forced && !ll128_safe;
    return 0;
}

static void enable(struct model *m, const struct topo *t, model_env_fn env, void *ctx)
{
    for (int c = 0; c < MODEL_NCOLLS; c++)
        if (colls[c].func && enable_coll(m, t, env, ctx, c))
            return;
    memcpy(m->enabled, m->enabled_coll[MODEL_ALL_REDUCE], sizeof(m->enabled));
    int any = 0;
    for (int a = 0; a < MODEL_NALGOS; a++)
        for (int p = 0; p < MODEL_NPROTOS; p++)
            any |= m->enabled[a][p];
    if (!any)
        fault(m, MODEL_FAULT_FAIL_COLL,
              "NCCL_ALGO/NCCL_PROTO leave no algorithm and protocol usable here: the first "
              "collective "
              "fails (NCCL: no algorithm/protocol available)");
}

/* The hosts of one NVLink domain NCCL merges into one node: at most hosts. */
static int clique_hosts(int gpus, int nvlink_domain, int hosts)
{
    int per = nvlink_domain > gpus && gpus > 0 ? nvlink_domain / gpus : 1;
    return per < hosts ? per : hosts;
}

int model_nccl_nodes_of(int gpus, int nvlink_domain, int hosts)
{
    int h = hosts > 0 ? hosts : 1, c = clique_hosts(gpus, nvlink_domain, h);
    return (h + c - 1) / c;
}

int model_nccl_nodes(const struct topo *t, int hosts)
{
    return model_nccl_nodes_of(t->ngpus, t->nvlink_domain, hosts);
}

/* Multi-node NVLink (GB200/GB300 NVL72): NCCL merges the nodes of one NVLink domain into one
 * node, its clique (ncclTopoGetSystem with MNNVL): the clique's GPUs are that node's ranks, on
 * its NVLink fabric (NVLS included), and its nodes' NICs its network to the other cliques. */
static void clique(struct model *m, const struct topo *t)
{
    m->clique = clique_hosts(t->ngpus, t->nvlink_domain, m->nodes);
    if (m->clique <= 1) {
        m->clique = 1;
        return;
    }
    m->ppn = t->ngpus * m->clique;
    m->nodes = (m->nodes + m->clique - 1) / m->clique;
}

/* NCCL's p2p channels (its coll channels, at most NCCL_MAX_CTAS, rounded up to a power of two)
 * and chunk (P2P_NVL_CHUNKSIZE, at most an eighth of the Simple buffer) on a node of NVLinks;
 * paths.cc and init.cc. 32 channels is an assumption for every such node, true of HGX A100,
 * H100 and B200 (their logs print it) and a mesh of 4 H100s. */
static void p2p_setup(struct model *m, int max_ctas, model_env_fn env, void *ctx)
{
    int cap = max_ctas > 0 && max_ctas < 32 ? max_ctas : 32;
    m->p2p_channels = 1;
    while (m->p2p_channels < cap)
        m->p2p_channels *= 2;
    long chunk = env_int(env, ctx, "NCCL_P2P_NVL_CHUNKSIZE", 512 << 10);
    long buff = env_int(env, ctx, "NCCL_BUFFSIZE", 4 << 20);
    if (buff > 0 && chunk * 8 > buff)
        chunk = buff / 8;
    m->p2p_chunk = chunk >= 8 ? (size_t)chunk : 512u << 10;
}

/* NCCL's send/recv rate of one channel over the network, GB/s (NCCL_P2P_PER_CHANNEL_NET_BW) */
#define P2P_NET_CHANNEL_BW 14.0

static int pow2_up(int v)
{
    int p = 1;
    while (p < v)
        p *= 2;
    return p;
}

/*
 * The channels NCCL gives each peer of a send/recv across nodes (2.29 and later, paths.cc):
 * a network peer asks for a channel per P2P_NET_CHANNEL_BW of its NIC (NCCL_P2P_PER_CHANNEL_NET_BW,
 * 14 GB/s: 4 for a 400G NIC), a local peer for 2 per NVLink between them (2 over PCI or host
 * memory); the fewest, a power of two, is every peer's. Then, while that many times the batches
 * of 8 peers a rank may run at once exceeds the p2p channels, it halves: 80 ranks of 8x H100
 * keep 1 channel per peer, 16 ranks 4. The p2p channels across nodes are NCCL's channels: a
 * channel per NIC in its ring search, doubled twice (ncclTopoDupChannels, then connect.cc's
 * duplication), at most 16, as NCCL prints for two or more nodes of 8x H100 with 8 NICs.
 */
static int p2p_net_channels(const struct model *m, model_env_fn env, void *ctx)
{
    if (m->nodes <= 1 || m->net_nics <= 0)
        return 0;
    /* NCCL_NCHANNELS_PER_NET_PEER sets the count (no halving then); NCCL_P2P_PER_CHANNEL_NET_BW
     * the rate NCCL divides a NIC by (a channel still moves what it moves) */
    long set = env_int(env, ctx, "NCCL_NCHANNELS_PER_NET_PEER", 0);
    long per_bw = env_int(env, ctx, "NCCL_P2P_PER_CHANNEL_NET_BW", (long)P2P_NET_CHANNEL_BW);
    int per_peer =
        set > 0 && set <= 64 ? (int)set : (int)ceil(m->net_nic_bw / (per_bw > 0 ? per_bw : 14));
    per_peer = per_peer < 1 ? 1 : per_peer;
    if (m->ppn > 1) {
        int links = m->intra_nvlink ? (int)(m->pair_bw / nvlink_link_bw(m->sm) + 1e-9) : 1;
        links = links > 1 ? links : 1;
        per_peer = per_peer < 2 * links ? per_peer : 2 * links;
    }
    per_peer = pow2_up(per_peer);
    int channels = pow2_up(4 * m->net_nics / m->clique);
    channels = channels < 16 ? channels : 16;
    channels = channels < m->p2p_channels ? channels : m->p2p_channels;
    if (set > 0) /* as the user set it, within the p2p channels */
        return per_peer < channels ? per_peer : channels;
    int batches = (m->nranks + 7) / 8;
    while (per_peer * batches > channels && per_peer > 1)
        per_peer /= 2;
    return per_peer;
}

int model_init(struct model *m, const struct topo *t, int nodes, model_env_fn env, void *ctx)
{
    memset(m, 0, sizeof(*m));
    if (t->ngpus == 0 || !t->matrix)
        return -1;
    m->nodes = nodes > 0 ? nodes : (t->job_nodes > 0 ? t->job_nodes : 1);
    m->ppn = t->ngpus;
    m->nranks = m->ppn * m->nodes;
    clique(m, t);
    m->sm = 1000;
    for (int i = 0; i < t->ngpus; i++) {
        m->sm = t->gpus[i].sm > 0 && t->gpus[i].sm < m->sm ? t->gpus[i].sm : m->sm;
        m->gpus_unknown += t->gpus[i].sm <= 0;
    }
    int sm_known = m->sm != 1000;
    if (!sm_known)
        m->sm = 70;
    m->amd = t->cpu.vendor && strstr(t->cpu.vendor, "AMD") != NULL;
    m->net_overhead = m->amd ? 2.0 : 1.0;
    m->params = model_params_default;
    /* Faults in the order NCCL meets them (docs/model.md, "Where each fault happens"): the first
     * one wins. Bootstrap and network init come before any transport is set up, so a setting
     * that names no interface fails there, before P2P over a broken path could hang. */
    check_names(m, t, env, ctx);
    intra(m, t, env, ctx);
    /* A chain on one node pays a hop per forwarding rank where the published tables show it:
     * Volta and Ampere GPUs on NVSwitch (docs/model.md, "broadcast and reduce on one node");
     * elsewhere NCCL's one hop (ring_time). */
    m->chain_hops = m->nodes == 1 && m->intra_nvlink && t->nvswitches != 0 && sm_known &&
                            m->sm >= 70 && m->sm < 90
                        ? m->nranks - 1
                        : 1;
    if (m->nodes > 1 || m->intra_net)
        inter(m, t, env, ctx);
    if (m->intra_net) /* each GPU reaches its local peers through its share of the NICs */
        m->intra_bw = m->inter_bw / m->ppn;
    /* Across nodes a ring's part in a node is a chain from NIC to NIC: with each GPU's NIC below
     * its switch (GPUDirect RDMA), host memory carries one send fewer. */
    if (m->nodes > 1 && m->gdr_below && m->shm_chain_bw > 0)
        m->intra_bw = m->shm_chain_bw;
    if (m->ppn == 1)
        m->intra_bw = 1e4; /* no local peer: the network decides */
    static const double ladder_top[4] = {40, 40, 60, 90};
    m->channels = (int)ceil(m->intra_bw / ladder_top[arch_of(m->sm)]);
    m->channels = m->channels < 2 ? 2 : m->channels > 32 ? 32 : m->channels;
    /* A clique's rings and trees leave it through one NIC per channel: the network it reaches
     * is at most its channels' NICs, however many its nodes hold. */
    m->clique_net_bw = m->inter_bw;
    if (m->clique > 1 && m->nodes > 1)
        m->inter_bw = fmin(m->inter_bw, m->channels * m->nic_bw);
    int max_ctas = env_int(env, ctx, "NCCL_MAX_CTAS", env_int(env, ctx, "NCCL_MAX_NCHANNELS", 0));
    m->chan_scale =
        max_ctas > 0 && max_ctas < 2 * m->channels ? (double)max_ctas / (2 * m->channels) : 1;
    m->simple_eff = simple_eff(env_int(env, ctx, "NCCL_BUFFSIZE", 0));
    p2p_setup(m, max_ctas, env, ctx);
    m->p2p_net_channels = p2p_net_channels(m, env, ctx);
    enable(m, t, env, ctx);
    return 0;
}

void model_warn_assumed(const struct model *m, const struct topo *t, const char *source)
{
    if (m->gpus_unknown)
        util_warning("'%s': %d of its %d GPUs have no model the catalog knows: priced as Volta "
                     "GPUs on the links the file shows (a hardware spec names the GPU)",
                     source, m->gpus_unknown, m->ppn);
    if (!t->nvlink_known && t->ngpus > 1)
        util_warning("'%s' does not describe NVLink between its GPUs (an NCCL topology file "
                     "without <nvlink> elements, NCCL adds them at run time): every pair priced "
                     "over PCIe (a hardware spec names the fabric)",
                     source);
    if (m->nodes > 1 && m->nics_unknown)
        util_warning("'%s': %d of its NICs have no speed the source states (an hwloc export "
                     "records none): priced at 10 Gb/s across nodes (a hardware spec names them)",
                     source, m->nics_unknown);
    if (m->nodes > 1 && t->nnics == 0 && m->clique <= 1)
        util_warning("'%s' has no NIC: across nodes priced as sockets over a 10 Gb/s port (a "
                     "hardware spec names the NICs)",
                     source);
}

static int log2floor(double x)
{
    int l = 0;
    while (x >= 2) {
        x /= 2;
        l++;
    }
    return l;
}

/* Bus bandwidth NCCL assigns to (algorithm, protocol), before the conversion to algbw. The
 * network's share of its line rate is net_scale's for every algorithm as NCCL's tuning sees it
 * (share 0: it gives a ring and a tree the same network), and ring_net_scale's for a ring's time
 * (share 1: a ring's channels each stream through one NIC in large messages). */
static double bus_bw(const struct model *m, int a, int p, int share)
{
    enum arch ar = arch_of(m->sm);
    int scale = m->nodes == 1 ? 0 : m->nodes == 2 ? 1 : 2;
    double inter_bw = m->inter_bw * (share && a == MODEL_ALGO_RING ? m->params.ring_net_scale
                                                                   : m->params.net_scale);
    double total = m->nodes > 1 ? fmin(m->intra_bw, inter_bw) : m->intra_bw;
    /* Two nodes: NCCL's search raises a tree's intra bandwidth up to twice the network's (each
     * node sends and receives half the data once, where a ring crosses twice) and its tuning
     * reads bwIntra when nNodes <= 2 (src/graph/search.cc, tuning.cc). Not when local peers go
     * through the network too: then every hop shares the NICs. */
    if (a == MODEL_ALGO_TREE && m->nodes == 2 && !m->intra_net)
        total = fmin(m->intra_bw, 2 * inter_bw);
    double C = m->channels, bus = total * m->chan_scale;
    double ll_max = m->nodes == 1 ? ll_max_1node[ar] : ll_max_multi[m->amd][scale == 1 ? 0 : 1];
    if (a == MODEL_ALGO_RING) {
        if (p == MODEL_PROTO_LL)
            return fmin(ll_max, 0.5 * bus);
        if (p == MODEL_PROTO_LL128)
            return fmin(0.92 * bus, C * ring_ll128_cap[ar]);
        return bus * m->simple_eff;
    }
    if (a == MODEL_ALGO_TREE) {
        /* one GPU per node: NCCL's search can only build the simple tree pattern, which its
         * tuning prices at 0.85 (search.cc, ngpus == 1; tuning.cc: the tree graph's pattern,
         * maxTreePattern from 2.26) */
        double pattern = m->ppn == 1 ? 0.85 : 1;
        double tb = fmin(0.92 * bus, C * tree_cap[ar][scale]);
        if (p == MODEL_PROTO_LL)
            return fmin(tb / 3.8, ll_max) * pattern;
        if (p == MODEL_PROTO_LL128)
            return fmin(tb * (m->nodes == 1 ? 7.0 / 9 : 120.0 / 128),
                        C * tree_ll128_cap[ar][scale]) *
                   pattern;
        return tb * m->simple_eff * pattern;
    }
    /* NVLS / NVLSTree: NVSwitch multicast, 16 channels on Hopper, 24 or 32 on Blackwell. */
    double cn = ar == BLACKWELL ? (m->nodes > 1 ? 32 : 24) : 16;
    /* NVLS reduces in the switch: each GPU moves its data once at its link rate, whatever the
     * ranks, so its algbw is flat in the ranks and busbw follows nccl-tests' 2(n-1)/n. NCCL's
     * constants (and nvls_scale, fitted on nodes of 8) hold at 8 GPUs; 4 (a GB200 tray) or 72
     * (an NVL72 rack) scale from there. */
    double ranks = m->ppn > 1 ? 2.0 * (m->ppn - 1) / m->ppn / (2.0 * 7 / 8) : 1;
    double intra_ch =
        m->intra_bw / cn * nvls_eff[ar] * m->params.nvls_scale * (cn - 1) / cn * 2 * ranks;
    double bw = intra_ch;
    if (a == MODEL_ALGO_NVLSTREE)
        bw = fmin(fmin(intra_ch, inter_bw / cn * (m->nodes <= 2 ? 2 : 1)), nvlstree_cap[ar][scale]);
    return cn * bw * m->chan_scale;
}

/* NCCL's latency of (a, p) in us: the base and hops inside a node scaled by lat_scale, hops
 * between nodes by net_lat_scale (plus efa_lat_us each over EFA). */
static double latency(const struct model *m, int a, int p, size_t bytes)
{
    const struct model_params *k = &m->params;
    double intra = (m->intra_net ? net_lat : m->intra_nvlink ? nvl_lat : pci_lat)[a][p];
    double inter = net_lat[m->ppn == 1 ? MODEL_ALGO_TREE : a][p];
    double hop = inter * k->net_lat_scale + (m->efa ? k->efa_lat_us : 0);
    int n = m->nranks, nn = m->nodes;
    if (a == MODEL_ALGO_RING) {
        int steps = 2 * (n - 1), ninter = 2 * (nn - 1);
        double intra2 =
            nn > 1 ? fmax(intra, m->net_overhead * (p == MODEL_PROTO_SIMPLE ? 3 : 1)) : intra;
        double lat = (base_lat[a][p] + (steps - ninter) * intra2) * k->lat_scale + ninter * hop;
        if (nn > 1 && p == MODEL_PROTO_SIMPLE && bytes / ((size_t)m->channels * (size_t)n) >= 64)
            lat *= m->sm >= 80 ? 1.4 : 1.9;
        return lat;
    }
    if (a == MODEL_ALGO_TREE)
        return (base_lat[a][p] + 2 * (m->ppn - 1) * intra) * k->lat_scale + 2 * log2floor(nn) * hop;
    if (a == MODEL_ALGO_NVLS)
        return intra * k->lat_scale + (nn > 1 ? hop : 0);
    return intra * k->lat_scale + 2 * log2floor(nn) * hop;
}

/*
 * Simple's pipeline fill of (a, q) at bytes: fill_bytes, but NVLS and NVLSTree run one operation
 * per channel and NVLS head at once (heads: the domain's ranks, at most 32, NCCL's
 * NCCL_MAX_NVLS_ARITY), and NCCL sizes their chunks by the bytes the operations get (enqueue.cc):
 * NVLS from 128 KiB down to 64, 32 and 16 KiB below 64, 8 and 2 chunks per operation; NVLSTree
 * from 128 KiB (64 KiB from 4 nodes) down to 64 and 32 KiB below 4 and 1. Their fill is a few
 * chunks per operation: nvls_fill_bytes at 8 GPUs on 16 channels and 128 KiB chunks, in
 * proportion to the operations and the chunk (for NVLS, the bytes an operation has when that is
 * less than a chunk).
 */
static double fill_of(const struct model *m, int a, int q, size_t bytes)
{
    if (q != MODEL_PROTO_SIMPLE)
        return 0;
    if (a != MODEL_ALGO_NVLS && a != MODEL_ALGO_NVLSTREE)
        return m->params.fill_bytes;
    double cn = arch_of(m->sm) == BLACKWELL ? (m->nodes > 1 ? 32 : 24) : 16;
    double ops = cn * (m->ppn < 32 ? m->ppn : 32), chunk = 128 << 10, b = (double)bytes;
    if (a == MODEL_ALGO_NVLS) {
        if (b < 64 * ops * chunk)
            chunk = 64 << 10;
        if (b < 8 * ops * chunk)
            chunk = 32 << 10;
        if (b < 2 * ops * chunk)
            chunk = 16 << 10;
    } else {
        if (m->nodes >= 4)
            chunk = 64 << 10;
        if (b < 4 * ops * chunk && chunk > (64 << 10))
            chunk = 64 << 10;
        if (b < ops * chunk)
            chunk = 32 << 10;
    }
    /* NVLS inside a domain: an operation with less than a chunk fills with what it has. Not
     * NVLSTree: each of its operations also crosses the network, where a message costs the
     * proxy about the same whatever it carries. */
    if (a == MODEL_ALGO_NVLS && b / ops < chunk)
        chunk = b / ops;
    return m->params.nvls_fill_bytes * ops / (16 * 8) * chunk / (128 << 10);
}

/* The predicted time of (a, q) at bytes, or -1 when the pair is off or has no bandwidth; share as
 * for bus_bw. */
static double pair_time(const struct model *m, int a, int q, size_t bytes, int share)
{
    int n = m->nranks;
    if (!m->enabled[a][q])
        return -1;
    double bw = bus_bw(m, a, q, share);
    bw *= a == MODEL_ALGO_TREE ? 0.5 : (double)n / (2.0 * (n - 1)); /* to algbw */
    /* NCCL's tree correction by size, which it applies below 512 MiB only (tuning.cc: logSize
     * < 23, from 2.18 to 2.30), by power of two: so NCCL chooses (share 0). A time (share 1)
     * takes it between the powers of two, in log2 of the size (a step put 3.5 MiB of Tree LL128
     * slower than 4 MiB: no measurement falls so) */
    int idx = log2floor((double)bytes / 64);
    if (a == MODEL_ALGO_TREE && idx < 23) {
        double f = tree_correction[q][idx];
        if (share && bytes >= 64) {
            double next = idx + 1 < 23 ? tree_correction[q][idx + 1] : 1;
            f += (next - f) * (log2((double)bytes / 64) - idx);
        }
        bw *= f;
    }
    if (bw <= 0)
        return -1;
    double moved = (double)bytes + fill_of(m, a, q, bytes);
    return latency(m, a, q, bytes) + moved / (1000.0 * bw);
}

int model_gpus_per_host(const struct model *m)
{
    int per = m->ppn / (m->clique > 1 ? m->clique : 1);
    return per > 0 ? per : 1;
}

int model_hosts(const struct model *m)
{
    return m->nranks / model_gpus_per_host(m);
}

/* The model's pair for a tuner table's names, or -1 (CollNet is not modelled). */
static void table_pair(const struct tuner_rule *r, int *a, int *q)
{
    static const int algos[TUNER_NUM_ALGOS] = {
        [TUNER_ALGO_TREE] = MODEL_ALGO_TREE, [TUNER_ALGO_RING] = MODEL_ALGO_RING,
        [TUNER_ALGO_COLLNET_DIRECT] = -1,    [TUNER_ALGO_COLLNET_CHAIN] = -1,
        [TUNER_ALGO_NVLS] = MODEL_ALGO_NVLS, [TUNER_ALGO_NVLS_TREE] = MODEL_ALGO_NVLSTREE,
        [TUNER_ALGO_PAT] = MODEL_ALGO_PAT};
    *a = r->algo < TUNER_NUM_ALGOS ? algos[r->algo] : -1;
    *q = r->proto < TUNER_NUM_PROTOS ? (int)r->proto : -1; /* the same order as the model's */
}

int model_predict(const struct model *m, size_t bytes, struct model_prediction *p)
{
    return model_predict_coll(m, MODEL_ALL_REDUCE, bytes, p);
}

/*
 * What a chain (broadcast, reduce) keeps of the ring's Simple bandwidth across nodes. NCCL's Ring
 * Simple sends a chain's data in slices of one step where all_reduce's, all_gather's and
 * reduce_scatter's are two (BROADCAST_SLICESTEPS and REDUCE_SLICESTEPS in
 * src/include/collectives.h; a network message per slice): twice the messages for the same
 * bytes. Reading a ring's loss (1 - ring_net_scale) as a cost per message, a chain's share of the
 * line rate is s / (2 - s) for the ring's s (0.82 at 0.9), s at most 1 (a share above the line
 * rate has no loss to double). The result: the chain's bottleneck (the node's links or that share
 * of the network) over the ring's, 1 when the node's links decide both.
 */
static double chain_net_share(const struct model *m)
{
    double s = fmin(m->params.ring_net_scale, 1);
    double ring = fmin(m->intra_bw, m->inter_bw * s);
    double chain = fmin(m->intra_bw, m->inter_bw * s / (2 - s));
    return ring > 0 ? fmin(1, chain / ring) : 1;
}

/*
 * NCCL's ring for collective coll other than all_reduce: busBw as all_reduce's ring (the same
 * links), converted to algbw by nRanks / nsteps; latency per step (tuning.cc). all_gather's and
 * reduce_scatter's ring has n - 1 steps, broadcast's and reduce's chain n - 1 hops: across nodes
 * both count a step per rank inside the nodes and one network hop per node boundary (NCCL's
 * tuning charges a chain a network step per rank, several times what the published chains take).
 * On one node NCCL counts one hop for a chain whose channels all follow the same path
 * (sameChannels). The published one-node chains of Volta and Ampere GPUs on NVSwitch take a hop
 * per forwarding rank instead, n - 1, as the model counts them across nodes (three sources, all
 * of NCCL 2.10 or older; docs/model.md): m->chain_hops. An H800 table (NCCL 2.18.3) takes NCCL's
 * one hop from 4 MiB, so Hopper and later keep it. NCCL's count picks the pair (share 0), as
 * NCCL does.
 */
static double ring_time(const struct model *m, int coll, int q, size_t bytes, int share)
{
    const struct model_params *k = &m->params;
    int n = m->nranks, nn = m->nodes, a = MODEL_ALGO_RING;
    int chain = coll != MODEL_ALL_GATHER && coll != MODEL_REDUCE_SCATTER;
    double bw = bus_bw(m, a, q, share) * n / (chain ? n : n - 1);
    double intra = (m->intra_net ? net_lat : m->intra_nvlink ? nvl_lat : pci_lat)[a][q];
    double hop = net_lat[m->ppn == 1 ? MODEL_ALGO_TREE : a][q] * k->net_lat_scale +
                 (m->efa ? k->efa_lat_us : 0);
    double lat;
    if (nn > 1) { /* NCCL's "net overhead" per step is for rings (tuning.cc), not chains */
        double intra2 =
            chain ? intra : fmax(intra, m->net_overhead * (q == MODEL_PROTO_SIMPLE ? 3 : 1));
        lat = (base_lat[a][q] + (n - nn) * intra2) * k->lat_scale + (nn - 1) * hop;
        if (chain && q == MODEL_PROTO_SIMPLE && share)
            bw *= chain_net_share(m);
    } else if (chain) {
        lat = (base_lat[a][q] + (share ? m->chain_hops : 1) * intra) * k->lat_scale;
        /* A chain's last group sends nothing: through host memory a switch holding the whole
         * chain carries one send fewer than the ring NCCL's search counted. */
        if (share && m->shm_chain_bw > m->intra_bw) {
            struct model one_less = *m;
            one_less.intra_bw = m->shm_chain_bw;
            bw = bus_bw(&one_less, a, q, share);
        }
    } else {
        lat = (base_lat[a][q] + (n - 1) * intra) * k->lat_scale;
    }
    if (bw <= 0)
        return -1;
    double moved = (double)bytes + (q == MODEL_PROTO_SIMPLE ? k->fill_bytes : 0);
    return lat + moved / (1000.0 * bw);
}

/* NVLS all_gather / reduce_scatter on one node: the switch multicasts (or reduces) each part
 * once; NCCL does not pipeline two operations as for all_reduce, and counts (ppn - 1) / ppn. */
static double nvls_coll_time(const struct model *m, size_t bytes)
{
    enum arch ar = arch_of(m->sm);
    double cn = ar == BLACKWELL ? 24 : 16;
    double bw = m->intra_bw * nvls_eff[ar] * m->params.nvls_scale * (cn - 1) / cn * (m->ppn - 1) /
                m->ppn * m->chan_scale;
    if (bw <= 0)
        return -1;
    double moved = (double)bytes + fill_of(m, MODEL_ALGO_NVLS, MODEL_PROTO_SIMPLE, bytes);
    return nvl_lat[MODEL_ALGO_NVLS][MODEL_PROTO_SIMPLE] * m->params.lat_scale + moved / (1000 * bw);
}

/* PAT (one GPU per node): Ring's bandwidth x 0.75, latency log2(nodes) network hops / 3.5 plus
 * 2.8 us per rank (tuning.cc). */
static double pat_time(const struct model *m, size_t bytes)
{
    const struct model_params *k = &m->params;
    double bw = bus_bw(m, MODEL_ALGO_RING, MODEL_PROTO_SIMPLE, 0) * 0.75;
    double hop = net_lat[MODEL_ALGO_PAT][MODEL_PROTO_SIMPLE] * k->net_lat_scale +
                 (m->efa ? k->efa_lat_us : 0);
    double lat = base_lat[MODEL_ALGO_PAT][MODEL_PROTO_SIMPLE] * k->lat_scale +
                 log2floor(m->nodes) * hop / 3.5 + m->nranks * 2.8;
    if (bw <= 0)
        return -1;
    return lat + ((double)bytes + k->fill_bytes) / (1000.0 * bw);
}

/* The time of (a, q) for coll at bytes; share 0 leaves out what NCCL's tuning does not know of
 * (a chain's share of the network), to pick the pair as NCCL would. */
static double coll_pair_time(const struct model *m, int coll, int a, int q, size_t bytes, int share)
{
    if (coll == MODEL_ALL_REDUCE)
        return pair_time(m, a, q, bytes, share);
    if (!m->enabled_coll[coll][a][q])
        return -1;
    switch (a) {
    case MODEL_ALGO_RING:
        return ring_time(m, coll, q, bytes, share);
    case MODEL_ALGO_NVLS:
        return nvls_coll_time(m, bytes);
    case MODEL_ALGO_PAT:
        return pat_time(m, bytes);
    default:
        return -1;
    }
}

/*
 * Point to point (alltoall, sendrecv): each GPU's pairs over their paths at once. Inside a node
 * a GPU's peers share its links (intra_bw; NVLink's at p2p_scale of its rate); between nodes a
 * node's GPUs share its NICs (a clique's: every NIC of its nodes, not only its channels'), and
 * sendrecv's one crossing pair per node has one NIC. A call costs a base latency and a step per
 * peer. The network's share is net_scale's, as for the collectives' trees (not ring_net_scale: a
 * pair's transfer is not a ring's stream through every channel's NIC).
 */
/* Assumed, neither NCCL's constants (it has none for send/recv) nor fitted: the published rows
 * are large sizes, where these do not show. */
#define P2P_BASE_US     8.0 /* launch and the group's progress, about NCCL's Simple base (8.4) */
#define P2P_PEER_US     0.4 /* each further peer inside a node */
#define P2P_NET_PEER_US 1.0 /* each further peer over the network */
/*
 * The channels one send/recv pair of one node runs on, as NCCL's enqueue.cc splits it
 * (addP2pToPlan from 2.22, calcP2pChunkSize before): a peer gets at most 2 per NVLink between
 * them (ncclTopoGetNchannels), rounded up to a power of two, within the node's p2p channels; an
 * operation starts on the largest power of two that lets every rank run one at once (32 / 8
 * ranks: 4) and doubles while a part would exceed 32 chunks (512 KiB each: 16 MiB). So 8 GPUs
 * move up to 64 MiB on 4 channels, up to 128 on 8, up to 256 on 16, more on 32 (from 2.20;
 * 2.18 and 2.19 stop at 16 for 8 GPUs). The links are the least-linked pair's, as NCCL's
 * minimum over its peers.
 */
static int p2p_pair_channels(const struct model *m, size_t bytes)
{
    int links = (int)(m->pair_bw / nvlink_link_bw(m->sm) + 1e-9);
    int cmax = 1;
    while (cmax < 2 * (links > 1 ? links : 1) && cmax < m->p2p_channels)
        cmax *= 2;
    int cmin = cmax;
    while (cmin * m->nranks > m->p2p_channels && cmin > 1)
        cmin /= 2;
    size_t min_part = m->p2p_chunk / 8, max_part = m->p2p_chunk * 32;
    size_t parts = (bytes + min_part - 1) / min_part;
    int c = parts < (size_t)cmin ? (int)(parts > 0 ? parts : 1) : cmin;
    while ((bytes + (size_t)c - 1) / (size_t)c > max_part && c <= cmax / 2)
        c *= 2;
    return c;
}

static double p2p_time(const struct model *m, int coll, size_t bytes)
{
    const struct model_params *k = &m->params;
    int n = m->nranks, ppn = m->ppn, nn = m->nodes;
    /* an alltoall's GPUs all send through host memory at once, a node's ring's one fewer */
    double local = coll == MODEL_ALLTOALL && m->shm_busy_bw > 0 ? m->shm_busy_bw : m->intra_bw;
    double intra = local * m->chan_scale * (m->intra_nvlink ? k->p2p_scale : 1);
    double net = m->clique_net_bw * k->net_scale;
    double hop = net_lat[MODEL_ALGO_RING][MODEL_PROTO_SIMPLE] * k->net_lat_scale +
                 (m->efa ? k->efa_lat_us : 0);
    double moved = (double)bytes, t_intra = 0, t_net = 0, lat; /* no ring pipeline to fill */
    if (coll == MODEL_SENDRECV) { /* each rank sends its whole buffer to the next */
        /* On one node of NVLinks a pair has its own links (in a mesh without switches fewer
         * than a GPU's), and each of its channels carries at most one link's rate: the model's
         * assumption, not NCCL's (the published ramps: 4 channels of an H100 at 32 MiB at 19.9
         * GB/s each, 8 of an A100 at 128 MiB at 13.9); both at the share the whole reaches. */
        double rate = intra;
        if (nn == 1 && m->intra_nvlink) /* pair_bw is set with intra_nvlink */
            rate =
                fmin(rate, fmin(m->pair_bw, p2p_pair_channels(m, bytes) * nvlink_link_bw(m->sm)) *
                               k->p2p_scale);
        /* Across nodes every peer has NCCL's channels per peer, at most a link's rate each
         * inside the node and P2P_NET_CHANNEL_BW each over the network. */
        if (nn > 1 && m->intra_nvlink && m->p2p_net_channels > 0)
            rate = fmin(rate, m->p2p_net_channels * nvlink_link_bw(m->sm) * k->p2p_scale);
        if (ppn > 1)
            t_intra = moved / (1000.0 * rate);
        /* one NIC for the pair; none (sockets over the host's interfaces): the node's network */
        double net_rate = m->nic_bw > 0 ? fmin(net, m->nic_bw * k->net_scale) : net;
        if (m->p2p_net_channels > 0)
            net_rate = fmin(net_rate, m->p2p_net_channels * P2P_NET_CHANNEL_BW);
        if (nn > 1)
            t_net = moved / (1000.0 * net_rate);
        lat = P2P_BASE_US * k->lat_scale + (nn > 1 ? hop : nvl_lat[MODEL_ALGO_RING][2]);
    } else { /* alltoall: a 1/n part of the buffer to every rank */
        double part = moved / n;
        if (ppn > 1)
            t_intra = part * (ppn - 1) / (1000.0 * intra);
        if (nn > 1) /* a node's ppn GPUs send their parts for the other nodes' ranks */
            t_net = part * ppn * (double)(n - ppn) / (1000.0 * net);
        lat = (P2P_BASE_US + (ppn - 1) * P2P_PEER_US) * k->lat_scale +
              (nn > 1 ? hop + (n - ppn) * P2P_NET_PEER_US : 0);
    }
    if (intra <= 0 || (nn > 1 && net <= 0))
        return -1;
    /* with P2P and SHM off an alltoall's local parts leave through the same NICs as its remote
     * ones: one after the other, not side by side */
    if (m->intra_net && coll == MODEL_ALLTOALL)
        return lat + t_intra + t_net;
    return lat + fmax(t_intra, t_net);
}

int model_predict_coll(const struct model *m, int coll, size_t bytes, struct model_prediction *p)
{
    memset(p, 0, sizeof(*p));
    if (coll < 0 || coll >= MODEL_NCOLLS)
        return -1;
    int n = m->nranks;
    if (n <= 1) { /* a local copy */
        p->time_us = 2.0 + (double)bytes / 1e6;
        p->algo = colls[coll].func ? "RING" : "P2P";
        p->proto = "SIMPLE";
    } else if (!colls[coll].func) {
        p->time_us = p2p_time(m, coll, bytes);
        p->algo = "P2P";
        p->proto = "SIMPLE";
        if (p->time_us <= 0)
            return -1;
    } else {
        /* NCCL picks the pair by what its tuning knows; the time is what the pair then takes */
        double best = -1;
        int pa = -1, pq = -1;
        for (int a = 0; a < MODEL_NALGOS; a++)
            for (int q = 0; q < MODEL_NPROTOS; q++) {
                double t = coll_pair_time(m, coll, a, q, bytes, 0);
                if (t >= 0 && (best < 0 || t < best)) {
                    best = t;
                    pa = a;
                    pq = q;
                }
            }
        if (best >= 0) {
            best = coll_pair_time(m, coll, pa, pq, bytes, 1);
            p->algo = algo_names[pa];
            p->proto = proto_names[pq];
            p->wrong = pq == MODEL_PROTO_LL128 && m->ll128_unsafe;
        }
        /* As the plugin does: the row's pair when NCCL has it enabled, else NCCL's choice. */
        const struct tuner_rule *r =
            m->table ? tuner_table_match(m->table, colls[coll].tuner, bytes, (uint64_t)m->nodes,
                                         (uint64_t)m->nranks)
                     : NULL;
        int a, q;
        if (r && best >= 0 && (table_pair(r, &a, &q), a >= 0 && q >= 0)) {
            double t = coll_pair_time(m, coll, a, q, bytes, 1);
            if (t >= 0) {
                best = t;
                p->algo = algo_names[a];
                p->proto = proto_names[q];
                p->wrong = q == MODEL_PROTO_LL128 && m->ll128_unsafe;
                p->tuned = 1;
            }
        }
        if (best < 0)
            return -1;
        p->time_us = best;
    }
    if (!(p->time_us > 0 && p->time_us < HUGE_VAL)) /* no bandwidth is no prediction */
        return -1;
    p->algbw = (double)bytes / (p->time_us * 1e-6) / 1e9;
    p->busbw = p->algbw * model_coll_bus_factor(coll, n);
    return 0;
}

double model_noise(uint64_t *s, double sigma)
{
    double u[2];
    for (int i = 0; i < 2; i++) { /* xorshift64*, then a uniform in (0, 1) */
        *s ^= *s >> 12;
        *s ^= *s << 25;
        *s ^= *s >> 27;
        u[i] = ((double)((*s * 2685821657736338717ULL) >> 11) + 0.5) / 9007199254740992.0;
    }
    double z = sqrt(-2 * log(u[0])) * cos(2 * M_PI * u[1]); /* Box-Muller */
    return exp(sigma * z);
}
