/* SPDX-License-Identifier: MIT */
/*
 * doctor --hosts: what must agree between the nodes of one job. Each fact is
 * compared against the value most nodes have, and the nodes that differ are
 * named: one odd node out is the usual cause of a job that hangs at init.
 */
#include "doctor/doctor.h"
#include "doctor/internal.h"
#include "util/buf.h"
#include "util/json.h"
#include "util/mem.h"
#include "util/num.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

json_t *doctor_node_report(const struct topo *t, const json_t *profile, double copy_timeout_s)
{
    char *ifs = doctor_up_interfaces();
    json_t *r = json_pack("{s:s?,s:i,s:{s:s?,s:s?,s:s?},s:s,s:I,s:o}", "class", t->class_id, "gpus",
                          t->ngpus, "software", "nccl", t->software.nccl, "cuda", t->software.cuda,
                          "driver", t->software.driver, "interfaces", ifs, "shm_mb",
                          (json_int_t)(t->system.shm_bytes >= 0 ? t->system.shm_bytes >> 20 : -1),
                          "checks", doctor_run(t, profile, copy_timeout_s));
    free(ifs);
    return r;
}

typedef void (*fact_fn)(const json_t *node, struct util_buf *out);

static void fact_class(const json_t *n, struct util_buf *out)
{
    const char *c = json_string_value(json_object_get(n, "class"));
    util_buf_addf(out, "%s (%lld GPUs)", c ? c : "unknown",
                  (long long)json_integer_value(json_object_get(n, "gpus")));
}

static void fact_software(const json_t *n, struct util_buf *out)
{
    const json_t *sw = json_object_get(n, "software");
    const char *names[] = {"nccl", "cuda", "driver"};
    for (int i = 0; i < 3; i++) {
        const char *v = json_string_value(json_object_get(sw, names[i]));
        util_buf_addf(out, "%s%s %s", i ? ", " : "", names[i], v ? v : "none");
    }
}

static void fact_interfaces(const json_t *n, struct util_buf *out)
{
    const char *v = json_string_value(json_object_get(n, "interfaces"));
    util_buf_adds(out, v && *v ? v : "none up");
}

static void fact_shm(const json_t *n, struct util_buf *out)
{
    util_buf_addf(out, "%lld MB", (long long)json_integer_value(json_object_get(n, "shm_mb")));
}

static const char *host_of(const json_t *n)
{
    return util_json_str(n, "host", "?");
}

/*
 * Compares one fact. The value most nodes have is the reference and the others
 * are named; when no value has a majority (two nodes that differ), every node's
 * value is listed: there is no telling which one is odd.
 */
static void compare_fact(json_t *c, const json_t *nodes, const char *name, fact_fn fact,
                         const char *status_if_odd, const char *fix)
{
    size_t n = json_array_size(nodes), best = 0, best_count = 0;
    struct util_buf *vals = util_xcalloc(n, sizeof(*vals));
    for (size_t i = 0; i < n; i++)
        fact(json_array_get(nodes, i), &vals[i]);
    for (size_t i = 0; i < n; i++) {
        size_t count = 0;
        for (size_t j = 0; j < n; j++)
            count += !strcmp(util_buf_str(&vals[i]), util_buf_str(&vals[j]));
        if (count > best_count)
            best = i, best_count = count;
    }
    struct util_buf odd = UTIL_BUF_INIT;
    int majority = 2 * best_count > n;
    for (size_t i = 0; i < n; i++)
        if (!majority || strcmp(util_buf_str(&vals[i]), util_buf_str(&vals[best])))
            util_buf_addf(&odd, "%s%s has %s", odd.len ? "; " : "",
                          host_of(json_array_get(nodes, i)), util_buf_str(&vals[i]));
    if (best_count < n && !majority)
        doctor_add(c, name, status_if_odd, fix, "the nodes disagree, no value has a majority: %s",
                   util_buf_str(&odd));
    else if (best_count < n)
        doctor_add(c, name, status_if_odd, fix, "%zu of %zu node(s) have %s; odd: %s", best_count,
                   n, util_buf_str(&vals[best]), util_buf_str(&odd));
    else
        doctor_add(c, name, "pass", NULL, "all %zu node(s): %s", n, util_buf_str(&vals[best]));
    for (size_t i = 0; i < n; i++)
        util_buf_release(&vals[i]);
    free(vals);
    util_buf_release(&odd);
}

/* Clocks read right after a barrier: more than a second apart means no time sync. A node past no
 * barrier (one node hung: no node got past it) has no clock, and is not compared; when every node
 * reported (whole) and none has one, MPI could not connect them. */
