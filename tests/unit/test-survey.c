/* SPDX-License-Identifier: MIT */
/* Unit tests for survey/: the class level slow nodes cannot drag down (judge.c), node capacities
 * from pairs, the facts that tell a node that lost a part, and the verdicts of whole surveys of
 * small simulated clusters (survey_probe_sim, survey_run), one fault kind per case. */
#include "survey/internal.h"
#include "topo/topo.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/num.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Half the class at half speed: the level is the fast half's, the slow half below the bound
 * (a median would sit between the two and call nothing slow). */
static void level_half_slow(void **state)
{
    (void)state;
    double v[] = {100, 101, 99, 100.5, 50, 51, 49, 50.5};
    struct survey_level l;
    survey_level_of(v, 8, 0.15, &l);
    assert_true(fabs(l.level - 100.25) < 1);
    assert_int_equal(l.support, 4);
    assert_false(l.too_spread);
    assert_true(l.bound > 51 && l.bound < 99);
}

/* One lucky high value is no anchor: the level is the class's, not the outlier's. */
static void level_one_outlier_high(void **state)
{
    (void)state;
    double v[] = {300, 100, 101, 99, 100, 102, 98, 100};
    struct survey_level l;
    survey_level_of(v, 8, 0.15, &l);
    assert_true(fabs(l.level - 100) < 2);
}

/* Failed (-1) and unmeasured (0) values are left out. */
static void level_ignores_failed(void **state)
{
    (void)state;
    double v[] = {-1, 0, 100, 100, 100};
    struct survey_level l;
    survey_level_of(v, 5, 0.15, &l);
    assert_int_equal(l.values, 3);
    assert_true(fabs(l.level - 100) < 1e-9);
}

/* One measurement's noise: above a given center, as a normal's sigma, whatever lies below (half
 * of a small class's pairs on a slow path); too few values above it say nothing. */
static void upper_spread_ignores_low_tail(void **state)
{
    (void)state;
    double z[] = {0.3186, 0.6745, 1.1503, 2.0}; /* 4 values; median 0.9124 */
    double x[8];
    for (int i = 0; i < 4; i++) {
        x[i] = 0.1 * z[i];
        x[4 + i] = -0.5 - 0.1 * i; /* far below: a slow path's measurements */
    }
    double sigma = survey_upper_spread(x, 8, 0);
    assert_true(fabs(sigma - 1.4826 * 0.1 * (0.6745 + 1.1503) / 2) < 1e-9);
    assert_true(survey_upper_spread(x, 8, 0.2) == 0); /* one value above: too few */
}

/* The sigmas a path must lie below by: 3 for a few tests, a normal's tail of 5% / tests beyond
 * (496 pairs: 3.7); more tests, never fewer sigmas. */
static void family_sigmas_grow_with_tests(void **state)
{
    (void)state;
    assert_true(util_family_sigmas(0) == 3 && util_family_sigmas(10) == 3);
    double z = util_family_sigmas(496);
    assert_true(fabs(0.5 * erfc(z / sqrt(2)) - 0.05 / 496) < 1e-9 && z > 3.7 && z < 3.75);
    for (int n = 1; n < 100000; n *= 3)
        assert_true(util_family_sigmas(3 * n) >= util_family_sigmas(n));
}

/* Values from 1x to 0.25x: no level backed by a third of them, or noise that hides the
 * tolerance; either way not judged as a narrow class. */
static void level_too_spread(void **state)
{
    (void)state;
    double v[] = {100, 85, 70, 60, 50, 42, 35, 30, 25};
    struct survey_level l;
    survey_level_of(v, 9, 0.15, &l);
    assert_true(l.too_spread || l.wide);
}

/* t103's hosts alone on a shared 2-core machine (tolerance 0.7): healthy values from 0.84 to
 * 5.68 GB/s and a CPU-starved host at 0.02. The noise is wide, yet a level stands and the starved
 * host lies beyond it: it is judged (below the bound), the others are within the tolerance (above
 * the cut). The whole class was called too spread, the starved host with it. */
static void level_wide_judges_far_values(void **state)
{
    (void)state;
    double v[] = {0.02, 0.84, 1.55, 2.08, 2.46, 4.85, 5.68};
    struct survey_level l;
    survey_level_of(v, 7, 0.7, &l);
    assert_false(l.too_spread);
    assert_true(l.wide);
    assert_true(l.bound > 0.02);
    assert_true(l.cut < 0.84);
    assert_true(l.bound <= l.cut);
}

