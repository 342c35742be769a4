/* SPDX-License-Identifier: MIT */
/*
 * A few facts per NVIDIA GPU model, for sources that name a GPU but do not
 * describe it (hwloc XML exports, NCCL topology files). NVLink per-link rates
 * are those hwloc reports in its NVLinkBandwidth matrix (MB/s per direction, by
 * NVML's link version, not the link's real rate: NVLink 1 20000, NVLink 2 to 4
 * 25000, NVLink 5 50000; GA102's 14 GB/s NVLink 3 bridge links too are 25000). nvlinks is -1 for
 * PCIe cards that may or may not carry an NVLink bridge. pcie_gen is the generation the GPU's host
 * link is built for (profiles/hardware/gpus.json's). The hardware catalog in profiles/hardware/
 * (with sources) supersedes this table for specs. Device ids and names: NVIDIA's table of supported
 * GPUs (github.com/NVIDIA/open-gpu-kernel-modules, README.md); SM: developer.nvidia.com/cuda-gpus.
 */
#include "topo/internal.h"

#include <ctype.h>
#include <string.h>

static const struct topo_gpu_info gpu_table[] = {
    /* Order matters: the first entry that matches wins ("A100-SXM4-80GB" before "A100-SXM"). */
    {"M2075", 0x1094, "Tesla M2075", 20, 0, 0, 2},
    {"K40", 0x1023, "Tesla K40m", 35, 0, 0, 3},
    {"P100-SXM2", 0x15f9, "Tesla P100-SXM2-16GB", 60, 4, 20000, 3},
    {"P100-PCIE", 0x15f8, "Tesla P100-PCIE-16GB", 60, 0, 0, 3},
    {"V100-SXM3", 0x1db8, "Tesla V100-SXM3-32GB", 70, 6, 25000, 3},
    {"V100-SXM2-32GB", 0x1db5, "Tesla V100-SXM2-32GB", 70, 6, 25000, 3},
    {"V100-SXM2", 0x1db1, "Tesla V100-SXM2-16GB", 70, 6, 25000, 3},
    {"V100-PCIE-32GB", 0x1db6, "Tesla V100-PCIE-32GB", 70, 0, 0, 3},
    {"V100-PCIE", 0x1db4, "Tesla V100-PCIE-16GB", 70, 0, 0, 3},
    {"T4", 0x1eb8, "Tesla T4", 75, 0, 0, 3},
    {"A100-SXM4-80GB", 0x20b2, "NVIDIA A100-SXM4-80GB", 80, 12, 25000, 4},
    {"A100-SXM4-40GB", 0x20b0, "NVIDIA A100-SXM4-40GB", 80, 12, 25000, 4},
    {"A100 80GB PCIe", 0x20b5, "NVIDIA A100 80GB PCIe", 80, -1, 25000, 4},
    {"A100-PCIE", 0x20f1, "NVIDIA A100-PCIE-40GB", 80, -1, 25000, 4},
    /* the other SXM modules of HGX A100 boards (CINECA Leonardo's 64 GB one among them) */
    {"A100-SXM", 0x20b3, "NVIDIA A100-SXM-64GB", 80, 12, 25000, 4},
    {"PG509", 0, "NVIDIA A100-PG509-200", 80, 12, 25000, 4},
    {"NVIDIA A30", 0x20b7, "NVIDIA A30", 80, -1, 25000, 4}, /* not "A30": "RTX A3000" has it */
    {"A800 80GB PCIe", 0x20f5, "NVIDIA A800 80GB PCIe", 80, -1, 25000, 4},
    {"A800 40GB Active", 0x20f6, "NVIDIA A800 40GB Active", 80, -1, 25000, 4},
    {"A800", 0x20f3, "NVIDIA A800-SXM4-80GB", 80, 8, 25000, 4},
    {"NVIDIA A40", 0x2235, "NVIDIA A40", 86, -1, 25000, 4}, /* not "A40": "RTX A4000" has it */
    {"RTX A6000", 0x2230, "NVIDIA RTX A6000", 86, -1, 25000, 4},
    {"A10G", 0x2237, "NVIDIA A10G", 86, 0, 0, 4},
    {"A10", 0x2236, "NVIDIA A10", 86, 0, 0, 4},
    /* A16 and A2 share device 25b6 (told apart by subsystem): by name only */
    {"NVIDIA A16", 0, "NVIDIA A16", 86, 0, 0, 4},
    {"RTX A5000", 0x2231, "NVIDIA RTX A5000", 86, -1, 25000, 4},
    {"RTX A4000", 0x24b0, "NVIDIA RTX A4000", 86, 0, 0, 4},
    {"H100 80GB HBM3", 0x2330, "NVIDIA H100 80GB HBM3", 90, 18, 25000, 5},
    {"H100 PCIe", 0x2331, "NVIDIA H100 PCIe", 90, -1, 25000, 5},
    {"H100 NVL", 0, "NVIDIA H100 NVL", 90, -1, 25000, 5},
    {"H800 PCIe", 0x2322, "NVIDIA H800 PCIe", 90, -1, 25000, 5},
    {"H800", 0x2324, "NVIDIA H800", 90, 8, 25000, 5},
    /* the names that hold another's first: "GH200" and "H200 NVL" hold "H200", "GB200" holds
     * "B200", "GB300" "B300", and "H200" holds "H20" */
    {"GH200", 0, "NVIDIA GH200 480GB", 90, 18, 25000, 5},
    {"H200 NVL", 0, "NVIDIA H200 NVL", 90, -1, 25000, 5},
    {"H200", 0x2335, "NVIDIA H200", 90, 18, 25000, 5},
    {"H20", 0, "NVIDIA H20", 90, 18, 25000, 5},
    {"GB200", 0x2941, "NVIDIA GB200", 100, 18, 50000, 5, 1},
    {"B200", 0x2901, "NVIDIA B200", 100, 18, 50000, 5, 1},
    {"GB300", 0, "NVIDIA GB300", 103, 18, 50000, 6, 1},
    {"B300", 0, "NVIDIA B300 SXM6 AC", 103, 18, 50000, 6, 1},
    {"L40S", 0x26b9, "NVIDIA L40S", 89, 0, 0, 4},
    {"NVIDIA L40", 0x26b5, "NVIDIA L40", 89, 0, 0, 4}, /* after "L40S", which holds it */
    {"NVIDIA L20", 0x26ba, "NVIDIA L20", 89, 0, 0, 4},
    {"L4", 0x27b8, "NVIDIA L4", 89, 0, 0, 4},
    {"RTX 6000 Ada", 0x26b1, "NVIDIA RTX 6000 Ada Generation", 89, 0, 0, 4},
    {"RTX 5000 Ada", 0x26b2, "NVIDIA RTX 5000 Ada Generation", 89, 0, 0, 4},
    {"RTX 2080 Ti", 0x1e04, "NVIDIA GeForce RTX 2080 Ti", 75, -1, 25000, 3},
    {"TITAN RTX", 0x1e02, "NVIDIA TITAN RTX", 75, -1, 25000, 3},
    {"Quadro RTX 8000", 0, "Quadro RTX 8000", 75, -1, 25000, 3},
    {"Quadro RTX 6000", 0x1e30, "Quadro RTX 6000", 75, -1, 25000, 3},
    {"RTX 3080", 0x2206, "NVIDIA GeForce RTX 3080", 86, 0, 0, 4},
    {"RTX 4080", 0x2704, "NVIDIA GeForce RTX 4080", 89, 0, 0, 4},
    {"RTX 3090", 0x2204, "NVIDIA GeForce RTX 3090", 86, -1, 25000, 4},
    {"RTX 4090", 0x2684, "NVIDIA GeForce RTX 4090", 89, 0, 0, 4},
    {"RTX 5090", 0x2b85, "NVIDIA GeForce RTX 5090", 120, 0, 0, 5},
    /* by name (Server, Workstation and Max-Q editions): gpus.json's RTX-PRO-6000-BW */
    {"RTX PRO 6000", 0, "NVIDIA RTX PRO 6000 Blackwell Server Edition", 120, 0, 0, 5},
};

/* 1 when word occurs in model as a word of it (struct topo_gpu_info's match): a substring
 * alone read "NVIDIA A100-SXM-64GB" as an A10 without NVLink, and "T400" as a T4. */
static int has_word(const char *model, const char *word)
{
    size_t len = strlen(word);
    for (const char *at = strstr(model, word); at; at = strstr(at + 1, word))
        if ((at == model || !isalnum((unsigned char)at[-1])) && !isdigit((unsigned char)at[len]))
            return 1;
    return 0;
}

const struct topo_gpu_info *topo_gpu_info_by_name(const char *model)
{
    if (!model)
        return NULL;
    for (size_t i = 0; i < sizeof(gpu_table) / sizeof(gpu_table[0]); i++)
        if (has_word(model, gpu_table[i].match))
            return &gpu_table[i];
    return NULL;
}

const struct topo_gpu_info *topo_gpu_info_by_device(unsigned device_id)
{
    for (size_t i = 0; device_id && i < sizeof(gpu_table) / sizeof(gpu_table[0]); i++)
        if (gpu_table[i].device_id == device_id) /* 0: an entry known by name only */
            return &gpu_table[i];
    return NULL;
}
