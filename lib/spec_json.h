#ifndef PMU_SPEC_JSON_H
#define PMU_SPEC_JSON_H

#include <stdint.h>

#include <jansson.h>

/*
 * The units maps writers put in documents and stream headers, built from
 * the spec tables for spec 1.<minor>.  The caller owns the result
 * (json_decref).  An unknown document type or stream kind gives {}.
 */
json_t *pmu_spec_doc_units(const char *doc_type, int minor);
json_t *pmu_spec_stream_units(const char *stream_kind, int minor);

struct pmu_bag;

/* Write document j into the bag at relpath the way every pmu writer does:
 * indented by 2, members in their order, one trailing newline.  Takes j's
 * reference; returns 0 or a negative error.  A document that readers would
 * refuse (over the byte limit of spec PMU_SPEC_VERSION or the parse
 * budget, jsonbound.h) is not written: PMU_ERR_LIMIT, naming relpath. */
int pmu_bag_put_json(struct pmu_bag *bag, const char *relpath, json_t *j);

/*
 * Lifecycle records (a collector's lifecycle.jsonl), appended to recs:
 *   pmu_lc_rec        one record: type lifecycle, t_ns, event;
 *   pmu_lc_started    requested, probed (ok), opened and attached with its
 *                     evidence, all at t;
 *   pmu_lc_ended      stopped, detached and final with status, all at t;
 *   pmu_lc_unavailable requested, and probed and final unavailable with the
 *                     reason and the remedy.
 */
json_t *pmu_lc_rec(uint64_t t, const char *event);
void pmu_lc_started(json_t *recs, uint64_t t, const char *evidence);
void pmu_lc_ended(json_t *recs, uint64_t t, const char *status);
void pmu_lc_unavailable(json_t *recs, uint64_t t, const char *reason, const char *remedy);

/* A stream's header line (compact JSON, no newline; free()), or NULL. */
char *pmu_spec_stream_header(const char *stream_kind, const char *spec, int minor);

/*
 * A JSON string for text from the system (command names, paths, argv):
 * invalid UTF-8 sequences become U+FFFD, so the text is kept, marked,
 * rather than dropped (jansson refuses invalid UTF-8).  Never NULL unless
 * out of memory.
 */
json_t *pmu_json_text(const char *s);

#endif
