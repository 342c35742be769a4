/* SPDX-License-Identifier: MIT */
/* ops/: which verdicts drain, what Slurm's state changes, the reason's words, the printed line. */
#include "ops/ops.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *load(const char *text)
{
    json_error_t err;
    json_t *j = json_loads(text, 0, &err);
    assert_non_null(j);
    return j;
}

/* Six nodes: n1 slow, n2's link slow, n3 and n4 a slow path, n5 and n6 too spread to judge;
 * n7 healthy. */
static const char survey[] =
    "{\"predicted\": false, \"verdicts\": ["
    " {\"kind\": \"link-slow\", \"hosts\": [\"n2\"], \"evidence\": {\"capacity\": 1.5, \"why\": "
    "\"a'b|c\\nd\"}, \"text\": \"\"},"
    " {\"kind\": \"node-slow\", \"hosts\": [\"n1\"], \"evidence\": {\"busbw\": 0.0123456, "
    "\"nested\": {\"x\": 1}}, \"text\": \"\"},"
    " {\"kind\": \"path-slow\", \"hosts\": [\"n3\", \"n4\"], \"evidence\": {}, \"text\": \"\"},"
    " {\"kind\": \"class-too-spread\", \"hosts\": [\"n5\", \"n6\"], \"evidence\": {}, \"text\": "
    "\"\"},"
    " {\"kind\": \"class-below-expected\", \"hosts\": [\"n7\"], \"evidence\": {}, \"text\": \"\"}],"
    " \"nodes\": [{\"host\": \"n1\"}, {\"host\": \"n2\"}, {\"host\": \"n3\"}, {\"host\": \"n5\"}, "
    "{\"host\": \"n7\"}, {\"host\": \"n8\"}, {\"host\": \"n9\"}, {\"host\": \"n10\"}]}";

static const char *field(const json_t *actions, size_t i, const char *key)
{
    return json_string_value(json_object_get(json_array_get(actions, i), key));
}

static void test_kinds(void **state)
{
    (void)state;
    assert_true(ops_drains("node-slow") && ops_drains("node-fails") && ops_drains("link-slow"));
    assert_true(ops_drains("link-fails") && ops_drains("node-unreachable"));
    assert_true(ops_drains("node-differs"));
    assert_false(ops_drains("path-slow") || ops_drains("path-fails"));
    assert_false(ops_drains("class-too-spread") || ops_drains("class-below-expected"));
    assert_false(ops_drains(NULL) || ops_drains(""));
}

/* Without Slurm's view: a drain per node or link verdict, in host order, the reason's words
 * safe; never a path or a class. */
static void test_drains(void **state)
{
    (void)state;
    json_t *s = load(survey), *notes;
    json_t *a = ops_slurm_plan(s, 1, 0, NULL, &notes);
    assert_int_equal(json_array_size(a), 2);
    assert_string_equal(field(a, 0, "node"), "n1");
    assert_string_equal(field(a, 0, "state"), "drain");
    assert_string_equal(field(a, 0, "reason"), "topotune: node-slow busbw=0.0123");
    assert_string_equal(field(a, 1, "node"), "n2");
    assert_string_equal(field(a, 1, "reason"), "topotune: link-slow capacity=1.5 why=a_b_c_d");
    assert_int_equal(json_array_size(notes), 0);
    json_decref(a);
    json_decref(notes);
    /* a simulated survey's numbers say they are the model's */
    json_object_set_new(s, "predicted", json_true());
    a = ops_slurm_plan(s, 1, 0, NULL, &notes);
    assert_string_equal(field(a, 0, "reason"), "topotune: node-slow busbw=0.0123 (predicted)");
    json_decref(a);
    json_decref(notes);
    /* ... a long one too: the cut keeps the marker (it was cut off, a model's number read as
     * measured in sinfo -R) */
    json_t *ev = json_object_get(json_array_get(json_object_get(s, "verdicts"), 0), "evidence");
    json_object_set_new(ev, "detail",
                        json_string("gpus 8 vs 8, nics 2 vs 4, the rest the same as "
                                    "the larger class beside it, by every fact read"));
    json_object_set_new(ev, "class",
                        json_string("h100-80gb-hbm3-8x-nvs18-8xib400-f03aba64-and-"
                                    "a-suffix-long-enough-to-pass-the-cut-alone"));
    a = ops_slurm_plan(s, 1, 0, NULL, &notes);
    const char *r = field(a, 1, "reason"); /* n2: its link */
    assert_int_equal(strlen(r), OPS_REASON_MAX);
    assert_string_equal(r + strlen(r) - strlen(" (predicted)"), " (predicted)");
    json_decref(a);
    json_decref(notes);
    json_decref(s);
}

