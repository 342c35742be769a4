/* SPDX-License-Identifier: MIT */
/* Jansson helpers: every output goes through one writer so files are always atomic. */
#include "util/json.h"
#include "util/error.h"
#include "util/file.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *util_json_str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

const char *util_json_str(const json_t *o, const char *key, const char *dflt)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : dflt;
}

json_t *util_json_count_or_null(long long v)
{
    return v < 0 ? json_null() : json_integer(v);
}

char *util_json_hash(const json_t *j)
{
    char *canon = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    unsigned long long h = 1469598103934665603ULL;
    for (const char *p = canon ? canon : ""; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    free(canon);
    char *out = util_xmalloc(20);
    if (out)
        snprintf(out, 20, "%016llx", h);
    return out;
}

const char *util_json_unknown_key(const json_t *obj, const char *const *allowed)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        const char *const *a = allowed;
        while (*a && strcmp(*a, key))
            a++;
        if (!*a)
            return key;
    }
    return NULL;
}

json_t *util_json_clean(const json_t *j)
{
    struct util_buf b = UTIL_BUF_INIT;
    json_t *out = NULL, *v;
    const char *k;
    size_t i;
    if (json_is_string(j)) {
        util_text_clean(&b, json_string_value(j), json_string_length(j), 0);
        out = json_stringn(util_buf_str(&b), b.len);
    } else if (json_is_array(j)) {
        out = json_array();
        json_array_foreach((json_t *)j, i, v)
            json_array_append_new(out, util_json_clean(v));
    } else if (json_is_object(j)) {
        out = json_object();
        json_object_foreach((json_t *)j, k, v)
            json_object_set_new(out, util_text_shown(&b, k), util_json_clean(v));
    } else if (j) {
        out = json_deep_copy(j);
    }
    util_buf_release(&b);
    return out;
}

json_t *util_json_shown(const char *s)
{
    struct util_buf b = UTIL_BUF_INIT;
    json_t *out = json_string(util_text_shown(&b, s));
    util_buf_release(&b);
    return out;
}

int util_json_set(json_t *obj, const char *key, json_t *value)
{
    return json_object_set_new(obj, key, value) ? UTIL_ENOMEM : 0;
}

int util_json_text(const char *path, const json_t *j, struct util_buf *out)
{
    char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    util_buf_reset(out);
    if (!text || util_buf_adds(out, text) || util_buf_adds(out, "\n")) {
        free(text);
        return util_error("cannot serialise JSON for '%s'", path ? path : "-"), UTIL_ENOMEM;
    }
    free(text);
    return 0;
}

int util_json_write(const char *path, const json_t *j)
{
    struct util_buf text = UTIL_BUF_INIT;
    int rc = util_json_text(path, j, &text);
    if (!rc && (!path || strcmp(path, "-") == 0))
        rc = fwrite(text.data, 1, text.len, stdout) == text.len ? 0 : UTIL_EIO;
    else if (!rc)
        rc = util_file_write_atomic(path, text.data, text.len);
    util_buf_release(&text);
    return rc;
}

static json_t *load(const char *path, int follow)
{
    struct util_buf text = UTIL_BUF_INIT;
    const char *why = NULL;
    int rc = util_file_read_input(path, follow, 64u << 20, &text, &why);
    if (rc) {
        util_error("cannot read '%s': %s", path, why ? why : util_strerror(rc));
        util_buf_release(&text);
        return NULL;
    }
    json_error_t err;
    json_t *j = json_loadb(util_buf_str(&text), text.len, JSON_REJECT_DUPLICATES, &err);
    if (!j)
        util_error("cannot parse '%s': line %d, column %d: %s", path, err.line, err.column,
                   err.text);
    util_buf_release(&text);
    return j;
}

json_t *util_json_load(const char *path)
{
    return load(path, 1);
}

json_t *util_json_load_regular(const char *path)
{
    return load(path, 0);
}
