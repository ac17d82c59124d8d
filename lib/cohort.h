#ifndef PMU_COHORT_H
#define PMU_COHORT_H

#include <stddef.h>

#include <jansson.h>

/*
 * The cohort in its two forms: the document cohort.json of spec 1.0-1.2,
 * whose incarnations are objects (12.4: id, pid, start_ns, end_ns?,
 * parent?, preexisting, comm, tids[], exec[{t_ns,path,argv? (1.4),argv_truncated?,argv_reason?}], exit{kind,
 * code|signal}, resources?{<totals>, fields{<name>: {status, ...}}}), and
 * the stream cohort.jsonl of 1.3 (12.6), whose records are incarnation,
 * thread, exec, resource and end.
 *
 * Writers that hold an incarnation as such an object turn it into stream
 * records here; readers get the object back from the records
 * (pmu_bundle_cohort_each() in bundle.h).
 */

/*
 * The records of incarnation inc (the document shape) appended to recs, a
 * JSON array, in the order of the stream:
 *   pmu_cohort_begin_recs: its incarnation record and a thread record per tid;
 *   pmu_cohort_end_recs:   its exec records, a resource record per total
 *                          (when it has resources), its end record.
 * A cohort is written with every incarnation's begin records before those
 * of its children, and each incarnation's end records after its begin
 * records.  The exit kind "not-started" of a document is written
 * "unknown".  Returns 0, or PMU_ERR_NOMEM.
 */
int pmu_cohort_begin_recs(json_t *inc, json_t *recs);
int pmu_cohort_end_recs(json_t *inc, json_t *recs);

/*
 * Reassembles incarnations from the records of one cohort stream, holding
 * only the incarnations still open (begun, not ended).  Records that do not
 * fit (no open incarnation of that id, an unknown type) are skipped: the
 * reader serves tools, the validator judges.
 *
 * pmu_cohort_asm_new: *out is the caller's, to free with pmu_cohort_asm_free().
 * pmu_cohort_asm_add: feed one record (not the header).  When it ends an
 *     incarnation, *done is that incarnation in the document shape (the
 *     caller owns it: json_decref) and *seq its 0-based number in the order
 *     of the incarnation records; else *done is NULL.
 * pmu_cohort_asm_flush: after the last record, each incarnation still
 *     open, one per call, as alive at the end (no end_ns, comm "?", exit
 *     unknown); *done NULL when none is left.
 * pmu_cohort_asm_root: the root's id (the first incarnation record without
 *     a parent), or NULL; valid until pmu_cohort_asm_free().
 */
struct pmu_cohort_asm;

int pmu_cohort_asm_new(struct pmu_cohort_asm **out);
int pmu_cohort_asm_add(struct pmu_cohort_asm *a, json_t *rec, json_t **done, size_t *seq);
int pmu_cohort_asm_flush(struct pmu_cohort_asm *a, json_t **done, size_t *seq);
const char *pmu_cohort_asm_root(const struct pmu_cohort_asm *a);
void pmu_cohort_asm_free(struct pmu_cohort_asm *a);

#endif
