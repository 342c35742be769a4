/* SPDX-License-Identifier: MIT */
/* The environment: what files may set (exact names) and what results may record (families). */
#include "util/env.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/file.h"
#include "util/log.h"
#include "util/mem.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

extern char **environ;

static const char *const families[] = {"NCCL_", "CUDA_", "OMPI_", "UCX_", "FI_", "TORCH_"};

int util_env_recordable(const char *name)
{
    for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
        if (strncmp(name, families[i], strlen(families[i])) == 0)
            return 1;
    return 0;
}

/* Which variables a file or a flag may set: an allow-list of exact names the tool tunes. */
static const char *const settable[] = {
    /* NCCL: algorithm, protocol, channels, buffers, threads */
    "NCCL_ALGO", "NCCL_PROTO", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_MIN_CTAS",
    "NCCL_MAX_CTAS", "NCCL_NCHANNELS_PER_NET_PEER", "NCCL_NVLS_NCHANNELS", "NCCL_BUFFSIZE",
    "NCCL_LL_BUFFSIZE", "NCCL_LL128_BUFFSIZE", "NCCL_NTHREADS", "NCCL_LL128_NTHREADS",
    "NCCL_LAUNCH_MODE", "NCCL_CGA_CLUSTER_SIZE", "NCCL_RUNTIME_CONNECT", "NCCL_CUMEM_ENABLE",
    "NCCL_GRAPH_MIXING_SUPPORT", "NCCL_CTA_POLICY", "NCCL_P2P_PER_CHANNEL_NET_BW",
    /* NCCL: transports inside a node */
    "NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL", "NCCL_P2P_DIRECT_DISABLE", "NCCL_P2P_READ_ENABLE",
    "NCCL_P2P_USE_CUDA_MEMCPY", "NCCL_P2P_NET_CHUNKSIZE", "NCCL_P2P_NVL_CHUNKSIZE",
    "NCCL_P2P_PCI_CHUNKSIZE", "NCCL_P2P_PXN_LEVEL", "NCCL_PXN_DISABLE", "NCCL_SHM_DISABLE",
    "NCCL_SHM_USE_CUDA_MEMCPY", "NCCL_SHM_MEMCPY_MODE", "NCCL_IGNORE_DISABLED_P2P",
    "NCCL_IGNORE_CPU_AFFINITY", "NCCL_NVB_DISABLE", "NCCL_NVLS_ENABLE", "NCCL_NVLS_CHUNKSIZE",
    "NCCL_NVLSTREE_MAX_CHUNKSIZE", "NCCL_PAT_ENABLE", "NCCL_COLLNET_ENABLE",
    "NCCL_COLLNET_NODE_THRESHOLD",
    /* NCCL: the network */
    "NCCL_CROSS_NIC", "NCCL_NET_GDR_LEVEL", "NCCL_NET_GDR_READ", "NCCL_NET_GDR_C2C",
    "NCCL_NET_SHARED_BUFFERS", "NCCL_NET_DISABLE_INTRA", "NCCL_SOCKET_IFNAME", "NCCL_SOCKET_FAMILY",
    "NCCL_SOCKET_NTHREADS", "NCCL_NSOCKS_PERTHREAD", "NCCL_IB_DISABLE", "NCCL_IB_HCA",
    "NCCL_IB_GID_INDEX", "NCCL_IB_ROCE_VERSION_NUM", "NCCL_IB_TC", "NCCL_IB_SL", "NCCL_IB_TIMEOUT",
    "NCCL_IB_RETRY_CNT", "NCCL_IB_QPS_PER_CONNECTION", "NCCL_IB_SPLIT_DATA_ON_QPS",
    "NCCL_IB_ADAPTIVE_ROUTING", "NCCL_IB_AR_THRESHOLD", "NCCL_IB_PCI_RELAXED_ORDERING",
    "NCCL_IB_ADDR_FAMILY", "NCCL_IB_ADDR_RANGE", "NCCL_IB_MERGE_NICS",
    /* NCCL: its log level (the tool sets NCCL_DEBUG_FILE itself) */
    "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS",
    /* Open MPI: the components and the tuning parameters the mpi backend sweeps */
    "OMPI_MCA_btl", "OMPI_MCA_pml", "OMPI_MCA_mtl", "OMPI_MCA_coll", "OMPI_MCA_osc",
    "OMPI_MCA_btl_tcp_if_include", "OMPI_MCA_btl_tcp_if_exclude", "OMPI_MCA_btl_tcp_links",
    "OMPI_MCA_btl_tcp_eager_limit", "OMPI_MCA_btl_tcp_port_min_v4",
    "OMPI_MCA_btl_tcp_port_range_v4", "OMPI_MCA_oob_tcp_if_include", "OMPI_MCA_oob_tcp_if_exclude",
    "OMPI_MCA_btl_vader_single_copy_mechanism", "OMPI_MCA_btl_vader_eager_limit",
    "OMPI_MCA_btl_sm_single_copy_mechanism", "OMPI_MCA_btl_sm_eager_limit",
    "OMPI_MCA_coll_tuned_use_dynamic_rules", "OMPI_MCA_coll_tuned_allreduce_algorithm",
    "OMPI_MCA_coll_tuned_allreduce_algorithm_segmentsize", "OMPI_MCA_coll_tuned_bcast_algorithm",
    "OMPI_MCA_coll_tuned_reduce_algorithm", "OMPI_MCA_coll_tuned_allgather_algorithm",
    "OMPI_MCA_coll_tuned_reduce_scatter_algorithm", "OMPI_MCA_coll_tuned_alltoall_algorithm",
    "OMPI_MCA_coll_tuned_barrier_algorithm", "OMPI_MCA_coll_hcoll_enable",
    "OMPI_MCA_coll_ucc_enable", "OMPI_MCA_hwloc_base_binding_policy",
    "OMPI_MCA_rmaps_base_mapping_policy",
    /* UCX, libfabric, CUDA and PyTorch: transport choices and tuning, nothing that names a path */
    "UCX_TLS", "UCX_NET_DEVICES", "UCX_RNDV_THRESH", "UCX_RNDV_SCHEME", "UCX_ZCOPY_THRESH",
    "UCX_MAX_RNDV_RAILS", "UCX_IB_GPU_DIRECT_RDMA", "UCX_MEMTYPE_CACHE", "FI_PROVIDER",
    "FI_EFA_USE_DEVICE_RDMA", "FI_EFA_USE_HUGE_PAGE", "FI_EFA_FORK_SAFE",
    /* libfabric's Slingshot (cxi) provider, as CSCS's NCCL guide sets it: queue sizes,
     * matching, rendezvous and the registration cache's monitor (a mechanism, not a path) */
    "FI_CXI_DEFAULT_CQ_SIZE", "FI_CXI_DEFAULT_TX_SIZE", "FI_CXI_DISABLE_HOST_REGISTER",
    "FI_CXI_RX_MATCH_MODE", "FI_CXI_RDZV_PROTO", "FI_CXI_RDZV_EAGER_SIZE", "FI_CXI_RDZV_GET_MIN",
    "FI_CXI_RDZV_THRESHOLD", "FI_MR_CACHE_MONITOR", "CUDA_DEVICE_MAX_CONNECTIONS",
    "TORCH_NCCL_ASYNC_ERROR_HANDLING", "TORCH_NCCL_BLOCKING_WAIT", "TORCH_NCCL_HIGH_PRIORITY",
    "TORCH_NCCL_AVOID_RECORD_STREAMS"};

