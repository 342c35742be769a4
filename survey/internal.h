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
