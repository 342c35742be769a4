/* SPDX-License-Identifier: MIT */
/* Text from children and files made safe for JSON and a terminal. */
#ifndef UTIL_TEXT_H
#define UTIL_TEXT_H

#include "util/buf.h"

#include <stddef.h>

/*
 * Appends len bytes of text to out as text safe in JSON and on a terminal:
 * valid UTF-8 without control characters. Terminal escape sequences (ESC and
 * what it introduces, to the sequence's end) are removed; NUL, other C0 and C1
 * controls, DEL, bidirectional overrides and bytes that are not UTF-8 each
 * become U+FFFD. With lines, newline and tab stay and a lone carriage return
 * becomes a newline (CR LF is one newline); without, they become U+FFFD too.
 * Returns how many characters were replaced or removed.
 */
size_t util_text_clean(struct util_buf *out, const char *text, size_t len, int lines);

/*
 * Appends text broken at spaces into lines of at most width columns (a longer word stands alone
 * on its line), then a newline: the first line after first, the others after indent.
 */
void util_text_wrap(struct util_buf *out, const char *first, const char *indent, const char *text,
                    size_t width);

/*
 * Cleans s (NULL reads as "") as util_text_clean does without lines into b, which it empties
 * first, and returns b's text: a string from a file or a node, made one safe line for a message
 * or a report. The text lives in b until b is reset or released.
 */
const char *util_text_shown(struct util_buf *b, const char *s);

/*
 * Appends v as people write numbers in a report: without an exponent, the integer part whole
 * with a comma every three digits, and as many decimals as digits significant digits need
 * (trailing zeros dropped): 1370.4 -> "1,370", 13.704 -> "13.7", 0.013704 -> "0.0137" for 3
 * digits. util_text_fixed writes exactly decimals decimals (1234.5 -> "1,234.50" for 2).
 * Infinities and NaN read "inf", "-inf" and "nan"; at most 9 decimals.
 */
void util_text_number(struct util_buf *out, double v, int digits);
void util_text_fixed(struct util_buf *out, double v, int decimals);

/* Appends s as HTML text, also safe in a quoted attribute: & < > " ' as entities. */
void util_text_html(struct util_buf *out, const char *s);

/* 1 when s is 1 to max characters, each a letter or digit of ASCII or one of extra. */
int util_text_in_set(const char *s, size_t max, const char *extra);
/* Names that files and directories are made of: node class and configuration ids are
 * [A-Za-z0-9._-], at most 128, not starting with '.' or '-', no "..": safe as one path
 * component. Versions: [A-Za-z0-9 .+~_:()-], at most 64. 1 when valid (NULL is not). */
int util_valid_id(const char *s);
int util_valid_version(const char *s);
/* A host name a node reports for itself (gethostname: at most 64 bytes; the benchmark's --split
 * takes 63) and every reader may take as it is: [A-Za-z0-9._-], 1 to 63. 1 when valid. */
int util_valid_host(const char *s);

#endif
