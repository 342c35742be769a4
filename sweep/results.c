/* SPDX-License-Identifier: MIT */
/*
 * DIR/results.jsonl: one line per run, appended with a single write and
 * fsync'ed before the next run starts, never rewritten. A line torn by a kill
 * is cut away when the sweep resumes, so the file only ever holds whole lines.
 */
#include "bench/bench.h"
#include "sweep/sweep.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/file.h"
#include "util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

json_t *sweep_results_load(const char *path)
{
    json_t *runs = json_array();
    struct util_buf text = UTIL_BUF_INIT;
    int rc = util_file_read(path, 1u << 30, &text);
    if (rc) {
        util_buf_release(&text);
        return rc == UTIL_ENOENT ? runs : (json_decref(runs), NULL);
    }
    size_t good = 0; /* bytes of whole, parsable lines */
    for (size_t at = 0; at < text.len;) {
        const char *line = text.data + at, *nl = memchr(line, '\n', text.len - at);
        if (!nl)
            break; /* no newline: torn by a kill */
        json_t *r = json_loadb(line, (size_t)(nl - line), 0, NULL);
        if (!r)
            break;
        json_array_append_new(runs, r);
        at = (size_t)(nl - text.data) + 1;
        good = at;
    }
    if (good < text.len) {
        warning("'%s': cutting a torn last line (%zu bytes) left by an interrupted sweep", path,
                text.len - good);
        if (truncate(path, (off_t)good)) {
            error("cannot repair '%s': %s", path, strerror(errno));
            json_decref(runs);
            runs = NULL;
        }
    }
    util_buf_release(&text);
    return runs;
}

int sweep_results_append(const char *path, const json_t *result)
{
    char *line = json_dumps(result, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!line)
        return UTIL_ENOMEM;
    size_t len = strlen(line);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
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
        return error("cannot append to '%s': %s: the results so far are intact", path,
                     strerror(err)),
               UTIL_EIO;
    return 0;
}
