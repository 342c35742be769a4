/* SPDX-License-Identifier: MIT */
/* Unit tests for topo/: path letters, readers on real exports, sysfs probes on a fake tree. */
#include "topo/internal.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/file.h"
#include "util/log.h"

#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];

/* mkdir -p without a shell: every prefix of path, then path. */
static void mkdirs(const char *path)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(buf, 0755);
            *p = '/';
        }
    mkdir(buf, 0755);
}

static void put(const char *rel, const void *data, size_t len)
{
    char path[512], dir[512];
    snprintf(path, sizeof(path), "%s%s", root, rel);
    snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(path, '/') - path), path);
    mkdirs(dir);
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

#define PORT_DIR "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0"
#define GPU_DIR  PORT_DIR "/0000:03:00.0"

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
    /* a GPU at rest: its link trained down to gen 1 x8; it and its port can do gen 5 x16 */
    puts_file(GPU_DIR "/current_link_speed", "2.5 GT/s PCIe\n");
    puts_file(GPU_DIR "/current_link_width", "8\n");
    puts_file(GPU_DIR "/max_link_speed", "32.0 GT/s PCIe\n");
    puts_file(GPU_DIR "/max_link_width", "16\n");
    puts_file(PORT_DIR "/max_link_speed", "32.0 GT/s PCIe\n");
    puts_file(PORT_DIR "/max_link_width", "16\n");
    put_config("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/config", 4096,
               0x000d, 0x001d);
    put_config("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/config", 4096, 0x0001, 0);
    put_config("/sys/devices/pci0000:00/0000:00:01.0/config", 64, 0, 0);
    char link[256], target[256];
    snprintf(link, sizeof(link), "%s/sys/bus/pci/devices", root);
    mkdirs(link);
    snprintf(link, sizeof(link), "%s/sys/bus/pci/devices/0000:03:00.0", root);
    snprintf(target, sizeof(target), "../../..%s", &GPU_DIR[4]);
    return symlink(target, link);
}

