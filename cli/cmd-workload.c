/* SPDX-License-Identifier: MIT */
/*
 * `topotune workload`: what a job communicates, as weights over (collective, size), from a real
 * job's NCCL COLL log or a preset (workload/); a table, or the document (topotune/workload/1).
 */
#include "cli/cli.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/file.h"
#include "util/log.h"
#include "util/opts.h"
#include "util/text.h"
#include "workload/workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "--from-nccl-log [--ranks N] FILE [FILE...] | --preset dp|fsdp|tp|moe [--json] [--out FILE]\n\n"
    "What a job communicates, per collective and size (nccl-tests' sizes), with weights: from a\n"
    "real job's log (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL: calls per rank and bytes), or a\n"
    "preset mix, labelled assumed. A table, --json the document, --out FILE writes it.";

static void table(const json_t *doc)
{
    printf("# workload (%s)%s\n", json_string_value(json_object_get(doc, "from")),
           json_is_true(json_object_get(doc, "assumed")) ? ": ASSUMED, not measured" : "");
    printf("#%-15s %14s %14s %8s\n", "collective", "size (B)", "calls/rank", "weight");
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(doc, "entries"), i, e) {
        json_t *calls = json_object_get(e, "calls");
        struct util_buf c = UTIL_BUF_INIT, w = UTIL_BUF_INIT; /* 1,000,000, never 1e+06 */
        if (calls)
            util_text_number(&c, json_number_value(calls), 7);
        /* a real entry's weight never reads 0.0000: three significant digits below it */
        double weight = json_number_value(json_object_get(e, "weight"));
        weight > 0 && weight < 0.001 ? util_text_number(&w, weight, 3)
                                     : util_buf_addf(&w, "%.4f", weight);
        printf(" %-15s %14lld %14s %8s\n", json_string_value(json_object_get(e, "collective")),
               (long long)json_integer_value(json_object_get(e, "size")),
               calls ? util_buf_str(&c) : "-", util_buf_str(&w));
        util_buf_release(&c);
        util_buf_release(&w);
    }
}

int cmd_workload(int argc, char **argv)
{
    int from_log = 0, json = 0, npos = 0, status, ranks = 0;
    const char *preset = NULL, *out = NULL;
    const struct util_opt opts[] = {
        {"from-nccl-log", 0, UTIL_OPT_FLAG, &from_log, NULL,
         "read the NCCL log files given as arguments"},
        {"preset", 0, UTIL_OPT_CHOICE, &preset, "NAME", "an assumed mix: dp, fsdp, tp or moe",
         .choices = "dp fsdp tp moe"},
        {"ranks", 0, UTIL_OPT_INT, &ranks, "N",
         "keep the calls of communicators of N ranks only (the one the sweep measures)", .min = 2,
         .max = 1 << 24},
        {"json", 0, UTIL_OPT_FLAG, &json, NULL, "print the document (topotune/workload/1)"},
        {"out", 'o', UTIL_OPT_STRING, &out, "FILE",
         "write the document there (replaced whole; - for standard output)"},
        {0},
    };
    const struct util_opts_cmd cmd = {"topotune workload", usage, opts, -1, 0};
    if (cli_parse(&cmd, argc, argv, &npos, &status))
        return status;
    if (from_log && preset)
        return util_error("--from-nccl-log and --preset both given: give one (a job's logs, or "
                          "a preset's mix)"),
               2;
    if (from_log && !npos)
        return util_error("--from-nccl-log needs the log files: --from-nccl-log FILE..."), 2;
    if (preset && npos)
        return util_error("--preset %s takes no files ('%s' given): drop them, or give "
                          "--from-nccl-log instead",
                          preset, argv[1]),
               2;
    if (!from_log && !preset)
        return util_error("give --from-nccl-log FILE... or --preset NAME"), 2;
    for (int i = 0; out && i < npos; i++)
        if (util_file_same(argv[1 + i], out)) /* the log would be replaced by its workload */
            return util_error("--out '%s' is one of the logs read: give the workload another "
                              "name",
                              out),
                   2;
    if (ranks && !from_log)
        return util_error("--ranks picks a communicator's calls out of NCCL logs: give it with "
                          "--from-nccl-log"),
               2;
    json_t *doc = preset ? workload_preset(preset) : workload_from_nccl_logs(argv + 1, npos, ranks);
    if (!doc)
        return 2;
    int rc = 0;
    if (out && !strcmp(out, "-")) { /* the document on stdout, as --json */
        out = NULL;
        json = 1;
    }
    if (out) {
        char *text = json_dumps(doc, JSON_INDENT(1) | JSON_REAL_PRECISION(8));
        rc = text && !util_file_write_atomic(out, text, strlen(text)) ? 0 : 1;
        free(text);
    }
    if (json) {
        json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(8));
        putchar('\n');
    } else if (!out) {
        table(doc);
    }
    json_decref(doc);
    return rc;
}
