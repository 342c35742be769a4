/* SPDX-License-Identifier: MIT */
/* Unit tests for gen/: the choice on small handmade results, a rule per case: noisy and failed
 * defaults (a reference with a wider bound, or none), ties to fewer variables, only stable
 * configurations win, cures are system variables, one shape, per-size rows and their ranges. */
#include "gen/internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

/* A sweep of the configurations in configs (JSON text, [{id, env}]): repeat 2, cv_max 0.05, the
 * objective at 1 MiB. New reference. */
static json_t *sweeps_with(const char *configs)
{
    return json_pack("[{s:s,s:s,s:f,s:i,s:i,s:i,s:b,s:{},s:o}]", "class", "c", "backend", "nccl",
                     "cv_max", 0.05, "repeat", 2, "objective_min", 1 << 20, "objective_max",
                     1 << 20, "predicted", 0, "topology", "configs", json_loads(configs, 0, NULL));
}

/* Configurations "base" ({}), "a" (NCCL_PROTO=LL128) and "t" (NCCL_ALGO=Tree, NCCL_PROTO=LL128). */
#define BASE_A_T                                                                                   \
    "[{\"id\": \"base\", \"env\": {}}, {\"id\": \"a\", \"env\": {\"NCCL_PROTO\": \"LL128\"}}, "    \
    "{\"id\": \"t\", \"env\": {\"NCCL_ALGO\": \"Tree\", \"NCCL_PROTO\": \"LL128\"}}]"

