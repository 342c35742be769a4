/* SPDX-License-Identifier: MIT */
/* Unit tests for topo/: path letters, readers on real exports, sysfs probes on a fake tree. */
#include "topo/internal.h"
#include "util/file.h"
#include "util/log.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];

static void put(const char *rel, const void *data, size_t len)
{
    char path[512], cmd[600];
    snprintf(path, sizeof(path), "%s%s", root, rel);
    snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
    assert_int_equal(system(cmd), 0);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

static void puts_file(const char *rel, const char *text)
{
    put(rel, text, strlen(text));
}

/* A config space of len bytes whose first extended capability is cap_id with control ctrl. */
static void put_config(const char *rel, size_t len, unsigned cap_id, unsigned ctrl)
{
    unsigned char cfg[4096] = {0};
    cfg[0x100] = cap_id & 0xff;
    cfg[0x101] = (cap_id >> 8) & 0xff;
    cfg[0x102] = 0x01; /* version 1, next capability 0 */
    cfg[0x106] = ctrl & 0xff;
    cfg[0x107] = (ctrl >> 8) & 0xff;
    put(rel, cfg, len);
}

#define GPU_DIR "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/0000:03:00.0"

static int make_fake_sysfs(void **state)
{
    (void)state;
    snprintf(root, sizeof(root), "/tmp/topotune-sysfs-XXXXXX");
    if (!mkdtemp(root))
        return -1;
    puts_file("/sys/class/infiniband/mlx5_0/ports/1/rate", "400 Gb/sec (4X NDR)\n");
    puts_file("/sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
    puts_file("/sys/class/infiniband/mlx5_0/ports/1/link_layer", "InfiniBand\n");
    puts_file("/sys/class/infiniband/mlx5_1/ports/1/rate", "200 Gb/sec (4X HDR)\n");
    puts_file("/sys/class/infiniband/mlx5_1/ports/1/state", "1: DOWN\n");
    puts_file("/sys/class/infiniband/mlx5_1/ports/1/link_layer", "Ethernet\n");
    puts_file("/sys/class/net/eth0/speed", "25000\n");
    puts_file("/sys/class/net/eth0/operstate", "up\n");
    puts_file("/proc/self/limits",
              "Limit                     Soft Limit           Hard Limit           Units\n"
              "Max locked memory         65536                65536                bytes\n");
    puts_file("/proc/cmdline",
              "BOOT_IMAGE=/vmlinuz root=/dev/sda1 intel_iommu=on iommu=pt quiet\n");
    puts_file("/proc/1/cgroup", "0::/kubepods/besteffort/pod1234\n");
    puts_file("/proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  "
                                             "580.65.06  Sun Jul 27 07:09:35 UTC 2025\n");
    puts_file("/proc/sys/kernel/osrelease", "6.1.0-fake\n");
    puts_file(GPU_DIR "/current_link_speed", "32.0 GT/s PCIe\n");
    puts_file(GPU_DIR "/current_link_width", "16\n");
    put_config("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/config", 4096,
               0x000d, 0x001d);
    put_config("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/config", 4096, 0x0001, 0);
    put_config("/sys/devices/pci0000:00/0000:00:01.0/config", 64, 0, 0);
    char link[256], target[256];
    snprintf(link, sizeof(link), "%s/sys/bus/pci/devices", root);
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", link);
    assert_int_equal(system(cmd), 0);
    snprintf(link, sizeof(link), "%s/sys/bus/pci/devices/0000:03:00.0", root);
    snprintf(target, sizeof(target), "../../..%s", &GPU_DIR[4]);
    return symlink(target, link);
}

static int remove_fake_sysfs(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    unsetenv("TOPOTUNE_SYSFS_ROOT");
    return system(cmd);
}

static void test_probe_nic(void **state)
{
    (void)state;
    setenv("TOPOTUNE_SYSFS_ROOT", root, 1);
    struct topo_nic ib = {.name = "mlx5_0", .kind = TOPO_NIC_UNKNOWN, .speed_gbps = -1};
    struct topo_nic roce = {.name = "mlx5_1", .kind = TOPO_NIC_IB, .speed_gbps = -1};
    struct topo_nic eth = {.name = "eth0", .kind = TOPO_NIC_ETH, .speed_gbps = -1};
    topo_probe_nic(&ib);
    topo_probe_nic(&roce);
    topo_probe_nic(&eth);
    assert_int_equal(ib.kind, TOPO_NIC_IB);
    assert_int_equal(ib.speed_gbps, 400);
    assert_string_equal(ib.state, "up");
    assert_int_equal(roce.kind, TOPO_NIC_ROCE);
    assert_int_equal(roce.speed_gbps, 200);
    assert_string_equal(roce.state, "down");
    assert_int_equal(eth.speed_gbps, 25);
    assert_string_equal(eth.state, "up");
    free(ib.state);
    free(roce.state);
    free(eth.state);
}

static void test_probe_system(void **state)
{
    (void)state;
    setenv("TOPOTUNE_SYSFS_ROOT", root, 1);
    struct topo t;
    topo_init(&t);
    struct topo_gpu *g = topo_add_gpu(&t);
    snprintf(g->pci, sizeof(g->pci), "0000:03:00.0");
    topo_probe_system(&t);
    topo_probe_software(&t);
    assert_int_equal(t.system.memlock_bytes, 65536);
    assert_int_equal(t.system.container, 1);
    assert_string_equal(t.system.iommu, "intel_iommu=on iommu=pt");
    assert_int_equal(t.system.shm_bytes, TOPO_UNKNOWN); /* the fake root has no /dev/shm */
    assert_int_equal(t.gpus[0].pcie_gen, 5);
    assert_int_equal(t.gpus[0].pcie_width, 16);
    assert_string_equal(t.software.driver, "580.65.06");
    assert_string_equal(t.software.kernel, "6.1.0-fake");
    /* Bridges above the GPU: ACS with redirect on the switch port, none on the upstream
     * port (skipped), unreadable extended space on the root port (null). */
    json_t *acs = t.system.acs_bridges;
    assert_non_null(acs);
    assert_int_equal(json_array_size(acs), 2);
    json_t *first = json_array_get(acs, 0), *second = json_array_get(acs, 1);
    assert_string_equal(json_string_value(json_object_get(first, "bridge")), "0000:02:08.0");
    assert_int_equal(json_integer_value(json_object_get(first, "control")), 0x1d);
    assert_true(json_is_true(json_object_get(first, "redirect")));
    assert_string_equal(json_string_value(json_object_get(second, "bridge")), "0000:00:01.0");
    assert_true(json_is_null(json_object_get(second, "control")));
    topo_release(&t);
}

/* A hand-built tree: two NUMA nodes; NUMA 0 has two host bridges, the first with a
 * switch (upstream port U, downstream ports D1, D2) and a nested switch below D2. */
static void test_path_letters(void **state)
{
    (void)state;
    struct topo t;
    topo_init(&t);
    int numa0 = topo_add_pnode(&t, TOPO_PNODE_LOCALITY, -1, 0, 0);
    int numa1 = topo_add_pnode(&t, TOPO_PNODE_LOCALITY, -1, 0, 1);
    int hb0 = topo_add_pnode(&t, TOPO_PNODE_HOSTBRIDGE, numa0, 0, -1);
    int hb1 = topo_add_pnode(&t, TOPO_PNODE_HOSTBRIDGE, numa0, 0, -1);
    int hb2 = topo_add_pnode(&t, TOPO_PNODE_HOSTBRIDGE, numa1, 0, -1);
    int up = topo_add_pnode(&t, TOPO_PNODE_BRIDGE, hb0, 1, -1);
    int d1 = topo_add_pnode(&t, TOPO_PNODE_BRIDGE, up, 1, -1);
    int d2 = topo_add_pnode(&t, TOPO_PNODE_BRIDGE, up, 1, -1);
    int up2 = topo_add_pnode(&t, TOPO_PNODE_BRIDGE, d2, 1, -1);
    int d3 = topo_add_pnode(&t, TOPO_PNODE_BRIDGE, up2, 1, -1);
    int a = topo_add_pnode(&t, TOPO_PNODE_DEVICE, d1, 0, -1);
    int a2 = topo_add_pnode(&t, TOPO_PNODE_DEVICE, d1, 0, -1); /* second function */
    int b = topo_add_pnode(&t, TOPO_PNODE_DEVICE, d2, 0, -1);
    int c = topo_add_pnode(&t, TOPO_PNODE_DEVICE, d3, 0, -1);
    int e = topo_add_pnode(&t, TOPO_PNODE_DEVICE, hb0, 0, -1);
    int f = topo_add_pnode(&t, TOPO_PNODE_DEVICE, hb1, 0, -1);
    int g = topo_add_pnode(&t, TOPO_PNODE_DEVICE, hb2, 0, -1);
    assert_string_equal(topo_path_letter(&t, a, a2), "PIX");
    assert_string_equal(topo_path_letter(&t, a, b), "PIX");
    assert_string_equal(topo_path_letter(&t, a, c), "PXB");
    assert_string_equal(topo_path_letter(&t, a, e), "PHB");
    assert_string_equal(topo_path_letter(&t, a, f), "NODE");
    assert_string_equal(topo_path_letter(&t, a, g), "SYS");
    assert_string_equal(topo_path_letter(&t, g, f), "SYS");
    assert_null(topo_path_letter(&t, a, -1));
    topo_release(&t);
}

static void load_fixture(struct topo *t, const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", TOPOTUNE_FIXTURES, name);
    topo_init(t);
    assert_int_equal(topo_load(t, path), 0);
}

static const char *cell(const struct topo *t, int a, int b)
{
    return t->matrix[a * (t->ngpus + t->nnics) + b];
}

static void test_dgx2(void **state)
{
    (void)state;
    struct topo t;
    load_fixture(&t, "hwloc-nvidia-dgx2h-16xV100-nvswitch.xml");
    assert_int_equal(t.ngpus, 16);
    assert_int_equal(t.nvswitches, 12);
    for (int i = 0; i < 16; i++) {
        assert_int_equal(t.gpus[i].nvlinks, 6);
        assert_int_equal(t.gpus[i].sm, 70);
        for (int j = 0; j < 16; j++)
            assert_string_equal(cell(&t, i, j), i == j ? "X" : "NV6");
    }
    topo_release(&t);
}

static void test_minsky(void **state)
{
    (void)state;
    struct topo t;
    load_fixture(&t, "hwloc-ibm-power8-minsky-4xP100-nvlink.xml");
    assert_int_equal(t.ngpus, 4);
    assert_string_equal(cell(&t, 0, 1), "NV2");
    assert_string_equal(cell(&t, 2, 3), "NV2");
    assert_string_equal(cell(&t, 0, 2), "SYS");
    assert_int_equal(t.gpus[0].nvlinks, 2); /* links to the CPU are not GPU links */
    assert_int_equal(t.cpu.sockets, 2);
    topo_release(&t);
}

static void test_nccl_files(void **state)
{
    (void)state;
    struct topo t;
    util_log_init("test", UTIL_LOG_QUIET);
    load_fixture(&t, "nccl-topo-aws-p5-48xlarge.xml");
    assert_int_equal(t.ngpus, 0);
    assert_int_equal(t.nnics, 0);
    assert_int_equal(t.unclassified_pci, 32);
    assert_int_equal(t.cpu.numa_nodes, 2);
    topo_release(&t);

    load_fixture(&t, "nccl-topo-azure-ncv4.xml");
    assert_int_equal(t.ngpus, 4);
    assert_true(t.nvlink_known);
    assert_int_equal(t.gpus[0].nvlinks, 0); /* self-targeted links ignored */
    assert_int_equal(t.nics[0].speed_gbps, 100);
    assert_int_equal(t.nics[0].kind, TOPO_NIC_ETH);
    assert_string_equal(t.gpus[0].cpuset, "0-23");
    assert_string_equal(cell(&t, 0, 4), "PHB");
    assert_string_equal(cell(&t, 1, 4), "SYS");
    topo_release(&t);

    load_fixture(&t, "nccl-topo-azure-ndv5.xml");
    assert_int_equal(t.ngpus, 8);
    assert_false(t.nvlink_known);
    assert_int_equal(t.nvswitches, TOPO_UNKNOWN);
    assert_int_equal(t.gpus[0].pcie_gen, 5);
    assert_string_equal(cell(&t, 0, 8), "PIX");
    topo_release(&t);
}

static void test_nccl_nvswitch(void **state)
{
    (void)state;
    const char xml[] =
        "<system version=\"1\"><cpu numaid=\"0\" affinity=\"0000ffff\">"
        "<pci busid=\"0000:10:00.0\" class=\"0x060400\">"
        "<pci busid=\"0000:11:00.0\" class=\"0x030200\" device=\"0x2330\"><gpu dev=\"0\" sm=\"90\">"
        "<nvlink target=\"0000:a1:00.0\" count=\"18\" tclass=\"0x068000\"/></gpu></pci>"
        "<pci busid=\"0000:12:00.0\" class=\"0x020700\"><nic><net name=\"mlx5_0\" "
        "speed=\"400000\"/></nic></pci>"
        "</pci><pci busid=\"0000:20:00.0\" class=\"0x030200\" device=\"0x2330\"><gpu dev=\"1\" "
        "sm=\"90\">"
        "<nvlink target=\"0000:a1:00.0\" count=\"18\" tclass=\"0x068000\"/></gpu></pci>"
        "</cpu></system>";
    struct topo t;
    topo_init(&t);
    assert_int_equal(topo_load_buffer(&t, "inline", xml, sizeof(xml) - 1), 0);
    assert_int_equal(t.ngpus, 2);
    assert_int_equal(t.nvswitches, 1);
    assert_string_equal(cell(&t, 0, 1), "NV18");
    assert_string_equal(cell(&t, 0, 2), "PIX");
    assert_string_equal(cell(&t, 1, 2), "PHB");
    assert_string_equal(t.gpus[0].model, "NVIDIA H100 80GB HBM3");
    assert_int_equal(t.nics[0].speed_gbps, 400);
    assert_int_equal(t.nics[0].kind, TOPO_NIC_IB);
    topo_release(&t);
}

static void test_live(void **state)
{
    (void)state;
    unsetenv("TOPOTUNE_SYSFS_ROOT");
    struct topo t;
    topo_init(&t);
    assert_int_equal(topo_load(&t, NULL), 0);
    assert_true(t.cpu.pus >= 1);
    if (access("/dev/nvidia0", F_OK) != 0) {
        assert_int_equal(t.ngpus, 0); /* no GPU here: an empty list, not an error */
        assert_null(t.p2p);
    }
    assert_non_null(t.class_id);
    topo_release(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_probe_nic),     cmocka_unit_test(test_probe_system),
        cmocka_unit_test(test_path_letters),  cmocka_unit_test(test_dgx2),
        cmocka_unit_test(test_minsky),        cmocka_unit_test(test_nccl_files),
        cmocka_unit_test(test_nccl_nvswitch), cmocka_unit_test(test_live),
    };
    return cmocka_run_group_tests_name("unit.topo", tests, make_fake_sysfs, remove_fake_sysfs);
}