/* With Slurm's view: an administrator's drain is not drained over, an unknown node not drained;
 * resume is for nodes topotune drained that no verdict names (n8), not n1 (named again), not
 * n7 (named by its class), not n9 (an administrator's), not n10 (not drained). */
static void test_with_slurm(void **state)
{
    (void)state;
    json_t *s = load(survey), *notes;
    json_t *slurm =
        load("{\"n1\": {\"state\": \"drained\", \"reason\": \"topotune: node-slow busbw=1\"},"
             " \"n7\": {\"state\": \"drained\", \"reason\": \"topotune: node-slow busbw=1\"},"
             " \"n8\": {\"state\": \"draining\", \"reason\": \"topotune: link-slow\"},"
             " \"n9\": {\"state\": \"drained\", \"reason\": \"admin: topotune: later\"},"
             " \"n10\": {\"state\": \"idle\", \"reason\": \"topotune: old\"},"
             " \"n5\": {\"state\": \"idle\", \"reason\": \"\"}}");
    json_t *a = ops_slurm_plan(s, 1, 1, slurm, &notes);
    assert_int_equal(json_array_size(a), 2);
    assert_string_equal(field(a, 0, "node"), "n1");
    assert_string_equal(field(a, 0, "state"), "drain"); /* topotune's own: the reason renewed */
    assert_string_equal(field(a, 1, "node"), "n8");
    assert_string_equal(field(a, 1, "state"), "resume");
    assert_null(field(a, 1, "reason"));
    assert_int_equal(json_array_size(notes), 1); /* n2: Slurm does not know it */
    assert_non_null(strstr(json_string_value(json_array_get(notes, 0)), "n2: not a node Slurm"));
    json_decref(a);
    json_decref(notes);
    json_object_set_new(slurm, "n2",
                        json_pack("{s:s,s:s}", "state", "drained+fail", "reason", "RMA 42"));
    a = ops_slurm_plan(s, 1, 0, slurm, &notes);
    assert_int_equal(json_array_size(a), 1);
    assert_non_null(strstr(json_string_value(json_array_get(notes, 0)),
                           "n2: already drained by someone else (reason: RMA 42)"));
    json_decref(a);
    json_decref(notes);
    json_decref(slurm);
    json_decref(s);
}

/* A node an administrator or Slurm took out without a drain (fail, down, reboot, maint, or any
 * reason not topotune's) is neither drained over (which replaced the reason and made the node
 * look topotune's) nor resumed; nor is a node drained by topotune that is now also down or not
 * responding ("drained*": resume would bring it back). */
static void test_held_by_others(void **state)
{
    (void)state;
    json_t *s = load(survey), *notes;
    json_t *slurm = load("{\"n1\": {\"state\": \"fail\", \"reason\": \"admin: GPU3 Xid 79\"},"
                         " \"n2\": {\"state\": \"reboot^\", \"reason\": \"\"},"
                         " \"n8\": {\"state\": \"drained*\", \"reason\": \"topotune: link-slow\"},"
                         " \"n9\": {\"state\": \"down\", \"reason\": \"topotune: node-slow\"}}");
    json_t *a = ops_slurm_plan(s, 1, 1, slurm, &notes);
    assert_int_equal(json_array_size(a), 0);
    assert_int_equal(json_array_size(notes), 2);
    assert_non_null(strstr(json_string_value(json_array_get(notes, 1)),
                           "n1: fail in Slurm (reason: admin: GPU3 Xid 79): someone else's"));
    assert_non_null(
        strstr(json_string_value(json_array_get(notes, 0)), "n2: reboot^ in Slurm (reason: none)"));
    json_decref(a);
    json_decref(notes);
    /* topotune's own drain, the node now not responding: said as topotune's, not another's */
    json_object_set_new(slurm, "n1",
                        json_pack("{s:s,s:s}", "state", "drained*", "reason", "topotune: x"));
    a = ops_slurm_plan(s, 1, 0, slurm, &notes);
    assert_int_equal(json_array_size(a), 0);
    assert_non_null(strstr(json_string_value(json_array_get(notes, 1)),
                           "n1: drained by topotune, and now drained* in Slurm"));
    json_decref(a);
    json_decref(notes);
    /* an idle node with another's reason, and the states' other words */
    const char *held[] = {"down*", "maint", "failing", "future", "idle"};
    for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++) {
        json_object_set_new(slurm, "n1",
                            json_pack("{s:s,s:s}", "state", held[i], "reason", "RMA 42"));
        a = ops_slurm_plan(s, 1, 0, slurm, &notes);
        assert_int_equal(json_array_size(a), 0);
        json_decref(a);
        json_decref(notes);
    }
    json_decref(slurm);
    json_decref(s);
}

