/* SPDX-License-Identifier: MIT */
/* Unit tests for gen/: the choice on small handmade results (noisy and failed defaults, shapes,
 * per-size rows and their ranges). */
#include "gen/internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

/* A sweep of configurations "base" ({}), "a" (NCCL_PROTO=LL128) and "t" (NCCL_ALGO=Tree,
 * NCCL_PROTO=LL128): repeat 2, cv_max 0.05, the objective at 1 MiB. New reference. */
static json_t *sweeps(void)
{
    return json_pack("[{s:s,s:s,s:f,s:i,s:i,s:i,s:b,s:{},s:[{s:s,s:{}},{s:s,s:{s:s}},"
                     "{s:s,s:{s:s,s:s}}]}]",
                     "class", "c", "backend", "nccl", "cv_max", 0.05, "repeat", 2, "objective_min",
                     1 << 20, "objective_max", 1 << 20, "predicted", 0, "topology", "configs", "id",
                     "base", "env", "id", "a", "env", "NCCL_PROTO", "LL128", "id", "t", "env",
                     "NCCL_ALGO", "Tree", "NCCL_PROTO", "LL128");
}

/* One ok full-effort run of config id at 512 B (small) and 1 MiB (objective) on nodes x ranks. */
static json_t *run(const char *id, const char *env, int rep, double small, double big,
                   const char *algo, int nodes, int ranks)
{
    json_error_t e;
    json_t *r = json_pack_ex(
        &e, 0, "{s:s,s:s,s:o,s:i,s:b,s:s,s:i,s:i,s:[{s:i,s:f,s:s,s:s},{s:i,s:f,s:s,s:s}]}", "class",
        "c", "config_id", id, "env", json_loads(env, 0, NULL), "rep", rep, "final", 1, "outcome",
        "ok", "nodes", nodes, "ranks", ranks, "sizes", "size", 512, "busbw", small, "algo", algo,
        "proto", "LL", "size", 1 << 20, "busbw", big, "algo", algo, "proto", "SIMPLE");
    assert_non_null(r);
    return r;
}

static json_t *choose(json_t *results)
{
    json_t *s = sweeps(), *p = gen_select(s, results, "c");
    json_decref(s);
    json_decref(results);
    return p;
}

static const char *baseline_verdict(const json_t *p)
{
    const char *v = json_string_value(json_object_get(json_object_get(p, "baseline"), "verdict"));
    return v ? v : "(none)";
}

/* Defaults at 251 +-20% (every run ok): noisy, still the reference; LL128 at 159 does not win. */
static void noisy_defaults_stay_the_reference(void **state)
{
    (void)state;
    json_t *p = choose(json_pack("[o,o,o,o]", run("base", "{}", 0, 1, 301, "RING", 1, 8),
                                 run("base", "{}", 1, 1, 201, "RING", 1, 8),
                                 run("a", "{\"NCCL_PROTO\":\"LL128\"}", 0, 1, 159, "RING", 1, 8),
                                 run("a", "{\"NCCL_PROTO\":\"LL128\"}", 1, 1, 159, "RING", 1, 8)));
    assert_non_null(p);
    assert_string_equal(baseline_verdict(p), "noisy");
    assert_true(json_is_null(json_object_get(p, "winner")));
    assert_true(json_is_true(json_object_get(p, "defaults_best")));
    assert_non_null(strstr(json_string_value(json_object_get(p, "summary")), "noisy"));
    json_decref(p);
}

/* Defaults that timed out: failed, and the stable LL128 wins whatever its speed. */
static void failed_defaults_let_a_stable_one_win(void **state)
{
    (void)state;
    json_t *fail =
        json_pack("{s:s,s:s,s:{},s:i,s:b,s:s,s:s,s:[]}", "class", "c", "config_id", "base", "env",
                  "rep", 0, "final", 1, "outcome", "timeout", "stage", "init", "sizes");
    json_t *p = choose(json_pack("[o,o,o]", fail,
                                 run("a", "{\"NCCL_PROTO\":\"LL128\"}", 0, 1, 159, "RING", 1, 8),
                                 run("a", "{\"NCCL_PROTO\":\"LL128\"}", 1, 1, 159, "RING", 1, 8)));
    assert_non_null(p);
    assert_string_equal(baseline_verdict(p), "failed");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(p, "winner"), "config_id")), "a");
    json_decref(p);
}

/* 1 node x 8 ranks and 2 nodes x 16 ranks are not one statistic: refused. */
static void two_shapes_refused(void **state)
{
    (void)state;
    json_t *p = choose(json_pack("[o,o]", run("base", "{}", 0, 1, 250, "RING", 1, 8),
                                 run("base", "{}", 1, 1, 250, "RING", 2, 16)));
    assert_null(p);
}

/* The winner (LL128) is the reference of the rows: Tree+LL128 beats it at 512 B, a row there,
 * whose range ends at the geometric midpoint of 512 B and 1 MiB (16 KiB + 7 KiB = 23170 B). */
static void rows_judged_on_the_winner_to_geometric_midpoints(void **state)
{
    (void)state;
    const char *a = "{\"NCCL_PROTO\":\"LL128\"}",
               *t = "{\"NCCL_ALGO\":\"Tree\",\"NCCL_PROTO\":\"LL128\"}";
    json_t *p = choose(
        json_pack("[o,o,o,o,o,o]", run("base", "{}", 0, 10, 100, "RING", 1, 8),
                  run("base", "{}", 1, 10, 100, "RING", 1, 8), run("a", a, 0, 1, 200, "RING", 1, 8),
                  run("a", a, 1, 1, 200, "RING", 1, 8), run("t", t, 0, 2, 150, "TREE", 1, 8),
                  run("t", t, 1, 2, 150, "TREE", 1, 8)));
    assert_non_null(p);
    json_t *rows = json_object_get(p, "tuner");
    /* Tree+LL128 at 2 GB/s is below the defaults' 10 but twice the profile's LL128 at 1. */
    assert_int_equal(json_array_size(rows), 1);
    json_t *row = json_array_get(rows, 0);
    assert_string_equal(json_string_value(json_object_get(row, "algorithm")), "tree");
    assert_int_equal(json_integer_value(json_object_get(row, "min_bytes")), 0);
    assert_int_equal(json_integer_value(json_object_get(row, "max_bytes")), 23170);
    json_decref(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(noisy_defaults_stay_the_reference),
        cmocka_unit_test(failed_defaults_let_a_stable_one_win),
        cmocka_unit_test(two_shapes_refused),
        cmocka_unit_test(rows_judged_on_the_winner_to_geometric_midpoints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
