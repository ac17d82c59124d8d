#ifndef PMU_AN_EXPORT_H
#define PMU_AN_EXPORT_H

/*
 * The profile's exports (the writers are declared in profile.h, beside the
 * walk they use) and the flame graph the HTML report draws: what
 * pmuanalyze's --folded, --speedscope, --pprof and --html need from the
 * samples of one repetition.
 */
#include <stdbool.h>

#include <jansson.h>

#include "profile.h"

/* What was asked for; NULL paths are not written. */
struct an_export_req {
	const char *folded, *speedscope, *pprof;
};

/*
 * Write the files asked for from the profile p (an_load()'s, of the first
 * repetition; NULL: the bundle has no samples stream), each whole or not
 * at all (a temporary sibling renamed over the path).  With flame not
 * NULL, *flame is set to a new object the caller json_decref()s:
 * an_flame_json()'s, or {"available": false, "reason": ...} when there are
 * no samples.  Returns 0, or 2 (pmuanalyze's usage/I/O exit status) with
 * the message printed on stderr when an export was asked for and there are
 * no samples, or a file cannot be written.
 */
int an_exports(const struct an_prof *p, const struct an_export_req *r, json_t **flame);

/*
 * The flame graph of the profile as JSON, the tree the HTML report draws:
 * {"available": true, "event", "samples", "freq_hz"|"period", "call_graph",
 *  "lost_samples", "unattributed", "pruned": frames too narrow to draw,
 *  "root": NODE}, NODE = [name, samples, kind, file, [NODE...]], kind
 * "root", "program", "func", "inline", "kernel" or "unresolved".  The
 * children are sorted by name (flamegraph.pl's order); a node under
 * 1/2000 of the samples is left out and counted in "pruned".  A new
 * object, or NULL when out of memory.
 */
json_t *an_flame_json(const struct an_prof *p);

#endif