static int remove_fake_sysfs(void **state)
{
    (void)state;
    unsetenv("TOPOTUNE_SYSFS_ROOT");
    return util_remove_tree_at(AT_FDCWD, root, 32);
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
    assert_int_equal(t.gpus[0].pcie_gen, 5); /* what the link can carry, not its idle rate */
    assert_int_equal(t.gpus[0].pcie_width, 16);
    assert_true(t.gpus[0].pcie_gbs > 63 && t.gpus[0].pcie_gbs < 63.1);

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

/* The live probe's gen and width for the fake GPU (its own maxima gen 5 x16) when its port's
 * maxima and its link's current rate are these. */
static void probed_link(const char *port_gts, const char *port_lanes, const char *now_gts,
                        const char *now_lanes, int *gen, int *width)
{
    puts_file(PORT_DIR "/max_link_speed", port_gts);
    puts_file(PORT_DIR "/max_link_width", port_lanes);
    puts_file(GPU_DIR "/current_link_speed", now_gts);
    puts_file(GPU_DIR "/current_link_width", now_lanes);
    struct topo t;
    topo_init(&t);
    struct topo_gpu *g = topo_add_gpu(&t);
    snprintf(g->pci, sizeof(g->pci), "0000:03:00.0");
    topo_probe_system(&t);
    *gen = t.gpus[0].pcie_gen;
    *width = t.gpus[0].pcie_width;
    topo_release(&t);
}

static void test_probe_gpu_link(void **state)
{
    (void)state;
    setenv("TOPOTUNE_SYSFS_ROOT", root, 1);
    int gen, width;
    /* at rest (gen 1 x8 now): what the link can carry */
    probed_link("32.0 GT/s PCIe\n", "16\n", "2.5 GT/s PCIe\n", "8\n", &gen, &width);
    assert_int_equal(gen, 5);
    assert_int_equal(width, 16);
    /* in a gen 4 slot the port decides, as NCCL reads it */
    probed_link("16.0 GT/s PCIe\n", "16\n", "2.5 GT/s PCIe\n", "8\n", &gen, &width);
    assert_int_equal(gen, 4);
    /* an emulated port (older QEMU: 2.5 GT/s x1) below the rate the link runs at: ignored */
    probed_link("2.5 GT/s PCIe\n", "1\n", "32.0 GT/s PCIe\n", "16\n", &gen, &width);
    assert_int_equal(gen, 5);
    assert_int_equal(width, 16);
    /* the fake tree as make_fake_sysfs left it, for the tests after this one */
    probed_link("32.0 GT/s PCIe\n", "16\n", "2.5 GT/s PCIe\n", "8\n", &gen, &width);
}

/* An export's GPU rate alone (GB/s): from gen 3 x16 up as it says (stated); below, a GPU at
 * rest, x16 of the generation its model is built for (an estimate); nothing said, NCCL's gen 3;
 * a source's gen and width as they are. */
static void test_gpu_link_from_rate(void **state)
{
    (void)state;
    struct topo_gpu g = {.pcie_gen = TOPO_UNKNOWN, .pcie_width = TOPO_UNKNOWN};
    int gen, width;
    const struct {
        const char *model;
        double gbs;
        int gen, stated;
    } cases[] = {
        {"NVIDIA H100 PCIe", 2.0, 5, 0},       {"NVIDIA L40S", 4.0, 4, 0},
        {"NVIDIA B300 SXM6 AC", 2.0, 6, 0},    {"Tesla T4", 2.0, 3, 0},
        {"an unknown GPU", 2.0, 3, 0},         {"NVIDIA A100-PCIE-40GB", -1, 3, 0},
        {"NVIDIA H100 PCIe", 31.507692, 4, 1}, {"NVIDIA A100-PCIE-40GB", 15.753846, 3, 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        g.model = (char *)cases[i].model;
        g.pcie_gbs = cases[i].gbs;
        assert_int_equal(topo_gpu_pcie_link(&g, &gen, &width), cases[i].stated);
        assert_int_equal(gen, cases[i].gen);
        assert_int_equal(width, 16);
    }
    g.pcie_gen = 4, g.pcie_width = 8; /* the live probe's or a spec's */
    assert_int_equal(topo_gpu_pcie_link(&g, &gen, &width), 1);
    assert_int_equal(gen * 100 + width, 408);
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
    /* two devices 70 bridges below host bridges of one NUMA node: no letter (a chain cut at 64
     * levels read SYS, where 5 levels read NODE) */
    int deep[2];
    for (int k = 0; k < 2; k++) {
        int n = topo_add_pnode(&t, TOPO_PNODE_HOSTBRIDGE, numa0, 0, -1);
        for (int i = 0; i < 70; i++)
            n = topo_add_pnode(&t, TOPO_PNODE_BRIDGE, n, 1, -1);
        deep[k] = topo_add_pnode(&t, TOPO_PNODE_DEVICE, n, 0, -1);
    }
    assert_null(topo_path_letter(&t, deep[0], deep[1]));
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

/* Issue 14, item 12: what a file says is printed as text, never as terminal control. */
static void test_text_clean(void **state)
{
    (void)state;
    char buf[16];
    assert_string_equal(topo_text_into("Tesla V100", buf, sizeof(buf)), "Tesla V100");
    assert_string_equal(topo_text_into("a\x1b[31mb", buf, sizeof(buf)), "a?[31mb");
    assert_string_equal(topo_text_into("\xc2\x9b"
                                       "2J",
                                       buf, sizeof(buf)),
                        "?2J");                                                     /* C1 CSI */
    assert_string_equal(topo_text_into("x\xe2\x80\xaey", buf, sizeof(buf)), "x?y"); /* U+202E */
    assert_string_equal(topo_text_into("\xff\xc0\xaf", buf, sizeof(buf)), "???");   /* not UTF-8 */
    assert_string_equal(topo_text_into("M\xc3\xbcnchen", buf, sizeof(buf)), "M\xc3\xbcnchen");
    assert_string_equal(topo_text_into("0123456789abcdef", buf, sizeof(buf)), "0123456789ab...");
    assert_string_equal(topo_text_into("0123456789abcde", buf, sizeof(buf)), "0123456789abcde");
    assert_string_equal(topo_text_into(NULL, buf, sizeof(buf)), "");
    char big[600];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    char *kept = topo_text(big);
    assert_int_equal(strlen(kept), TOPO_MAX_TEXT);
    assert_string_equal(kept + TOPO_MAX_TEXT - 3, "...");
    free(kept);
    assert_null(topo_text(NULL));
}

/* The fixture's text with one piece replaced (which must be there); the caller frees it. */
static char *fixture_with(const char *name, const char *from, const char *to)
{
    char path[512];
    struct util_buf b = UTIL_BUF_INIT;
    snprintf(path, sizeof(path), "%s/%s", TOPOTUNE_FIXTURES, name);
    assert_int_equal(util_file_read(path, 1 << 20, &b), 0);
    const char *at = strstr(util_buf_str(&b), from);
    assert_non_null(at);
    struct util_buf out = UTIL_BUF_INIT;
    util_buf_add(&out, b.data, (size_t)(at - b.data));
    util_buf_adds(&out, to);
    util_buf_adds(&out, at + strlen(from));
    util_buf_release(&b);
    return util_buf_detach(&out);
}

static enum topo_nic_kind mlx4_kind(const char *from, const char *to, const char **netdev)
{
    char *xml = fixture_with("hwloc-sgi-uv2000-24n-mlx4-ib-lid0.xml", from, to);
    struct topo t;
    topo_init(&t);
    assert_int_equal(topo_load_buffer(&t, "uv2000", xml, strlen(xml)), 0);
    free(xml);
    assert_string_equal(t.nics[t.nnics - 1].name, "mlx4_0");
    enum topo_nic_kind kind = t.nics[t.nnics - 1].kind;
    static char nd[32];
    snprintf(nd, sizeof(nd), "%s", t.nics[t.nnics - 1].netdev ? t.nics[t.nnics - 1].netdev : "");
    *netdev = nd;
    topo_release(&t);
    return kind;
}

#define UV_IPOIB                                                                                   \
    "            <object type=\"OSDev\" gp_index=\"396\" name=\"ib0\" osdev_type=\"2\">\n"         \
    "              <info name=\"Address\" "                                                        \
    "value=\"80:00:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:1b:b0:a1\"/>\n"                    \
    "              <info name=\"Port\" value=\"1\"/>\n"                                            \
    "            </object>\n"
#define UV_GID "<info name=\"Port1GID0\" value=\"fe80:0000:0000:0000:0002:c903:001b:b0a1\"/>"

/* Issue 14, items 15 and 16: InfiniBand or RoCE from the hardware, never from the LID. */
static void test_nic_kinds(void **state)
{
    (void)state;
    const char *netdev;
    struct topo t;
    /* LID 0 (no subnet manager yet) and an IPoIB netdev: InfiniBand. */
    assert_int_equal(mlx4_kind("", "", &netdev), TOPO_NIC_IB);
    assert_string_equal(netdev, "ib0");
    /* No IPoIB module either: GID 0 holds the port GUID, not a MAC: still InfiniBand. */
    assert_int_equal(mlx4_kind(UV_IPOIB, "", &netdev), TOPO_NIC_IB);
    /* The same port on Ethernet: a 6-byte MAC netdev and a GID made from it: RoCE. */
    assert_int_equal(
        mlx4_kind(UV_IPOIB,
                  "<object type=\"OSDev\" gp_index=\"396\" name=\"eth9\" osdev_type=\"2\">"
                  "<info name=\"Address\" value=\"00:02:c9:1b:b0:a1\"/></object>\n",
                  &netdev),
        TOPO_NIC_ROCE);
    assert_string_equal(netdev, "eth9");
    assert_int_equal(
        mlx4_kind(UV_GID,
                  "<info name=\"Port1GID0\" value=\"fe80:0000:0000:0000:0202:c9ff:fe1b:b0a1\"/>",
                  &netdev),
        TOPO_NIC_IB); /* the IPoIB netdev outweighs the GID */
    /* Nothing but LID 0 and the PCI class (network/other): unknown, not RoCE. */
    char *xml = fixture_with("hwloc-sgi-uv2000-24n-mlx4-ib-lid0.xml", UV_IPOIB, "");
    char *no_gid = strstr(xml, UV_GID);
    memset(no_gid, ' ', strlen(UV_GID));
    topo_init(&t);
    assert_int_equal(topo_load_buffer(&t, "uv2000", xml, strlen(xml)), 0);
    assert_int_equal(t.nics[t.nnics - 1].kind, TOPO_NIC_UNKNOWN);
    topo_release(&t);
    free(xml);

    /* Item 16: a ConnectX-2 on class 0x0c06 (serial bus/InfiniBand) with no port attributes. */
    load_fixture(&t, "hwloc-hp-sl390s-g7-3xM20x0-mlx4-ib.xml");
    assert_string_equal(t.nics[2].name, "mlx4_0");
    assert_int_equal(t.nics[2].kind, TOPO_NIC_IB);
    assert_string_equal(t.nics[2].netdev, "ib0");
    topo_release(&t);
    /* Ethernet RDMA with LID 0 stays RoCE. */
    load_fixture(&t, "hwloc-cisco-16intel64-usnic-vfs.xml");
    assert_string_equal(t.nics[2].name, "usnic_0");
    assert_int_equal(t.nics[2].kind, TOPO_NIC_ROCE);
    topo_release(&t);
    /* Class 0x0c06 in an NCCL topology file: a NIC, InfiniBand. */
    const char nccl[] = "<system version=\"1\"><cpu numaid=\"0\"><pci busid=\"0000:05:00.0\" "
                        "class=\"0x0c0600\" vendor=\"0x15b3\"/></cpu></system>";
    topo_init(&t);
    assert_int_equal(topo_load_buffer(&t, "inline", nccl, sizeof(nccl) - 1), 0);
    assert_int_equal(t.nnics, 1);
    assert_int_equal(t.nics[0].kind, TOPO_NIC_IB);
    assert_int_equal(t.unclassified_pci, 0);
    topo_release(&t);
}

/* HPE Slingshot's Cassini NIC is CXI (libfabric, as NCCL reaches it), not Ethernet or RoCE:
 * from hwloc (an Ethernet PCI device with Cray's or HPE's Cassini id) and from NCCL's XML. */
static void test_nic_cxi(void **state)
{
    (void)state;
    struct topo t;
    static const char *const ids[][2] = {{"[8086:1521]", "[17db:0501]"},
                                         {"[8086:1521]", "[1590:0371]"}};
    for (int i = 0; i < 2; i++) {
        char *xml = fixture_with("hwloc-llnl-pascal-2xP100pcie-mlx5.xml", ids[i][0], ids[i][1]);
        topo_init(&t);
        assert_int_equal(topo_load_buffer(&t, "cxi", xml, strlen(xml)), 0);
        free(xml);
        int cxi = -1;
        for (int n = 0; n < t.nnics; n++)
            if (!strcmp(t.nics[n].pci, "0000:0c:00.0"))
                cxi = n;
        assert_true(cxi >= 0);
        assert_int_equal(t.nics[cxi].kind, TOPO_NIC_CXI);
        assert_string_equal(topo_nic_kind_name(t.nics[cxi].kind), "cxi");
        assert_true(topo_nic_rdma(t.nics[cxi].kind));
        topo_release(&t);
    }
    /* The same id in NCCL's topology dump; HPE's vendor id with another device is Ethernet. */
    static const char *const nccl[][2] = {
        {"0x17db", "0x0501"}, {"0x1590", "0x0371"}, {"0x1590", "0x0001"}};
    for (int i = 0; i < 3; i++) {
        char xml[256];
        snprintf(xml, sizeof(xml),
                 "<system version=\"1\"><cpu numaid=\"0\"><pci busid=\"0000:05:00.0\" "
                 "class=\"0x020000\" vendor=\"%s\" device=\"%s\"/></cpu></system>",
                 nccl[i][0], nccl[i][1]);
        topo_init(&t);
        assert_int_equal(topo_load_buffer(&t, "inline", xml, strlen(xml)), 0);
        assert_int_equal(t.nnics, 1);
        assert_int_equal(t.nics[0].kind, i < 2 ? TOPO_NIC_CXI : TOPO_NIC_ETH);
        topo_release(&t);
    }
    /* A NIC outside PCI, as libfabric names a Cassini: by its name. */
    static const char bare[] = "<system version=\"1\"><cpu numaid=\"0\"><nic><net name=\"cxi0\" "
                               "speed=\"200000\"/></nic></cpu></system>";
    topo_init(&t);
    assert_int_equal(topo_load_buffer(&t, "inline", bare, sizeof(bare) - 1), 0);
    assert_int_equal(t.nnics, 1);
    assert_int_equal(t.nics[0].kind, TOPO_NIC_CXI);
    topo_release(&t);
}

/* Issue 14, item 9: hwloc never sees a DOCTYPE; an internal subset is refused. */
static void test_doctype(void **state)
{
    (void)state;
    static const char *const accepted[] = {"<!DOCTYPE topology>", "", "<!-- x -->"};
    static const char *const refused[] = {"<!DOCTYPE topology []>",
                                          "<!DOCTYPE topology SYSTEM \"hwloc2.dtd\" [ ]>",
                                          "<!DOCTYPE topology [<!ENTITY e \"x\">]>"};
    struct topo t;
    util_log_init("test", UTIL_LOG_QUIET);
    for (size_t i = 0; i < 3; i++) {
        char *xml = fixture_with("hwloc-ibm-power8-minsky-4xP100-nvlink.xml",
                                 "<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">", accepted[i]);
        topo_init(&t);
        assert_int_equal(topo_load_buffer(&t, "doctype", xml, strlen(xml)), 0);
        assert_int_equal(t.ngpus, 4);
        assert_string_equal(cell(&t, 0, 1), "NV2");
        topo_release(&t);
        free(xml);
        xml = fixture_with("hwloc-ibm-power8-minsky-4xP100-nvlink.xml",
                           "<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">", refused[i]);
        topo_init(&t);
        assert_int_equal(topo_load_buffer(&t, "subset", xml, strlen(xml)), UTIL_EINVAL);
        topo_release(&t);
        free(xml);
    }
    const char nul[] =
        "{\"schema\": \"topotune/spec/1\", \"gpu\": \"H100-SXM5-80GB\", \"count\": 8}"
        "\0garbage";
    topo_init(&t);
    assert_int_equal(topo_load_buffer(&t, "nul", nul, sizeof(nul) - 1), UTIL_EINVAL);
    topo_release(&t);
}

/* A topology JSON of minsky with one edit, loaded: the return code. */
static int minsky_json_with(const char *path, json_t *value)
{
    struct topo t;
    load_fixture(&t, "hwloc-ibm-power8-minsky-4xP100-nvlink.xml");
    json_t *doc = topo_to_json(&t);
    topo_release(&t);
    json_t *at = doc;
    char key[64];
    const char *p = path;
    for (size_t len; (len = strcspn(p, ".")) && p[len] == '.'; p += len + 1) {
        snprintf(key, sizeof(key), "%.*s", (int)len, p);
        at = isdigit((unsigned char)key[0]) ? json_array_get(at, (size_t)atoi(key))
                                            : json_object_get(at, key);
    }
    if (isdigit((unsigned char)p[0]))
        json_array_set_new(at, (size_t)atoi(p), value);
    else
        json_object_set_new(at, p, value);
    char *text = json_dumps(doc, 0);
    json_decref(doc);
    topo_init(&t);
    int rc = topo_load_buffer(&t, "minsky.json", text, strlen(text));
    free(text);
    topo_release(&t);
    return rc;
}

/* Issue 14, item 12: every number of a topology JSON is range-checked before it is narrowed. */
static void test_json_ranges(void **state)
{
    (void)state;
    util_log_init("test", UTIL_LOG_QUIET);
    assert_int_equal(minsky_json_with("nodes", json_integer(4)), 0);
    assert_int_equal(minsky_json_with("nodes", json_integer((1LL << 32) + 5)), UTIL_EINVAL);
    assert_int_equal(minsky_json_with("nodes", json_integer(0)), UTIL_EINVAL);
    assert_int_equal(minsky_json_with("matrix.rows.0.1", json_string("NV64")), 0);
    assert_int_equal(minsky_json_with("matrix.rows.0.1", json_string("NV99999999999")),
                     UTIL_EINVAL);
    assert_int_equal(minsky_json_with("matrix.rows.0.1", json_string("NV65")), UTIL_EINVAL);
    assert_int_equal(minsky_json_with("matrix.rows.0.1", json_string("NV-1")), UTIL_EINVAL);
    assert_int_equal(minsky_json_with("matrix.rows.0.1", json_string("X")), UTIL_EINVAL);
    assert_int_equal(minsky_json_with("matrix.rows.0.1", json_string("PIX")), 0);
    assert_int_equal(minsky_json_with("gpus.0.numa", json_integer(1LL << 32)), UTIL_EINVAL);
    assert_int_equal(minsky_json_with("gpus.0.nvlinks", json_integer(1LL << 31)), UTIL_EINVAL);
    assert_int_equal(minsky_json_with("gpus.0.memory_mib", json_integer(-5)), UTIL_EINVAL);
    assert_int_equal(minsky_json_with("gpus.0.pci", json_string("0000:01:00.0; x")), UTIL_EINVAL);
    assert_int_equal(minsky_json_with("cpu.pus", json_integer(1LL << 40)), UTIL_EINVAL);
    assert_int_equal(minsky_json_with("nvswitches", json_integer(1LL << 33)), UTIL_EINVAL);
    assert_int_equal(minsky_json_with("system.shm_bytes", json_integer(-3)), UTIL_EINVAL);
    assert_int_equal(minsky_json_with("p2p_broken", json_string("yes")), UTIL_EINVAL);
}

/* Issue 14: NVLink counts stay bounded, whatever an NCCL file adds up. */
static void test_nvlink_bound(void **state)
{
    (void)state;
    char xml[4096];
    int o = snprintf(xml, sizeof(xml),
                     "<system version=\"1\"><cpu numaid=\"0\"><pci busid=\"0000:11:00.0\" "
                     "class=\"0x030200\" device=\"0x2330\"><gpu dev=\"0\" sm=\"90\">");
    for (int k = 0; k < 3; k++)
        o += snprintf(xml + o, sizeof(xml) - (size_t)o,
                      "<nvlink target=\"0000:a%d:00.0\" count=\"30\" tclass=\"0x068000\"/>", k);
    snprintf(xml + o, sizeof(xml) - (size_t)o, "</gpu></pci></cpu></system>");
    struct topo t;
    util_log_init("test", UTIL_LOG_QUIET);
    topo_init(&t);
    assert_int_equal(topo_load_buffer(&t, "inline", xml, strlen(xml)), UTIL_EINVAL);
    topo_release(&t);
}

/* Issue 14, item 17: a mixed node shows every model, and NVLink on every GPU that has it. */
static void test_summary_mixed(void **state)
{
    (void)state;
    struct topo t;
    char *text = NULL;
    size_t len = 0;
    load_fixture(&t, "hwloc-supermicro-x9drg-2s-K40m-mlx5.xml");
    FILE *out = open_memstream(&text, &len);
    topo_print_summary(&t, out);
    fclose(out);
    assert_non_null(strstr(text, "\nGPUs:      3: 2 x Tesla M2075, 1 x Tesla K40m (and 1 GPU(s) "
                                 "of another vendor, left out: NCCL drives NVIDIA GPUs only)\n"));
    free(text);
    topo_release(&t);

    load_fixture(&t, "hwloc-ibm-power8-minsky-4xP100-nvlink.xml");
    t.gpus[0].nvlinks = 0;
    out = open_memstream(&text, &len);
    topo_print_summary(&t, out);
    fclose(out);
    assert_non_null(strstr(text, "\nGPUs:      4 x Tesla P100-SXM2-16GB\n"));
    assert_non_null(strstr(text, "\nNVLink:    yes, 3 of 4 GPUs\n"));
    free(text);
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

/* GPU models by name and by PCI device: no model's name is a prefix of another's (an RTX A4000
 * is no A40), and a bare name an older driver prints falls to the device. */
static void test_gpu_models(void **state)
{
    (void)state;
    assert_int_equal(topo_gpu_info_by_name("NVIDIA A40")->sm, 86);
    assert_int_equal(topo_gpu_info_by_name("NVIDIA A40")->link_mbs, 25000);
    assert_string_equal(topo_gpu_info_by_name("NVIDIA RTX A4000")->name, "NVIDIA RTX A4000");
    assert_null(topo_gpu_info_by_name("A40"));
    assert_string_equal(topo_gpu_info_by_device(0x2235)->name, "NVIDIA A40");
    assert_string_equal(topo_gpu_info_by_name("NVIDIA RTX A6000")->name, "NVIDIA RTX A6000");
    assert_int_equal(topo_gpu_info_by_name("NVIDIA GeForce RTX 5090")->sm, 120);
    /* an export of an RTX PRO 6000 server names the edition */
    const struct topo_gpu_info *pro =
        topo_gpu_info_by_name("NVIDIA RTX PRO 6000 Blackwell Workstation Edition");
    assert_non_null(pro);
    assert_int_equal(pro->sm * 10 + pro->pcie_gen, 1205);
    assert_int_equal(pro->nvlinks, 0);
    assert_int_equal(topo_gpu_info_by_device(0x2b85)->nvlinks, 0);
    /* a model's name inside another's is no match: these were an A10 (no NVLink), a T4, an SXM
     * A800 and H800 (8 NVLinks), and H200's "H20" */
    static const struct {
        const char *name, *as;
        int nvlinks;
    } words[] = {{"NVIDIA A100-SXM-64GB", "NVIDIA A100-SXM-64GB", 12},
                 {"NVIDIA A100-PG509-200", "NVIDIA A100-PG509-200", 12},
                 {"NVIDIA A800 80GB PCIe", "NVIDIA A800 80GB PCIe", -1},
                 {"NVIDIA A800-SXM4-40GB", "NVIDIA A800-SXM4-80GB", 8},
                 {"NVIDIA H800 PCIe", "NVIDIA H800 PCIe", -1},
                 {"NVIDIA H20", "NVIDIA H20", 18},
                 {"NVIDIA A10", "NVIDIA A10", 0},
                 {"Tesla K40m", "Tesla K40m", 0},
                 {"NVIDIA GB200", "NVIDIA GB200", 18}};
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        const struct topo_gpu_info *g = topo_gpu_info_by_name(words[i].name);
        assert_non_null(g);
        assert_string_equal(g->name, words[i].as);
        assert_int_equal(g->nvlinks, words[i].nvlinks);
    }
    assert_null(topo_gpu_info_by_name("NVIDIA T400 4GB"));
    assert_null(topo_gpu_info_by_name("NVIDIA A1000"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_probe_nic),      cmocka_unit_test(test_probe_system),
        cmocka_unit_test(test_probe_gpu_link), cmocka_unit_test(test_gpu_link_from_rate),
        cmocka_unit_test(test_path_letters),   cmocka_unit_test(test_dgx2),
        cmocka_unit_test(test_minsky),         cmocka_unit_test(test_nccl_files),
        cmocka_unit_test(test_nccl_nvswitch),  cmocka_unit_test(test_live),
        cmocka_unit_test(test_text_clean),     cmocka_unit_test(test_nic_kinds),
        cmocka_unit_test(test_nic_cxi),        cmocka_unit_test(test_doctype),
        cmocka_unit_test(test_json_ranges),    cmocka_unit_test(test_nvlink_bound),
        cmocka_unit_test(test_summary_mixed),  cmocka_unit_test(test_gpu_models),
    };
    return cmocka_run_group_tests_name("unit.topo", tests, make_fake_sysfs, remove_fake_sysfs);
}
