/* SPDX-License-Identifier: MIT */
/*
 * The functional P2P test: topotune-p2p-copy in a child process under a
 * deadline. P2P that NVML and the driver call fine can still hang or corrupt on
 * consumer GPUs behind PCIe switches; only a real copy tells.
 */
#include "doctor/internal.h"
#include "util/text.h"
#include "util/buf.h"
#include "util/child.h"
#include "util/file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char copy_fix[] =
    "set NCCL_P2P_DISABLE=1, or make P2P work (disable PCIe ACS on bare metal, check the IOMMU "
    "setting, use a driver that supports P2P on these GPUs)";

struct copy_log {
    int ok, wrong, skipped, open_src, open_dst; /* open_*: a pair started and not finished */
    double min_gbps;
    char first_wrong[64];
};

static void parse_log(const char *text, struct copy_log *l)
{
    l->open_src = -1;
    l->min_gbps = -1;
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line += !!line) {
        int src, dst, used = 0;
        char word[16];
        if (sscanf(line, "pair %d %d %15s %n", &src, &dst, word, &used) < 3)
            continue;
        if (!strcmp(word, "start")) {
            l->open_src = src, l->open_dst = dst;
            continue;
        }
        l->open_src = -1;
        if (!strcmp(word, "ok")) {
            double gbps = atof(line + used);
            l->ok++;
            if (l->min_gbps < 0 || gbps < l->min_gbps)
                l->min_gbps = gbps;
        } else if (!strcmp(word, "wrong")) {
            if (!l->wrong++)
                snprintf(l->first_wrong, sizeof(l->first_wrong), "GPU%d->GPU%d: %ld words", src,
                         dst, atol(line + used));
        } else if (!strcmp(word, "skip")) {
            l->skipped++;
        }
    }
}

/* The last non-empty line of text (the child's own explanation, usually), cleaned: it reaches
 * a terminal and JSON. */
static void last_line(const char *text, char *out, size_t len)
{
    size_t end = strlen(text), start = util_text_tail(text, &end, 1);
    struct util_buf clean = UTIL_BUF_INIT;
    util_text_clean(&clean, text + start, end - start, 0);
    snprintf(out, len, "%s", util_buf_str(&clean));
    util_buf_release(&clean);
}

/* NVML or the driver said OK for some pair (the topology's P2P table). */
static int claimed_ok(const struct topo *t)
{
    for (int i = 0; t->p2p && i < t->ngpus * t->ngpus; i++)
        if (i / t->ngpus != i % t->ngpus && t->p2p[i] && !strcmp(t->p2p[i], "OK"))
            return 1;
    return 0;
}

