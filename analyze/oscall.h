#ifndef PMU_AN_OSCALL_H
#define PMU_AN_OSCALL_H

/*
 * The OS-event sections of pmuanalyze (bundle-spec section 23): the
 * syscalls, syscall-stats and sched streams of one repetition, read record
 * by record (memory flat apart from bounded aggregation tables), reported
 * as the report's "oscall" member:
 *
 *  - syscalls: the top incarnation x syscall x file rows by total time
 *    (from syscall-stats: counts, errors by errno, bytes, p50/p90/p99 as
 *    estimates from section 23.4's histogram, exact min and max), the
 *    totals per syscall (for A/B) and errors by errno;
 *  - offcpu: off-CPU intervals by state, by the system call in progress,
 *    and the top user call chains when the collector recorded them;
 *  - decomposition: per thread, incarnation and cohort, the thread time =
 *    on-CPU + runqueue + waiting (by syscall and file: the off intervals
 *    joined with the same tid's raw calls) + the rest, from the thread
 *    records;
 *  - blocked: the largest program x syscall x file by time waiting, which
 *    the dominant cost names when blocking dominates.
 *
 * A bundle without the streams gets status and reason (from the
 * collectors' fates): absence is a finding.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

struct pmu_bundle;

/*
 * The section of repetition rep of the open bundle b as a new JSON object
 * (the caller json_decref()s it); fates is the report's collector fates
 * (for why a stream is absent).  With folded not NULL, the folded off-CPU
 * stacks (program;frame;... NS, weighted by waited ns) are written there;
 * *folded_err then says whether that failed (message printed).  Never
 * NULL but when out of memory.
 */
json_t *an_oscall_load(const struct pmu_bundle *b, int rep, json_t *fates, const char *folded, int *folded_err);

/*
 * The dominant cost's statement when blocking dominates: the oscall
 * section's blocked entry named with its share of wall_ns, and what is not
 * attributed.  Writes a sentence to out and returns true when the largest
 * wait is at least half the wall time or off_cpu_dominates; false (out
 * untouched) when the section has no such entry.
 */
bool an_oscall_statement(json_t *os, double wall_ns, bool off_cpu_dominates, char *out, size_t n);

/* Per-syscall A/B differences of two reports' oscall sections (the
 * comparison's "syscalls" member). */
json_t *an_oscall_compare(json_t *a, json_t *b);

/* The raw system calls and the off-CPU intervals of repetition rep, for
 * each thread's track of a Chrome trace: emit() once per interval, in the
 * streams' order (args stolen), record by record.  0, or the first
 * non-zero return of emit(). */
typedef int (*an_os_emit_fn)(void *ctx, const char *name, const char *cat, int64_t pid, int64_t tid, int64_t begin,
			     int64_t end, json_t *args);
int an_oscall_trace(const struct pmu_bundle *b, int rep, an_os_emit_fn emit, void *ctx);

/* The section rendered: text (for a terminal: control characters shown as
 * '?'), CSV tables, and an HTML <section> (escaped), to f. */
void an_oscall_print(json_t *os, FILE *f);
void an_oscall_csv(json_t *os, FILE *f);
void an_oscall_html(json_t *os, FILE *f);

#endif
