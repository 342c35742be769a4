/* SPDX-License-Identifier: MIT */
/*
 * The expectation in the forms validators read: Prometheus alerting rules and an LBNL NHC check.
 * Every value written comes from numbers or a class id (util_valid_id: [A-Za-z0-9._-]); text a
 * file supplied (the input's name) goes through the format's quoting.
 */
#include "expect/expect.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/log.h"
#include "util/error.h"
#include "util/quote.h"
#include "util/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int written(FILE *out)
{
    return fflush(out) || ferror(out) ? UTIL_EIO : 0;
}

/* The input's name for a comment line. */
static void comment(FILE *out, const char *what, const char *s)
{
    struct util_buf b = {0};
    util_quote_comment(&b, s);
    fprintf(out, "# %s%s\n", what, b.data ? b.data : "");
    util_buf_release(&b);
}

/* How old the last run may be before its numbers are stale: the checks run at least daily. */
#define STALE_S 86400

/* The labels of a run's or check's health alert: its severity, and the class of the rules file
 * (two files' alerts on one series stay apart, as Prometheus needs). */
static void health_labels(const struct expect *e, FILE *out, const char *severity)
{
    fprintf(out, "        labels:\n          severity: %s\n          expected_class: \"%s\"\n",
            severity, e->class_id[0] ? e->class_id : "any");
}

/* One rule on a series topotune-bench --metrics writes with every run (labels collective, class,
 * nodes): expr is before, the series with this expectation's labels, then after. Any class: a
 * node that lost a GPU, an NVLink or a NIC reports under another class, and its failed or
 * missing runs must still alert. */
static void run_rule(const struct expect *e, FILE *out, const char *alert, const char *before,
                     const char *metric, const char *after, const char *severity,
                     const char *summary, const char *description)
{
    fprintf(out, "      - alert: %s\n        expr: \"%s%s{collective=\\\"%s\\\"", alert, before,
            metric, model_coll_name(e->coll));
    /* a sim run's status is a prediction's: it never alerts */
    fprintf(out, ",nodes=\\\"%d\\\",source=\\\"measured\\\"}%s\"\n", e->nodes, after);
    health_labels(e, out, severity);
    fprintf(out, "        annotations:\n          summary: \"%s\"\n          description: \"%s\"\n",
            summary, description);
}

/* A run that fails or hangs measures nothing, so it leaves no busbw series for the band's rules:
 * its exit status, its wrong values and its age alert instead. */
static void run_rules(const struct expect *e, FILE *out)
{
    char after[32], summary[96], failed[96], wrong[96];
    const char *coll = model_coll_name(e->coll);
    snprintf(failed, sizeof(failed), "the last %s run of topotune-bench failed (exit {{ $value }})",
             coll);
    snprintf(wrong, sizeof(wrong), "the last %s run found {{ $value }} wrong values", coll);
    run_rule(e, out, "TopotuneBenchFailed", "", "topotune_bench_exit_code", " != 0", "critical",
             failed,
             "{{ $labels.instance }}: exit 4 timed out or hung, 7 wrong results or below "
             "NCCL_TESTS_MIN_BW, others NCCL or MPI errors; a failed run measures no busbw, so the "
             "band alerts cannot fire");
    run_rule(e, out, "TopotuneBenchWrongResults", "", "topotune_bench_wrong_results", " > 0",
             "critical", wrong,
             "{{ $labels.instance }}: values out of bounds in the checks of the run (-c): a GPU, "
             "its memory or a link corrupts data");
    snprintf(after, sizeof(after), ") > %d", STALE_S);
    snprintf(summary, sizeof(summary), "no %s run of topotune-bench in %d h", coll, STALE_S / 3600);
    run_rule(e, out, "TopotuneBenchStale", "(time() - ",
             "topotune_bench_last_run_timestamp_seconds", after, "warning", summary,
             "{{ $labels.instance }}: the busbw alerts judge the last run, and none ran since "
             "(set the bound to the schedule of the checks)");
}

/* One rule on a series topotune check writes (labels class, and source="predicted" for the sim
 * backend's, which never alerts); any class, as for a run. */
static void check_rule(const struct expect *e, FILE *out, const char *alert, const char *before,
                       const char *metric, const char *after, const char *severity,
                       const char *summary, const char *description)
{
    fprintf(out, "      - alert: %s\n        expr: \"%s%s{", alert, before, metric);
    fprintf(out, "source!=\\\"predicted\\\"}%s\"\n", after);
    health_labels(e, out, severity);
    fprintf(out, "        annotations:\n          summary: \"%s\"\n          description: \"%s\"\n",
            summary, description);
}

