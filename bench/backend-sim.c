/* SPDX-License-Identifier: MIT */
/*
 * The sim backend: no data moves. Each size's time comes from the model for
 * the --topology on --nodes nodes under this process's environment, with
 * reproducible noise (--seed, --noise). What the model predicts as a fault is
 * acted out for real: a hang blocks until the -T watchdog or the parent's
 * kill, a failure exits 3, corruption shows as wrong elements (exit 7). When the environment
 * loads a tuner plugin with topotune's table (NCCL_TUNER_PLUGIN, and TOPOTUNE_TUNER_TABLE or
 * NCCL_TUNER_CONFIG_FILE), the sim reads the table with the plugin's own parser and applies it
 * as the plugin would; a table the plugin would refuse leaves NCCL's choice, with a warning.
 */
#include "bench/internal.h"
#include "model/model.h"
#include "topo/topo.h"
#include "tuner/tuner.h"
#include "util/log.h"
#include "util/mem.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sim_state {
    struct topo topo;
    struct model model;
    struct tuner_table table;
    uint64_t rng;
    int collectives; /* how many have run: the first one may fail */
};

static const char *sim_unsupported(int coll, int dtype, int op)
{
    (void)coll;
    (void)dtype;
    (void)op;
    return NULL;
}

/* The run's environment; not this host's NCCL configuration files: the sim predicts the NCCL of
 * --topology, often another machine's (a sweep of a spec took this host's /etc/nccl.conf). */
static const char *process_env(const char *name, void *ctx)
{
    (void)ctx;
    return getenv(name);
}

static void add_devices(struct bench_ctx *c, const struct topo *t, int nodes)
{
    json_decref(c->hosts);
    c->hosts = json_array();
    for (int node = 0; node < nodes; node++) {
        char host[32];
        snprintf(host, sizeof(host), "sim-node%d", node);
        json_array_append_new(c->hosts, json_string(host));
        for (int g = 0; g < t->ngpus; g++) {
            char pci[16];
            snprintf(pci, sizeof(pci), "%.10s", t->gpus[g].pci[0] ? t->gpus[g].pci : "0000:00:00");
            json_t *dev = json_object();
            json_object_set_new(dev, "device", json_integer(g));
            json_object_set_new(dev, "pci", json_string(pci));
            char name[160];
            snprintf(name, sizeof(name), "%s (predicted)",
                     t->gpus[g].model ? t->gpus[g].model : "GPU");
            json_object_set_new(dev, "name", json_string(name));
            json_object_set_new(dev, "host", json_string(host));
            json_array_append_new(c->devices, dev);
        }
    }
}

/* The plugin's table when this environment loads a tuner plugin with one, as the plugin loads its
 * table: 0 (used, or none named), -1 (left out with a warning), or TABLE_REFUSED when the job named
 * its table (TUNER_ENV_DIGEST) and this is not it: the plugin fails the communicator's init then
 * (tuner/tuner.h, "One table"). */
#define TABLE_REFUSED (-2)
static int load_table(struct tuner_table *t)
{
    const char *plugin = getenv("NCCL_TUNER_PLUGIN");
    const char *path = getenv(TUNER_ENV_TABLE), *named = getenv(TUNER_ENV_DIGEST);
    char err[256];
    if (named && !*named)
        named = NULL;
    if (!path || !*path)
        path = getenv(TUNER_ENV_NCCL_TABLE);
    if (!plugin || !*plugin || !strcmp(plugin, "none"))
        return 0;
    if (!path || !*path) {
        if (!named)
            return 0;
        snprintf(err, sizeof(err), "no table (%s)", TUNER_ENV_TABLE);
        path = "";
    } else if (tuner_table_load(t, path, err, sizeof(err)) == 0 &&
               tuner_table_identity(t, named, err, sizeof(err)) == 0) {
        err[0] = '\0';
    }
    if (err[0] && named) {
        util_error("NCCL error at init (predicted): the tuner plugin refuses table '%s': %s", path,
                   err);
        tuner_table_release(t);
        return TABLE_REFUSED;
    }
    if (err[0]) {
        util_warning("tuner table '%s' not used (predicted: NCCL's defaults): %s", path, err);
        tuner_table_release(t);
        return -1;
    }
    const char *want = getenv(TUNER_ENV_CLASS);
    if (want && *want && t->class_id[0] && strcmp(want, t->class_id)) {
        util_warning(
            "tuner table '%s' is for class %s, not %s: not used (predicted: NCCL's defaults)", path,
            t->class_id, want);
        tuner_table_release(t);
        return -1;
    }
    return 0;
}