/*
 * Settable NCCL variables whose reading changed after 2.12: the release of NVIDIA/nccl whose
 * sources first read each (the commit that added its NCCL_PARAM or ncclGetEnv, found with git log
 * -S in its history), and for those NCCL stopped reading the first release without them (the
 * commit that removed it, found the same way: the SHM copy-engine proxy went in 2.30.7); 0: none.
 */
static const struct {
    const char *name;
    int since, gone;
} nccl_versions[] = {
    {"NCCL_P2P_DIRECT_DISABLE", 21212, 0},
    {"NCCL_GRAPH_MIXING_SUPPORT", 21304, 0},
    {"NCCL_P2P_USE_CUDA_MEMCPY", 21304, 0},
    {"NCCL_SHM_USE_CUDA_MEMCPY", 21304, 23007},
    {"NCCL_SHM_MEMCPY_MODE", 21304, 23007},
    {"NCCL_P2P_NET_CHUNKSIZE", 21403, 0},
    {"NCCL_CGA_CLUSTER_SIZE", 21501, 0},
    {"NCCL_P2P_NVL_CHUNKSIZE", 21602, 0},
    {"NCCL_P2P_PCI_CHUNKSIZE", 21602, 0},
    {"NCCL_IB_ADAPTIVE_ROUTING", 21602, 0},
    {"NCCL_MIN_CTAS", 21701, 0},
    {"NCCL_MAX_CTAS", 21701, 0},
    {"NCCL_NVLS_NCHANNELS", 21701, 0},
    {"NCCL_NVLS_ENABLE", 21701, 0},
    {"NCCL_CUMEM_ENABLE", 21801, 0},
    {"NCCL_IB_SPLIT_DATA_ON_QPS", 21801, 0},
    {"NCCL_NVLSTREE_MAX_CHUNKSIZE", 22003, 0},
    {"NCCL_IB_MERGE_NICS", 22003, 0},
    {"NCCL_NVLS_CHUNKSIZE", 22105, 0},
    {"NCCL_IB_ROCE_VERSION_NUM", 22105, 0},
    {"NCCL_IB_ADDR_FAMILY", 22105, 0},
    {"NCCL_IB_ADDR_RANGE", 22105, 0},
    {"NCCL_RUNTIME_CONNECT", 22203, 0},
    {"NCCL_PAT_ENABLE", 22304, 0},
    {"NCCL_NET_GDR_C2C", 22602, 0},
    {"NCCL_CTA_POLICY", 22703, 0},
    {"NCCL_P2P_PER_CHANNEL_NET_BW", 22902, 0},
};