static json_t *sweeps(void)
{
    return sweeps_with(BASE_A_T);
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

/* A run of config id that did not end ok (no sizes): outcome at stage init. */
static json_t *failed(const char *id, const char *env, int rep, const char *outcome)
{
    return json_pack("{s:s,s:s,s:o,s:i,s:b,s:s,s:s,s:[]}", "class", "c", "config_id", id, "env",
                     json_loads(env, 0, NULL), "rep", rep, "final", 1, "outcome", outcome, "stage",
                     "init", "sizes");
}

/* Two ok runs of config id at busbw b1 and b2 (1 MiB), appended to results. */
static void twice(json_t *results, const char *id, const char *env, double b1, double b2)
{
    json_array_append_new(results, run(id, env, 0, 1, b1, "RING", 1, 8));
    json_array_append_new(results, run(id, env, 1, 1, b2, "RING", 1, 8));
}

static const char *winner_of(const json_t *p)
{
    const char *id = json_string_value(json_object_get(json_object_get(p, "winner"), "config_id"));
    return id ? id : "(none)";
}

/* The profile chosen from results over configurations configs (JSON text). */
static json_t *choose_in(const char *configs, json_t *results)
{
    json_t *s = sweeps_with(configs), *p = gen_select(s, results, "c");
    json_decref(s);
    json_decref(results);
    assert_non_null(p);
    return p;
}

#define ENV_A "{\"NCCL_PROTO\":\"LL128\"}"
#define ENV_T "{\"NCCL_ALGO\":\"Tree\",\"NCCL_PROTO\":\"LL128\"}"
/* t (two variables) is seen before a (one), so a tie must overturn the first seen. */
#define BASE_T_A                                                                                   \
    "[{\"id\": \"base\", \"env\": {}}, {\"id\": \"t\", \"env\": " ENV_T                            \
    "}, {\"id\": \"a\", \"env\": " ENV_A "}]"

/* t at 160 and a at 156 are one speed within 5% noise: the tie goes to a, fewer variables,
 * whichever is seen first. */
static void tie_goes_to_fewer_variables(void **state)
{
    (void)state;
    json_t *r = json_array();
    twice(r, "base", "{}", 100, 100);
    twice(r, "t", ENV_T, 160, 160);
    twice(r, "a", ENV_A, 156, 156);
    json_t *p = choose_in(BASE_T_A, r);
    assert_string_equal(winner_of(p), "a");
    assert_int_equal(json_array_size(json_object_get(p, "variables")), 1);
    json_decref(p);
    r = json_array(); /* a seen first: t's 4 GB/s more is no reason to move */
    twice(r, "base", "{}", 100, 100);
    twice(r, "a", ENV_A, 156, 156);
    twice(r, "t", ENV_T, 160, 160);
    p = choose_in(BASE_A_T, r);
    assert_string_equal(winner_of(p), "a");
    json_decref(p);
}

/* Beyond the noise, speed wins over fewer variables: t at 180 against a at 156. */
static void more_variables_win_beyond_the_noise(void **state)
{
    (void)state;
    json_t *r = json_array();
    twice(r, "base", "{}", 100, 100);
    twice(r, "t", ENV_T, 180, 180);
    twice(r, "a", ENV_A, 156, 156);
    json_t *p = choose_in(BASE_T_A, r);
    assert_string_equal(winner_of(p), "t");
    json_decref(p);
}

/* One run of the defaults timed out, the other was the fastest of all: failed, not noisy. The
 * defaults are no reference, and the stable LL128 wins at half their speed. */
static void one_failed_default_run_is_failed_not_noisy(void **state)
{
    (void)state;
    json_t *r = json_array();
    json_array_append_new(r, run("base", "{}", 0, 1, 300, "RING", 1, 8));
    json_array_append_new(r, failed("base", "{}", 1, "timeout"));
    twice(r, "a", ENV_A, 150, 150);
    json_t *p = choose_in(BASE_A_T, r);
    assert_string_equal(baseline_verdict(p), "failed");
    assert_string_equal(winner_of(p), "a");
    assert_true(json_is_false(json_object_get(p, "defaults_best")));
    json_decref(p);
}

/* Noisy defaults (251 +-28%) stay the reference, their bound widened by their spread: 300 does
 * not beat them, 330 does; against stable defaults at 251, 300 wins. */
static void noisy_defaults_widen_the_bound(void **state)
{
    (void)state;
    json_t *r = json_array();
    twice(r, "base", "{}", 301, 201);
    twice(r, "a", ENV_A, 300, 300);
    json_t *p = choose_in(BASE_A_T, r);
    assert_string_equal(baseline_verdict(p), "noisy");
    assert_string_equal(winner_of(p), "(none)");
    json_decref(p);
    r = json_array();
    twice(r, "base", "{}", 301, 201);
    twice(r, "a", ENV_A, 330, 330);
    p = choose_in(BASE_A_T, r);
    assert_string_equal(winner_of(p), "a");
    json_decref(p);
    r = json_array();
    twice(r, "base", "{}", 251, 251);
    twice(r, "a", ENV_A, 300, 300);
    p = choose_in(BASE_A_T, r);
    assert_string_equal(baseline_verdict(p), "stable");
    assert_string_equal(winner_of(p), "a");
    json_decref(p);
}

/* Only a stable configuration may win: one failed run, a spread beyond cv_max, or fewer runs
 * than `repeat` keep a faster one out. */
static void unstable_configurations_never_win(void **state)
{
    (void)state;
    json_t *r = json_array();
    twice(r, "base", "{}", 100, 100);
    json_array_append_new(r, run("a", ENV_A, 0, 1, 400, "RING", 1, 8));
    json_array_append_new(r, failed("a", ENV_A, 1, "crash"));
    twice(r, "t", ENV_T, 400, 300);
    json_t *p = choose_in(BASE_A_T, r);
    assert_string_equal(winner_of(p), "(none)");
    assert_true(json_is_true(json_object_get(p, "defaults_best")));
    json_decref(p);
    r = json_array();
    twice(r, "base", "{}", 100, 100);
    json_array_append_new(r, run("a", ENV_A, 0, 1, 400, "RING", 1, 8)); /* 1 run of 2 */
    p = choose_in(BASE_A_T, r);
    assert_string_equal(winner_of(p), "(none)");
    json_decref(p);
}

/* What cured failed defaults is the system's (every job needs it); the same variable where the
 * defaults ran is tuning. */
static void a_cure_is_system_only_when_the_defaults_failed(void **state)
{
    (void)state;
    const char *configs = "[{\"id\": \"base\", \"env\": {}}, {\"id\": \"p\", \"env\": "
                          "{\"NCCL_P2P_DISABLE\": \"1\"}}]",
               *p2p = "{\"NCCL_P2P_DISABLE\":\"1\"}";
    for (int defaults_fail = 0; defaults_fail < 2; defaults_fail++) {
        json_t *r = json_array();
        if (defaults_fail) {
            json_array_append_new(r, failed("base", "{}", 0, "timeout"));
            json_array_append_new(r, failed("base", "{}", 1, "timeout"));
        } else {
            twice(r, "base", "{}", 100, 100);
        }
        twice(r, "p", p2p, 200, 200);
        json_t *p = choose_in(configs, r);
        assert_string_equal(winner_of(p), "p");
        json_t *v = json_array_get(json_object_get(p, "variables"), 0);
        assert_string_equal(json_string_value(json_object_get(v, "name")), "NCCL_P2P_DISABLE");
        assert_string_equal(json_string_value(json_object_get(v, "role")),
                            defaults_fail ? "system" : "tuning");
        json_decref(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(noisy_defaults_stay_the_reference),
        cmocka_unit_test(failed_defaults_let_a_stable_one_win),
        cmocka_unit_test(two_shapes_refused),
        cmocka_unit_test(rows_judged_on_the_winner_to_geometric_midpoints),
        cmocka_unit_test(tie_goes_to_fewer_variables),
        cmocka_unit_test(more_variables_win_beyond_the_noise),
        cmocka_unit_test(one_failed_default_run_is_failed_not_noisy),
        cmocka_unit_test(noisy_defaults_widen_the_bound),
        cmocka_unit_test(unstable_configurations_never_win),
        cmocka_unit_test(a_cure_is_system_only_when_the_defaults_failed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
