/* SPDX-License-Identifier: MIT */
/* Unit tests for survey/judge.c: the class level slow nodes cannot drag down, node capacities
 * from pairs, and the facts that tell a node that lost a part. */
#include "survey/internal.h"
#include "topo/topo.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
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
    survey_capacities(8, p, n, 0.15, got);
    for (int i = 0; i < 8; i++)
        assert_true(fabs(got[i] - cap[i]) < 1e-9);
}

/* A node never paired has no capacity. */
static void capacities_unpaired(void **state)
{
    (void)state;
    struct survey_pair p[] = {{0, 1, 100, 1, 0, 0}};
    double got[3];
    survey_capacities(3, p, 1, 0.15, got);
    assert_true(fabs(got[0] - 100) < 1e-9 && fabs(got[1] - 100) < 1e-9 && got[2] == 0);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(level_half_slow),
        cmocka_unit_test(level_one_outlier_high),
        cmocka_unit_test(level_ignores_failed),
        cmocka_unit_test(level_too_spread),
        cmocka_unit_test(level_wide_judges_far_values),
        cmocka_unit_test(level_noise_not_spread),
        cmocka_unit_test(level_wide_noise),
        cmocka_unit_test(capacities_min_model),
        cmocka_unit_test(capacities_unpaired),
        cmocka_unit_test(facts_lost_parts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