static void compare_clocks(json_t *c, const json_t *nodes, int whole)
{
    size_t all = json_array_size(nodes), n = 0;
    double *t = util_xcalloc(all + 1, sizeof(double)),
           *sorted = util_xcalloc(all + 1, sizeof(double));
    const json_t **of = util_xcalloc(all + 1, sizeof(*of));
    for (size_t i = 0; i < all; i++) {
        const json_t *clock = json_object_get(json_array_get(nodes, i), "clock");
        if (json_is_number(clock)) {
            of[n] = json_array_get(nodes, i);
            sorted[n] = t[n] = json_number_value(clock);
            n++;
        }
    }
    if (!n && all > 1 && whole) {
        doctor_add(c, "nodes-clock", "fail",
                   "let the nodes reach each other over TCP (a firewall between them?), or name "
                   "the interface Open MPI should use: OMPI_MCA_btl_tcp_if_include=eth0",
                   "every node reported, but none passed the MPI barrier after the reports: MPI "
                   "could not start or could not connect the nodes (clocks not compared)");
        free(t), free(sorted), free(of);
        return;
    }
    if (n < all) {
        doctor_add(c, "nodes-clock", "unknown", "run doctor --hosts again once every node answers",
                   "%zu of the %zu node(s) that reported read no clock (a node did not reach "
                   "the barrier after the reports): clocks not compared",
                   all - n, all);
        free(t), free(sorted), free(of);
        return;
    }
    util_sort_doubles(sorted, n);
    /* the upper middle: one host's own clock, not the mean of two (of two hosts a second
     * apart, each would be half a second off) */
    double median = n ? sorted[n / 2] : 0, worst = 0;
    struct util_buf odd = UTIL_BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        double off = t[i] - median;
        worst = fabs(off) > worst ? fabs(off) : worst;
        if (fabs(off) > 1.0)
            util_buf_addf(&odd, "%s%s is %+.1f s off", odd.len ? "; " : "", host_of(of[i]), off);
    }
    if (odd.len)
        doctor_add(c, "nodes-clock", "warn",
                   "synchronise the clocks (chrony or ntpd): logs and timeouts across nodes "
                   "stop making sense",
                   "%s", util_buf_str(&odd));
    else
        doctor_add(c, "nodes-clock", "pass", NULL, "clocks within %.3f s of each other", worst);
    util_buf_release(&odd);
    free(t);
    free(sorted);
    free(of);
}

/*
 * Each node's own failed checks, and nodes that could not report at all (fail);
 * else the checks no node could make (warn: unknown is not pass).
 */
static void node_checks(json_t *c, const json_t *nodes)
{
    struct util_buf bad = UTIL_BUF_INIT, unknown = UTIL_BUF_INIT;
    size_t i, j;
    json_t *node, *check;
    json_array_foreach(nodes, i, node) {
        const char *err = util_json_str(node, "error", NULL);
        if (err)
            util_buf_addf(&bad, "%s%s: %s", bad.len ? "; " : "", host_of(node), err);
        json_array_foreach(json_object_get(node, "checks"), j, check) {
            const char *status = util_json_str(check, "status", "unknown");
            if (!strcmp(status, "unknown"))
                util_buf_addf(&unknown, "%s%s: %s", unknown.len ? "; " : "", host_of(node),
                              util_json_str(check, "name", "?"));
            if (strcmp(status, "fail"))
                continue;
            util_buf_addf(&bad, "%s%s: %s failed (%s)", bad.len ? "; " : "", host_of(node),
                          util_json_str(check, "name", "?"),
                          util_json_str(check, "fix", "no fix given"));
        }
    }
    if (bad.len)
        doctor_add(c, "nodes-checks", "fail",
                   "run topotune doctor on the node(s) named for the whole evidence", "%s",
                   util_buf_str(&bad));
    else if (unknown.len)
        doctor_add(c, "nodes-checks", "warn",
                   "run topotune doctor on those nodes to see why each check could not be made",
                   "no check failed, but some could not be made: %s", util_buf_str(&unknown));
    else
        doctor_add(c, "nodes-checks", "pass", NULL, "no check failed on any of the %zu node(s)",
                   json_array_size(nodes));
    util_buf_release(&bad);
    util_buf_release(&unknown);
}

/* The facts every node that reported gives, compared across them (whole: every node did). */
static void compare_facts(json_t *c, const json_t *nodes, int whole)
{
    compare_fact(c, nodes, "nodes-class", fact_class, "fail",
                 "one job per node class: a profile tuned for one class misleads the other; "
                 "exclude the odd node or make a profile per class");
    compare_fact(c, nodes, "nodes-software", fact_software, "fail",
                 "install the same NCCL, CUDA and driver on every node (one container image): "
                 "mixed NCCL versions hang or fail at init");
    compare_fact(c, nodes, "nodes-interfaces", fact_interfaces, "fail",
                 "name the data interfaces alike on every node, or set NCCL_SOCKET_IFNAME to a "
                 "prefix list that matches each node (NCCL_SOCKET_IFNAME=eth,ens)");
    compare_fact(c, nodes, "nodes-shm", fact_shm, "warn",
                 "give every node's containers the same /dev/shm (--shm-size or --ipc=host)");
    compare_clocks(c, nodes, whole);
}

json_t *doctor_compare_nodes(const json_t *nodes)
{
    json_t *c = json_array();
    if (!json_array_size(nodes)) {
        doctor_add(c, "nodes", "fail", "check --hosts and mpirun's output", "no node reported");
        return c;
    }
    /* a node that could not report has no facts: compared, it showed class unknown, NCCL none,
     * no interface and 0 MB of /dev/shm; its error is named by node_checks */
    json_t *reported = json_array(), *node;
    size_t i;
    json_array_foreach(nodes, i, node)
        if (!json_object_get(node, "error"))
            json_array_append(reported, node);
    if (json_array_size(reported))
        compare_facts(c, reported, json_array_size(reported) == json_array_size(nodes));
    json_decref(reported);
    node_checks(c, nodes);
    return c;
}
