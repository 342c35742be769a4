/* SPDX-License-Identifier: MIT */
/* What sweep/ shares internally: one supervised, recorded run, and the strategies built on it. */
#ifndef SWEEP_INTERNAL_H
#define SWEEP_INTERNAL_H

#include "sweep/sweep.h"

/* One run to make: a configuration at a repetition (final, full effort) or an exploration rung. */
struct planned_run {
    json_t *config; /* {id, env} */
    int rep, rung, iters, final;
};

/*
 * Runs r unless a finished run of it (config id, rep, rung) is on file, and appends its result
 * to DIR/results.jsonl; *result is the run's result either way (borrowed). 0, UTIL_EIO, or
 * UTIL_EINTR when a signal came (util_child_supervise): the run it cut is not recorded.
 */
int sweep_measure(struct sweep *sw, const struct planned_run *r, json_t **result);

/*
 * The strategies (sweep/strategy.c): which configurations of sw->configs are measured, and how
 * often. Each returns what sweep_measure returned first that was not 0, else 0.
 * grid: every configuration `repeat` times.
 * halving: all at low effort, the better half goes on at twice the effort, until the survivors
 *   (the baseline always among them) are measured `repeat` times.
 * descent: one variable at a time from the defaults (or their cure), for spaces too large to try.
 */
int sweep_run_grid(struct sweep *sw);
int sweep_run_halving(struct sweep *sw);
int sweep_run_descent(struct sweep *sw);

/* The longest name ("NCCL_" and 59 more) and value sweep.json's "inherited" holds. */
#define SWEEP_INHERITED_NAME_MAX  64
#define SWEEP_INHERITED_VALUE_MAX 4096
/* A name sweep.json's "inherited" may hold: NCCL_ and capitals, digits, '_' (NCCL's own). */
int sweep_inherited_name(const char *name);

#endif