/* 5% noise is no spread: the bound stays the tolerance's. */
static void level_noise_not_spread(void **state)
{
    (void)state;
    double v[] = {100, 105, 95, 103, 97, 101, 99, 104, 96, 100};
    struct survey_level l;
    survey_level_of(v, 10, 0.15, &l);
    assert_false(l.too_spread);
    assert_true(fabs(l.bound - l.level * 0.85) < 1e-6 * l.level);
}

/* 6% noise, wider than half the tolerance (a sim survey's 24 nodes alone, two of them slow):
 * the window must not cut the population's lower tail. It did: the level came out 5% high, the
 * spread half the noise, and a healthy node at 256 GB/s twice was node-slow. */
static void level_wide_noise(void **state)
{
    (void)state;
    double v[] = {194, 170, 245, 254, 257, 259, 266, 269, 270, 281, 282, 284,
                  288, 298, 301, 302, 305, 308, 309, 311, 311, 319, 322, 326};
    struct survey_level l;
    survey_level_of(v, 24, 0.15, &l);
    assert_true(l.level > 280 && l.level < 301);
    assert_true(l.spread > 0.04);
    assert_true(l.bound < 256 && l.bound > 194); /* the healthy node: 257, then 256 */
    assert_false(l.too_spread);
}

/* Pairs at min(cap a, cap b): 4 of 8 nodes at half speed; each node's capacity is its own, a
 * fast node that met slow partners included; a bisected value (3x) is left out. */
static void capacities_min_model(void **state)
{
    (void)state;
    double cap[8] = {100, 50, 100, 50, 100, 50, 100, 50}, got[8];
    struct survey_pair p[32];
    int n = 0;
    for (int r = 1; r <= 3; r++)
        for (int i = 0; i < 8; i++) {
            int j = (i + r) % 8;
            p[n++] = (struct survey_pair){i, j, fmin(cap[i], cap[j]), 1, 0, 0};
        }
    p[n++] = (struct survey_pair){1, 3, 150, 2, 0, 1};
    survey_capacities(8, p, n, 0.15, NULL, got);
    for (int i = 0; i < 8; i++)
        assert_true(fabs(got[i] - cap[i]) < 1e-9);
}

/* A node never paired has no capacity. */
static void capacities_unpaired(void **state)
{
    (void)state;
    struct survey_pair p[] = {{0, 1, 100, 1, 0, 0}};
    double got[3];
    survey_capacities(3, p, 1, 0.15, NULL, got);
    assert_true(fabs(got[0] - 100) < 1e-9 && fabs(got[1] - 100) < 1e-9 && got[2] == 0);
}

static int by_text(const void *a, const void *b)
{
    return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}

/* names (an array of strings) sorted. */
static void qsort_names(json_t *names)
{
    size_t n = json_array_size(names);
    json_t **v = calloc(n + 1, sizeof(json_t *));
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(names, i));
    qsort(v, n, sizeof(json_t *), by_text);
    json_array_clear(names);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(names, v[i]);
    free(v);
}

static json_t *key_of(const char *json)
{
    char path[] = "/tmp/topotune-unit-survey-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_true(write(fd, json, strlen(json)) == (ssize_t)strlen(json));
    close(fd);
    struct topo t;
    topo_init(&t);
    assert_int_equal(topo_load(&t, path), 0);
    unlink(path);
    json_t *f = survey_class_facts(t.class_key);
    topo_release(&t);
    return f;
}

#define H100(COUNT, NICS)                                                                          \
    "{\"schema\": \"topotune/spec/1\", \"gpu\": \"H100-SXM5-80GB\", \"count\": " COUNT             \
    ", \"fabric\": \"nvswitch\", \"nics\": [{\"model\": \"CX7-400G-IB\", \"count\": " NICS         \
    ", \"per\": \"gpu\"}]}"

/* A GPU lost: fewer GPUs and NVLinks, nothing more: lesser. A NIC lost: fewer NICs, less
 * bandwidth. Another GPU model is not lesser. */
