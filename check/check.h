/* SPDX-License-Identifier: MIT */
/*
 * `topotune check`: a fast health check of this node, for Slurm (Prolog, Epilog,
 * HealthCheckProgram) and LBNL NHC. It runs doctor's checks, then one short topotune-bench run
 * (a few large sizes), and judges each size's busbw against the band of what this node should
 * measure: a profile's measured runs when one is given, else the model's prediction for this
 * node's hardware (expect/) with the NCCL variables of this process, which the run gets too. Every
 * failure is one line; the report is also JSON (docs/schemas/check.schema.json) and Prometheus
 * metrics (ops/). Errors follow util/error.h.
 */
#ifndef CHECK_CHECK_H
#define CHECK_CHECK_H

#include "ops/ops.h"

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

struct check_opts {
    const char *input;   /* the hardware (a spec, topology or hwloc file); NULL: this node */
    const char *profile; /* the reference: a profile (directory or profile.json); NULL: the model */
    const char *backend; /* "nccl", "mpi" or "sim" (the sim needs input: every number predicted) */
    const char *launcher; /* "direct" (one process; nccl: -g every GPU) or "mpirun" (np ranks) */
    int np;
    size_t min, max; /* the sizes: nccl-tests' -b, -e ... */
    int factor;      /* ... and -f */
    int iters;
    double timeout_s; /* the benchmark's -T; the whole run gets 20 x it */
    /* the whole check's seconds (0: none), which doctor's peer copies and the benchmark share: a
     * benchmark still running at it is stopped and fails; one left under 10 s is not started (no
     * verdict, but a doctor check's failure). Slurm kills a HealthCheckProgram at 60 s without a
     * verdict: a node whose P2P hangs, 47 s of doctor's copies and 30 s of the benchmark's
     * watchdog on 8 GPUs, went undrained. */
    double deadline_s;
    double started_s; /* when the check began (util_clock_s; 0: check_run sets it) */
    double reserve_s; /* of deadline_s, kept for the caller after the check (its drain) */
    int no_doctor;    /* skip doctor's checks (the bench alone) */
    /* this node's GPUs running compute processes: measure nothing (no verdict), measure anyway,
     * or fail (a Prolog of exclusive nodes: what the last job left) */
    enum { CHECK_BUSY_SKIP, CHECK_BUSY_RUN, CHECK_BUSY_FAIL } busy;
    const char *dir;   /* where the benchmark's events and log go (exists) */
    const char *bench; /* the topotune-bench program */
};

/*
 * Runs the check. Returns a new reference, the report (schema topotune/check/1): "ok", the
 * "failures" ([{check, text}], one per failed doctor check, a failed benchmark run or one that
 * exited 0 without its end, each size of the band it gave no busbw for, each size below its
 * band; or, with no run, the node's hardware when it has fewer GPUs, NICs or NVSwitches than its
 * profile's class), the sizes with their busbw and band, the doctor checks, the reference; and
 * "error" {text, status} when the check could not be made as asked (the benchmark could not
 * start, or this node's GPUs run compute processes and busy is CHECK_BUSY_SKIP: 3; a profile of
 * another shape, or none of its sizes measured: 2), which is no verdict on the node. NULL after an
 * error that left nothing to judge, said, with *status 2 (the hardware file or the profile
 * unreadable, or a profile of another class with as much of each device) or 3 (this node not
 * mapped).
 */
json_t *check_run(const struct check_opts *o, int *status);

/* What --drain keeps of --deadline for its two Slurm commands (3 s each, 2 s each to stop). */
#define CHECK_DRAIN_S 10

/* The failures, one line each ("FAIL check: text"), then "NOT CHECKED host: text" when the check
 * could not be made, or else one "OK" line when nothing failed, to out. */
void check_print(const json_t *report, FILE *out);

/*
 * The report as Prometheus metrics: each size's busbw (topotune_busbw_bytes_per_second, source
 * measured or predicted) and band (topotune_expected_busbw_bytes_per_second, bound low, expected,
 * high), topotune_check_ok, topotune_check_failures, the profile's version
 * (topotune_profile_info) and the time of the check.
 */
void check_metrics(struct ops_metrics *m, const json_t *report);

#endif
