/* SPDX-License-Identifier: MIT */
/*
 * JSON Lines journals: a sweep's results.jsonl, a survey's launches.jsonl, a run's events. One
 * JSON document per line, appended whole and fsync'ed before the next, never rewritten, so a
 * kill can leave at most a torn last line (no newline): readers leave it out, the journal's
 * owner (a --resume) cuts it away. Any other unparsable line is damage.
 */
#ifndef UTIL_JSONL_H
#define UTIL_JSONL_H

#include <jansson.h>
#include <stddef.h>

/*
 * The documents of the journal at path, as a new array: READ leaves a torn last line out with a
 * warning, REPAIR (the owner) cuts it from the file and says so. A damaged line is an error
 * naming it: NULL. The file is opened only if it is a regular file reached without a symbolic
 * link; a missing file is an empty array.
 */
enum util_jsonl_mode { UTIL_JSONL_READ, UTIL_JSONL_REPAIR };
json_t *util_jsonl_load(const char *path, enum util_jsonl_mode mode);

/* The whole, parsable lines of data (named path in messages) as an array; *good: their bytes (a
 * torn last line is not among them). NULL after an error naming a damaged line: one that is not
 * a JSON object (every journal's record is one), or one past UTIL_JSONL_MAX_LINES (a hostile
 * file of tiny lines took 45 times its size in memory, 46 GB at the 1 GiB a journal may be). */
#define UTIL_JSONL_MAX_LINES 2000000
/* and at most this many values in all (each '[', '{' or ','), one line's or the file's: a line
 * of nested empty arrays costs as much memory as as many lines */
#define UTIL_JSONL_MAX_VALUES 16000000
json_t *util_jsonl_parse(const char *path, const char *data, size_t len, size_t *good);

/* Appends doc as one line, with fsync; on failure nothing of the line stays. 0 or UTIL_EIO
 * (UTIL_EINVAL for a doc Jansson cannot write). */
int util_jsonl_append(const char *path, const json_t *doc);

#endif
