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

#endif
