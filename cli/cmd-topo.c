/* SPDX-License-Identifier: MIT */
/* `topotune topo`: map this machine or a topology file; print the summary and matrix, or JSON. */
#include "cli/cli.h"
#include "cluster/cluster.h"
#include "launch/launch.h"
#include "topo/topo.h"
#include "util/child.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/file.h"
#include "util/json.h"
#include "util/log.h"
#include "util/opts.h"
#include "util/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct topo_options {
    const char *input;
    const char *json;     /* NULL: no JSON; "-": stdout */
    const char *nccl_xml; /* --nccl-xml FILE, "-": stdout */
    int matrix;
    const char *hosts;
    int allocation;
};

static const char topo_usage[] =
    "[--input FILE] [--json [FILE]] [--nccl-xml FILE] [--matrix] [--hosts h1,h2,... | "
    "--allocation]";

/* [{"model", "count"}] of a node's GPUs in order of appearance: a mixed node lists each model. */
static json_t *gpu_models(const json_t *gpus)
{
    json_t *models = json_array();
    size_t i, j;
    json_t *g, *m;
    json_array_foreach(gpus, i, g) {
        const char *model = json_string_value(json_object_get(g, "model"));
        model = model ? model : "unknown";
        int found = 0;
        json_array_foreach(models, j, m) {
            if (!found && strcmp(json_string_value(json_object_get(m, "model")), model) == 0) {
                json_object_set_new(
                    m, "count", json_integer(json_integer_value(json_object_get(m, "count")) + 1));
                found = 1;
            }
        }
        if (!found)
            json_array_append_new(models, json_pack("{s:s,s:i}", "model", model, "count", 1));
    }
    return models;
}

/*
 * {"classes": [{"id", "hosts": [...], "gpus", "gpu_model", "gpu_models", "nics"}], "nodes": [...]}
 * gpu_model is the one model of the class's GPUs, null when they differ (gpu_models lists them).
 */
static json_t *group_classes(json_t *nodes)
{
    json_t *classes = json_array(), *by_id = json_object();
    size_t i;
    json_t *n;
    json_array_foreach(nodes, i, n) {
        const json_t *t = json_object_get(n, "topology");
        const char *id = json_string_value(json_object_get(json_object_get(t, "class"), "id"));
        const char *host = json_string_value(json_object_get(n, "host"));
        id = id ? id : "(could not be mapped)";
        json_t *cls = json_object_get(by_id, id);
        if (!cls) {
            const json_t *gpus = json_object_get(t, "gpus");
            json_t *models = gpu_models(gpus);
            json_t *one = json_array_size(models) == 1
                              ? json_object_get(json_array_get(models, 0), "model")
                              : NULL;
            cls =
                json_pack("{s:s,s:[],s:I,s:O?,s:o,s:I}", "id", id, "hosts", "gpus",
                          (json_int_t)json_array_size(gpus), "gpu_model", one, "gpu_models", models,
                          "nics", (json_int_t)json_array_size(json_object_get(t, "nics")));
            json_object_set_new(by_id, id, cls);
            json_array_append(classes, cls);
        }
        json_array_append_new(json_object_get(cls, "hosts"), json_string(host ? host : "?"));
    }
    json_decref(by_id);
    return json_pack("{s:o,s:O}", "classes", classes, "nodes", nodes);
}

/* One class of the --hosts summary; every string from the nodes is cleaned before it is printed. */
static void print_class(const json_t *c)
{
    char buf[256];
    size_t i;
    json_t *m, *h;
    const json_t *models = json_object_get(c, "gpu_models");
    printf("\nclass %s: %lld GPU(s)",
           topo_text_into(json_string_value(json_object_get(c, "id")), buf, sizeof(buf)),
           (long long)json_integer_value(json_object_get(c, "gpus")));
    json_array_foreach(models, i, m) {
        const char *model = json_string_value(json_object_get(m, "model"));
        if (json_array_size(models) == 1)
            printf(" %s", topo_text_into(model, buf, sizeof(buf)));
        else
            printf("%s%lld x %s", i ? ", " : " (",
                   (long long)json_integer_value(json_object_get(m, "count")),
                   topo_text_into(model, buf, sizeof(buf)));
    }
    printf("%s, %lld NIC(s)\n  hosts:", json_array_size(models) > 1 ? ")" : "",
           (long long)json_integer_value(json_object_get(c, "nics")));
    json_array_foreach(json_object_get(c, "hosts"), i, h)
        printf(" %s", topo_text_into(json_string_value(h), buf, sizeof(buf)));
    printf("\n");
}

/* The nodes' reports, as survey takes them: one whose host is no host name or whose class is no
 * class id (a node's words are untrusted, and the JSON's readers take both as they are) is
 * replaced by its rank and an error, a failure found (no "answered": exit 1). */
static void refuse_damaged(json_t *nodes)
{
    size_t i;
    json_t *n;
    json_array_foreach(nodes, i, n) {
        const json_t *cls = json_object_get(json_object_get(n, "topology"), "class");
        if (json_object_get(n, "error") ||
            (util_valid_host(json_string_value(json_object_get(n, "host"))) &&
             util_valid_id(json_string_value(json_object_get(cls, "id")))))
            continue;
        json_array_set_new(
            nodes, i,
            json_pack("{s:O,s:s}", "rank", json_object_get(n, "rank"), "error",
                      "its report is damaged: it names no valid host (letters, digits, '.', '-' "
                      "and '_', at most 63) or node class"));
    }
}

