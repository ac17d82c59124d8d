#ifndef PMUREC_HOSTLOAD_H
#define PMUREC_HOSTLOAD_H

#include <jansson.h>

#include "backend.h"

/*
 * run.json's host_load (spec 1.4) from the host's CPU time read at a
 * repetition's start (a) and end (b): the differences, scope "system",
 * status ok; or status unavailable with the reason and remedy when either
 * read failed or a counter went backwards.  The caller owns the object
 * (json_decref).
 */
json_t *pmurec_host_load(const struct pmu_host_cpu *a, const struct pmu_host_cpu *b, uint64_t recorder_cpu_ns);

#endif
