/* SPDX-License-Identifier: MIT */
/* Unit tests for model/fit.c: parameters recovered from points made with known ones (exact and
 * through noise, one node and two), what a fit keeps, what it gives back to the defaults, what it
 * cannot fit, and which fits model_fit_check refuses to see written. And model.c's host memory
 * on hand-built PCIe trees that no spec can write. */
#include "model/model.h"
#include "topo/internal.h"
#include "topo/topo.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Points for nodes HGX H100 nodes (spec: its file name) with NCCL's defaults: busbw predicted
 * with p at sizes lo..hi (powers of two), two of each. */
static int points_on(const char *spec, int nodes, struct model *m, struct topo *t,
                     const struct model_params *p, size_t lo, size_t hi, struct model_point *pts)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/../../profiles/specs/%s", TOPOTUNE_FIXTURES, spec);
    topo_init(t);
    assert_int_equal(topo_load(t, path), 0);
    assert_int_equal(model_init(m, t, nodes, model_env_none, NULL), 0);
    m->params = *p;
    int n = 0;
    for (size_t b = lo; b <= hi; b *= 2) {
        struct model_prediction pr;
        assert_int_equal(model_predict(m, b, &pr), 0);
        pts[n++] = (struct model_point){0, b, pr.busbw}; /* two runs of each size */
        pts[n++] = (struct model_point){0, b, pr.busbw};
    }
    return n;
}

/* One HGX H100 node. */
static int points_of(struct model *m, struct topo *t, const struct model_params *p, size_t lo,
                     size_t hi, struct model_point *pts)
{
    return points_on("hgx-h100.json", 1, m, t, p, lo, hi, pts);
}

/* NVLS at 0.4 loses to Ring at 64 MiB and more, so the error is flat around 0.4; the default 0.8
 * makes NVLS win. The fit keeps what it found and says the runs bound it. */
static void flat_parameter_kept_when_its_default_fits_worse(void **state)
{
    (void)state;
    struct model m;
    struct topo t;
    struct model_point pts[32];
    struct model_params known = model_params_default;
    known.nvls_scale = 0.4;
    int n = points_of(&m, &t, &known, 64u << 20, 1u << 30, pts);
    struct model_fit f;
    assert_int_equal(model_fit(&m, pts, n, &f), 0);
    assert_int_equal(f.kind[0], MODEL_FIT_BOUNDED);
    assert_true(f.params.nvls_scale >= 0.4 && f.params.nvls_scale <= 0.7);
    assert_true(f.lo[0] <= f.params.nvls_scale && f.params.nvls_scale <= f.hi[0] && f.hi[0] < 0.8);
    assert_true(f.error < 0.5 && f.default_error > 10);
    /* One node: the network's parameters go back to their defaults, and that costs nothing. */
    assert_int_equal(f.kind[2], MODEL_FIT_DEFAULT);
    assert_int_equal(f.kind[4], MODEL_FIT_DEFAULT);
    assert_int_equal(f.kind[5], MODEL_FIT_DEFAULT);
    assert_true(f.params.net_scale == model_params_default.net_scale);
    assert_int_equal(model_fit_check(&f, (char[256]){0}, 256), 0);
    topo_release(&t);
}

/* Points made with the defaults are fitted by the defaults: nothing moved, nothing made up. */
static void defaults_fit_themselves(void **state)
{
    (void)state;
    struct model m;
    struct topo t;
    struct model_point pts[64];
    int n = points_of(&m, &t, &model_params_default, 1u << 10, 1u << 30, pts);
    struct model_fit f;
    assert_int_equal(model_fit(&m, pts, n, &f), 0);
    assert_true(f.error < 1e-6 && f.default_error < 1e-6 && f.error <= f.default_error);
    assert_true(f.params.nvls_scale == model_params_default.nvls_scale);
    assert_true(f.params.lat_scale == model_params_default.lat_scale);
    for (int k = 0; k < MODEL_NPARAMS; k++)
        assert_int_not_equal(f.kind[k], MODEL_FIT_BOUNDED);
    topo_release(&t);
}

