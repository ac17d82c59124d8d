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