static void facts_lost_parts(void **state)
{
    (void)state;
    json_t *full = key_of(H100("8", "8")), *gpu = key_of(H100("7", "8")),
           *nic = key_of(H100("8", "7"));
    json_t *a100 = key_of("{\"schema\": \"topotune/spec/1\", \"gpu\": \"A100-SXM4-80GB\", "
                          "\"count\": 8, \"nics\": [{\"model\": \"CX6-200G-IB\", \"count\": 8, "
                          "\"per\": \"gpu\"}]}");
    int lesser = -1;
    assert_int_equal(json_integer_value(json_object_get(full, "gpus")), 8);
    assert_true(json_integer_value(json_object_get(full, "nvlinks")) > 0);
    json_t *d = survey_facts_differ(gpu, full, &lesser);
    assert_int_equal(lesser, 1);
    assert_non_null(json_object_get(d, "gpus"));
    assert_non_null(json_object_get(d, "nvlinks"));
    assert_null(json_object_get(d, "nics"));
    json_decref(d);
    d = survey_facts_differ(nic, full, &lesser);
    assert_int_equal(lesser, 1);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(d, "nics"), 0)), 7);
    assert_non_null(json_object_get(d, "nic_gbps"));
    json_decref(d);
    d = survey_facts_differ(full, gpu, &lesser); /* more is not a part lost */
    assert_int_equal(lesser, 0);
    json_decref(d);
    d = survey_facts_differ(a100, full, &lesser);
    assert_int_equal(lesser, 0);
    assert_non_null(json_object_get(d, "gpu_model"));
    json_decref(d);
    d = survey_facts_differ(full, full, &lesser);
    assert_int_equal(json_object_size(d), 0);
    json_decref(d);
    json_decref(full), json_decref(gpu), json_decref(nic), json_decref(a100);
}

/* A level needs a third of the class behind it: two fast nodes over five scattered far below are
 * no level (too spread); three are, and the four below it are judged slow. */
static void level_needs_a_third_of_the_class(void **state)
{
    (void)state;
    double two[] = {100, 99, 60, 55, 50, 45, 40}, three[] = {100, 99, 98, 55, 50, 45, 40};
    struct survey_level l;
    survey_level_of(two, 7, 0.15, &l);
    assert_true(l.too_spread);
    survey_level_of(three, 7, 0.15, &l);
    assert_false(l.too_spread);
    assert_false(l.wide);
    assert_int_equal(l.support, 3);
    assert_true(fabs(l.level - 99) < 1);
    assert_true(l.bound > 55 && l.bound < 98);
}

/* The verdicts of a survey of a simulated cluster of count HGX H100 nodes (node0001...) with
 * faults (JSON text), as "HOSTS KIND" sorted and joined by ';' into out ("" for none). */
static void sim_verdicts(int count, const char *faults, int all_pairs, struct util_buf *out)
{
    char dir[] = "/tmp/topotune-unit-survey-XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct util_buf spec = UTIL_BUF_INIT, text = UTIL_BUF_INIT;
    assert_int_equal(
        util_file_read(TOPOTUNE_FIXTURES "/../../profiles/specs/hgx-h100.json", 1 << 20, &spec), 0);
    util_buf_addf(&text, "%s/hgx-h100.json", dir);
    assert_int_equal(util_file_write_atomic(util_buf_str(&text), spec.data, spec.len), 0);
    util_buf_reset(&text);
    util_buf_addf(&text,
                  "{\"schema\": \"topotune/sim-cluster/1\", \"nodes\": [{\"spec\": "
                  "\"hgx-h100.json\", \"count\": %d}], \"faults\": %s}",
                  count, faults);
    char file[64];
    snprintf(file, sizeof(file), "%s/cluster.json", dir);
    assert_int_equal(util_file_write_atomic(file, text.data, text.len), 0);
    struct survey s = {.dir = dir, .backend = "sim", .all_pairs = all_pairs};
    survey_defaults(&s);
    assert_int_equal(survey_probe_sim(&s, file), 0);
    assert_int_equal(survey_run(&s), 0);
    json_t *names = json_array(), *v;
    size_t i, k;
    json_array_foreach(s.verdicts, i, v) {
        util_buf_reset(&text);
        json_t *h;
        json_array_foreach(json_object_get(v, "hosts"), k, h)
            util_buf_addf(&text, "%s ", json_string_value(h));
        util_buf_adds(&text, json_string_value(json_object_get(v, "kind")));
        json_array_append_new(names, json_string(util_buf_str(&text)));
    }
    qsort_names(names);
    util_buf_reset(out);
    json_array_foreach(names, i, v)
        util_buf_addf(out, "%s%s", i ? ";" : "", json_string_value(v));
    json_decref(names);
    survey_release(&s);
    util_buf_release(&spec);
    util_buf_release(&text);
    assert_int_equal(util_remove_tree_at(AT_FDCWD, dir, 4), 0);
}

