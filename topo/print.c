/* SPDX-License-Identifier: MIT */
/* Human output: a summary of the node and the matrix laid out as `nvidia-smi topo -m` does. */
#include "topo/internal.h"

#include <string.h>

static const char *or_unknown(const char *s)
{
    return s ? s : "unknown";
}

/* Readers clean what they keep (topo_text); the source path comes from the user: clean it too. */
static const char *shown(const char *s, char *buf, size_t len)
{
    return topo_text_into(or_unknown(s), buf, len);
}

static int same_model(const struct topo *t, int i, int j)
{
    return strcmp(or_unknown(t->gpus[i].model), or_unknown(t->gpus[j].model)) == 0;
}

/* The first GPU of GPU i's model. */
static int first_of_model(const struct topo *t, int i)
{
    int j = 0;
    while (!same_model(t, i, j))
        j++;
    return j;
}

/* " x Tesla V100-SXM2-16GB", or for a mixed node ": 2 x Tesla M2075, 1 x Tesla K40m". */
static void print_gpu_models(const struct topo *t, FILE *out)
{
    int models = 0;
    for (int i = 0; i < t->ngpus; i++)
        models += first_of_model(t, i) == i;
    if (models == 1) {
        fprintf(out, " x %s", or_unknown(t->gpus[0].model));
        return;
    }
    for (int i = 0, printed = 0; i < t->ngpus; i++) {
        if (first_of_model(t, i) != i)
            continue;
        int count = 0;
        for (int j = i; j < t->ngpus; j++)
            count += same_model(t, i, j);
        fprintf(out, "%s %d x %s", printed++ ? "," : ":", count, or_unknown(t->gpus[i].model));
    }
}

/* "yes", "none", or "yes, N of M GPUs" when only some GPUs have NVLink. */
static void print_nvlink(const struct topo *t, FILE *out)
{
    int with = 0;
    for (int i = 0; i < t->ngpus; i++)
        with += t->gpus[i].nvlinks > 0;
    if (!t->nvlink_known)
        fprintf(out, "not described by this source (matrix shows PCIe paths only)");
    else if (t->nvlink_inferred)
        fprintf(out,
                "yes, %d links a GPU to NVSwitches: inferred from the GPU model (the source "
                "does not describe the links)",
                t->gpus[0].nvlinks);
    else if (with == 0)
        fprintf(out, "none");
    else if (with == t->ngpus)
        fprintf(out, "yes");
    else
        fprintf(out, "yes, %d of %d GPUs", with, t->ngpus);
}

void topo_print_summary(const struct topo *t, FILE *out)
{
    char buf[TOPO_MAX_TEXT + 1];
    fprintf(out, "Host:      %s\n", or_unknown(t->host));
    fprintf(out, "Source:    %s\n",
            t->source_path ? shown(t->source_path, buf, sizeof(buf)) : "this machine (live)");
    fprintf(out, "CPU:       %s %s", or_unknown(t->cpu.vendor), or_unknown(t->cpu.model));
    if (t->cpu.sockets >= 0)
        fprintf(out, ", %d socket(s)", t->cpu.sockets);
    if (t->cpu.numa_nodes >= 0)
        fprintf(out, ", %d NUMA node(s)", t->cpu.numa_nodes);
    if (t->cpu.cores >= 0)
        fprintf(out, ", %d cores", t->cpu.cores);
    if (t->cpu.pus >= 0)
        fprintf(out, ", %d PUs", t->cpu.pus);
    fprintf(out, "\nGPUs:      %d", t->ngpus);
    print_gpu_models(t, out);
    if (t->other_gpus)
        fprintf(out, " (and %d GPU(s) of another vendor, left out: NCCL drives NVIDIA GPUs only)",
                t->other_gpus);
    fprintf(out, "\nNVLink:    ");
    print_nvlink(t, out);
    fputc('\n', out);
    if (t->nvswitches == TOPO_UNKNOWN && t->nvlink_known)
        fprintf(out, "NVSwitch:  present (count not given by this source)\n");
    else if (t->nvswitches == TOPO_UNKNOWN)
        fprintf(out, "NVSwitch:  unknown (not described by this source)\n");
    else
        fprintf(out, "NVSwitch:  %d\n", t->nvswitches);
    fprintf(out, "NICs:      %d\n", t->nnics);
    for (int i = 0; i < t->nnics; i++) {
        const struct topo_nic *n = &t->nics[i];
        fprintf(out, "  NIC%-3d   %-12s %-5s", i, or_unknown(n->name), topo_nic_kind_name(n->kind));
        if (n->netdev)
            fprintf(out, " netdev %s", n->netdev);
        if (n->speed_gbps >= 0)
            fprintf(out, " %d Gb/s", n->speed_gbps);
        if (n->state)
            fprintf(out, " %s", n->state);
        fputc('\n', out);
    }
    if (t->unclassified_pci)
        fprintf(out,
                "Unclassified PCI devices: %d (no class in the file; NCCL fills them in live)\n",
                t->unclassified_pci);
    fprintf(out, "Class:     %s\n", or_unknown(t->class_id));
}

/* Tab-separated cells, " X " for self, as nvidia-smi prints them. */
static const char *device_label(const struct topo *t, int d, char *buf, size_t len)
{
    snprintf(buf, len, d < t->ngpus ? "GPU%d" : "NIC%d", d < t->ngpus ? d : d - t->ngpus);
    return buf;
}

void topo_print_matrix(const struct topo *t, FILE *out)
{
    int n = t->ngpus + t->nnics;
    char label[32];
    if (n == 0) {
        fprintf(out, "\nNo GPUs or NICs found: no matrix to print.\n");
        return;
    }
    fputc('\n', out);
    for (int j = 0; j < n; j++)
        fprintf(out, "\t%s", device_label(t, j, label, sizeof(label)));
    fprintf(out, "\tCPU Affinity\tNUMA Affinity\n");
    for (int i = 0; i < n; i++) {
        fprintf(out, "%s", device_label(t, i, label, sizeof(label)));
        for (int j = 0; j < n; j++) {
            const char *cell = t->matrix[i * n + j];
            fprintf(out, "\t%s", !cell ? "N/A" : strcmp(cell, "X") == 0 ? " X " : cell);
        }
        const char *cpuset = i < t->ngpus ? t->gpus[i].cpuset : t->nics[i - t->ngpus].cpuset;
        int numa = i < t->ngpus ? t->gpus[i].numa : t->nics[i - t->ngpus].numa;
        fprintf(out, "\t%s\t", cpuset ? cpuset : "N/A");
        if (numa >= 0)
            fprintf(out, "%d\n", numa);
        else
            fprintf(out, "N/A\n");
    }
    fprintf(out,
            "\nLegend:\n\n"
            "  X    = Self\n"
            "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA "
            "nodes (e.g., QPI/UPI)\n"
            "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host "
            "Bridges within a NUMA node\n"
            "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the "
            "CPU)\n"
            "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe "
            "Host Bridge)\n"
            "  PIX  = Connection traversing at most a single PCIe bridge\n"
            "  NV#  = Connection traversing a bonded set of # NVLinks\n");
    if (t->nnics) {
        fprintf(out, "\nNIC Legend:\n\n");
        for (int i = 0; i < t->nnics; i++)
            fprintf(out, "  NIC%d: %s\n", i, or_unknown(t->nics[i].name));
    }
}
