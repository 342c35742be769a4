/* SPDX-License-Identifier: MIT */
/*
 * What a job communicates, as weights over (collective, size): read from a real job's NCCL log
 * (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL: one line per call and rank) or taken from a preset.
 * Sizes follow nccl-tests' convention, so that a workload maps onto benchmark sizes: all_gather,
 * reduce_scatter and alltoall count every rank's part (count x ranks x element), the others
 * count x element. The document is schema topotune/workload/1 (docs/schemas/workload.schema.json).
 * Errors follow util/error.h.
 */
#ifndef WORKLOAD_WORKLOAD_H
#define WORKLOAD_WORKLOAD_H

#include <jansson.h>
#include <stddef.h>

/*
 * The workload of the NCCL log files paths[0..n): every COLL line (the last "NCCL INFO " of a line
 * is the one read: lines of processes writing at once get interleaved) of AllReduce, AllGather,
 * ReduceScatter, Broadcast, Reduce, AlltoAll (NCCL 2.28) and Send (a Recv pairs with a Send and
 * is not counted again). A rank's group of Sends on one communicator (one opCount, no peer
 * twice) to every rank, or to 3 ranks or more and at least half of them, is an alltoall (before
 * 2.28 an alltoall logs so); other Sends are sendrecv. Calls are per rank: every rank's lines
 * (host:pid [device]) counted, divided by the ranks seen. Lines that are no COLL line are skipped;
 * a COLL line whose count, datatype or [nranks=N] do not parse (a line cut short), a call larger
 * than WORKLOAD_MAX_SIZE, one of a function no collective here stands for (Gather, Scatter), or one
 * on a communicator of one rank (moving nothing) is counted in "skipped" and said in a warning. A
 * NUL ends its line only. Returns a new document, or NULL after an error naming the file
 * (unreadable, not a regular file, a file given twice, no COLL line, lines folded by Ray's log
 * deduplication, none usable, only Recv lines, only calls of 0 bytes, more than
 * WORKLOAD_MAX_ENTRIES pairs). ranks > 0 keeps the calls of communicators of that many ranks
 * only (the one a sweep will measure: a tensor-parallel group's calls are not the data-parallel
 * one's), the others counted in "skipped"; with ranks 0 calls of several communicator sizes are
 * added up, and a warning says so.
 */
json_t *workload_from_nccl_logs(char *const *paths, int n, long long ranks);

/* The same for log text in memory (len bytes, NUL or not): the document, or NULL when it holds
 * no COLL line (said nowhere: the fuzz target's entry point). */
json_t *workload_from_nccl_text(const char *text, size_t len);

/* The preset's document: "dp", "fsdp", "tp" or "moe" (assumed mixes, labelled so); NULL for another
 * name. */
json_t *workload_preset(const char *name);

/* The preset names, space-separated. */
const char *workload_preset_names(void);

/* The most entries a workload document may hold (a job's distinct sizes), and its largest size
 * (the sweep's). */
#define WORKLOAD_MAX_ENTRIES 100000
#define WORKLOAD_MAX_SIZE    (64LL << 30)

/*
 * A workload to optimise for: a preset's name, or a file (untrusted: a regular file, schema
 * topotune/workload/1 and its fields only, every entry's collective one of nccl-tests' names, its
 * size an integer from 0 to WORKLOAD_MAX_SIZE, its weight from 0 to 1, some weight above 0). A
 * preset's name that is also a regular file here is refused as ambiguous. Entries that weigh
 * nothing (weight 0, or size 0: a call with no data) are left out, and the rest's weights scaled
 * to add up to 1. Returns a new, clean document (schema, from, assumed, entries: nothing else of
 * the file), or NULL after an error naming the file and the field.
 */
json_t *workload_load(const char *preset_or_path);

/* The same checks on a document already parsed, named name in errors. A (collective, size)
 * given twice is refused, unless recorded (a sweep.json's copy, written when that was taken):
 * then it stays, and workload_differs weighs the pair by its sum, as the sweep counted it. */
json_t *workload_clean(const json_t *doc, const char *name, int recorded);

/* 0 when workloads a and b weight the same (collective, size) pairs alike, in any order and
 * within 1e-6 (a written file keeps 8 digits), NULL standing for all_reduce alone; else 1, with
 * the first difference in words into buf. */
int workload_differs(const json_t *a, const json_t *b, char *buf, size_t len);

#endif
