/* SPDX-License-Identifier: MIT */
/* Unit tests for doctor/: a profile measured on other software, and comparing node reports. */
#include "doctor/doctor.h"
#include "topo/topo.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const json_t *find(const json_t *checks, const char *name)
{
    size_t i;
    json_t *c;
    json_array_foreach(checks, i, c)
        if (!strcmp(json_string_value(json_object_get(c, "name")), name))
            return c;
    fail_msg("no check named %s", name);
    return NULL;
}

static const char *field(const json_t *checks, const char *name, const char *key)
{
    return json_string_value(json_object_get(find(checks, name), key));
}

/* Same class and NCCL, but CUDA and the driver moved on: a warning that names both versions. */
static void profile_software_drift(void **state)
{
    (void)state;
    struct topo t;
    topo_init(&t);
    assert_int_equal(topo_load(&t, TOPOTUNE_FIXTURES "/../../profiles/specs/hgx-h100.json"), 0);
    free(t.software.nccl), free(t.software.cuda), free(t.software.driver);
    t.software.nccl = strdup("2.21.5");
    t.software.cuda = strdup("12.4");
    t.software.driver = strdup("550.54.15");
    json_t *profile =
        json_pack("{s:s,s:{s:s,s:s,s:s},s:[]}", "class", t.class_id, "software", "nccl", "2.21.5",
                  "cuda", "12.2", "driver", "535.104.05", "variables");
    json_t *checks = doctor_run(&t, profile, 0);
    assert_string_equal(field(checks, "profile", "status"), "warn");
    assert_non_null(
        strstr(field(checks, "profile", "evidence"), "cuda 12.2 when measured, 12.4 here"));
    assert_non_null(strstr(field(checks, "profile", "evidence"),
                           "driver 535.104.05 when measured, 550.54.15 here"));
    json_decref(checks);
    json_decref(profile);
    topo_release(&t);
}

/* A sysfs under a temporary root (TOPOTUNE_SYSFS_ROOT, set) with one RDMA device's port 1 and
 * its attributes (NAME, VALUE pairs up to a NULL name); removed, and the variable unset, by
 * sysfs_remove. */
struct fake_sysfs {
    char root[32], port[256];
    const char *const (*files)[2];
};

static void sysfs_port(struct fake_sysfs *f, const char *dev, const char *const (*files)[2])
{
    char path[300];
    snprintf(f->root, sizeof(f->root), "/tmp/topotune-doctor-XXXXXX");
    assert_non_null(mkdtemp(f->root));
    f->files = files;
    snprintf(f->port, sizeof(f->port), "%s/sys/class/infiniband/%s/ports/1", f->root, dev);
    for (char *p = f->port + strlen(f->root) + 1; (p = strchr(p, '/')); *p++ = '/') {
        *p = '\0';
        assert_int_equal(mkdir(f->port, 0700), 0);
    }
    assert_int_equal(mkdir(f->port, 0700), 0);
    for (size_t i = 0; files[i][0]; i++) {
        snprintf(path, sizeof(path), "%s/%s", f->port, files[i][0]);
        FILE *out = fopen(path, "w");
        assert_non_null(out);
        fputs(files[i][1], out);
        fclose(out);
    }
    setenv("TOPOTUNE_SYSFS_ROOT", f->root, 1);
}

static void sysfs_remove(struct fake_sysfs *f)
{
    char path[300];
    unsetenv("TOPOTUNE_SYSFS_ROOT");
    for (size_t i = 0; f->files[i][0]; i++) {
        snprintf(path, sizeof(path), "%s/%s", f->port, f->files[i][0]);
        assert_int_equal(unlink(path), 0);
    }
    for (char *p; strlen(f->port) > strlen(f->root); *p = '\0') {
        assert_int_equal(rmdir(f->port), 0);
        p = strrchr(f->port, '/');
    }
    assert_int_equal(rmdir(f->root), 0);
}

/* A Slingshot node: NCCL reaches its Cassini NICs through libfabric, so the rdma check says so,
 * not "NCCL uses sockets", and a cxi verbs device (HPE's newer driver) is no RoCE port of NCCL's.
 */
static void rdma_on_slingshot(void **state)
{
    (void)state;
    static const char *const files[][2] = {{"link_layer", "Ethernet\n"}, {NULL, NULL}};
    struct fake_sysfs f = {0};
    sysfs_port(&f, "cxi0", files);
    struct topo t;
    topo_init(&t);
    assert_int_equal(
        topo_load(&t, TOPOTUNE_FIXTURES "/../../profiles/specs/gh200-4x-slingshot.json"), 0);
    json_t *checks = doctor_run(&t, NULL, 0);
    assert_string_equal(field(checks, "rdma", "status"), "pass");
    assert_non_null(strstr(field(checks, "rdma", "evidence"), "4 EFA or Slingshot NIC(s)"));
    json_decref(checks);
    topo_release(&t);
    sysfs_remove(&f);
}

/* An AWS p6-b200: beside its EFA NICs two ConnectX-7 manage the NVSwitches. NCCL runs on the
 * plugin's NICs; their InfiniBand ports, down, failed the node as "NCCL falls back to sockets".
 */
