/* SPDX-License-Identifier: MIT */
/*
 * topotune-bench: parse the flags, bring up MPI (a singleton without mpirun),
 * let the backend set up, then per size: the collective's counts (as nccl-tests'),
 * warm-up, timed batch, check; combine over ranks (time with -a, wrong summed)
 * and report. Exit codes as nccl-tests.
 */
#include "bench/internal.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HOST_LEN    64
#define DEVICE_LINE 512 /* a "# Rank" line: its fixed words, host, PCI id and GPU name */

static const struct bench_backend *find_backend(const char *name)
{
    if (strcmp(name, "mpi") == 0)
        return &bench_backend_mpi;
    if (strcmp(name, "nccl") == 0)
        return &bench_backend_nccl;
    if (strcmp(name, "sim") == 0)
        return &bench_backend_sim;
    return NULL;
}

/* Host names of every process; local_proc and node count follow from them. */
static int gather_hosts(struct bench_ctx *c)
{
    char me[HOST_LEN] = "";
    gethostname(me, sizeof(me) - 1);
    char *all = util_xcalloc((size_t)c->nprocs, HOST_LEN);
    if (c->mpi)
        MPI_Allgather(me, HOST_LEN, MPI_CHAR, all, HOST_LEN, MPI_CHAR, c->comm);
    else
        memcpy(all, me, HOST_LEN);
    c->hosts = json_array();
    c->nodes = 0;
    c->local_proc = 0;
    for (int p = 0; p < c->nprocs; p++) {
        const char *h = all + (size_t)p * HOST_LEN;
        json_array_append_new(c->hosts, json_string(h));
        int first = 1;
        for (int q = 0; q < p; q++)
            first &= strcmp(h, all + (size_t)q * HOST_LEN) != 0;
        c->nodes += first;
        if (p < c->proc && strcmp(h, me) == 0)
            c->local_proc++;
    }
    c->world_nodes = c->nodes; /* --split makes c->nodes its group's */
    free(all);
    return 0;
}

/* nccl-tests' device lines, this process's part. */
static void device_text(const struct bench_ctx *c, char *out, size_t len)
{
    char host[HOST_LEN] = "";
    gethostname(host, sizeof(host) - 1);
    size_t used = 0;
    out[0] = '\0';
    size_t i;
    json_t *dev;
    json_array_foreach(c->devices, i, dev) {
        const char *on = json_string_value(json_object_get(dev, "host")); /* the sim's nodes */
        int n = snprintf(out + used, len - used,
                         "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%s] %s\n",
                         c->rank + (int)i, 0, (int)getpid(), on ? on : host,
                         (int)json_integer_value(json_object_get(dev, "device")),
                         json_string_value(json_object_get(dev, "pci")),
                         json_string_value(json_object_get(dev, "name")));
        if (n < 0 || (size_t)n >= len - used) {
            out[used] = '\0'; /* whole lines only */
            break;
        }
        used += (size_t)n;
    }
}

static char *gather_device_text(const struct bench_ctx *c)
{
    /* one block per process, as long as the longest's lines (the sim's rack: 72 in one) */
    int need = (int)json_array_size(c->devices) * DEVICE_LINE + 1, block = need;
    if (c->mpi)
        MPI_Allreduce(&need, &block, 1, MPI_INT, MPI_MAX, c->comm);
    char *mine = util_xcalloc(1, (size_t)block);
    device_text(c, mine, (size_t)block);
    char *all = c->proc == 0 ? util_xcalloc((size_t)c->nprocs, (size_t)block) : NULL;
    if (c->mpi)
        MPI_Gather(mine, block, MPI_CHAR, all, block, MPI_CHAR, 0, c->comm);
    else if (all)
        memcpy(all, mine, (size_t)block);
    free(mine);
    if (!all)
        return NULL;
    size_t used = strlen(all);
    for (int p = 1; p < c->nprocs; p++) { /* pack the lines together */
        const char *from = all + (size_t)p * (size_t)block;
        size_t n = strnlen(from, (size_t)block - 1);
        memmove(all + used, from, n);
        used += n;
        all[used] = '\0';
    }
    return all;
}

static json_t *versions(const struct bench_ctx *c, const struct bench_backend *b)
{
    json_t *v = json_object();
    json_object_set_new(v, "topotune", json_string(util_version()));
    if (c->mpi) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, ",\n")] = '\0';
        json_object_set_new(v, "mpi", json_string(lib));
    }
    if (b->versions)
        b->versions(v);
    return v;
}

