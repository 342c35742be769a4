/* SPDX-License-Identifier: MIT */
/* Quoting for generated files: shell, YAML, Dockerfile, CSV and comment text. */
#include "util/quote.h"

#include <string.h>

static int printable(unsigned char c)
{
    return c >= 0x20 && c < 0x7f;
}

void util_quote_shell(struct util_buf *out, const char *s)
{
    util_buf_adds(out, "'");
    for (const char *p = s; *p; p++) {
        if (*p == '\'')
            util_buf_adds(out, "'\\''");
        else
            util_buf_add(out, p, 1);
    }
    util_buf_adds(out, "'");
}

void util_quote_yaml(struct util_buf *out, const char *s)
{
    util_buf_adds(out, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            util_buf_addf(out, "\\%c", *p);
        else if (!printable(*p))
            util_buf_addf(out, "\\x%02x", *p);
        else
            util_buf_add(out, (const char *)p, 1);
    }
    util_buf_adds(out, "\"");
}

void util_quote_dockerfile(struct util_buf *out, const char *s)
{
    util_buf_adds(out, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\' || *p == '$')
            util_buf_addf(out, "\\%c", *p);
        else
            util_buf_add(out, printable(*p) ? (const char *)p : "?", 1);
    }
    util_buf_adds(out, "\"");
}

void util_quote_csv(struct util_buf *out, const char *s)
{
    if (!s[strcspn(s, ",\"\r\n")]) {
        util_buf_adds(out, s);
        return;
    }
    util_buf_adds(out, "\"");
    for (const char *p = s; *p; p++)
        util_buf_adds(out, *p == '"' ? "\"\"" : (char[]){*p, '\0'});
    util_buf_adds(out, "\"");
}

void util_quote_comment(struct util_buf *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        util_buf_add(out, printable(*p) ? (const char *)p : "?", 1);
}
