/* SPDX-License-Identifier: MIT */
/* The commands ops/ prints and runs: one word at a time, quoted for a shell; run as argv. */
#include "ops/internal.h"
#include "util/child.h"
#include "util/error.h"
#include "util/file.h"
#include "util/quote.h"
#include "util/text.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/*
 * Runs argv under a deadline, stdout to out_path (when set), the rest to log_path. 0, or
 * UTIL_EENV with what went wrong in why (the command's last words where it left some).
 */
int ops_run(char **argv, const char *out_path, const char *log_path, double timeout_s,
            struct util_buf *why)
{
    struct util_child c = {
        .argv = argv, .log = log_path, .out = out_path, .timeout_s = timeout_s, .grace_s = 2};
    util_child_run(&c);
    if (c.exec_errno)
        util_buf_addf(why, "cannot run %s: %s (is it installed and in PATH?)", argv[0],
                      strerror(c.exec_errno));
    else if (c.timed_out)
        util_buf_addf(why, "%s did not answer within %.0f s (is its server up?)", argv[0],
                      timeout_s);
    else if (c.exit_code) {
        struct util_buf log = UTIL_BUF_INIT, shown = UTIL_BUF_INIT;
        if (log_path) /* its end: a long log's last lines */
            util_file_read_tail(log_path, 1 << 16, &log);
        size_t end = log.len, at = log.data ? util_text_tail(log.data, &end, 2) : 0;
        for (size_t i = at; log.data && i < end; i++) /* its last two lines, on one */
            util_buf_adds(&shown, log.data[i] == '\n' ? " / " : (char[2]){log.data[i], 0});
        util_buf_addf(why, "%s exited %d: %s", argv[0], c.exit_code,
                      util_text_shown(&log, util_buf_str(&shown)));
        util_buf_release(&log);
        util_buf_release(&shown);
    }
    return why->len ? UTIL_EENV : 0;
}

const char *ops_log_of(char buf[4200], const char *prefix, size_t i)
{
    if (!prefix)
        return NULL;
    snprintf(buf, 4200, "%.4000s.%zu", prefix, i);
    return buf;
}

int ops_valid_node(const char *name)
{
    if (!name || !((*name >= 'a' && *name <= 'z') || (*name >= 'A' && *name <= 'Z') ||
                   (*name >= '0' && *name <= '9')))
        return 0;
    return util_text_in_set(name, 253, "._-") && strcasecmp(name, "ALL") != 0;
}

static int alnum_lower(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

int ops_valid_k8s_node(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (!n || n > 253)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        /* a label's ends: the name's ends, and either side of a dot */
        int edge = i == 0 || i == n - 1 || name[i - 1] == '.' || name[i + 1] == '.';
        if (c == '.' ? i == 0 || i == n - 1 || name[i - 1] == '.'
                     : !(alnum_lower(c) || (c == '-' && !edge)))
            return 0;
    }
    return 1;
}

/* A word as a POSIX shell reads it back: as is when plain, else quoted. */
void ops_add_word(struct util_buf *b, const char *w)
{
    if (util_text_in_set(w, 4096, "._:=,/+-@%"))
        util_buf_adds(b, w);
    else
        util_quote_shell(b, w);
}