/* topotune check judges one node's all_reduce and writes no busbw when its run fails (the class's
 * check DaemonSet feeds only its metrics): its verdict and its age alert. */
static void check_rules(const struct expect *e, FILE *out)
{
    if (e->coll != MODEL_ALL_REDUCE || e->nodes != 1)
        return;
    char after[32], summary[96];
    check_rule(e, out, "TopotuneCheckFailed", "", "topotune_check_ok", " == 0", "critical",
               "the last topotune check failed, or could not be made",
               "{{ $labels.instance }}: see the check's FAIL or NOT CHECKED line (its failures: "
               "topotune_check_failures); a failed run measures no busbw, so the band alerts "
               "cannot fire");
    snprintf(after, sizeof(after), ") > %d", STALE_S);
    snprintf(summary, sizeof(summary), "no topotune check in %d h", STALE_S / 3600);
    check_rule(e, out, "TopotuneCheckStale", "(time() - ",
               "topotune_check_last_run_timestamp_seconds", after, "warning", summary,
               "{{ $labels.instance }}: the alerts judge the last check, and none ran since (set "
               "the bound to the schedule of the checks)");
}

int expect_write_prometheus_rules(const struct expect *e, FILE *out)
{
    if (expect_checkable(e))
        return UTIL_EUSAGE;
    const char *label = e->measured ? "measured" : "predicted";
    fprintf(out, "# Prometheus alerting rules written by topotune expect (promtool check rules)\n");
    comment(out, "input: ", e->source);
    comment(out, "expected values: ", e->basis);
    fprintf(out, "# metric: topotune_busbw_bytes_per_second{collective, class, nodes, size, "
                 "source, backend}, the busbw topotune exports (source \"measured\": a prediction "
                 "never alerts; backend \"nccl\": a run of host MPI between processes measures "
                 "no GPU; a sweep's config=\"defaults\" series, NCCL's defaults measured for "
                 "comparison, neither)\ngroups:\n");
    /* all_reduce's name as before; another collective's its own, so that files join */
    fprintf(out, "  - name: \"topotune-expect-%s-%dn%s%s\"\n    rules:\n",
            e->class_id[0] ? e->class_id : "any", e->nodes, e->coll == MODEL_ALL_REDUCE ? "" : "-",
            e->coll == MODEL_ALL_REDUCE ? "" : model_coll_name(e->coll));
    for (int i = 0; i < e->n; i++) {
        const struct expect_row *r = &e->rows[i];
        fprintf(out, "      - alert: TopotuneBusbwBelowExpected\n");
        fprintf(out, "        expr: \"topotune_busbw_bytes_per_second{collective=\\\"%s\\\"",
                model_coll_name(e->coll));
        if (e->class_id[0])
            fprintf(out, ",class=\\\"%s\\\"", e->class_id);
        fprintf(out,
                ",nodes=\\\"%d\\\",size=\\\"%zu\\\",source=\\\"measured\\\",backend=\\\"nccl\\\","
                "config!=\\\"defaults\\\"} < %.6g\"\n",
                e->nodes, r->bytes, r->low * 1e9);
        fprintf(out, "        labels:\n          severity: warning\n          size: \"%zu\"\n",
                r->bytes);
        fprintf(out, "        annotations:\n");
        fprintf(out, "          summary: \"%s busbw below its expected band at %zu B\"\n",
                model_coll_name(e->coll), r->bytes);
        fprintf(out,
                "          description: \"{{ or $labels.host $labels.instance }} measured {{ "
                "$value | humanize "
                "}}B/s; a healthy system measures %.2f to %.2f GB/s (%s, %.3g%% of healthy "
                "measurements)\"\n",
                r->low, r->high, label, 100 * e->rate);
    }
    run_rules(e, out);
    check_rules(e, out);
    return written(out);
}

/* The check function: NHC calls it with the nhc.conf line's words; die reports the failure.
 * Only a run that printed its Avg bus bandwidth and exited 0 passes: a program that measured
 * nothing (or ignored NCCL_TESTS_MIN_BW) is no evidence; its own deadline, not only NHC's. NHC
 * runs its checks on busy nodes too (every HealthCheckInterval): a node whose GPUs run a job would
 * measure the contention, so the check passes it unmeasured. NHC's die hands its message to
 * OFFLINE_NODE through eval inside single quotes, so no message may hold one: the bench's path
 * and its output lose theirs, and the texts have none. Its name carries the collective and the
 * class: NHC loads every .nhc file of its scripts folder into one shell, where a second check of
 * the same name (another class's GPUs and sizes) would replace the first. */