static double combine_time(const struct bench_ctx *c, double t, int average)
{
    double out = t;
    if (!c->mpi)
        return t;
    switch (average) {
    case 0:
        MPI_Bcast(&out, 1, MPI_DOUBLE, 0, c->comm);
        return out;
    case 2:
        MPI_Allreduce(&t, &out, 1, MPI_DOUBLE, MPI_MIN, c->comm);
        return out;
    case 3:
        MPI_Allreduce(&t, &out, 1, MPI_DOUBLE, MPI_MAX, c->comm);
        return out;
    default:
        MPI_Allreduce(&t, &out, 1, MPI_DOUBLE, MPI_SUM, c->comm);
        return out / c->nprocs;
    }
}

static void to_line(const struct bench_ctx *c, size_t bytes, const struct bench_result *r,
                    int average, struct bench_line *l)
{
    /* -1: not checked here (-c 0, or an in-place alltoall on NCCL), the same on every rank */
    long long wrong = r->wrong > 0 ? r->wrong : 0, total = 0;
    l->time_us = combine_time(c, r->time_us, average);
    if (c->mpi)
        MPI_Allreduce(&wrong, &total, 1, MPI_LONG_LONG, MPI_SUM, c->comm);
    else
        total = wrong;
    l->wrong = c->opt->check && r->wrong >= 0 ? total : -1;
    /* nccl-tests' GetBw: algbw is the size column over the time, busbw algbw x the factor */
    l->algbw = l->time_us > 0 ? (double)bytes / (l->time_us * 1e-6) / 1e9 : 0;
    l->busbw = l->algbw * model_coll_bus_factor(c->coll, c->nranks);
    memcpy(l->algo, r->algo, sizeof(l->algo));
    memcpy(l->proto, r->proto, sizeof(l->proto));
}

/*
 * A failure on one process leaves the others waiting in a collective: with
 * several processes, abort the job with the code (mpirun passes it on).
 */
static int fail(struct bench_ctx *c, int code)
{
    char msg[160];
    snprintf(msg, sizeof(msg), "%s backend failed in stage %s (rank %d, exit %d)", c->opt->backend,
             bench_current_stage(), c->rank, code);
    bench_report_error(c, bench_current_stage(), msg);
    bench_report_end(c, code);
    fflush(stdout);
    if (c->mpi && c->world_nprocs > 1) /* --split: the other groups wait for this one */
        MPI_Abort(MPI_COMM_WORLD, code);
    return code;
}

static int run_sizes(struct bench_ctx *c, const struct bench_backend *b, int average)
{
    const struct bench_options *o = c->opt;
    size_t tsize = bench_dtype_size(c->dtype);
    int wrong = 0, measured = 0;
    for (size_t size = o->min_bytes; size <= o->max_bytes && size != SIZE_MAX;
         size = bench_next_size(o, size)) {
        struct bench_counts n;
        bench_coll_counts(c->coll, size / tsize, tsize, c->nranks, &n);
        size_t bytes = bench_coll_size(&n, tsize);
        /* no part for every rank: skipped; with --split each group decides by its own ranks,
         * and every process still joins the size's gather, or the groups fall out of step */
        int runs = n.param > 0;
        if (!runs && !c->ngroups)
            continue;
        struct bench_result r[2] = {{0}};
        struct bench_line l[2] = {{0}};
        for (int in_place = 0; runs && c->group >= 0 && in_place < 2; in_place++) {
            int rc = b->run(c, &n, in_place, &r[in_place]);
            if (rc)
                return fail(c, rc);
            to_line(c, bytes, &r[in_place], average, &l[in_place]);
        }
        if (c->ngroups)
            bench_split_report(c, bytes, n.param, runs ? &l[0] : NULL, runs ? &l[1] : NULL);
        else
            bench_report_size(c, bytes, n.param, &l[0], &l[1]);
        wrong |= l[0].wrong > 0 || l[1].wrong > 0; /* summed over ranks: all agree */
        measured += runs;
    }
    /* with --split a group of few ranks may measure a size another cannot: the launch fails
     * only when no group measured one (every process asks, so all stop here or none) */
    int any = measured;
    if (c->ngroups)
        MPI_Allreduce(&measured, &any, 1, MPI_INT, MPI_MAX, c->world);
    if (!any) {
        char msg[200];
        snprintf(msg, sizeof(msg),
                 "%s on %d ranks: no size from -b %zu to -e %zu holds a 16-byte part per rank; "
                 "give -e at least %zu",
                 o->collective, c->nranks, o->min_bytes, o->max_bytes, (size_t)c->nranks * 16);
        if (c->world_proc == 0)
            util_error("%s", msg);
        bench_report_error(c, "init", msg);
        return BENCH_EXIT_USAGE;
    }
    return wrong ? BENCH_EXIT_WRONG : 0;
}

