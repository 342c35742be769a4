/* SPDX-License-Identifier: MIT */
/* Helpers shared by verify's predicted (verify.c) and measured (measured.c) comparisons. */
#ifndef VERIFY_INTERNAL_H
#define VERIFY_INTERNAL_H

#include "util/buf.h"

#include <jansson.h>

/* The profile's variables as NAME -> value (a new object); with system_only, only those of role
 * "system" (what cured a failing default or names the fabric: the reference runs with them).
 * NULL after an error naming one that a sweep could not have set (util_env_refused, or a value
 * not of sweep_valid_value's characters): verify neither runs nor models nor prints it. */
json_t *verify_variables(const json_t *profile, int system_only);

/* "NAME=value, NAME=value" of an env object, appended to out, for the header. */
void verify_env_words(const json_t *env, struct util_buf *out);

/* The gain of a over b in percent; 0 when b is not positive. */
double verify_gain(double a, double b);

struct tuner_table;
/* The table's rows for collective coll (enum model_coll) into *own, each other collective's into
 * others (indexed by enum tuner_coll, TUNER_NUM_COLLS of them). */
void verify_count_rows(const struct tuner_table *t, int coll, size_t *own, size_t *others);
/* The header lines naming each other collective with rows, and the -C that shows them. */
void verify_print_others(const size_t *others);

#endif
