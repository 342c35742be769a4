/* SPDX-License-Identifier: MIT */
/*
 * The GPU/NIC matrix with nvidia-smi's letters. NVLink wins where it joins a
 * pair; otherwise the PCIe relation, from the lowest common ancestor of the
 * two devices in the PCI tree:
 *   PIX  at most one PCIe switch (up to three bridges: down, up, down port)
 *   PXB  several switches, no host bridge
 *   PHB  through one host bridge
 *   NODE several host bridges within one NUMA node
 *   SYS  across NUMA nodes
 */
#include "topo/internal.h"
#include "util/error.h"
#include "util/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

/* n's chain up to its root, n first; -1 when deeper than MAX_DEPTH (no machine's PCIe tree is:
 * a damaged or forged export), whose cut chain would give another letter. */
static int ancestors(const struct topo *t, int n, int *out)
{
    int depth = 0;
    while (n >= 0 && depth < MAX_DEPTH) {
        out[depth++] = n;
        n = t->nodes[n].parent;
    }
    return n >= 0 ? -1 : depth;
}

static int locality_of(const struct topo *t, const int *chain, int depth)
{
    for (int i = 0; i < depth; i++)
        if (t->nodes[chain[i]].kind == TOPO_PNODE_LOCALITY)
            return chain[i];
    return -1;
}

static int same_numa(const struct topo *t, int la, int lb)
{
    if (la < 0 || lb < 0)
        return 0;
    if (la == lb)
        return 1;
    int na = t->nodes[la].numa, nb = t->nodes[lb].numa;
    return na >= 0 && na == nb;
}

const char *topo_path_letter(const struct topo *t, int a, int b)
{
    if (a < 0 || b < 0 || a >= t->nnodes || b >= t->nnodes)
        return NULL;
    int ca[MAX_DEPTH], cb[MAX_DEPTH];
    int da = ancestors(t, a, ca), db = ancestors(t, b, cb);
    if (da < 0 || db < 0)
        return NULL; /* unknown, as a pair without a path */
    /* Walk down from the roots while the chains agree. */
    int i = da - 1, j = db - 1, lca = -1;
    while (i >= 0 && j >= 0 && ca[i] == cb[j]) {
        lca = ca[i];
        i--;
        j--;
    }
    if (lca < 0)
        return same_numa(t, locality_of(t, ca, da), locality_of(t, cb, db)) ? "NODE" : "SYS";
    switch (t->nodes[lca].kind) {
    case TOPO_PNODE_LOCALITY:
        return same_numa(t, locality_of(t, ca, da), locality_of(t, cb, db)) ? "NODE" : "SYS";
    case TOPO_PNODE_HOSTBRIDGE:
        return "PHB";
    default:
        break;
    }
    int bridges = t->nodes[lca].bridges;
    for (int k = 0; k <= i; k++)
        bridges += t->nodes[ca[k]].bridges;
    for (int k = 0; k <= j; k++)
        bridges += t->nodes[cb[k]].bridges;
    return bridges <= 3 ? "PIX" : "PXB";
}

static int device_node(const struct topo *t, int d)
{
    return d < t->ngpus ? t->gpus[d].node : t->nics[d - t->ngpus].node;
}

const char *topo_gpu_pci_path(const struct topo *t, int a, int b)
{
    if (a < 0 || b < 0 || a >= t->ngpus || b >= t->ngpus)
        return NULL;
    const char *tree = topo_path_letter(t, t->gpus[a].node, t->gpus[b].node);
    const char *c = t->matrix ? t->matrix[a * (t->ngpus + t->nnics) + b] : NULL;
    return tree ? tree : c && strncmp(c, "NV", 2) ? c : NULL;
}

int topo_compute_matrix(struct topo *t)
{
    int n = t->ngpus + t->nnics;
    t->matrix = util_xcalloc((size_t)(n ? n * n : 1), sizeof(char *));
    for (int a = 0; a < n; a++) {
        for (int b = 0; b < n; b++) {
            const char *letter;
            char nv[16];
            int links = a < t->ngpus && b < t->ngpus ? t->nvlink[a * t->ngpus + b] : 0;
            if (a == b) {
                letter = "X";
            } else if (links > 0) {
                snprintf(nv, sizeof(nv), "NV%d", links);
                letter = nv;
            } else {
                letter = topo_path_letter(t, device_node(t, a), device_node(t, b));
            }
            t->matrix[a * n + b] = topo_strdup(letter);
        }
    }
    return 0;
}
