/* SPDX-License-Identifier: MIT */
/*
 * Node class: a key made only of hardware facts that identical nodes share,
 * and an id that is a readable slug plus 8 hex digits of a hash of the key.
 * Host names, bus ids, serials and software versions never enter the key.
 * The matrix enters as the sorted list of each device's sorted row, so that
 * bus numbering (which orders devices) does not change the key.
 */
#include "topo/internal.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/json.h"
#include "util/mem.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static json_t *sorted_strings(char **items, int n)
{
    qsort(items, (size_t)n, sizeof(char *), cmp_str);
    json_t *arr = json_array();
    for (int i = 0; i < n; i++) {
        json_array_append_new(arr, json_string(items[i]));
        free(items[i]);
    }
    free(items);
    return arr;
}

/* One device's row as "GPU|NIC-kind:" plus its sorted cells: order-free by construction. */
static char *device_signature(const struct topo *t, int d)
{
    int n = t->ngpus + t->nnics;
    const char **cells = util_xcalloc((size_t)n, sizeof(char *));
    struct util_buf b = UTIL_BUF_INIT;
    int k = 0;
    for (int j = 0; j < n; j++) {
        const char *c = t->matrix[d * n + j];
        if (j == d)
            continue;
        cells[k++] = c ? c : "?";
    }
    /* Peer type matters (a GPU near a NIC is not a GPU near a GPU): sort each group apart. */
    int first_nic = d < t->ngpus ? t->ngpus - 1 : t->ngpus;
    qsort(cells, (size_t)first_nic, sizeof(char *), cmp_str);
    qsort(cells + first_nic, (size_t)(k - first_nic), sizeof(char *), cmp_str);
    util_buf_adds(&b, d < t->ngpus ? "GPU" : topo_nic_kind_name(t->nics[d - t->ngpus].kind));
    for (int j = 0; j < k; j++)
        util_buf_addf(&b, "%s%s", j == first_nic ? "|" : " ", cells[j]);
    free(cells);
    return util_buf_detach(&b);
}

static json_t *matrix_key(const struct topo *t)
{
    int n = t->ngpus + t->nnics;
    char **rows = util_xcalloc((size_t)n + 1, sizeof(char *));
    for (int d = 0; d < n; d++)
        rows[d] = device_signature(t, d);
    return sorted_strings(rows, n);
}

static json_t *nics_key(const struct topo *t)
{
    char **items = util_xcalloc((size_t)t->nnics + 1, sizeof(char *));
    for (int i = 0; i < t->nnics; i++) {
        struct util_buf b = UTIL_BUF_INIT;
        util_buf_addf(&b, "%s:%d", topo_nic_kind_name(t->nics[i].kind), t->nics[i].speed_gbps);
        items[i] = util_buf_detach(&b);
    }
    return sorted_strings(items, t->nnics);
}

/* The model of every GPU, sorted: mixed nodes differ from uniform ones. Not its memory, which
 * each source gives otherwise (CUDA's global memory in an hwloc export, NVML's total live, none
 * from an hwloc without its CUDA plugin): the model names the memory variant. */
static json_t *gpus_key(const struct topo *t)
{
    char **items = util_xcalloc((size_t)t->ngpus + 1, sizeof(char *));
    for (int i = 0; i < t->ngpus; i++)
        items[i] = util_xstrdup(t->gpus[i].model ? t->gpus[i].model : "?");
    return sorted_strings(items, t->ngpus);
}

static json_t *build_key(const struct topo *t)
{
    json_t *gpu = json_object();
    util_json_set(gpu, "models", gpus_key(t));
    util_json_set(gpu, "count", json_integer(t->ngpus));
    json_t *cpu = json_object();
    util_json_set(cpu, "vendor", util_json_str_or_null(t->cpu.vendor));
    util_json_set(cpu, "model", util_json_str_or_null(t->cpu.model));
    util_json_set(cpu, "sockets", util_json_count_or_null(t->cpu.sockets));
    util_json_set(cpu, "numa_nodes", util_json_count_or_null(t->cpu.numa_nodes));
    json_t *key = json_object();
    util_json_set(key, "gpu", gpu);
    util_json_set(key, "nvswitches", util_json_count_or_null(t->nvswitches));
    util_json_set(key, "nvlink_known", json_boolean(t->nvlink_known));
    util_json_set(key, "nics", nics_key(t));
    util_json_set(key, "matrix", matrix_key(t));
    util_json_set(key, "cpu", cpu);
    /* a node of AMD GPUs only is no CPU-only node; beside NVIDIA GPUs they change nothing NCCL
     * does (a display card), nor the class */
    if (t->other_gpus && !t->ngpus)
        util_json_set(key, "other_gpus", json_integer(t->other_gpus));
    return key;
}