/* The variables NCCL reads as one integer (NCCL_PARAM, strtoll with base 0 and no check of where
 * it stopped: "1K" is 1, "banana" 0, "010" 8), from NVIDIA/nccl v2.30.7-1, with the SHM copy
 * engine's two of v2.13.4-1 to v2.29 (src/transport/shm.cc); NCCL_P2P_DISABLE through atoi. */
static const char *const nccl_integers[] = {
    "NCCL_BUFFSIZE",
    "NCCL_CGA_CLUSTER_SIZE",
    "NCCL_COLLNET_ENABLE",
    "NCCL_COLLNET_NODE_THRESHOLD",
    "NCCL_CROSS_NIC",
    "NCCL_CUMEM_ENABLE",
    "NCCL_GRAPH_MIXING_SUPPORT",
    "NCCL_IB_ADAPTIVE_ROUTING",
    "NCCL_IB_AR_THRESHOLD",
    "NCCL_IB_DISABLE",
    "NCCL_IB_GID_INDEX",
    "NCCL_IB_MERGE_NICS",
    "NCCL_IB_PCI_RELAXED_ORDERING",
    "NCCL_IB_QPS_PER_CONNECTION",
    "NCCL_IB_RETRY_CNT",
    "NCCL_IB_ROCE_VERSION_NUM",
    "NCCL_IB_SL",
    "NCCL_IB_SPLIT_DATA_ON_QPS",
    "NCCL_IB_TC",
    "NCCL_IB_TIMEOUT",
    "NCCL_IGNORE_CPU_AFFINITY",
    "NCCL_IGNORE_DISABLED_P2P",
    "NCCL_LL128_BUFFSIZE",
    "NCCL_LL128_NTHREADS",
    "NCCL_LL_BUFFSIZE",
    "NCCL_MAX_CTAS",
    "NCCL_MAX_NCHANNELS",
    "NCCL_MIN_CTAS",
    "NCCL_MIN_NCHANNELS",
    "NCCL_NCHANNELS_PER_NET_PEER",
    "NCCL_NET_DISABLE_INTRA",
    "NCCL_NET_GDR_C2C",
    "NCCL_NET_GDR_READ",
    "NCCL_NET_SHARED_BUFFERS",
    "NCCL_NSOCKS_PERTHREAD",
    "NCCL_NTHREADS",
    "NCCL_NVB_DISABLE",
    "NCCL_NVLSTREE_MAX_CHUNKSIZE",
    "NCCL_NVLS_CHUNKSIZE",
    "NCCL_NVLS_ENABLE",
    "NCCL_NVLS_NCHANNELS",
    "NCCL_P2P_DIRECT_DISABLE",
    "NCCL_P2P_DISABLE",
    "NCCL_P2P_NET_CHUNKSIZE",
    "NCCL_P2P_NVL_CHUNKSIZE",
    "NCCL_P2P_PCI_CHUNKSIZE",
    "NCCL_P2P_PER_CHANNEL_NET_BW",
    "NCCL_P2P_PXN_LEVEL",
    "NCCL_P2P_READ_ENABLE",
    "NCCL_P2P_USE_CUDA_MEMCPY",
    "NCCL_PAT_ENABLE",
    "NCCL_PXN_DISABLE",
    "NCCL_RUNTIME_CONNECT",
    "NCCL_SHM_DISABLE",
    "NCCL_SHM_MEMCPY_MODE",
    "NCCL_SHM_USE_CUDA_MEMCPY",
    "NCCL_SOCKET_NTHREADS",
};