/* Points made with a known latency (3x NCCL's; the default is 2x) and NVLS pipeline fill (20 MiB,
 * not the default) over 1 KiB .. 1 GiB on an HGX H100 (NVLS from the middle sizes up): the fit
 * finds both, each determined, and may be written. */
static void fit_recovers_latency_and_fill(void **state)
{
    (void)state;
    struct model m;
    struct topo t;
    struct model_point pts[64];
    struct model_params known = model_params_default;
    known.lat_scale = 3.0, known.nvls_fill_bytes = 20 << 20;
    assert_true(known.lat_scale != model_params_default.lat_scale &&
                known.nvls_fill_bytes != model_params_default.nvls_fill_bytes);
    int n = points_of(&m, &t, &known, 1u << 10, 1u << 30, pts);
    struct model_fit f;
    assert_int_equal(model_fit(&m, pts, n, &f), 0);
    assert_true(fabs(f.params.lat_scale - 3.0) <= 0.05);
    /* NVLS's fill and its efficiency trade off a little up to 1 GiB: within 3 MiB and 0.02 */
    assert_true(fabs(f.params.nvls_fill_bytes - (20 << 20)) <= 3 << 20);
    assert_true(fabs(f.params.nvls_scale - known.nvls_scale) <= 0.02);
    assert_int_equal(f.kind[3], MODEL_FIT_DETERMINED);
    assert_int_equal(f.kind[7], MODEL_FIT_DETERMINED);
    assert_true(f.error < 0.5 && f.default_error > 1);
    assert_int_equal(f.points, n);
    assert_int_equal(f.sizes, 21);
    assert_int_equal(model_fit_check(&f, (char[256]){0}, 256), 0);
    topo_release(&t);
}

/* Two DGX A100 nodes, whose NICs are the bottleneck: the network's share of their line rate is
 * found, a ring's (0.8) and the rest's (0.7). */
static void fit_recovers_net_scale_on_two_nodes(void **state)
{
    (void)state;
    struct model m;
    struct topo t;
    struct model_point pts[64];
    struct model_params known = model_params_default;
    known.net_scale = 0.7, known.ring_net_scale = 0.8;
    int n = points_on("dgx-a100.json", 2, &m, &t, &known, 1u << 10, 1u << 30, pts);
    struct model_fit f;
    assert_int_equal(model_fit(&m, pts, n, &f), 0);
    /* A ring's time reads ring_net_scale; net_scale reaches these points only through NCCL's
     * choice of algorithm (Tree's bandwidth here is its cap per channel), which holds over a few
     * hundredths of it: 0.66 fits as exactly as 0.7. */
    assert_true(fabs(f.params.ring_net_scale - 0.8) <= 0.015);
    assert_true(fabs(f.params.net_scale - 0.7) <= 0.05);
    assert_int_equal(f.kind[2], MODEL_FIT_DETERMINED);
    assert_int_equal(f.kind[8], MODEL_FIT_DETERMINED);
    assert_true(f.error < 0.05 && f.default_error > 2);
    topo_release(&t);
}

/* With 2% noise on every point, the fit stays near the truth and never worse than the defaults. */
static void fit_through_noise_stays_near(void **state)
{
    (void)state;
    struct model m;
    struct topo t;
    struct model_point pts[64];
    struct model_params known = model_params_default;
    known.lat_scale = 3.0;
    int n = points_of(&m, &t, &known, 1u << 10, 1u << 30, pts);
    uint64_t rng = 12345;
    for (int i = 0; i < n; i++)
        pts[i].busbw *= model_noise(&rng, 0.02);
    struct model_fit f;
    assert_int_equal(model_fit(&m, pts, n, &f), 0);
    assert_true(fabs(f.params.lat_scale - 3.0) <= 0.2);
    assert_true(f.error <= f.default_error);
    assert_true(f.error < 3);
    topo_release(&t);
}

