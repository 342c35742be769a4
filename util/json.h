/* SPDX-License-Identifier: MIT */
/* Small helpers over Jansson: nullable values, and writing or reading a JSON file. */
#ifndef UTIL_JSON_H
#define UTIL_JSON_H

#include "util/buf.h"

#include <jansson.h>

/* New reference: s as a JSON string, or JSON null when s is NULL. */
json_t *util_json_str_or_null(const char *s);
/* The string at key in o, or dflt when o has none there (missing, null, not a string). */
const char *util_json_str(const json_t *o, const char *key, const char *dflt);
/* New reference: v as a JSON integer, or null when v is negative (unknown). */
json_t *util_json_count_or_null(long long v);

/*
 * A stable fingerprint of j: 16 hex digits of FNV-1a over its compact, key-sorted
 * serialisation. The caller frees the string with free().
 */
char *util_json_hash(const json_t *j);

/*
 * New reference: a deep copy of j whose strings and object keys are cleaned as util_text_clean
 * does without lines (no control character, escape sequence or line break): a document from a
 * file made safe to print anywhere. NULL when j is NULL.
 */
json_t *util_json_clean(const json_t *j);
/* New reference: s (NULL reads as "") as a JSON string cleaned as util_text_shown cleans it. A
 * name or path of any bytes (a host name, a path the user gave) that json_string or json_pack
 * would refuse as not UTF-8, losing the whole value it was part of. */
json_t *util_json_shown(const char *s);

/* The first key of obj that is none of allowed (NULL-terminated), or NULL: a file's misspelt or
 * unknown field, for its reader's error. */
const char *util_json_unknown_key(const json_t *obj, const char *const *allowed);

/* Sets key in obj, stealing the reference to value; returns 0 or UTIL_ENOMEM. */
int util_json_set(json_t *obj, const char *key, json_t *value);

/*
 * Serialises j (indented, a final newline) to path, or to stdout when path is
 * NULL or "-". Files are written atomically. Returns 0 or UTIL_EIO.
 */
int util_json_write(const char *path, const json_t *j);

/* j as util_json_write writes it, into out (replaced). 0, or UTIL_ENOMEM after an error naming
 * path, the file it is for. */
int util_json_text(const char *path, const json_t *j, struct util_buf *out);

/*
 * Reads a JSON document of at most 64 MiB from path, a regular file the user
 * named (util_file_open_input: a FIFO or device is refused, a link followed).
 * Returns a new reference, or NULL after printing an error that names the file,
 * line and column, or what the path is.
 */
json_t *util_json_load(const char *path);

/* util_json_load of a file found inside a folder: a symbolic link is refused too. */
json_t *util_json_load_regular(const char *path);

#endif