static int run(struct bench_ctx *c, const struct bench_backend *b)
{
    /* The report first, then the watchdog from the first collective on: a peer that cannot be
     * reached (a blocked port, the wrong NIC) hangs the first connection, and nothing but the
     * watchdog ends that in time, with its error and end events. */
    int opened = bench_report_open(c), worst_open = opened;
    bench_watchdog_start(c, strcmp(b->name, "nccl") == 0 ? 2.0 : 0.0);
    bench_stage(c, "init");
    bench_hook_stall(c, "init");
    int rc = gather_hosts(c);
    if (rc)
        return bench_report_end(c, rc);
    if (c->mpi) /* process 0 opened the file; nobody goes on without it */
        MPI_Allreduce(&opened, &worst_open, 1, MPI_INT, MPI_MAX, c->comm);
    if (worst_open)
        return BENCH_EXIT_USAGE;
    if (c->opt->split) { /* every process computes the same groups from the same hosts */
        json_t *groups = bench_split_groups(c, c->opt->split, &c->group);
        if (!groups)
            return BENCH_EXIT_USAGE;
        c->ngroups = (int)json_array_size(groups);
        bench_report_groups(c, groups);
        json_decref(groups);
        bench_split_comm(c);
    }
    bench_stage(c, "init"); /* the backend's own start gets a whole deadline */
    c->devices = json_array();
    rc = c->group >= 0 ? b->init(c) : 0;
    /* Every process must agree that init worked before anyone waits in a collective. */
    int worst = rc;
    if (c->mpi)
        MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, c->world);
    if (worst) {
        bench_report_error(
            c, "init", rc ? "backend initialisation failed" : "initialisation failed elsewhere");
        return bench_report_end(c, worst);
    }
    if (model_coll_rooted(c->coll) && c->opt->root >= c->nranks) {
        char msg[160];
        snprintf(msg, sizeof(msg), "-r (--root) %d: %s has %d ranks: give a root from 0 to %d",
                 c->opt->root, c->opt->collective, c->nranks, c->nranks - 1);
        if (c->world_proc == 0) /* every process finds it: one says it */
            util_error("%s", msg);
        bench_report_error(c, "init", msg);
        return bench_report_end(c, BENCH_EXIT_USAGE);
    }
    char why[256];
    if (c->opt->check && model_coll_reduces(c->coll) &&
        bench_pattern_fits(c->op, c->dtype, c->nranks, why, sizeof(why))) {
        if (c->world_proc == 0)
            util_error("-c (--check): %s", why);
        bench_report_error(c, "init", why);
        return bench_report_end(c, BENCH_EXIT_USAGE);
    }
    char *devices = c->ngroups ? NULL : gather_device_text(c); /* groups: rank 0's is not all */
    json_t *v = versions(c, b);
    bench_report_header(c, devices ? devices : "", v);
    json_decref(v);
    free(devices);
    rc = run_sizes(c, b, c->opt->average >= 0 ? c->opt->average : b->default_average);
    rc = bench_report_end(c, rc);
    bench_stage_done();
    return rc;
}

int bench_main(int argc, char **argv)
{
    util_log_init("topotune-bench", UTIL_LOG_INFO);
    struct bench_options o;
    int rc = bench_parse_options(argc, argv, &o);
    if (rc)
        return rc == 1 ? 0 : rc;
    const struct bench_backend *b = find_backend(o.backend);
    struct bench_ctx c = {.opt = &o,
                          .coll = model_coll_parse(o.collective),
                          .dtype = bench_dtype_parse(o.dtype),
                          .op = bench_op_parse(o.op)};
    const char *why = b->unsupported(c.coll, c.dtype, c.op);
    if (why) {
        util_error("-C %s -d %s -o %s: %s", o.collective, o.dtype, o.op, why);
        return BENCH_EXIT_USAGE;
    }
    if (strcmp(b->name, "mpi") == 0 && o.ngpus != 1) {
        util_error("-g (--ngpus) %d: the mpi backend runs one rank per process; use mpirun -np N",
                   o.ngpus);
        return BENCH_EXIT_USAGE;
    }
    c.nprocs = 1;
    c.mpi = strcmp(b->name, "sim") != 0;
    if (c.mpi) {
        MPI_Init(&argc, &argv);
        c.comm = c.world = MPI_COMM_WORLD;
        MPI_Comm_rank(c.comm, &c.proc);
        MPI_Comm_size(c.comm, &c.nprocs);
    }
    c.world_proc = c.proc;
    c.world_nprocs = c.nprocs;
    c.rank = c.proc * o.ngpus;
    c.nranks = c.nprocs * o.ngpus;
    rc = run(&c, b);
    bench_stage_done(); /* also after an early return: MPI_Finalize is not a stage */
    if (b->release && c.group >= 0)
        b->release(&c);
    json_decref(c.hosts);
    json_decref(c.devices);
    json_decref(c.effective_env);
    fflush(stdout);
    if (c.mpi)
        MPI_Finalize();
    return rc;
}