const char *util_env_value_refused(const char *name, const char *value)
{
    if (!name || strncmp(name, "NCCL_", 5))
        return NULL;
    if (!value || !*value)
        return "NCCL reads an empty value as unset: use null";
    for (size_t i = 0; i < sizeof(nccl_integers) / sizeof(nccl_integers[0]); i++) {
        if (strcmp(name, nccl_integers[i]))
            continue;
        const char *d = value + (*value == '-');
        size_t n = strspn(d, "0123456789");
        if (n == 0 || d[n] || n > 18 || (d[0] == '0' && (n > 1 || d != value)))
            return "NCCL reads it as one integer with strtoll (\"1K\" as 1, \"010\" as 8, a word "
                   "as 0): write it as a plain decimal integer, as 8 or -1 (0 for -0, 16 for +16)";
        return NULL;
    }
    return NULL;
}

/* The variable's releases in nccl_versions (0, 0 when it has none). */
static void nccl_entry(const char *name, int *since, int *gone)
{
    *since = *gone = 0;
    for (size_t i = 0; name && i < sizeof(nccl_versions) / sizeof(nccl_versions[0]); i++)
        if (!strcmp(name, nccl_versions[i].name)) {
            *since = nccl_versions[i].since;
            *gone = nccl_versions[i].gone;
        }
}

int util_env_nccl_since(const char *name)
{
    int since, gone;
    nccl_entry(name, &since, &gone);
    return since;
}

int util_env_nccl_gone(const char *name)
{
    int since, gone;
    nccl_entry(name, &since, &gone);
    return gone;
}

int util_env_nccl_version(const char *text)
{
    int major, minor, patch, end = 0;
    if (!text || sscanf(text, "%3d.%3d.%3d%n", &major, &minor, &patch, &end) != 3 || major < 1 ||
        minor < 0 || minor > 99 || patch < 0 || patch > 99 || (text[end] && text[end] != '+'))
        return 0;
    return major * 10000 + minor * 100 + patch;
}

/* Names refused with their own reason: they pass no allow-list, but the message should say why. */
static const struct {
    const char *name, *why;
} known[] = {
    {"UCX_HANDLE_ERRORS", "it makes a crash start a debugger (UCX_GDB_COMMAND)"},
    {"UCX_GDB_COMMAND", "it names a program to run"},
    {"UCX_ERROR_SIGNALS", "it changes what a crash does"},
    {"UCX_ERROR_MAIL_TO", "it names a mail recipient"},
    {"UCX_ERROR_MAIL_FOOTER", "it writes mail"},
    {"NCCL_COMM_ID", "it names the address every rank connects to"},
    {"NCCL_NET", "it picks a network plugin by name"},
    {"NCCL_HOSTID", "it changes which ranks NCCL thinks share a node"},
    /* names no NCCL from 2.12 reads (NVIDIA/nccl v2.12.7-1 to v2.30.7-1): ignored in a run */
    {"NCCL_STEPS", "NCCL reads no such variable: its steps are fixed when NCCL is built"},
    {"NCCL_IB_GDR_LEVEL", "no NCCL from 2.12 reads it: NCCL_NET_GDR_LEVEL replaced it"},
    {"NCCL_IB_CUDA_SUPPORT", "no NCCL from 2.12 reads it: NCCL_NET_GDR_LEVEL replaced it"},
    {"CUDA_VISIBLE_DEVICES", "it changes which GPUs a run uses, not how it runs"},
    {"BASH_ENV", "a shell reads it at startup"},
    {"ENV", "a shell reads it at startup"},
    {"SHELLOPTS", "a shell reads it at startup"},
    {"BASHOPTS", "a shell reads it at startup"},
    {"PS4", "a shell reads it at startup"},
    {"PROMPT_COMMAND", "a shell reads it at startup"},
    {"IFS", "a shell reads it at startup"},
};

