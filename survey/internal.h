/* SPDX-License-Identifier: MIT */
/* What survey/ shares internally. */
#ifndef SURVEY_INTERNAL_H
#define SURVEY_INTERNAL_H

#include "survey/survey.h"

/*
 * One launch of the n groups (whole: the n groups' first nodes as one communicator), replayed
 * from DIR/launches.jsonl on --resume, else made by the probe and appended there. 0 with busbw
 * (n numbers, or one when whole), 1 when it failed or hung, or an error code.
 */
int survey_launch(struct survey *s, const char *stage, const struct survey_group *g, int n,
                  int whole, double *busbw);

/*
 * The level of a class from its values v[0..n) (those <= 0, failed or not measured, left out),
 * that the slow ones cannot drag down however many they are: the median of the values within
 * the tolerance below the anchor, the value an eighth of them reach (two at least).
 */
struct survey_level {
    double level;   /* GB/s of the healthy population; 0 when no value */
    double spread;  /* its relative sigma (1.4826 x the MAD of the logarithms above the level) */
    double bound;   /* below it, slow: the tolerance or three spreads below the level */
    int support;    /* values in the healthy population */
    int values;     /* values > 0 */
    double cut;     /* below it, short of the tolerance (bound where the noise is narrow) */
    int too_spread; /* under a third of the values back the level: the class cannot be judged */
    int wide;       /* the noise hides twice the tolerance: values below bound are judged, those
                       between bound and cut cannot be (neither slow nor healthy) */
    double own, own_bound; /* a class whose level was raised to the model's (slow all over in
                            * pairs): its own level and bound before that; 0 otherwise */
};
void survey_level_of(const double *v, int n, double tolerance, struct survey_level *out);
/* 1 when every pair of class cls's nodes was measured (--pairs all, or a small class whose
 * matchings met them all): no route between them went unmeasured. */
int survey_every_pair(const struct survey *s, const char *cls);

/* The spread of n values (logarithms) about center, robust to a low tail however long: 1.4826 x
 * the median distance of those above it (a normal's sigma, center its median); 0 where fewer
 * than 4 are above it (too few to say). */
double survey_upper_spread(const double *x, int n, double center);

/*
 * Each node's capacity (GB/s; 0: no pair measured) fitted from the pairs (a pair runs at its
 * slower node's speed): the median of its pairs with partners no slower than itself, "no slower"
 * meaning within the tolerance, or within window[i] (a log ratio) where window is not NULL.
 * Failed pairs and pairs of a bisected launch (lighter load) are left out.
 */
void survey_capacities(int nnodes, const struct survey_pair *pairs, int npairs, double tolerance,
                       const double *window, double *cap);

/*
 * New reference: the facts of a node class from its key (topology "class"."key"): gpu_model,
 * gpus, nics, nic_gbps (their speeds summed), nvlinks (the matrix's NVk summed), nvswitches.
 */
json_t *survey_class_facts(const json_t *key);

/*
 * New reference: {fact: [a's, b's]} for each fact of a that b does not share. *lesser (when
 * not NULL): 1 when every difference is a count of a below b's (a part lost), else 0.
 */
json_t *survey_facts_differ(const json_t *a, const json_t *b, int *lesser);

/*
 * busbw (GB/s) the model predicts for all_reduce of bytes on nodes nodes of t, a rank per GPU,
 * with NCCL's defaults; *time_us (when not NULL) the time per call. -1 where it predicts none (no
 * GPU, a fault at the defaults).
 */
struct topo;
double survey_model_busbw(const struct topo *t, int nodes, size_t bytes, double *time_us);

/* Where a level falls short of the model's prediction model at s's size: the sim's numbers are
 * the model's, so within s's tolerance of it; measured ones keep the model's own error as their
 * margin, the band's low edge (model_band_at). */
struct survey;
double survey_model_floor(const struct survey *s, double model);

/* Below it a node alone falls short of its class's prediction model: under the band's low edge
 * (the model's measured error) and by more than s's tolerance, so a node named is both. */
double survey_alone_low(const struct survey *s, double model);

/* 1 when node i has a node verdict (it stays out of healthy.hostfile and the whole-cluster run). */
int survey_excluded(const struct survey *s, int i);

/*
 * Removes what an earlier survey left in DIR (survey.json, healthy.hostfile, excluded.txt, the
 * reports; with record, launches.jsonl too): a survey that then fails leaves nothing that looks
 * current. Links are removed, never followed. 0, or UTIL_EIO after naming the file.
 */
int survey_outputs_clear(const struct survey *s, int record);

/*
 * DIR/launches.jsonl into s->recorded for --resume, after checking every line: each field of
 * its type, range and length, and its settings equal to s->settings. 0, UTIL_EINVAL after an
 * error naming the file, line and field (nothing is replayed), or UTIL_EIO.
 */
int survey_record_load(struct survey *s);

#endif
