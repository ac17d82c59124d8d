#ifndef PMU_AN_PROFILE_H
#define PMU_AN_PROFILE_H

/*
 * The profile section of pmuanalyze (bundle-spec section 22): the samples
 * of a repetition, streamed from the bundle, symbolized (symbolize.h) and
 * aggregated by call stack, then reported: top functions self and
 * inclusive per program and per incarnation with 95% Wilson intervals,
 * callers and callees, what was lost or unattributed; the sentence the
 * dominant cost gains; the A/B differences; and the exports, which walk
 * the aggregated stacks.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "symbolize.h"

struct pmu_bundle;
struct an_prof;

/* Read and aggregate repetition rep of the open bundle b.  NULL *p with 0:
 * the bundle has no samples stream (the section then says why, from the
 * sampling collector's lifecycle). */
int an_prof_load(struct an_prof **p, const struct pmu_bundle *b, int rep);
void an_prof_free(struct an_prof *p);

/* The section as JSON (the report's "profile" member, see
 * bundle-spec/analysis/report.schema.json). */
json_t *an_prof_json(const struct an_prof *p);

/* What the samples stream's config and summary say. */
struct an_prof_info {
	const char *event;            /* cycles, cpu-clock, ... */
	uint64_t freq_hz, period;     /* one of them is 0 */
	const char *call_graph;       /* none, fp, dwarf */
	uint64_t samples, lost_records, lost_samples, unattributed, throttles;
};
const struct an_prof_info *an_prof_info(const struct an_prof *p);

/* One distinct call stack with what was sampled in it. */
struct an_prof_stack {
	const char *program;          /* the incarnation's program (comm/exe name) */
	const char *inc;              /* the incarnation's id */
	const struct pmu_frame *frames;
	size_t nframes;               /* frames[0] the outermost (root first); the
				       * frames inlined into a frame follow it, with
				       * inlined set and the same addr */
	bool cut;                     /* the chain was cut (chain_cut or max_stack) */
	uint64_t samples;
	uint64_t period;              /* the sum of the samples' periods (event units) */
};

/* Call fn for every distinct stack (per incarnation), in no fixed order;
 * a non-zero return stops the walk and is returned. */
int an_prof_each_stack(const struct an_prof *p, int (*fn)(void *ctx, const struct an_prof_stack *s), void *ctx);

/* Exports (export.c): 0, or a negative pmu_err with the message set. */
int an_export_folded(const struct an_prof *p, const char *path);     /* flamegraph.pl's input */
int an_export_speedscope(const struct an_prof *p, const char *path); /* speedscope's file format */
int an_export_pprof(const struct an_prof *p, const char *path);      /* profile.proto, gzip */

#endif