/* Words (between underscores, whole) that make a name load code, run a program or name a place. */
static const struct {
    const char *word, *why;
} words[] = {
    {"PRELOAD", "it makes the dynamic loader load a library"},
    {"PLUGIN", "it loads a library"},
    {"INJECTION", "it loads a library"},
    {"LIBRARY", "it loads a library"},
    {"LIB", "it loads a library"},
    {"MODULE", "it loads a library"},
    {"COMMAND", "it names a program to run"},
    {"CMD", "it names a program to run"},
    {"EXEC", "it names a program to run"},
    {"AGENT", "it names a program to run"},
    {"GDB", "it names a program to run"},
    {"DEBUGGER", "it names a program to run"},
    {"SHELL", "it names a program to run"},
    {"PATH", "it is a search path"},
    {"HOME", "it names a directory programs load from"},
    {"DIR", "it names a directory to load from or write to"},
    {"ROOT", "it names a directory to load from or write to"},
    {"PREFIX", "it names a directory to load from or write to"},
    {"FILE", "it names a file to read or write (the tool sets NCCL_DEBUG_FILE itself)"},
    {"FILENAME", "it names a file to read or write"},
    {"DUMP", "it writes a file"},
    {"MAIL", "it names a mail recipient"},
    {"ADDR", "it names an address to connect to"},
    {"HOST", "it names an address to connect to"},
    {"URI", "it names an address to connect to"},
    {"URL", "it names an address to connect to"},
};

static const char *const not_listed =
    "not a variable topotune lets a file set: the tuning variables NCCL, Open MPI, UCX and "
    "libfabric document, by exact name (docs/design.md, \"What a file may set\"); an operator "
    "adds names with TOPOTUNE_ALLOW_VARS";

static int valid_name(const char *name)
{
    size_t len = strlen(name);
    if (!len || len > 128 || !(name[0] == '_' || (name[0] >= 'A' && name[0] <= 'Z')))
        return 0;
    for (const char *p = name; *p; p++)
        if (!(*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
              (*p >= '0' && *p <= '9')))
            return 0;
    return 1;
}

/* The reason of the first whole word of name (split at '_', any case) that is a danger word. */
static const char *danger_word(const char *name)
{
    for (const char *p = name; *p;) {
        size_t n = strcspn(p, "_");
        for (size_t i = 0; n && i < sizeof(words) / sizeof(words[0]); i++)
            if (strlen(words[i].word) == n && strncasecmp(p, words[i].word, n) == 0)
                return words[i].why;
        p += n + (p[n] == '_');
    }
    return NULL;
}

/* 1 when name is one of the exact names (separated by spaces or commas) of list. */
static int in_names(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = list; p && *p;) {
        p += strspn(p, " ,");
        size_t n = strcspn(p, " ,");
        if (n == len && strncmp(p, name, n) == 0)
            return 1;
        p += n;
    }
    return 0;
}

int util_env_per_node(const char *name)
{
    return name &&
           (!strcmp(name, "NCCL_IB_HCA") || !strcmp(name, "NCCL_IB_GID_INDEX") ||
            !strcmp(name, "NCCL_SOCKET_IFNAME") || !strcmp(name, "OMPI_MCA_btl_tcp_if_include") ||
            !strcmp(name, "OMPI_MCA_oob_tcp_if_include") || !strcmp(name, "UCX_NET_DEVICES"));
}