/* Nothing to fit: no point, or none with a busbw. */
static void fit_refuses_points_it_cannot_predict(void **state)
{
    (void)state;
    struct model m;
    struct topo t;
    struct model_point pts[64];
    int n = points_of(&m, &t, &model_params_default, 1u << 20, 1u << 20, pts);
    struct model_fit f;
    assert_int_equal(model_fit(&m, pts, 0, &f), -1);
    for (int i = 0; i < n; i++)
        pts[i].busbw = 0;
    assert_int_equal(model_fit(&m, pts, n, &f), -1);
    topo_release(&t);
}

/* Two sizes cannot tell latency, fill and bandwidth apart: what the fit settles from them is
 * not written (model_fit_check: -2). */
static void fit_from_two_sizes_not_written(void **state)
{
    (void)state;
    struct model m;
    struct topo t;
    struct model_point pts[64];
    struct model_params known = model_params_default;
    known.lat_scale = 3.0;
    int n = points_of(&m, &t, &known, 1u << 10, 1u << 11, pts);
    struct model_fit f;
    assert_int_equal(model_fit(&m, pts, n, &f), 0);
    assert_int_equal(f.sizes, 2);
    char why[256] = "";
    assert_int_equal(model_fit_check(&f, why, sizeof(why)), -2);
    assert_non_null(strstr(why, "from 2 size(s)"));
    topo_release(&t);
}

static struct model_fit usable(void)
{
    struct model_fit f = {.params = model_params_default, .error = 1.7, .default_error = 12.6};
    return f;
}

static void check_refuses(struct model_fit f, const char *said)
{
    char why[256] = "";
    assert_int_equal(model_fit_check(&f, why, sizeof(why)), -1);
    if (!strstr(why, said))
        fail_msg("'%s' does not say '%s'", why, said);
}

static void check_refuses_worse_than_defaults(void **state)
{
    (void)state;
    struct model_fit f = usable();
    f.error = 12.6, f.default_error = 1.7;
    check_refuses(f, "fits worse than the defaults (mean |error| 12.6% against 1.7%)");
}

static void check_refuses_non_finite(void **state)
{
    (void)state;
    struct model_fit f = usable();
    f.error = INFINITY;
    check_refuses(f, "not a number");
    f = usable(), f.error = NAN;
    check_refuses(f, "not a number");
    f = usable(), f.default_error = INFINITY; /* the fit cannot be compared */
    check_refuses(f, "not a number");
}

static void check_refuses_absurd_error(void **state)
{
    (void)state;
    struct model_fit f = usable();
    f.error = 2.8e303, f.default_error = 3e303;
    check_refuses(f, "the model cannot explain these runs");
    f.error = MODEL_FIT_ERROR_MAX + 1;
    check_refuses(f, "the model cannot explain these runs");
    f.error = MODEL_FIT_ERROR_MAX;
    char why[256];
    assert_int_equal(model_fit_check(&f, why, sizeof(why)), 0);
}

/* Every parameter within what model_params_load would read back, NaN included. */
static void check_refuses_parameters_out_of_range(void **state)
{
    (void)state;
    for (int k = 0; k < MODEL_NPARAMS; k++) {
        double min, max;
        model_param_range(k, &min, &max);
        struct model_fit f = usable();
        *model_param(&f.params, k) = max * 2 + 1;
        check_refuses(f, model_param_names[k]);
        *model_param(&f.params, k) = min - 1;
        check_refuses(f, "outside what a calibration file may hold");
        *model_param(&f.params, k) = NAN;
        check_refuses(f, model_param_names[k]);
    }
}