static void report(json_t *c, const struct topo *t, const struct util_child *ch, const char *text,
                   double deadline)
{
    struct copy_log l = {0};
    parse_log(text, &l);
    char tail[256];
    last_line(text, tail, sizeof(tail));
    /* a copy SIGKILL does not end sleeps in the driver, where a GPU that fell off the bus keeps
     * it: the node's fault too, said so; waiting for it would hang the check with it */
    char stuck[256] = "";
    if (ch->stuck)
        snprintf(stuck, sizeof(stuck),
                 ", and it had not ended %g s after SIGKILL (" UTIL_CHILD_LEFT_WHY "), left behind",
                 ch->kill_wait_s);
    if (ch->exec_errno)
        doctor_add(c, "p2p-copy", "unknown", NULL, "the copy test could not start: %s",
                   strerror(ch->exec_errno));
    else if (ch->timed_out && l.open_src >= 0)
        doctor_add(c, "p2p-copy", "fail", copy_fix,
                   "the peer copy GPU%d->GPU%d hung: killed after %.0f s (%d pair(s) verified "
                   "before it)%s",
                   l.open_src, l.open_dst, deadline, l.ok, stuck);
    else if (ch->timed_out)
        doctor_add(c, "p2p-copy", "fail", copy_fix, "the copy test hung: killed after %.0f s%s",
                   deadline, stuck);
    else if (l.wrong || ch->exit_code == 7)
        doctor_add(c, "p2p-copy", "fail", copy_fix,
                   "%d peer copy(ies) corrupted data (first: %s); %d verified", l.wrong,
                   l.first_wrong[0] ? l.first_wrong : "?", l.ok);
    else if (ch->exit_code == 3)
        doctor_add(c, "p2p-copy", "unknown", NULL, "no GPU visible to the copy test: %s", tail);
    else if (ch->exit_code != 0)
        doctor_add(c, "p2p-copy", "fail", copy_fix, "the copy test failed (%s %d%s): %s",
                   ch->signal ? "signal" : "exit", ch->signal ? ch->signal : ch->exit_code,
                   l.open_src >= 0 ? ", during a peer copy" : "", tail);
    else if (!l.ok && claimed_ok(t))
        doctor_add(c, "p2p-copy", "warn",
                   "check the driver and the IOMMU/ACS settings: NCCL will fall back to SHM",
                   "%s reports P2P OK, but CUDA grants no peer access (%d pair(s) skipped)",
                   t->p2p_source, l.skipped);
    else if (!l.ok)
        doctor_add(c, "p2p-copy", "pass", NULL,
                   "no GPU pair claims peer access (%d pair(s) skipped): NCCL will not use P2P",
                   l.skipped);
    else
        doctor_add(c, "p2p-copy", "pass", NULL,
                   "%d peer copies of 32 MiB verified (slowest %.1f GB/s), %d pair(s) without "
                   "peer access",
                   l.ok, l.min_gbps, l.skipped);
}

double doctor_copy_timeout_s(const struct topo *t)
{
    return 15 + 0.5 * t->ngpus * t->ngpus;
}

int doctor_check_p2p_copy(json_t *c, const struct topo *t, double timeout_s, const char *p2p_off)
{
    int stuck = 0;
    char *prog = util_sibling_program("topotune-p2p-copy", "TOPOTUNE_P2P_PROGRAM");
    int forced = getenv("TOPOTUNE_P2P_PROGRAM") && *getenv("TOPOTUNE_P2P_PROGRAM");
    if (!forced && (t->source != TOPO_SOURCE_LIVE || t->ngpus < 2)) {
        doctor_add(c, "p2p-copy", t->ngpus == 1 ? "pass" : "unknown", NULL, "%s",
                   t->source != TOPO_SOURCE_LIVE
                       ? "the hardware comes from a file: no GPU here to copy between"
                   : t->ngpus ? "one GPU: no peer to copy to"
                              : "no GPU visible: the copy test needs two");
    } else if (p2p_off) { /* NCCL makes no peer copy: a copy that would hang is no hazard, nor
                           * worth its deadline in a prolog (no GPU is never a pass, though) */
        doctor_add(c, "p2p-copy", "pass", NULL, "not run: %s keeps NCCL off peer copies", p2p_off);
    } else if (!forced && !strchr(prog, '/')) {
        doctor_add(c, "p2p-copy", "unknown", NULL,
                   "topotune-p2p-copy was not built (no CUDA toolkit when topotune was built)");
    } else {
        char log[4096];
        int fd = util_temp_file(log, sizeof(log), "topotune-p2p");
        double deadline = timeout_s > 0 ? timeout_s : doctor_copy_timeout_s(t);
        char *argv[] = {prog, NULL};
        /* a second after SIGKILL, not 5: under check's --deadline every second is counted */
        struct util_child ch = {
            .argv = argv, .log = log, .timeout_s = deadline, .grace_s = 2, .kill_wait_s = 1};
        struct util_buf text = UTIL_BUF_INIT;
        if (fd >= 0) {
            close(fd);
            util_child_run(&ch);
            util_file_read(log, 1 << 20, &text);
            util_temp_remove(log);
            report(c, t, &ch, util_buf_str(&text), deadline);
            stuck = ch.stuck;
        } else {
            doctor_add(c, "p2p-copy", "unknown", NULL, "no temporary file for the copy test's log");
        }
        util_buf_release(&text);
    }
    free(prog);
    return stuck;
}