static const char nhc_body[] =
    "function %s() {\n"
    "    local min_bw=${1:-%s} bench=%s out rc avg name last busy bad\n"
    "    local -a coll=(%s)\n"
    "    [[ -n ${2:-} ]] && bench=$2 && [[ ${2##*/} != topotune-bench ]] && coll=()\n"
    "    shift 2 2>/dev/null || shift $#\n"
    "    if [[ ${TOPOTUNE_NHC_BUSY:-skip} != run ]] && command -v nvidia-smi >/dev/null 2>&1; "
    "then\n"
    "        busy=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null) || "
    "busy=\n"
    "        if [[ -n $busy ]]; then\n"
    "            [[ $(type -t log) == function ]] && log \"${FUNCNAME[0]}: GPUs busy with a job: "
    "not measured\"\n"
    "            return 0\n"
    "        fi\n"
    "    fi\n"
    "    out=$(%sNCCL_TESTS_MIN_BW=\"$min_bw\" timeout --foreground -k 5 %d \"$bench\" "
    "${coll[@]+\"${coll[@]}\"} \"$@\" "
    "-g %d -b %zu "
    "-e %zu -f %d -T 60 2>&1) && rc=0 || rc=$?\n"
    "    avg=$(printf '%%s\\n' \"$out\" | sed -n 's/^# Avg bus bandwidth *: *\\([0-9.eE+-]*\\).*/"
    "\\1/p')\n"
    "    name=${bench//\\'/}\n"
    "    if [[ $rc -eq 0 && -n $avg ]]; then\n"
    "        return 0\n"
    "    elif [[ $rc -eq 124 || $rc -eq 137 ]]; then\n"
    "        die 1 \"${FUNCNAME[0]}: $name did not finish within %d s\"\n"
    "    elif [[ $rc -eq 0 ]]; then\n"
    "        die 1 \"${FUNCNAME[0]}: $name exited 0 without an Avg bus bandwidth: nothing was "
    "measured\"\n"
    "    elif bad=$(printf '%%s\\n' \"$out\" | sed -n 's/^# Out of bounds values *: "
    "*\\([1-9][0-9]*\\) "
    "FAILED.*/\\1/p') && [[ -n $bad ]]; then\n"
    "        die 1 \"${FUNCNAME[0]}: $name returned wrong results: $bad values out of bounds (data "
    "corrupted on the way: a GPU, a link or a setting)\"\n"
    "    elif [[ -n $avg ]] && printf '%%s\\n' \"$out\" | grep -q '^# Avg bus bandwidth.*FAILED'; "
    "then\n"
    "        die 1 \"${FUNCNAME[0]}: %s Avg bus bandwidth $avg GB/s, the mean over the "
    "sizes, below 0.9 x $min_bw (the mean of the low edges of the %s band)\"\n"
    "    else\n"
    "        last=$(printf '%%s\\n' \"$out\" | tail -n 1)\n"
    "        last=${last//\\'/}\n"
    "        die 1 \"${FUNCNAME[0]}: $name failed (exit $rc): $last\"\n"
    "    fi\n"
    "    return 1\n"
    "}\n";

/* The check's name: check_topotune_ then the collective and the class, [a-z0-9_] only (a class
 * id is [a-z0-9-]: checked, util_valid_id). */
static void nhc_name(const struct expect *e, char *buf, size_t len)
{
    int n = snprintf(buf, len, "check_topotune_%s%s%s", model_coll_name(e->coll),
                     e->class_id[0] && util_valid_id(e->class_id) ? "_" : "",
                     util_valid_id(e->class_id) ? e->class_id : "");
    for (int i = 0; i < n && (size_t)i < len; i++)
        if (buf[i] == '-' || buf[i] == '.')
            buf[i] = '_';
}

int expect_series_quiet(const struct expect *e, size_t *min, size_t *max, int *factor)
{
    if (e->factor) {
        *min = e->first, *max = e->max, *factor = e->factor;
        return 0;
    }
    *min = e->rows[0].bytes, *max = e->rows[e->n - 1].bytes;
    *factor = e->n > 1 ? (int)(e->rows[1].bytes / e->rows[0].bytes) : 2;
    size_t b = *min;
    for (int i = 0; *factor >= 2 && i < e->n; i++, b *= (size_t)*factor)
        if (e->rows[i].bytes != b)
            *factor = 0;
    return *factor < 2 ? UTIL_EUSAGE : 0;
}

int expect_series(const struct expect *e, size_t *min, size_t *max, int *factor)
{
    if (expect_series_quiet(e, min, max, factor))
        return util_error("the profile's sizes from %zu to %zu B are not one size times the powers "
                          "of a factor, as one nccl-tests run measures: give -b and -e that "
                          "select such sizes",
                          *min, *max),
               UTIL_EUSAGE;
    return 0;
}