/* Parameters settled from too little: refused with -2, the numbers named. */
static void check_refuses_too_few_points(void **state)
{
    (void)state;
    char why[256];
    struct model_fit f = usable();
    f.points = 5, f.sizes = 5;
    assert_int_equal(model_fit_check(&f, why, sizeof(why)), 0); /* nothing settled */
    f.kind[0] = MODEL_FIT_DETERMINED, f.kind[1] = MODEL_FIT_BOUNDED;
    assert_int_equal(model_fit_check(&f, why, sizeof(why)), -2);
    assert_non_null(
        strstr(why, "it settles 2 parameter(s) from 5 point(s): at least 6 are needed"));
    f.points = 6;
    assert_int_equal(model_fit_check(&f, why, sizeof(why)), 0);
    f.points = 100, f.sizes = 2;
    assert_int_equal(model_fit_check(&f, why, sizeof(why)), -2);
    assert_non_null(strstr(why, "from 2 size(s): one size cannot tell"));
}

/* NCCL_P2P_LEVEL as ctx says ("NVL": NVLink only; "LOC": no P2P at all). */
static const char *p2p_level(const char *name, void *ctx)
{
    return strcmp(name, "NCCL_P2P_LEVEL") == 0 ? (const char *)ctx : NULL;
}

/* Four PCIe Gen4 x16 A100s (24 GB/s each as NCCL counts) behind switches: switch_of[g] is GPU
 * g's, bridged pairs (0,1) and (2,3). The ring's intra-node GB/s through host memory (a chain's
 * in *chain when not NULL). */
static double four_gpus(const int switch_of[4], const char *level, double *chain)
{
    struct topo t;
    topo_init(&t);
    int numa = topo_add_pnode(&t, TOPO_PNODE_LOCALITY, -1, 0, 0);
    int hb = topo_add_pnode(&t, TOPO_PNODE_HOSTBRIDGE, numa, 0, -1);
    int up[2] = {topo_add_pnode(&t, TOPO_PNODE_BRIDGE, hb, 1, -1),
                 topo_add_pnode(&t, TOPO_PNODE_BRIDGE, hb, 1, -1)};
    for (int g = 0; g < 4; g++) {
        int down = topo_add_pnode(&t, TOPO_PNODE_BRIDGE, up[switch_of[g]], 1, -1);
        struct topo_gpu *gpu = topo_add_gpu(&t);
        gpu->node = topo_add_pnode(&t, TOPO_PNODE_DEVICE, down, 0, -1);
        gpu->sm = 80, gpu->pcie_gen = 4, gpu->pcie_width = 16, gpu->nvlinks = 12;
    }
    topo_alloc_nvlink(&t);
    t.nvlink[0 * 4 + 1] = t.nvlink[1 * 4 + 0] = t.nvlink[2 * 4 + 3] = t.nvlink[3 * 4 + 2] = 12;
    t.nvswitches = 0;
    assert_int_equal(topo_compute_matrix(&t), 0);
    struct model m;
    assert_int_equal(model_init(&m, &t, 1, p2p_level, (void *)level), 0);
    double bw = m.intra_bw;
    if (chain)
        *chain = m.shm_chain_bw;
    topo_release(&t);
    return bw;
}

/* A bridged pair goes through host memory once each way (the ring enters at one GPU, leaves at
 * the other): a switch carries the groups wholly behind it, and half the ends of those with one
 * GPU elsewhere (NCCL's search balances them up and down). Without P2P every GPU sends. A chain
 * has one sender fewer. */
static void host_memory_shared_by_groups_behind_a_switch(void **state)
{
    (void)state;
    static const int one[4] = {0, 0, 0, 0}, paired[4] = {0, 0, 1, 1}, crossed[4] = {0, 1, 0, 1},
                     mixed[4] = {0, 0, 0, 1};
    double chain;
    assert_true(fabs(four_gpus(one, "NVL", &chain) - 0.8 * 24 / 2) < 0.01);   /* 2 groups, 1 link */
    assert_true(fabs(chain - 0.8 * 24) < 0.01);                               /* one sends */
    assert_true(fabs(four_gpus(paired, "NVL", NULL) - 0.8 * 24) < 0.01);      /* a group a switch */
    assert_true(fabs(four_gpus(crossed, "NVL", NULL) - 0.8 * 24) < 0.01);     /* one end each */
    assert_true(fabs(four_gpus(mixed, "NVL", NULL) - 0.8 * 24 / 2) < 0.01);   /* whole + an end */
    assert_true(fabs(four_gpus(one, "LOC", &chain) - 0.8 * 24 / 4) < 0.01);   /* every GPU sends */
    assert_true(fabs(chain - 0.8 * 24 / 3) < 0.01);                           /* all but one */
    assert_true(fabs(four_gpus(crossed, "LOC", NULL) - 0.8 * 24 / 2) < 0.01); /* two a switch */
}

