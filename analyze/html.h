#ifndef PMU_ANALYZE_HTML_H
#define PMU_ANALYZE_HTML_H
/*
 * The report (analyze/model.h, the same object --json prints) as one
 * self-contained HTML file: inline CSS and SVG, no script from elsewhere,
 * no network access needed.  flame: the profile's flame graph
 * (export.h's an_exports: the tree, or why there is none) for a single
 * bundle's page, or NULL for none.  Returns 0, or -1 when out cannot be
 * written.
 */
#include <stdio.h>

#include <jansson.h>

int an_html(json_t *report, json_t *flame, FILE *out);

#endif
