#ifndef PMU_AN_RUNTIME_H
#define PMU_AN_RUNTIME_H

/*
 * The runtime-evidence section of pmuanalyze (bundle-spec section 24): the
 * probes stream (marks, spans, GC pauses, runtimes, JIT compiles, probe
 * records) and the alloc stream (allocation samples, frees, per-incarnation
 * estimates) of one repetition, with the control channel's spans and marks
 * of spans.jsonl, read record by record, reported as the report's
 * "runtime" member:
 *
 *  - phases: the run cut at its marks (startup-end, warmup-end, and
 *    pmurec --delay's pmurec:delay-end) into startup / warmup / steady,
 *    each with its wall time, spans completed, GC pauses (count and total),
 *    allocation estimate, CPU samples and raw system-call time where those
 *    streams exist ("not recorded" otherwise);
 *  - spans: aggregated by name path (request>work) and by name: count,
 *    total, exact p50/p90/max;
 *  - gc: pauses per incarnation x runtime x kind: count, total, exact
 *    p50/p90/p99/max, share of the incarnation's wall time;
 *  - alloc: hot allocation sites by call chain, symbolized from the bundle
 *    (symbolize.h), with estimated bytes and objects and their share, and
 *    the live-at-exit estimate per incarnation; every estimate labelled
 *    (estimate: true).
 *
 * A bundle without a stream gets status and reason from its collector's
 * fate, and a remedy: absence is a finding.  Memory is bounded: the span
 * index, the groups and the durations kept for exact percentiles each have
 * a bound, and what did not fit is counted (table_overflow).
 */
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

struct pmu_bundle;

/*
 * The section of repetition rep of the open bundle b as a new JSON object
 * (the caller json_decref()s it); fates is the report's collector fates.
 * Never NULL but when out of memory.
 */
json_t *an_runtime_load(const struct pmu_bundle *b, int rep, json_t *fates);

/*
 * The probes stream's spans (X, cat "span"), GC pauses (X, cat "gc"), JIT
 * compiles (X, cat "jit") and marks (ph 'i', cat "mark") of repetition rep
 * for a Chrome trace: emit() once per event in stream order (args
 * stolen); an instant has begin == end.  0, or the first non-zero return
 * of emit().
 */
typedef int (*an_rt_emit_fn)(void *ctx, char ph, const char *name, const char *cat, int64_t pid, int64_t tid,
			     int64_t begin, int64_t end, json_t *args);
int an_runtime_trace(const struct pmu_bundle *b, int rep, an_rt_emit_fn emit, void *ctx);

/* Per span name and per GC runtime x kind (summed over incarnations), A's
 * and B's exact counts, totals and percentiles side by side, and the
 * allocation estimates: the comparison's "runtime" member (a new object). */
json_t *an_runtime_compare(json_t *a, json_t *b);

/* The section rendered: text (control characters shown as '?'), CSV
 * tables, and an HTML <section id="runtime"> (escaped), to f. */
void an_runtime_print(json_t *rt, FILE *f);
void an_runtime_csv(json_t *rt, FILE *f);
void an_runtime_html(json_t *rt, FILE *f);

#endif
