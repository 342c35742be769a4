/* SPDX-License-Identifier: MIT */
/*
 * Writing a value into a generated file by that format's own quoting rules, so
 * that whatever a value holds it stays one value: never a second line, a
 * command, a YAML document or a CSV column. Each appends to out.
 */
#ifndef UTIL_QUOTE_H
#define UTIL_QUOTE_H

#include "util/buf.h"

/* A POSIX shell word: 'value', a single quote written as '\''. */
void util_quote_shell(struct util_buf *out, const char *s);

/* A YAML double-quoted scalar: "value", with \\ \" and \xNN for control characters. */
void util_quote_yaml(struct util_buf *out, const char *s);

/* A Dockerfile ENV value: "value" with \\ \" \$ escaped; control characters become '?'
 * (a Dockerfile value cannot hold a newline). */
void util_quote_dockerfile(struct util_buf *out, const char *s);

/* A CSV field (RFC 4180): as is when plain, else "value" with "" for a quote. */
void util_quote_csv(struct util_buf *out, const char *s);

/* Text for a comment line: printable ASCII kept, anything else (newline included) as '?'. */
void util_quote_comment(struct util_buf *out, const char *s);

#endif