/* The printed line: plain words as they are, the reason one quoted word. */
static void test_printed(void **state)
{
    (void)state;
    json_t *a = load("[{\"node\": \"n1\", \"state\": \"drain\", \"reason\": \"topotune: x y\"},"
                     " {\"node\": \"n-2.a\", \"state\": \"resume\"}]");
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_int_equal(ops_slurm_act(a, 0, out, NULL, 1), 0);
    fclose(out);
    assert_string_equal(text, "scontrol update nodename=n1 state=drain 'reason=topotune: x y'\n"
                              "scontrol update nodename=n-2.a state=resume\n");
    free(text);
    json_decref(a);
}

/* The exposition text: HELP and TYPE once per family, label values escaped so that none ends its
 * quotes or its line, empty labels left out, a repeated series replaced, infinities by name, a
 * name Prometheus cannot read left out (and a label's: the series without it). */
static void test_metrics(void **state)
{
    (void)state;
    struct ops_metrics m;
    ops_metrics_init(&m);
    ops_metric(&m, "t_bytes", "gauge", "help with \\ and\nnewline", 1, "host", "a\"b\\c\nd}",
               "class", "", "size", (const char *)NULL, OPS_END);
    ops_metric(&m, "t_bytes", "gauge", "ignored", 2.5, "host", "n2", OPS_END);
    ops_metric(&m, "t_bytes", "gauge", "ignored", 3, "host", "n2", OPS_END);
    ops_metric(&m, "t_total", "counter", "plain", 0.0 / 0.0, OPS_END); /* NaN, then replaced: */
    ops_metric(&m, "bad-name", "gauge", "x", 1, OPS_END);
    ops_metric(&m, "t_total", "counter", "plain", 1.0 / 0.0, "bad label", "x", OPS_END);
    struct util_buf b = UTIL_BUF_INIT;
    ops_metrics_render(&m, &b);
    assert_string_equal(util_buf_str(&b), "# HELP t_bytes help with \\\\ and\\nnewline\n"
                                          "# TYPE t_bytes gauge\n"
                                          "t_bytes{host=\"a\\\"b\\\\c\\nd}\"} 1\n"
                                          "t_bytes{host=\"n2\"} 3\n"
                                          "# HELP t_total plain\n"
                                          "# TYPE t_total counter\n"
                                          "t_total +Inf\n");
    util_buf_release(&b);
    ops_metrics_release(&m);
}

/* Kubernetes label values: at most 63 of [A-Za-z0-9._-], a letter or digit at both ends; a long
 * class id keeps its head and its hash. */
static void test_label_value(void **state)
{
    (void)state;
    char v[64];
    ops_k8s_label_value("h100-80gb-8x-50d930ff", v);
    assert_string_equal(v, "h100-80gb-8x-50d930ff");
    ops_k8s_label_value("_x y/z.", v);
    assert_string_equal(v, "x-y-z");
    ops_k8s_label_value(NULL, v);
    assert_string_equal(v, "");
    char id[129];
    memset(id, 'a', 120);
    strcpy(id + 120, "-1234567");
    ops_k8s_label_value(id, v);
    assert_int_equal(strlen(v), 63);
    assert_memory_equal(v, id, 54);
    assert_string_equal(v + 54, "--1234567"); /* '-', then the last 8 */
    memset(id, 'b', 70);
    strcpy(id + 70, "12345678");
    ops_k8s_label_value(id, v);
    assert_int_equal(strlen(v), 63);
    assert_string_equal(v + 54, "-12345678");
}

/* A node a draining verdict names is tainted; one no verdict names untainted; one named only by
 * a class verdict neither (not called healthy, not kept off); a profile version where known. */