/* NCCL's algorithms per function (src/graph/tuning.cc: the functions' algorithm filter, and
 * NVLSTree off on one node, NVLS across nodes off without CollNet). */
static void algorithms_per_function_as_nccl(void **state)
{
    (void)state;
    enum {
        T = MODEL_ALGO_TREE,
        R = MODEL_ALGO_RING,
        N = MODEL_ALGO_NVLS,
        NT = MODEL_ALGO_NVLSTREE,
        P = MODEL_ALGO_PAT
    };
    /* per collective, the algorithms it runs on 1 node, on 2 without and with CollNet */
    static const struct {
        int coll;
        unsigned one, two, two_collnet;
    } want[] = {
        {MODEL_ALL_REDUCE, 1u << T | 1u << R | 1u << N, 1u << T | 1u << R | 1u << NT,
         1u << T | 1u << R | 1u << N | 1u << NT},
        {MODEL_ALL_GATHER, 1u << R | 1u << N | 1u << P, 1u << R | 1u << P,
         1u << R | 1u << N | 1u << P},
        {MODEL_REDUCE_SCATTER, 1u << R | 1u << N | 1u << P, 1u << R | 1u << P,
         1u << R | 1u << N | 1u << P},
        {MODEL_BROADCAST, 1u << R, 1u << R, 1u << R},
        {MODEL_REDUCE, 1u << R, 1u << R, 1u << R},
        {MODEL_ALLTOALL, 0, 0, 0},
        {MODEL_SENDRECV, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        unsigned one = 0, two = 0, two_collnet = 0;
        for (int a = 0; a < MODEL_NALGOS; a++) {
            one |= (unsigned)model_coll_runs(want[i].coll, a, 1, 0) << a;
            two |= (unsigned)model_coll_runs(want[i].coll, a, 2, 0) << a;
            two_collnet |= (unsigned)model_coll_runs(want[i].coll, a, 2, 1) << a;
        }
        assert_int_equal(one, want[i].one);
        assert_int_equal(two, want[i].two);
        assert_int_equal(two_collnet, want[i].two_collnet);
        assert_int_equal(model_coll_p2p(want[i].coll), want[i].one == 0);
    }
    assert_false(model_coll_runs(-1, MODEL_ALGO_RING, 1, 0));
    assert_false(model_coll_runs(MODEL_NCOLLS, MODEL_ALGO_RING, 1, 0));
    assert_false(model_coll_runs(MODEL_ALL_REDUCE, MODEL_NALGOS, 1, 0));
    assert_false(model_coll_p2p(-1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(flat_parameter_kept_when_its_default_fits_worse),
        cmocka_unit_test(defaults_fit_themselves),
        cmocka_unit_test(fit_recovers_latency_and_fill),
        cmocka_unit_test(fit_recovers_net_scale_on_two_nodes),
        cmocka_unit_test(fit_through_noise_stays_near),
        cmocka_unit_test(fit_refuses_points_it_cannot_predict),
        cmocka_unit_test(fit_from_two_sizes_not_written),
        cmocka_unit_test(check_refuses_worse_than_defaults),
        cmocka_unit_test(check_refuses_non_finite),
        cmocka_unit_test(check_refuses_absurd_error),
        cmocka_unit_test(check_refuses_parameters_out_of_range),
        cmocka_unit_test(check_refuses_too_few_points),
        cmocka_unit_test(host_memory_shared_by_groups_behind_a_switch),
        cmocka_unit_test(algorithms_per_function_as_nccl),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