static void rdma_beside_efa(void **state)
{
    (void)state;
    static const char *const files[][2] = {
        {"link_layer", "InfiniBand\n"}, {"state", "1: DOWN\n"}, {NULL, NULL}};
    static const char p6[] =
        "{\"schema\": \"topotune/spec/1\", \"gpu\": \"B200-SXM-180GB\", \"count\": 8, \"fabric\": "
        "\"nvswitch\", \"nics\": [{\"model\": \"EFA-400G\", \"count\": 8, \"per\": \"gpu\"}, "
        "{\"model\": \"CX7-400G-IB\", \"count\": 2}]}";
    struct fake_sysfs f = {0};
    sysfs_port(&f, "mlx5_0", files);
    struct topo t;
    topo_init(&t);
    assert_int_equal(topo_load_buffer(&t, "p6.json", p6, strlen(p6)), 0);
    json_t *checks = doctor_run(&t, NULL, 0);
    assert_string_equal(field(checks, "rdma", "status"), "pass");
    assert_non_null(strstr(field(checks, "rdma", "evidence"), "carry none of NCCL's"));
    json_decref(checks);
    topo_release(&t);
    sysfs_remove(&f);
}

static json_t *node(const char *host, const char *cls, const char *nccl, const char *ifs,
                    double clock, const char *failing)
{
    json_t *checks = json_array();
    if (failing)
        json_array_append_new(checks, json_pack("{s:s,s:s,s:s,s:s}", "name", failing, "status",
                                                "fail", "evidence", "e", "fix", "the fix"));
    return json_pack("{s:s,s:s,s:i,s:{s:s,s:s,s:s},s:s,s:i,s:f,s:o}", "host", host, "class", cls,
                     "gpus", 8, "software", "nccl", nccl, "cuda", "12.4", "driver", "550",
                     "interfaces", ifs, "shm_mb", 1024, "clock", clock, "checks", checks);
}

/* Three nodes, each odd in one way: the odd one is named, the majority value given. */
static void compare_names_the_odd_node(void **state)
{
    (void)state;
    json_t *nodes = json_pack("[o,o,o]", node("h1", "a100-x", "2.21.5", "eth0", 100.0, NULL),
                              node("h2", "a100-x", "2.19.3", "eth0", 100.2, NULL),
                              node("h3", "h100-y", "2.21.5", "ens5", 105.0, "shm"));
    json_t *c = doctor_compare_nodes(nodes);
    assert_string_equal(field(c, "nodes-class", "status"), "fail");
    assert_non_null(strstr(field(c, "nodes-class", "evidence"), "2 of 3 node(s) have a100-x"));
    assert_non_null(strstr(field(c, "nodes-class", "evidence"), "odd: h3 has h100-y"));
    assert_non_null(strstr(field(c, "nodes-software", "evidence"), "odd: h2 has nccl 2.19.3"));
    assert_non_null(strstr(field(c, "nodes-interfaces", "evidence"), "odd: h3 has ens5"));
    assert_string_equal(field(c, "nodes-shm", "status"), "pass");
    assert_string_equal(field(c, "nodes-clock", "status"), "warn");
    assert_non_null(strstr(field(c, "nodes-clock", "evidence"), "h3 is +4.8 s off"));
    assert_non_null(strstr(field(c, "nodes-checks", "evidence"), "h3: shm failed (the fix)"));
    json_decref(c);
    json_decref(nodes);
}

/* Two clocks 1.5 s apart: one host's clock is the reference, so the other is 1.5 s off (a mean
 * of the two would put each 0.75 s off, under the one-second bar). */
static void two_clocks_apart_warn(void **state)
{
    (void)state;
    json_t *nodes = json_pack("[o,o]", node("h1", "a100-x", "2.21.5", "eth0", 100.0, NULL),
                              node("h2", "a100-x", "2.21.5", "eth0", 101.5, NULL));
    json_t *c = doctor_compare_nodes(nodes);
    assert_string_equal(field(c, "nodes-clock", "status"), "warn");
    assert_non_null(strstr(field(c, "nodes-clock", "evidence"), "h1 is -1.5 s off"));
    json_decref(c);
    json_decref(nodes);
}

/* A node that could not report (topotune-node's {"error": ...}) is named by its error; its facts
 * are not compared as values (it showed class unknown, NCCL none, no interface, 0 MB). */
static void unreported_node_not_compared(void **state)
{
    (void)state;
    json_t *nodes =
        json_pack("[o,o,{s:s,s:s}]", node("h1", "a100-x", "2.21.5", "eth0", 100.0, NULL),
                  node("h2", "a100-x", "2.21.5", "eth0", 100.2, NULL), "host", "h3", "error",
                  "this node could not be mapped");
    json_t *c = doctor_compare_nodes(nodes);
    static const char *const facts[] = {"nodes-class", "nodes-software", "nodes-interfaces",
                                        "nodes-shm", "nodes-clock"};
    for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]); i++) {
        assert_string_equal(field(c, facts[i], "status"), "pass");
        assert_null(strstr(field(c, facts[i], "evidence"), "h3"));
    }
    assert_string_equal(field(c, "nodes-checks", "status"), "fail");
    assert_non_null(strstr(field(c, "nodes-checks", "evidence"), "h3: this node could not be"));
    json_decref(c);
    json_decref(nodes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(profile_software_drift), cmocka_unit_test(rdma_on_slingshot),
        cmocka_unit_test(rdma_beside_efa),        cmocka_unit_test(compare_names_the_odd_node),
        cmocka_unit_test(two_clocks_apart_warn),  cmocka_unit_test(unreported_node_not_compared),
    };
    return cmocka_run_group_tests_name("unit.doctor", tests, NULL, NULL);
}
