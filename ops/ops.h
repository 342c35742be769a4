/* SPDX-License-Identifier: MIT */
/*
 * What operators' own tools take from topotune. Slurm: the `scontrol update` commands that drain
 * the nodes a survey names and resume the nodes topotune drained that a later survey clears.
 * Prometheus: files in node_exporter's textfile-collector format (docs/design.md "Metrics").
 * Kubernetes: the `kubectl label` and `kubectl taint` commands that mark each node's class, profile
 * and health, and keep pods off the nodes a survey names.
 * Everything here reads the documented files (survey.json: docs/schemas/survey.schema.json), so a
 * survey made earlier, or on another machine, serves as well as the one just made.
 *
 * Nothing acts unless asked: the commands are printed, and run only when the caller says so, each
 * as an argv (never through a shell) under a deadline. A node drained for a reason that is not
 * topotune's (an administrator's) is never drained again over it nor resumed.
 */
#ifndef OPS_OPS_H
#define OPS_OPS_H

#include "util/buf.h"

#include <jansson.h>
#include <stdio.h>

/*
 * 1 when name may be given to scontrol or kubectl as one node: a letter or digit, then letters,
 * digits, '.', '_' or '-', at most 253; never Slurm's ALL (every node) nor anything a command
 * would read as an option or a host list. The plans skip any other name, with a note.
 */
int ops_valid_node(const char *name);
/* 1 when name is a Kubernetes node name (an RFC 1123 subdomain): dot-separated labels of lower
 * case letters, digits and '-', each starting and ending with a letter or digit, at most 253. */
int ops_valid_k8s_node(const char *name);

/* Every drain reason topotune writes starts with this; resume touches no other. */
#define OPS_REASON_PREFIX "topotune:"

/*
 * 1 when a verdict of this kind drains its hosts: a node that fails, is slow, differs or does not
 * answer, a node whose link (NIC, cable, switch port) is slow or fails, and a node `topotune
 * check` failed (check-fails). 0 for a path (a route
 * between two good nodes), a class too spread to judge, and a class below its expected band (the
 * fabric, not a node).
 */
int ops_drains(const char *kind);

/*
 * Slurm's view of its nodes, from `sinfo -h -N -o %N|%T|%E` under a deadline (its stdout kept in
 * out_path, its stderr in log_path): {node: {"state": "drained", "reason": "..."}} (a node in
 * several partitions once). NULL with why filled (sinfo missing, its exit status and last words, a
 * time out): the caller says it as an error, or as a warning where it can do without.
 */
json_t *ops_slurm_nodes(const char *out_path, const char *log_path, double timeout_s,
                        struct util_buf *why);

/*
 * The actions a survey calls for (survey: its survey.json document), in host order:
 *   with drain, one per host a draining verdict names: {"node", "state": "drain", "reason":
 *   "topotune: KIND key=value ..."} (the first such verdict's kind and its evidence's numbers, in
 *   GB/s where they are busbw, "(predicted)" after them when the survey was simulated; at most
 *   OPS_REASON_MAX characters of [A-Za-z0-9 ._:=,/+()-]);
 *   with resume, one per surveyed node that no verdict names at all and that Slurm shows drained
 *   by topotune: {"node", "state": "resume"}.
 * slurm is ops_slurm_nodes' answer, or NULL when unknown (drains are then planned for every named
 * host; resume needs it: the caller refuses resume without it). A node Slurm shows drained for
 * another reason, or does not know, is left alone and gets a line in *notes (a new array).
 */
#define OPS_REASON_MAX 240
json_t *ops_slurm_plan(const json_t *survey, int drain, int resume, const json_t *slurm,
                       json_t **notes);

/*
 * Prints each action to out as the scontrol command line it is, each word quoted for a POSIX
 * shell where it needs it. With apply, runs each (`scontrol update nodename=N state=S
 * [reason=R]`) under a deadline, the i-th command's output in log_path.i, and says on stderr how
 * it ended.
 * 0, or UTIL_EENV when a command did not run or failed (the others are still run).
 */
int ops_slurm_act(const json_t *actions, int apply, FILE *out, const char *log_path,
                  double timeout_s);

/*
 * The whole Slurm step for a survey document (a survey's, or the one-verdict document of a
 * check): Slurm's node states read into DIR/slurm-nodes.txt (.log), the plan, its notes said,
 * the commands printed to out and, with apply, run (logs DIR/scontrol.log.N). Without sinfo's
 * answer a dry run of drains prints every drain, saying so; acting or resuming needs it. Each
 * Slurm command gets timeout_s (and 2 s to stop). 0, or UTIL_EENV (said) when Slurm could not be
 * read or did not take a command.
 */
int ops_slurm_step(const json_t *survey, int drain, int resume, int apply, const char *dir,
                   FILE *out, double timeout_s);