static int sim_init(struct bench_ctx *c)
{
    const struct bench_options *o = c->opt;
    struct sim_state *s = util_xcalloc(1, sizeof(*s));
    c->state = s;
    c->predicted = 1;
    topo_init(&s->topo);
    if (!o->topology) {
        util_error(
            "--backend sim needs --topology FILE (a hwloc XML, NCCL topology XML, topology JSON "
            "or spec)");
        return BENCH_EXIT_USAGE;
    }
    if (topo_load(&s->topo, o->topology))
        return BENCH_EXIT_USAGE;
    if (model_init(&s->model, &s->topo, o->nodes, process_env, NULL)) {
        util_error("topology '%s' has no GPU to simulate", o->topology);
        return BENCH_EXIT_USAGE;
    }
    if (o->calibration && model_params_load(&s->model.params, o->calibration))
        return BENCH_EXIT_USAGE;
    int table = load_table(&s->table);
    if (table == TABLE_REFUSED)
        return BENCH_EXIT_COMM;
    if (table == 0 && s->table.rules)
        s->model.table = &s->table;
    s->rng = (uint64_t)o->seed * 0x9E3779B97F4A7C15ULL + 0x2545F4914F6CDD1DULL;
    c->nranks = s->model.nranks;
    /* the machines, as a real run counts its hosts: NCCL merges an NVLink domain's trays into
     * one node (the model's nodes), each still a host of its own GPUs */
    c->nodes = model_hosts(&s->model);
    add_devices(c, &s->topo, c->nodes);
    if (s->model.fault == MODEL_FAULT_HANG_INIT) {
        util_warning("predicted: %s", s->model.why);
        for (;;) /* as NCCL does: init never returns; the watchdog or the parent ends it */
            pause();
    }
    if (s->model.fault == MODEL_FAULT_FAIL_INIT) {
        util_error("NCCL error at init (predicted): %s", s->model.why);
        return BENCH_EXIT_COMM;
    }
    return 0;
}

static int sim_run(struct bench_ctx *c, const struct bench_counts *n, int in_place,
                   struct bench_result *r)
{
    struct sim_state *s = c->state;
    size_t bytes = bench_coll_size(n, bench_dtype_size(c->dtype));
    (void)in_place;
    bench_stage(c, "size:%zu", bytes);
    struct model_prediction p;
    if (s->model.fault == MODEL_FAULT_CRASH) {
        fprintf(stderr, "topotune-bench: predicted: %s\n", s->model.why);
        fflush(NULL);
        signal(SIGBUS, SIG_DFL);
        raise(SIGBUS); /* as NCCL does when /dev/shm cannot back its buffers */
    }
    if (model_predict_coll(&s->model, c->coll, bytes, &p)) {
        util_error("NCCL error in the first collective (predicted): %s",
                   s->model.why[0] ? s->model.why
                                   : "NCCL_ALGO/NCCL_PROTO leave no algorithm and protocol for "
                                     "this collective (NCCL: no algorithm/protocol available)");
        return BENCH_EXIT_COMM;
    }
    s->collectives++;
    r->time_us = p.time_us * model_noise(&s->rng, c->opt->noise);
    snprintf(r->algo, sizeof(r->algo), "%s", p.algo);
    snprintf(r->proto, sizeof(r->proto), "%s", p.proto);
    /* LL128 where it is unsafe: some elements come back wrong, as the field reports. */
    r->wrong = c->opt->check ? (p.wrong ? (long long)(n->recv / 64 + 1) : 0) : -1;
    return 0;
}

static void sim_release(struct bench_ctx *c)
{
    struct sim_state *s = c->state;
    if (!s)
        return;
    topo_release(&s->topo);
    tuner_table_release(&s->table);
    free(s);
    c->state = NULL;
}

const struct bench_backend bench_backend_sim = {
    .name = "sim",
    .default_average = 3,
    .unsupported = sim_unsupported,
    .init = sim_init,
    .run = sim_run,
    .release = sim_release,
};
