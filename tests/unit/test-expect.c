/* SPDX-License-Identifier: MIT */
/* expect/: the band around each prediction, the NCCL_TESTS_MIN_BW figure, the NHC refusal. */
#include "expect/expect.h"
#include "util/error.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char spec[] =
    "{\"schema\": \"topotune/spec/1\", \"gpu\": \"H100-SXM5-80GB\", \"count\": 8, "
    "\"nics\": [{\"model\": \"CX7-400G-IB\", \"count\": 8, \"per\": \"gpu\"}]}";

static const char one_gpu[] = "{\"schema\": \"topotune/spec/1\", \"gpu\": \"H200-SXM5-141GB\", "
                              "\"count\": 1}";

static void predicted_of(struct expect *e, const char *text, int nodes)
{
    struct topo t;
    topo_init(&t);
    assert_int_equal(topo_load_buffer(&t, "h100.json", text, strlen(text)), 0);
    struct model m;
    assert_int_equal(model_init(&m, &t, nodes, model_env_none, NULL), 0);
    assert_int_equal(
        expect_predicted(e, &m, &t, "h100.json", NULL, MODEL_ALL_REDUCE, 1 << 20, 1 << 30, 4), 0);
    topo_release(&t);
}

static void predicted(struct expect *e, int nodes)
{
    predicted_of(e, spec, nodes);
}

/* One rank: busbw is 0 by nccl-tests' definition, and the time still has its band. */
static void test_one_rank(void **state)
{
    (void)state;
    struct expect e;
    predicted_of(&e, one_gpu, 1);
    assert_int_equal(e.nranks, 1);
    for (int i = 0; i < e.n; i++) {
        assert_true(e.rows[i].busbw == 0 && e.rows[i].low == 0 && e.rows[i].high == 0);
        assert_true(e.rows[i].time_low_us < e.rows[i].time_us);
        assert_true(e.rows[i].time_us < e.rows[i].time_high_us);
    }
    expect_release(&e);
}

/* Every size from -b by -f up to -e, its band the model's at that size, the time the other way;
 * NCCL_TESTS_MIN_BW the mean low edge over 0.9 (nccl-tests fails below 0.9 x it). */
static void test_band(void **state)
{
    (void)state;
    struct expect e;
    predicted(&e, 1);
    assert_int_equal(e.n, 6);
    assert_false(e.measured);
    double low = 0;
    for (int i = 0; i < e.n; i++) {
        const struct expect_row *r = &e.rows[i];
        struct model_band b = model_band_at(r->bytes);
        assert_true(r->bytes == (size_t)1 << (20 + 2 * i));
        assert_true(fabs(r->low - r->busbw * b.low) < 1e-9 &&
                    fabs(r->high - r->busbw * b.high) < 1e-9);
        assert_true(r->time_low_us < r->time_us && r->time_us < r->time_high_us);
        low += r->low;
    }
    assert_true(fabs(expect_nccl_tests_min_bw(&e) - low / e.n / 0.9) < 1e-9);
    assert_true(model_band_at(MODEL_BAND_SMALL).high > model_band_at(MODEL_BAND_SMALL + 1).high);
    /* all_reduce's band is model_band_at's; the other collectives' (and an unknown one's) is
     * wider: the model knows them less well */
    struct model_band ar = model_band_for(MODEL_ALL_REDUCE, 1 << 30),
                      ag = model_band_for(MODEL_ALL_GATHER, 1 << 30);
    assert_true(ar.low == model_band_at(1 << 30).low && ar.high == model_band_at(1 << 30).high);
    assert_true(ag.low < ar.low && ag.rows > 0);
    /* one the model does not know: both groups' envelope */
    struct model_band u = model_band_for(-1, 1 << 20), c = model_band_for(MODEL_BROADCAST, 1 << 20),
                      o = model_band_for(MODEL_SENDRECV, 1 << 20);
    assert_true(u.low == fmin(c.low, o.low) && u.high == fmax(c.high, o.high) && c.high > o.high);
    expect_release(&e);
}

/* An NHC check measures one node: a 2-node expectation is refused, nothing written. */
static void test_nhc_one_node(void **state)
{
    (void)state;
    struct expect e;
    predicted(&e, 2);
    char buf[64] = "";
    FILE *out = fmemopen(buf, sizeof(buf), "w");
    assert_int_equal(expect_write_nhc(&e, out), UTIL_EUSAGE);
    fclose(out);
    assert_string_equal(buf, "");
    expect_release(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_band),
        cmocka_unit_test(test_nhc_one_node),
        cmocka_unit_test(test_one_rank),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