int expect_checkable(const struct expect *e)
{
    if (e->nranks < 2)
        return util_error("at one rank busbw is 0 (nccl-tests' busbw counts traffic between "
                          "ranks): no run can be below the band; give hardware of 2 GPUs or more"),
               UTIL_EUSAGE;
    return 0;
}

/* The deadline of the check's run: nccl-tests' per-wait -T 60 bounds a hang, this the whole. */
#define NHC_DEADLINE_S 300

int expect_write_nhc(const struct expect *e, FILE *out)
{
    if (e->nodes != 1)
        return util_error("an NHC check measures one node: give --nodes 1 (this expectation is "
                          "for %d nodes)",
                          e->nodes),
               UTIL_EUSAGE;
    size_t min, max;
    int factor;
    if (expect_checkable(e) || expect_series(e, &min, &max, &factor))
        return UTIL_EUSAGE;
    char min_bw[32];
    expect_min_bw_text(e, min_bw);
    fprintf(out, "# LBNL NHC check written by topotune expect: %s busbw on this node's %d GPUs\n",
            model_coll_name(e->coll), e->ppn);
    comment(out, "input: ", e->source);
    comment(out, "expected values: ", e->basis);
    char name[320];
    nhc_name(e, name, sizeof(name));
    fprintf(out,
            "# Install: this file as /etc/nhc/scripts/%s.nhc, and in nhc.conf, with * the\n"
            "# hosts of this class (its GPUs and sizes are this class's):\n",
            name + 6);
    fprintf(out, "#   * || %s %s\n", name, min_bw);
    fprintf(out,
            "# Arguments: NCCL_TESTS_MIN_BW (GB/s; the run fails when its Avg bus bandwidth,\n"
            "# the mean over the sizes, is below 0.9 x it), the benchmark program (default:\n"
            "# the topotune-bench installed with this topotune, run with -C %s; another, such\n"
            "# as nccl-tests' %s_perf, runs as it is), then more of its flags. This check's\n"
            "# -g -b -e -f come after them and win: NCCL_TESTS_MIN_BW holds for their sizes only.\n"
            "# The run takes seconds, at most %d: nhc's own timeout (TIMEOUT, 30 s by default)\n"
            "# must be longer, or its watchdog marks the node offline: run nhc -t %d, or set\n"
            "# TIMEOUT=%d in /etc/sysconfig/nhc. As Slurm's HealthCheckProgram, which slurmd\n"
            "# kills after 60 s, run nhc detached (DETACHED_MODE=1 in /etc/sysconfig/nhc): else\n"
            "# a run that hangs is killed with nhc, and the node is never marked offline.\n"
            "# A node whose GPUs run a job (nvidia-smi lists compute processes) passes\n"
            "# unmeasured: its numbers would be the job's contention (TOPOTUNE_NHC_BUSY=run\n"
            "# measures it anyway).\n",
            model_coll_name(e->coll), model_coll_name(e->coll), NHC_DEADLINE_S, NHC_DEADLINE_S + 60,
            NHC_DEADLINE_S + 60);
    /* NHC sets PATH to the system's directories: the benchmark by its full path */
    char *prog = util_sibling_program("topotune-bench", "TOPOTUNE_BENCH_PROGRAM");
    struct util_buf bench = {0};
    util_quote_shell(&bench, prog ? prog : "topotune-bench");
    free(prog);
    char coll[64] = "";
    if (e->coll != MODEL_ALL_REDUCE) /* topotune-bench's flag; nccl-tests has a program each */
        snprintf(coll, sizeof(coll), "-C %s", model_coll_name(e->coll));
    /* the configuration predicted, set for the run: words cli_env_check let through, quoted */
    struct util_buf env = {0};
    char words[sizeof(e->env)], *save = NULL;
    snprintf(words, sizeof(words), "%s", e->env);
    for (char *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(w, '=');
        if (!eq)
            continue;
        util_buf_addf(&env, "%.*s=", (int)(eq - w), w);
        util_quote_shell(&env, eq + 1);
        util_buf_addf(&env, " ");
    }
    fprintf(out, nhc_body, name, min_bw, bench.data, coll, env.data ? env.data : "", NHC_DEADLINE_S,
            e->ppn, min, max, factor, NHC_DEADLINE_S, model_coll_name(e->coll),
            e->measured ? "measured" : "predicted"); /* the reason a node goes offline with */
    util_buf_release(&bench);
    util_buf_release(&env);
    return written(out);
}