/* "Tesla V100-SXM2-16GB" -> "v100-sxm2-16gb": vendor words dropped, lowercase, dashes. */
static void slug_model(const char *model, struct util_buf *b)
{
    static const char *drop[] = {"NVIDIA ", "Tesla ", "GeForce "};
    if (!model) {
        util_buf_adds(b, "unknown-gpu");
        return;
    }
    for (int again = 1; again;) {
        again = 0;
        for (size_t i = 0; i < 3; i++)
            if (strncmp(model, drop[i], strlen(drop[i])) == 0) {
                model += strlen(drop[i]);
                again = 1;
            }
    }
    /* at most 48 characters of it: a class id must fit the readers' 128 (sweep.json), and the
     * hash that ends it tells models apart however alike their beginnings */
    int dash = 0;
    size_t start = b->len;
    for (const char *p = model; *p && b->len - start < 48; p++) {
        if (isalnum((unsigned char)*p)) {
            if (dash && b->len)
                util_buf_adds(b, "-");
            char c = (char)tolower((unsigned char)*p);
            util_buf_add(b, &c, 1);
            dash = 0;
        } else {
            dash = 1;
        }
    }
}

static int max_nvlink(const struct topo *t)
{
    int m = 0;
    for (int i = 0; i < t->ngpus * t->ngpus; i++)
        m = t->nvlink[i] > m ? t->nvlink[i] : m;
    return m;
}

/* The most common GPU model (ties: the first by name), so mixed nodes get an order-free slug. */
static const char *main_model(const struct topo *t)
{
    const char *best = NULL;
    int best_count = 0;
    for (int i = 0; i < t->ngpus; i++) {
        const char *m = t->gpus[i].model ? t->gpus[i].model : "";
        int count = 0;
        for (int j = 0; j < t->ngpus; j++)
            count += strcmp(m, t->gpus[j].model ? t->gpus[j].model : "") == 0;
        if (count > best_count || (count == best_count && strcmp(m, best) < 0)) {
            best = m;
            best_count = count;
        }
    }
    return best && *best ? best : NULL;
}

int topo_compute_class(struct topo *t)
{
    json_decref(t->class_key);
    t->class_key = build_key(t);
    char *hash = util_json_hash(t->class_key); /* its first 8 hex digits end the id */
    if (!hash)
        return UTIL_ENOMEM;
    struct util_buf b = UTIL_BUF_INIT;
    if (t->ngpus) {
        slug_model(main_model(t), &b);
        util_buf_addf(&b, "-%dx", t->ngpus);
    } else if (t->other_gpus) {
        util_buf_addf(&b, "non-nvidia-gpu-%dx", t->other_gpus);
    } else {
        util_buf_adds(&b, "cpu-only");
    }
    int nv = max_nvlink(t);
    if (t->nvswitches > 0 || (t->nvswitches == TOPO_UNKNOWN && t->nvlink_known))
        util_buf_addf(&b, "-nvs%d", nv);
    else if (nv)
        util_buf_addf(&b, "-nv%d", nv);
    /* the RDMA NICs, a count per kind in the kinds' order (a node of 2 EFA and 2 InfiniBand
     * ports read "4xefa" or "4xib", whichever came last) */
    int count[TOPO_NIC_NKINDS] = {0}, speed[TOPO_NIC_NKINDS] = {0};
    for (int i = 0; i < t->nnics; i++) {
        int k = (int)t->nics[i].kind;
        if (k == TOPO_NIC_ETH || k == TOPO_NIC_UNKNOWN || k < 0 || k >= TOPO_NIC_NKINDS)
            continue;
        count[k]++;
        speed[k] = t->nics[i].speed_gbps > speed[k] ? t->nics[i].speed_gbps : speed[k];
    }
    for (int k = 0; k < TOPO_NIC_NKINDS; k++)
        if (count[k] && speed[k] > 0)
            util_buf_addf(&b, "-%dx%s%d", count[k], topo_nic_kind_name((enum topo_nic_kind)k),
                          speed[k]);
        else if (count[k])
            util_buf_addf(&b, "-%dx%s", count[k], topo_nic_kind_name((enum topo_nic_kind)k));
    util_buf_addf(&b, "-%.8s", hash);
    free(hash);
    free(t->class_id);
    t->class_id = util_buf_detach(&b);
    return 0;
}

int topo_class_id_valid(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n < 10 || n > 200 || s[n - 9] != '-' || !strchr("abcdefghijklmnopqrstuvwxyz0123456789", *s))
        return 0;
    if (strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") < n - 8)
        return 0;
    return strspn(s + n - 8, "0123456789abcdef") == 8;
}