static int topo_hosts(const struct topo_options *o)
{
    json_t *nodes = cluster_gather(o->hosts, "topo", NULL, 300);
    if (!nodes)
        return 3;
    refuse_damaged(nodes);
    /* a node that could not map itself is in the table as such; its reason is said, and the
     * map is not whole (exit 1) */
    int exit_code = 0;
    size_t k;
    json_t *node;
    json_array_foreach(nodes, k, node) {
        const char *err = json_string_value(json_object_get(node, "error"));
        char host[256], why[512];
        if (!err)
            continue;
        if (json_is_string(json_object_get(node, "host")))
            topo_text_into(json_string_value(json_object_get(node, "host")), host, sizeof(host));
        else /* a node that printed nothing, not even its name: its error lists the candidates */
            snprintf(host, sizeof(host), "rank %lld%s",
                     (long long)json_integer_value(json_object_get(node, "rank")),
                     o->hosts ? "" : " of the allocation");
        util_error("%s: %s", host, topo_text_into(err, why, sizeof(why)));
        /* a node that did not answer is the environment's (3); one that could not map itself, a
         * failure found (1) */
        exit_code = exit_code == 3 || json_is_false(json_object_get(node, "answered")) ? 3 : 1;
    }
    json_t *doc = group_classes(nodes);
    json_decref(nodes);
    if (o->json) {
        exit_code = util_json_write(o->json, doc) ? 1 : exit_code;
    } else {
        size_t i;
        json_t *c;
        json_t *classes = json_object_get(doc, "classes");
        printf("%zu node(s) in %zu node class(es)\n",
               json_array_size(json_object_get(doc, "nodes")), json_array_size(classes));
        json_array_foreach(classes, i, c) {
            print_class(c);
        }
    }
    json_decref(doc);
    return exit_code;
}

/* --nccl-xml: NCCL's topology file of t, written whole (a temporary file renamed) or to stdout.
 * 0, 1 (not written) or 2 (a device without a bus id). */
static int write_nccl_xml(const struct topo *t, const char *path)
{
    struct util_buf b = UTIL_BUF_INIT;
    int rc = topo_write_nccl_xml(t, &b) ? 2 : 0;
    if (!rc && !strcmp(path, "-"))
        rc = fwrite(b.data, 1, b.len, stdout) == b.len ? 0 : 1;
    else if (!rc)
        rc = util_file_write_atomic(path, b.data, b.len) ? 1 : 0;
    util_buf_release(&b);
    return rc;
}

int cmd_topo(int argc, char **argv)
{
    struct topo_options o = {0};
    const struct util_opt opts[] = {
        {"input", 'i', UTIL_OPT_STRING, &o.input, "FILE",
         "hwloc XML export or NCCL topology XML instead of this machine"},
        {"json", 0, UTIL_OPT_OPTSTRING, &o.json, "FILE",
         "write the topology JSON (stdout: - or none)"},
        {"nccl-xml", 0, UTIL_OPT_STRING, &o.nccl_xml, "FILE",
         "write NCCL's topology file (NCCL_TOPO_FILE, for VMs whose PCIe tree is hidden); - for "
         "stdout"},
        {"matrix", 'm', UTIL_OPT_FLAG, &o.matrix, NULL, "print only the GPU/NIC matrix"},
        {"hosts", 0, UTIL_OPT_STRING, &o.hosts, "LIST",
         "map these nodes through mpirun and group them into node classes"},
        {"allocation", 0, UTIL_OPT_FLAG, &o.allocation, NULL,
         "map every node of the Slurm allocation this runs in, through mpirun"},
        {0},
    };
    const struct util_opts_cmd cmd = {"topotune topo", topo_usage, opts, -1, 0};
    int npos = 0, status, rc = 0;
    if (cli_parse(&cmd, argc, argv, &npos, &status))
        return status;
    if (npos) {
        util_error("'topotune topo' takes no arguments: use --input FILE to read a topology file");
        return 2;
    }
    if (o.nccl_xml && (o.json || o.matrix)) {
        util_error("--nccl-xml writes one file: give --json and --matrix another run");
        return 2;
    }
    const char *out = o.nccl_xml ? o.nccl_xml : o.json;
    if (util_file_same(o.input, out)) { /* the output would replace what it was made from */
        util_error("--%s '%s' is the --input: give the output another name",
                   o.nccl_xml ? "nccl-xml" : "json", out);
        return 2;
    }
    if ((o.hosts || o.allocation) && (o.input || o.matrix || o.nccl_xml)) {
        util_error(
            "--hosts and --allocation map live nodes: they take neither --input nor --matrix");
        return 2;
    }
    if (launch_check_nodes(o.hosts, o.allocation))
        return 2;
    if (o.hosts || o.allocation) {
        util_child_setup();
        return topo_hosts(&o);
    }
    struct topo t;
    topo_init(&t);
    rc = topo_load(&t, o.input);
    if (rc) {
        topo_release(&t);
        return rc == UTIL_ENOMEM ? 1 : 2;
    }
    if (!t.nvlink_known && t.ngpus)
        util_warning("'%s' does not describe NVLink: GPU pairs show their PCIe path",
                     o.input ? o.input : "this machine");
    int exit_code = 0;
    if (o.nccl_xml) {
        exit_code = write_nccl_xml(&t, o.nccl_xml);
    } else if (o.json) {
        json_t *j = topo_to_json(&t);
        if (util_json_write(o.json, j))
            exit_code = 1;
        json_decref(j);
    } else {
        if (!o.matrix)
            topo_print_summary(&t, stdout);
        topo_print_matrix(&t, stdout);
    }
    topo_release(&t);
    return exit_code;
}
