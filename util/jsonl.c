/* SPDX-License-Identifier: MIT */
/*
 * JSON Lines journals (util/jsonl.h): appended with a single write and fsync'ed, never
 * rewritten; a line torn by a kill is cut away only by the journal's owner.
 */
#include "util/jsonl.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/file.h"
#include "util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

json_t *util_jsonl_parse(const char *path, const char *data, size_t len, size_t *good)
{
    *good = 0;
    /* what parsing costs is the values, not the bytes ('[]' is 2 bytes and a whole value): a
     * hostile file is refused before Jansson builds 45 times its size */
    size_t values = 0;
    for (size_t i = 0; i < len; i++)
        values += data[i] == '[' || data[i] == '{' || data[i] == ',';
    if (values > UTIL_JSONL_MAX_VALUES)
        return util_error("'%s': more than %d JSON values, far more than a sweep or survey "
                          "writes: not topotune's journal, or damaged",
                          path, UTIL_JSONL_MAX_VALUES),
               NULL;
    json_t *runs = json_array();
    size_t line = 1;
    for (size_t at = 0; at < len; line++) {
        const char *start = data + at, *nl = memchr(start, '\n', len - at);
        if (!nl)
            break; /* no newline: torn by a kill, the caller decides */
        if (line > UTIL_JSONL_MAX_LINES) {
            util_error("'%s': more than %d lines, far more than a sweep or survey writes: not "
                       "topotune's journal, or damaged",
                       path, UTIL_JSONL_MAX_LINES);
            json_decref(runs);
            return NULL;
        }
        json_error_t err;
        json_t *r = json_loadb(start, (size_t)(nl - start), JSON_REJECT_DUPLICATES, &err);
        if (!json_is_object(r)) {
            if (r)
                util_error("'%s': line %zu: not a JSON object (every record is one): restore the "
                           "file or make it again",
                           path, line);
            else
                util_error("'%s': line %zu is damaged (%s): only a torn last line may be cut; "
                           "restore the file or make it again",
                           path, line, err.text);
            json_decref(r);
            json_decref(runs);
            return NULL;
        }
        json_array_append_new(runs, r);
        at = (size_t)(nl - data) + 1;
        *good = at;
    }
    return runs;
}

json_t *util_jsonl_load(const char *path, enum util_jsonl_mode mode)
{
    struct util_buf text = UTIL_BUF_INIT;
    const char *why = NULL;
    int rc = util_file_read_regular(path, 1u << 30, &text, &why);
    if (rc) {
        util_buf_release(&text);
        if (rc == UTIL_ENOENT)
            return json_array();
        return util_error("cannot read '%s': %s", path, why), NULL;
    }
    size_t good;
    json_t *runs = util_jsonl_parse(path, text.data ? text.data : "", text.len, &good);
    if (runs && good < text.len && mode == UTIL_JSONL_READ) {
        util_warning("'%s': leaving out a torn last line (%zu bytes): its writer was interrupted "
                     "or is still running; its --resume repairs it",
                     path, text.len - good);
    } else if (runs && good < text.len) {
        /* O_NOFOLLOW: the cut lands on the file that was read, never through a link */
        int fd = util_file_open_output(path, UTIL_FILE_APPEND, &why);
        if (fd < 0 || ftruncate(fd, (off_t)good)) {
            util_error("cannot repair '%s': %s", path, fd < 0 ? why : strerror(errno));
            json_decref(runs);
            runs = NULL;
        } else {
            util_warning("'%s': cut a torn last line (%zu bytes) left by an interrupted writer",
                         path, text.len - good);
        }
        if (fd >= 0)
            close(fd);
    }
    util_buf_release(&text);
    return runs;
}

int util_jsonl_append(const char *path, const json_t *result)
{
    char *line = json_dumps(result, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!line) /* not serializable (Jansson's memory is util_xmalloc's) */
        return util_error("cannot write to '%s': a document that is no JSON", path), UTIL_EINVAL;
    size_t len = strlen(line);
    const char *why = NULL;
    int fd = util_file_open_output(path, UTIL_FILE_APPEND, &why);
    off_t before = fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
    struct util_buf b = UTIL_BUF_INIT;
    util_buf_add(&b, line, len);
    util_buf_add(&b, "\n", 1);
    free(line);
    ssize_t n = fd >= 0 ? write(fd, b.data, b.len) : -1;
    int err = fd < 0                ? errno
              : n != (ssize_t)b.len ? (n < 0 ? errno : ENOSPC)
              : fsync(fd)           ? errno
                                    : 0;
    if (err && fd >= 0 && before >= 0 && ftruncate(fd, before)) /* never leave a torn line */
        err = err ? err : errno;
    if (fd >= 0)
        close(fd);
    util_buf_release(&b);
    if (err)
        return util_error("cannot append to '%s': %s: the results so far are intact", path,
                          fd < 0 && why ? why : strerror(err)),
               UTIL_EIO;
    return 0;
}