static void verdicts_are(int count, const char *faults, int all_pairs, const char *want)
{
    struct util_buf got = UTIL_BUF_INIT;
    sim_verdicts(count, faults, all_pairs, &got);
    if (strcmp(util_buf_str(&got), want))
        fail_msg("verdicts '%s', want '%s'", util_buf_str(&got), want);
    util_buf_release(&got);
}

/* A clean cluster: nobody named. */
static void sim_clean_cluster_no_verdict(void **state)
{
    (void)state;
    verdicts_are(8, "[]", 0, "");
}

/* A node at half speed, alone and in pairs: node-slow. */
static void sim_slow_node_named(void **state)
{
    (void)state;
    verdicts_are(8, "[{\"kind\": \"slow-node\", \"hosts\": [\"node0003\"], \"factor\": 0.5}]", 0,
                 "node0003 node-slow");
}

/* A node fine alone but slow with every partner: its link, link-slow. */
static void sim_slow_link_named(void **state)
{
    (void)state;
    verdicts_are(8, "[{\"kind\": \"slow-link\", \"hosts\": [\"node0005\"], \"factor\": 0.4}]", 0,
                 "node0005 link-slow");
}

/* A node that never answers the map: node-unreachable; one that hangs in every collective:
 * node-fails. */
static void sim_dead_and_hung_nodes_named(void **state)
{
    (void)state;
    verdicts_are(8,
                 "[{\"kind\": \"dead\", \"hosts\": [\"node0002\"]}, {\"kind\": \"hang\", "
                 "\"hosts\": [\"node0007\"]}]",
                 0, "node0002 node-unreachable;node0007 node-fails");
}

/* Three of eight nodes slow: the level is the healthy five's, and all three are named. */
static void sim_many_slow_nodes_all_named(void **state)
{
    (void)state;
    verdicts_are(8,
                 "[{\"kind\": \"slow-node\", \"hosts\": [\"node0001\"], \"factor\": 0.6}, "
                 "{\"kind\": \"slow-node\", \"hosts\": [\"node0004\"], \"factor\": 0.5}, "
                 "{\"kind\": \"slow-node\", \"hosts\": [\"node0008\"], \"factor\": 0.6}]",
                 0, "node0001 node-slow;node0004 node-slow;node0008 node-slow");
}

/* Two fine nodes slow only between them (--pairs all measures that pair): path-slow. */
static void sim_slow_path_named(void **state)
{
    (void)state;
    verdicts_are(8,
                 "[{\"kind\": \"slow-path\", \"hosts\": [\"node0002\", \"node0006\"], "
                 "\"factor\": 0.3}]",
                 1, "node0002 node0006 path-slow");
}

/* The model is a class's yardstick only for GPUs it knows: an NCCL dump without its <gpu>
 * elements (8 A100s of no model) would be priced as Volta cards on PCIe. */
static void model_needs_known_gpus(void **state)
{
    (void)state;
    struct topo t;
    topo_init(&t);
    assert_int_equal(topo_load(&t, TOPOTUNE_FIXTURES "/../../profiles/specs/hgx-h100.json"), 0);
    assert_true(survey_model_busbw(&t, 2, 1 << 28, NULL) > 0);
    topo_release(&t);
    topo_init(&t);
    assert_int_equal(topo_load(&t, TOPOTUNE_FIXTURES "/nccl-topo-azure-ndv4.xml"), 0);
    assert_true(survey_model_busbw(&t, 2, 1 << 28, NULL) < 0);
    topo_release(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(level_half_slow),
        cmocka_unit_test(level_one_outlier_high),
        cmocka_unit_test(level_ignores_failed),
        cmocka_unit_test(level_too_spread),
        cmocka_unit_test(upper_spread_ignores_low_tail),
        cmocka_unit_test(family_sigmas_grow_with_tests),
        cmocka_unit_test(level_wide_judges_far_values),
        cmocka_unit_test(level_noise_not_spread),
        cmocka_unit_test(level_wide_noise),
        cmocka_unit_test(level_needs_a_third_of_the_class),
        cmocka_unit_test(capacities_min_model),
        cmocka_unit_test(capacities_unpaired),
        cmocka_unit_test(facts_lost_parts),
        cmocka_unit_test(model_needs_known_gpus),
        cmocka_unit_test(sim_clean_cluster_no_verdict),
        cmocka_unit_test(sim_slow_node_named),
        cmocka_unit_test(sim_slow_link_named),
        cmocka_unit_test(sim_dead_and_hung_nodes_named),
        cmocka_unit_test(sim_many_slow_nodes_all_named),
        cmocka_unit_test(sim_slow_path_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
