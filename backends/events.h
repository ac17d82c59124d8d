#ifndef PMU_EVENTS_H
#define PMU_EVENTS_H

/*
 * The event list as this platform resolves it: lib/perfev.h's grammar with
 * the backend's resolver.  This is the call the recorder makes; the backend
 * (backends/<os>/) defines it.  Linux: generic names from perfev.def's
 * perf numbers, PMU/TERMS/ through sysfs format files
 * (Documentation/ABI/testing/sysfs-bus-event_source-devices-format and
 * -events), pfm: through libpfm4, loaded at run time so that neither the
 * library nor the tools link it.  The stub: every item well formed or
 * refused as anywhere, and every one unavailable.
 *
 * Not thread-safe: pfm: items load libpfm4, whose state is process-global,
 * and may set and restore LIBPFM_FORCE_PMU in the environment.
 */
#include <stddef.h>

#include "perfev.h"

/*
 * Where resolution looks.  NULL fields (or a NULL env) take the defaults:
 * sysfs /sys/bus/event_source/devices; libpfm the environment variable
 * PMU_LIBPFM when set (PMU_LIBPFM=/nonexistent makes libpfm4 absent, for
 * tests), else "libpfm.so.4" through the dynamic loader's search.  A
 * backend without either ignores them.
 */
struct pmu_evenv {
	const char *sysfs;
	const char *libpfm;
};

/*
 * Parse and resolve a comma-separated event list (pmu_evlist_parse_with()'s
 * rules).  On success *out is a malloc'd array of *n specs that the caller
 * frees with free(); on error *out is NULL, *n is 0 and the result is
 * PMU_ERR_INVAL (bad list) or PMU_ERR_NOMEM.
 */
int pmu_evlist_parse(const char *list, const struct pmu_evenv *env, struct pmu_evspec **out, size_t *n);

/* The default event set, resolved; *out is malloc'd and the caller frees
 * it with free(). */
int pmu_evlist_defaults(struct pmu_evspec **out, size_t *n);

#endif
