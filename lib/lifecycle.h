#ifndef PMU_LIFECYCLE_H
#define PMU_LIFECYCLE_H

/*
 * A collector's lifecycle (spec section 16), recorded live: each step is
 * stamped with the real CLOCK_MONOTONIC time it happened, by whoever saw it
 * (the recorder: requested, probed, final; the collector: opened, attached,
 * drop, malformed, stopped, detached).  The same code serves built-in and
 * external collectors.
 *
 * The order of the spec is kept whatever the calls: a step that is already
 * recorded, or that would go back, is not recorded again (the first time
 * wins); drop and malformed add to one count each, recorded at their
 * first time.  pmu_lc_records() gives the stream's records.
 */
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

struct pmu_lifecycle;

/* NULL out of memory.  pmu_lc_free(NULL) is a no-op. */
struct pmu_lifecycle *pmu_lc_new(void);
void pmu_lc_free(struct pmu_lifecycle *lc);

/* requested, probed, opened, stopped or detached, at t. */
void pmu_lc_step(struct pmu_lifecycle *lc, const char *event, uint64_t t);
/* probed with a status ok. */
void pmu_lc_probed_ok(struct pmu_lifecycle *lc, uint64_t t);
/* attached at t, with what proves it. */
void pmu_lc_attached(struct pmu_lifecycle *lc, uint64_t t, const char *evidence);
/* Replace the attached evidence (what proves it grows as the run goes on). */
void pmu_lc_set_evidence(struct pmu_lifecycle *lc, const char *evidence);
/* n records dropped ("drop") or undecodable ("malformed"), first seen at t;
 * reason (may be NULL) says why, the first one given is kept. */
void pmu_lc_lost(struct pmu_lifecycle *lc, const char *event, uint64_t t, uint64_t n, const char *reason);
/*
 * The collector cannot run: probed and final unavailable, at t, with the
 * reason and the remedy (requested first, if it was not recorded).
 */
void pmu_lc_unavailable_at(struct pmu_lifecycle *lc, uint64_t t, const char *reason, const char *remedy);
/* The outcome: ok, no-events, failed (reason required), not-requested. */
void pmu_lc_final(struct pmu_lifecycle *lc, uint64_t t, const char *status, const char *reason);

bool pmu_lc_has(const struct pmu_lifecycle *lc, const char *event);
/* The final status, or NULL before pmu_lc_final(). */
const char *pmu_lc_status(const struct pmu_lifecycle *lc);
/* The drop count so far. */
uint64_t pmu_lc_dropped(const struct pmu_lifecycle *lc);
/* The time of a recorded step, or 0. */
uint64_t pmu_lc_time(const struct pmu_lifecycle *lc, const char *event);

/* The records in stream order: a new reference (json_decref), or NULL. */
json_t *pmu_lc_records(const struct pmu_lifecycle *lc);

#endif