static void test_k8s_plan(void **state)
{
    (void)state;
    json_t *s = load(survey);
    json_t *v = load("{\"c1\": \"v7\"}");
    json_object_set_new(json_array_get(json_object_get(s, "nodes"), 0), "class", json_string("c1"));
    json_t *notes, *a = ops_k8s_plan(s, v, &notes);
    const char *want[][3] = {{"n1", "label",
                              "[\"topotune.io/class=c1\", \"topotune.io/profile=v7\", "
                              "\"topotune.io/health=node-slow\", \"--overwrite\"]"},
                             {"n1", "taint",
                              "[\"topotune.io/unhealthy=node-slow:NoSchedule\", "
                              "\"--overwrite\"]"},
                             {"n2", "label", "[\"topotune.io/health=link-slow\", \"--overwrite\"]"},
                             {"n2", "taint", NULL},
                             {"n3", "label", "[\"topotune.io/health=path-slow\", \"--overwrite\"]"},
                             {"n5", "label", NULL},
                             {"n7", "label",
                              "[\"topotune.io/health=class-below-expected\", "
                              "\"--overwrite\"]"},
                             {"n8", "label", "[\"topotune.io/health=healthy\", \"--overwrite\"]"},
                             {"n8", "untaint", "[\"topotune.io/unhealthy:NoSchedule-\"]"}};
    size_t k = 0;
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++, k++) {
        assert_string_equal(field(a, k, "node"), want[i][0]);
        assert_string_equal(field(a, k, "verb"), want[i][1]);
        if (want[i][2]) {
            json_t *args = load(want[i][2]);
            assert_true(json_equal(args, json_object_get(json_array_get(a, k), "args")));
            json_decref(args);
        }
    }
    json_decref(a);
    json_decref(notes);
    json_decref(v);
    json_decref(s);
}

/* Names scontrol or kubectl would read as an option, a host list or every node are skipped, said;
 * a long evidence string (a check's several failures) stays in the reason. */
static void test_hostile_names(void **state)
{
    (void)state;
    assert_false(ops_valid_node("--all") || ops_valid_node("-lrole") || ops_valid_node("ALL"));
    assert_false(ops_valid_node("all") || ops_valid_node("n[1-9]") || ops_valid_node("a,b"));
    assert_false(ops_valid_node("") || ops_valid_node(NULL) || ops_valid_node(".x"));
    assert_true(ops_valid_node("node0001") && ops_valid_node("gpu-7.cluster"));
    /* kubectl takes RFC 1123 names only: "gpu_x.0001" and "Node1" drew commands it refuses */
    assert_true(ops_valid_k8s_node("node0001") && ops_valid_k8s_node("gpu-7.cluster.local"));
    assert_false(ops_valid_k8s_node("gpu_x.0001") || ops_valid_k8s_node("Node1") ||
                 ops_valid_k8s_node("a..b") || ops_valid_k8s_node("-a") ||
                 ops_valid_k8s_node("a-.b") || ops_valid_k8s_node("a.") || ops_valid_k8s_node(""));
    json_t *s =
        load("{\"verdicts\": [{\"kind\": \"node-slow\", \"hosts\": [\"--all\"], "
             "\"evidence\": {}}, {\"kind\": \"check-fails\", \"hosts\": [\"n1\"], "
             "\"evidence\": {\"checks\": \"doctor-shm,doctor-node-values,busbw\"}}], "
             "\"nodes\": [{\"host\": \"--all\"}, {\"host\": \"ALL\"}, {\"host\": \"n1\"}]}");
    json_t *notes, *a = ops_slurm_plan(s, 1, 0, NULL, &notes);
    assert_int_equal(json_array_size(a), 1);
    assert_string_equal(field(a, 0, "node"), "n1");
    assert_string_equal(field(a, 0, "reason"),
                        "topotune: check-fails checks=doctor-shm,doctor-node-values,busbw");
    assert_int_equal(json_array_size(notes), 1);
    json_decref(a);
    json_decref(notes);
    a = ops_k8s_plan(s, NULL, &notes);
    for (size_t i = 0; i < json_array_size(a); i++)
        assert_string_equal(field(a, i, "node"), "n1");
    assert_int_equal(json_array_size(notes), 2);
    json_decref(a);
    json_decref(notes);
    json_decref(s);
    /* a name Slurm takes but kubectl refuses: Slurm's commands kept, kubectl's skipped, said */
    s = load("{\"verdicts\": [{\"kind\": \"node-slow\", \"hosts\": [\"gpu_x.0001\"], "
             "\"evidence\": {}}], \"nodes\": [{\"host\": \"gpu_x.0001\"}]}");
    a = ops_slurm_plan(s, 1, 0, NULL, &notes);
    assert_int_equal(json_array_size(a), 1);
    json_decref(a);
    json_decref(notes);
    a = ops_k8s_plan(s, NULL, &notes);
    assert_int_equal(json_array_size(a), 0);
    assert_int_equal(json_array_size(notes), 1);
    json_decref(a);
    json_decref(notes);
    json_decref(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kinds),         cmocka_unit_test(test_drains),
        cmocka_unit_test(test_with_slurm),    cmocka_unit_test(test_held_by_others),
        cmocka_unit_test(test_printed),       cmocka_unit_test(test_metrics),
        cmocka_unit_test(test_label_value),   cmocka_unit_test(test_k8s_plan),
        cmocka_unit_test(test_hostile_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