const char *util_env_refused(const char *name)
{
    if (!valid_name(name))
        return "a variable name is [A-Z_][A-Za-z0-9_]*, at most 128 characters";
    if (strncmp(name, "LD_", 3) == 0)
        return "the dynamic loader reads it";
    for (size_t i = 0; i < sizeof(settable) / sizeof(settable[0]); i++)
        if (strcmp(name, settable[i]) == 0)
            return NULL;
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (strcmp(name, known[i].name) == 0)
            return known[i].why;
    const char *why = danger_word(name);
    if (why)
        return why;
    /* the operator's own additions, exact names: never one the checks above refuse */
    if (in_names(getenv("TOPOTUNE_ALLOW_VARS"), name))
        return NULL;
    return not_listed;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

json_t *util_env_recorded(void)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **names = util_xcalloc(n + 1, sizeof(char *));
    json_t *o = json_object();
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (util_env_recordable(environ[i]))
            names[k++] = environ[i];
    qsort(names, k, sizeof(char *), cmp_str);
    for (size_t i = 0; i < k; i++) {
        const char *eq = strchr(names[i], '=');
        if (!eq)
            continue;
        char key[256];
        size_t len =
            (size_t)(eq - names[i]) < sizeof(key) - 1 ? (size_t)(eq - names[i]) : sizeof(key) - 1;
        memcpy(key, names[i], len);
        key[len] = '\0';
        json_object_set_new(o, key, json_string(eq + 1));
    }
    free(names);
    return o;
}

/* NCCL's configuration files as NCCL would load them: each name's first value, with its file. */
static struct {
    char user[1024]; /* the user file's path they were read with ("" for none) */
    int read;
    json_t *vars; /* name -> [value, file] */
} conf;

static void conf_add_file(const char *path)
{
    struct util_buf text = UTIL_BUF_INIT;
    const char *why = NULL;
    int rc = util_file_read_input(path, 1, 1 << 20, &text, &why);
    if (rc == UTIL_EINVAL || rc == UTIL_EIO) /* NCCL reads it: what it sets is not known here */
        util_warning("%.200s (NCCL's configuration file) is not read: %s", path, why);
    for (const char *line = text.len ? util_buf_str(&text) : ""; *line;) {
        size_t len = strcspn(line, "\n"), s = strcspn(line, "=\n");
        const char *next = line + len + (line[len] == '\n');
        if (len && line[len - 1] == '\r')
            len--;
        if (line[0] != '#' && s < len) {
            char name[1024], value[1024];
            snprintf(name, sizeof(name), "%.*s", (int)(s < 1023 ? s : 1023), line);
            snprintf(value, sizeof(value), "%.*s", (int)(len - s - 1), line + s + 1);
            if (!json_object_get(conf.vars, name) && name[0])
                json_object_set_new(conf.vars, name, json_pack("[ss]", value, path));
        }
        line = next;
    }
    util_buf_release(&text);
}

/* The files as this process's $NCCL_CONF_FILE and $HOME name them, read again when they change. */
static void conf_load(void)
{
    const char *file = getenv("NCCL_CONF_FILE"), *home = getenv("HOME");
    if (!home) { /* slurmd runs a Prolog without $HOME: NCCL to 2.29 asks getpwuid, 2.30 $HOME */
        const struct passwd *pw = getpwuid(getuid());
        home = pw ? pw->pw_dir : NULL;
    }
    char user[1024] = "";
    if (file && *file)
        snprintf(user, sizeof(user), "%s", file);
    else if (home)
        snprintf(user, sizeof(user), "%s/.nccl.conf", home);
    if (!conf.read || strcmp(user, conf.user)) {
        json_decref(conf.vars);
        conf.vars = json_object();
        snprintf(conf.user, sizeof(conf.user), "%s", user);
        if (user[0])
            conf_add_file(user);
        conf_add_file("/etc/nccl.conf");
        conf.read = 1;
    }
}

const char *util_env_nccl(const char *name, const char **from)
{
    if (from)
        *from = NULL;
    const char *value = getenv(name);
    if (value)
        return value;
    conf_load();
    json_t *v = json_object_get(conf.vars, name);
    if (!v)
        return NULL;
    if (from)
        *from = json_string_value(json_array_get(v, 1));
    return json_string_value(json_array_get(v, 0));
}

json_t *util_env_nccl_reaching(int files)
{
    json_t *here = util_env_recorded(), *v, *tmp;
    const char *name;
    json_object_foreach_safe(here, tmp, name, v)
        if (strncmp(name, "NCCL_", 5) || !strcmp(name, "NCCL_CONF_FILE"))
            json_object_del(here, name);
    if (files) {
        json_t *set = util_env_nccl_files();
        json_object_update_missing(here, set);
        json_decref(set);
    }
    return here;
}

json_t *util_env_nccl_files(void)
{
    conf_load();
    json_t *o = json_object(), *v;
    const char *name;
    json_object_foreach(conf.vars, name, v)
        if (!getenv(name))
            json_object_set(o, name, v);
    return o;
}