/*
 * Kubernetes. Labels: topotune.io/class (the node class), topotune.io/profile (the class's profile
 * version, where known), topotune.io/health (healthy, or the kind of the node's first verdict).
 * The taint topotune.io/unhealthy=KIND:NoSchedule on every node a draining verdict names
 * (ops_drains), and its removal from every node no verdict names.
 */
#define OPS_K8S_PREFIX "topotune.io/"

/* s as a label value: at most 63 characters of [A-Za-z0-9._-], starting and ending with a letter
 * or digit; a longer s keeps its first 54 and last 8 characters, joined by '-' (class ids end
 * in their hash). "" for NULL or nothing usable. */
void ops_k8s_label_value(const char *s, char out[64]);

/*
 * The actions for a survey (its survey.json document), per node in survey order: label (class,
 * health: the kind of its first node or link verdict, else of its first verdict, else healthy;
 * and profile: versions maps class id -> "vN", or NULL), then taint (a node or link verdict) or
 * untaint (no verdict names the node, or only one that leaves it healthy: its class's fabric, a
 * path). Each is {"node", "verb": "label"|"taint"|"untaint",
 * "args": [...]}: `kubectl VERB node OPTIONS -- NODE ARGS`, the options being the args that
 * start with "--". A name that is not one node (ops_valid_node) is skipped with a line in
 * *notes (a new array).
 */
json_t *ops_k8s_plan(const json_t *survey, const json_t *versions, json_t **notes);

/*
 * Prints each action as its kubectl command line (shell-quoted where needed) to out; with apply
 * runs it (argv, never a shell) under a deadline, the i-th one's output in log_path.i. An
 * untaint of a node
 * that has no such taint is not a failure. 0, or UTIL_EENV when one failed (the others still run).
 */
int ops_k8s_act(const json_t *actions, int apply, FILE *out, const char *log_path,
                double timeout_s);

/*
 * Prometheus metrics in the text exposition format, as node_exporter's textfile collector reads
 * them: each family's HELP and TYPE once, then its samples; label values escaped (\\, \" and
 * \n), so that no value can end a line or a label; no timestamps (the collector refuses them).
 * Names and label names are the caller's, fixed in the code ([a-zA-Z_][a-zA-Z0-9_]*: checked).
 */
struct ops_metrics {
    json_t *families; /* name -> {help, type, samples: [[labels text, value]]}, in order */
};

void ops_metrics_init(struct ops_metrics *m);
void ops_metrics_release(struct ops_metrics *m);

/*
 * Adds one sample of family name (type "gauge" or "counter"; the first call's help and type
 * stand): labels are name, value pairs ending in OPS_END (a null pointer of the arguments'
 * type: a bare NULL may be an int in a variadic call); a NULL or empty value leaves its label
 * out. A sample whose labels repeat an earlier one's replaces its value.
 */
#define OPS_END ((const char *)0)
/*
 * The families several programs write, with one HELP each: node_exporter's textfile collector
 * refuses a family whose files disagree on it. OPS_BUSBW's labels: collective, class, nodes,
 * size, source (measured or predicted); a survey adds host, a sweep config (defaults, chosen).
 * OPS_EXPECTED's: collective, class, nodes, size, bound (low, expected, high), source.
 */
#define OPS_BUSBW "topotune_busbw_bytes_per_second"
#define OPS_BUSBW_HELP                                                                             \
    "all_reduce busbw as nccl-tests defines it (out of place), in bytes per second; source: "      \
    "measured or predicted; host: a node alone (survey); config: defaults or chosen (sweep)"
#define OPS_EXPECTED "topotune_expected_busbw_bytes_per_second"
#define OPS_EXPECTED_HELP                                                                          \
    "the busbw a healthy system should measure and the band around it (bound: low, expected, "     \
    "high); source: predicted by the model or measured by a profile's runs"

void ops_metric(struct ops_metrics *m, const char *name, const char *type, const char *help,
                double value, ...) __attribute__((sentinel));

/* The exposition text of m, appended to out. */
void ops_metrics_render(const struct ops_metrics *m, struct util_buf *out);

/*
 * Writes m to path atomically (a temporary file in the same folder, renamed: the collector never
 * reads half a file), or to stdout for "-". 0 or UTIL_EIO after an error naming path.
 */
int ops_metrics_write(const struct ops_metrics *m, const char *path);

/*
 * A survey's metrics (its survey.json document): each node's busbw alone as
 * topotune_busbw_bytes_per_second (nodes "1", with its host), each verdict per host as
 * topotune_survey_verdict, each node's health, each class's expected band where the model gave
 * one, the launches, and the time of the run (now).
 */
void ops_metrics_survey(struct ops_metrics *m, const json_t *survey);

#endif
