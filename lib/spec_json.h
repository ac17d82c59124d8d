#ifndef PMU_SPEC_JSON_H
#define PMU_SPEC_JSON_H

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
 * reference; returns 0 or a negative error. */
int pmu_bag_put_json(struct pmu_bag *bag, const char *relpath, json_t *j);

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
