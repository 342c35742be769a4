/* SPDX-License-Identifier: MIT */
/*
 * What a healthy system should measure (`topotune expect`): a collective's busbw and time per size
 * with a band (all_reduce, or any nccl-tests collective the model prices), from the model (a
 * topology, a hardware spec or the live node: every number predicted, the band the model's
 * measured error for that collective, model_band_for) or from a profile's measured all_reduce
 * runs of the class (every number measured, the band the runs' spread). And the same expectation
 * in the forms validators read: nccl-tests' NCCL_TESTS_MIN_BW, Prometheus alerting rules over
 * the metrics topotune exports, an LBNL NHC check function. Errors follow util/error.h.
 */
#ifndef EXPECT_EXPECT_H
#define EXPECT_EXPECT_H

#include "model/model.h"
#include "topo/topo.h"

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* One size's expectation: busbw (GB/s) and its band, time (us) and its band (the slower time
 * at the low busbw). algo and proto: the model's choice, or the profile's last run's ("" when
 * the profile does not say). */
struct expect_row {
    size_t bytes;
    double busbw, low, high;
    double time_us, time_low_us, time_high_us;
    char algo[16], proto[16];
};

struct expect {
    int coll;               /* the collective (enum model_coll; a profile's: all_reduce) */
    int measured;           /* 1: from a profile's runs; 0: predicted by the model */
    char basis[5632];       /* where the numbers and the band come from, in words (with the
                             * calibration file's path) */
    char class_id[256];     /* the node class ("" when unknown; ids reach 200 characters) */
    int class_of_no_node;   /* 1: class_id is a hardware spec's or NCCL topology file's, which no
                             * live node's class is (its matrix and CPU are made up or absent) */
    char source[4096];      /* the input as the user named it, or "this node" (a path any file
                             * opens: 511 bytes cut a longer one into a name of no file) */
    char calibration[4096]; /* the calibration file of the model's parameters ("": defaults) */
    char env[512];          /* the configuration predicted: NAME=VALUE words ("": NCCL's defaults;
                             * each checked, cli_env_check: no space, quoted in a script) */
    int nodes, ppn, nranks; /* machines, the GPUs of each (a GB200 tray: 4), ranks */
    double rate;            /* the share of healthy measurements the band holds */
    size_t min, max;        /* the sizes asked for (nccl-tests' -b, -e) and their factor (-f); */
    int factor;             /* factor 0: a profile's sizes, as it measured them */
    size_t first;           /* the size asked for that made the first row: sizes below it hold no
                             * part for every rank (all_gather on many ranks), runs of 0 busbw */
    struct expect_row *rows;
    int n;
};

/* The size nccl-tests (and topotune-bench) runs when asked for bytes of all_reduce floats: a
 * whole number of them (64000001 -> 64000000); 0 below one. */
size_t expect_run_size(size_t bytes);

/* The size nccl-tests runs when asked for bytes of collective coll on nranks ranks: whole floats,
 * and for all_gather, reduce_scatter and alltoall 16-byte parts of every rank; 0 when none. */
size_t expect_coll_run_size(size_t bytes, int coll, int nranks);

/* The model's expectation of collective coll at the sizes min .. max growing factor times
 * (nccl-tests' -b -e -f), of the configuration env (the NAME=VALUE words m was made with, space
 * separated; NULL or "": NCCL's defaults). 0; EXPECT_FAULT when the model predicts a fault (a
 * hang, an error, wrong results or no usable algorithm at a size: said with the reason), a
 * verdict on the configuration, not an error; UTIL_EINVAL when it knows none of the GPUs'
 * models, or no size lies in min .. max. */
#define EXPECT_FAULT 1
int expect_predicted(struct expect *e, const struct model *m, const struct topo *t,
                     const char *source, const char *env, int coll, size_t min, size_t max,
                     int factor);

/*
 * The measured expectation of a profile (a profile directory or its profile.json): its
 * configuration's per-size busbw (the winner's, else the defaults'), at the sizes of min .. max it
 * measured, each with the band busbw x (1 -+ max(EXPECT_MEASURED_MIN_MARGIN, 3 x its runs'
 * coefficient of variation)); a profile of the sim backend's runs (predicted true) is a
 * prediction, with the model's band (model_band_for). 0, or UTIL_EINVAL (said, naming the file
 * and field).
 */
#define EXPECT_MEASURED_MIN_MARGIN 0.05
int expect_measured(struct expect *e, const char *profile, size_t min, size_t max);

void expect_release(struct expect *e);

/* A new reference: the expectation as JSON (schema topotune/expect/1, docs/schemas/expect). */
json_t *expect_json(const struct expect *e);

/* The table, every number labelled predicted or measured. */
void expect_print(const struct expect *e, FILE *out);

/*
 * The NCCL_TESTS_MIN_BW that makes nccl-tests (and topotune-bench) fail below the band: both fail
 * a run when its "Avg bus bandwidth", the mean busbw over every size and both placements, is below
 * 0.9 x NCCL_TESTS_MIN_BW (nccl-tests src/common.cu). So: the mean of the rows' low busbw / 0.9,
 * for a run at exactly these sizes. It is the mean that is judged, not each size: a run whose
 * large sizes sit high can hide small sizes below their band.
 */
#define EXPECT_NCCL_TESTS_MIN_BW_FACTOR 0.9
double expect_nccl_tests_min_bw(const struct expect *e);

/* That figure as text into buf: two decimals from 10 GB/s, four significant digits below (two
 * decimals would cut 0.0124 to 0.01, or 0.004 to 0.00, a check that cannot fail). */
const char *expect_min_bw_text(const struct expect *e, char buf[32]);

/* Prometheus alerting rules (promtool check rules) over topotune_busbw_bytes_per_second, the
 * metric topotune exports per class, collective and size (docs/design.md, "Metrics"): one alert
 * per size below its band's low edge. 0, or UTIL_EIO when out fails. */
int expect_write_prometheus_rules(const struct expect *e, FILE *out);

/*
 * An LBNL NHC check (bash, NHC's calling convention: a function check_topotune_COLL_CLASS, one
 * name a collective and class, that calls NHC's die with a message and returns 1 on failure) that
 * runs topotune-bench at the band's sizes and fails when the Avg bus bandwidth is below the
 * NCCL_TESTS_MIN_BW figure, followed by the nhc.conf line that calls it; a node whose GPUs run a
 * job passes unmeasured. 0, or UTIL_EIO when out fails.
 */
int expect_write_nhc(const struct expect *e, FILE *out);

/* 0 when the expectation can make a check that fails (the exports above), else UTIL_EUSAGE, said:
 * one rank (busbw is 0, so no run is below it). */
int expect_checkable(const struct expect *e);

/* nccl-tests' -b, -e and -f that run exactly the rows' sizes (NCCL_TESTS_MIN_BW judges the mean
 * over one run's sizes): those asked for from the first that holds a row (nccl-tests runs the
 * smaller ones too, at a busbw of 0 that its mean counts), or a profile's when they are its first
 * size times the powers of one factor. 0, or UTIL_EUSAGE, said. */
int expect_series(const struct expect *e, size_t *min, size_t *max, int *factor);
/* The same without the error message: UTIL_EUSAGE or 0. */
int expect_series_quiet(const struct expect *e, size_t *min, size_t *max, int *factor);

#endif
