/* SPDX-License-Identifier: MIT */
/* util_text_clean: valid UTF-8 without controls or escape sequences, for JSON and terminals. */
#include "util/text.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

/* The length of the valid UTF-8 character at s (n bytes left), its code point in *cp; 0: invalid
 * (overlong forms, surrogates and code points past U+10FFFF included). */
static size_t utf8_char(const unsigned char *s, size_t n, uint32_t *cp)
{
    size_t len;
    uint32_t v, min;
    if (s[0] < 0x80)
        return *cp = s[0], 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        len = 2, v = s[0] & 0x1f, min = 0x80;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        len = 3, v = s[0] & 0x0f, min = 0x800;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        len = 4, v = s[0] & 0x07, min = 0x10000;
    else
        return 0;
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return len;
}

/*
 * The length of the escape sequence at s (s[0] is ESC, n bytes left): CSI to
 * its final byte; OSC, DCS, SOS, PM and APC to BEL or ST; the others ESC,
 * intermediates and a final byte. One that does not end within 256 bytes or
 * before a newline is taken as ESC and its introducer only, so an unfinished
 * sequence cannot swallow the rest of a log.
 */
static size_t escape_len(const unsigned char *s, size_t n)
{
    size_t max = n < 256 ? n : 256, i;
    if (n < 2)
        return 1;
    if (s[1] == '[') {
        for (i = 2; i < max && s[i] >= 0x20 && s[i] <= 0x3f; i++)
            ;
        return i < max && s[i] >= 0x40 && s[i] <= 0x7e ? i + 1 : 2;
    }
    if (s[1] && strchr("]PX^_", s[1])) {
        for (i = 2; i < max && s[i] != '\n'; i++)
            if (s[i] == 0x07)
                return i + 1;
            else if (s[i] == 0x1b && i + 1 < n && s[i + 1] == '\\')
                return i + 2;
        return 2;
    }
    for (i = 1; i < max && s[i] >= 0x20 && s[i] <= 0x2f; i++)
        ;
    return i < max && s[i] >= 0x30 && s[i] <= 0x7e ? i + 1 : 1;
}

/* Characters that must not reach a terminal or a JSON string as they are. */
static int unsafe(uint32_t cp)
{
    return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) ||            /* C0, DEL, C1 */
           (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || /* bidi */
           cp == 0x2028 || cp == 0x2029; /* line and paragraph separators */
}

size_t util_text_clean(struct util_buf *out, const char *text, size_t len, int lines)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t changed = 0, i = 0;
    while (i < len) {
        uint32_t cp = 0;
        size_t n = utf8_char(s + i, len - i, &cp);
        if (n == 1 && cp == 0x1b) {
            i += escape_len(s + i, len - i);
            changed++;
        } else if (n == 1 && lines && (cp == '\n' || cp == '\t')) {
            util_buf_add(out, s + i++, 1);
        } else if (n == 1 && lines && cp == '\r') {
            if (++i == len || s[i] != '\n')
                util_buf_add(out, "\n", 1);
        } else if (n == 0 || unsafe(cp)) {
            util_buf_adds(out, REPLACEMENT);
            changed++;
            i += n ? n : 1;
        } else {
            util_buf_add(out, s + i, n);
            i += n;
        }
    }
    return changed;
}

const char *util_text_shown(struct util_buf *b, const char *s)
{
    util_buf_reset(b);
    util_text_clean(b, s ? s : "", s ? strlen(s) : 0, 0);
    return util_buf_str(b);
}

/* v with decimals decimals (0 to 9), commas between thousands; trailing zeros kept unless trim. */
static void grouped(struct util_buf *out, double v, int decimals, int trim)
{
    char digits[400];
    if (!isfinite(v)) {
        util_buf_adds(out, isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
        return;
    }
    decimals = decimals < 0 ? 0 : decimals > 9 ? 9 : decimals;
    int len = snprintf(digits, sizeof(digits), "%.*f", decimals, fabs(v));
    if (len < 0 || (size_t)len >= sizeof(digits))
        return;
    char *point = strchr(digits, '.');
    size_t whole = point ? (size_t)(point - digits) : (size_t)len;
    if (trim && point) {
        char *end = digits + len;
        while (end > point + 1 && end[-1] == '0')
            end--;
        if (end == point + 1)
            end = point;
        *end = '\0';
    }
    int zero = strspn(digits, "0.") == strlen(digits);
    if (v < 0 && !zero) /* no "-0" for a value that rounds to nothing */
        util_buf_adds(out, "-");
    for (size_t i = 0; i < whole; i++) {
        if (i && (whole - i) % 3 == 0)
            util_buf_adds(out, ",");
        util_buf_add(out, digits + i, 1);
    }
    util_buf_adds(out, digits + whole);
}

void util_text_number(struct util_buf *out, double v, int digits)
{
    double a = fabs(v);
    int decimals = 0;
    if (isfinite(a) && a > 0) {
        int magnitude = (int)floor(log10(a)); /* 1370: 3, 0.0137: -2 */
        decimals = digits - 1 - magnitude;
    }
    grouped(out, v, decimals, 1);
}

void util_text_fixed(struct util_buf *out, double v, int decimals)
{
    grouped(out, v, decimals, 0);
}

void util_text_wrap(struct util_buf *out, const char *first, const char *indent, const char *text,
                    size_t width)
{
    size_t col = strlen(first), start = col;
    util_buf_adds(out, first);
    while (*text) {
        size_t word = strcspn(text, " ");
        if (col > start && col + 1 + word > width) {
            util_buf_addf(out, "\n%s", indent);
            col = start = strlen(indent);
        } else if (col > start) {
            util_buf_add(out, " ", 1);
            col++;
        }
        util_buf_add(out, text, word);
        col += word;
        text += word;
        text += strspn(text, " ");
    }
    util_buf_add(out, "\n", 1);
}

void util_text_html(struct util_buf *out, const char *s)
{
    static const char *const entity[] = {
        ['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;", ['"'] = "&quot;", ['\''] = "&#39;"};
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < sizeof(entity) / sizeof(*entity) && entity[c])
            util_buf_adds(out, entity[c]);
        else
            util_buf_add(out, s, 1);
    }
}

int util_text_in_set(const char *s, size_t max, const char *extra)
{
    size_t n = strlen(s);
    if (n == 0 || n > max)
        return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              strchr(extra, *p)))
            return 0;
    return 1;
}

int util_valid_id(const char *s)
{
    return s && util_text_in_set(s, 128, "._-") && s[0] != '.' && s[0] != '-' && !strstr(s, "..");
}

int util_valid_host(const char *s)
{
    return s && util_text_in_set(s, 63, "._-");
}

int util_valid_version(const char *s)
{
    return s && util_text_in_set(s, 64, " .+~_:()-") && s[0] != ' ' && s[0] != '-';
}
