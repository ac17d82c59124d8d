#ifndef PMUREC_EXTERNAL_H
#define PMUREC_EXTERNAL_H

/*
 * External collectors (pmurec --collector exec:PATH[,ARG...]).
 *
 * The program is started once the command is seized and before it may
 * exec, with the cohort's root pid as its last argument and in
 * PMU_COHORT_PID.  It speaks JSON Lines on its standard output:
 *   {"type":"hello","name":N,"version":V,"schema":"events"}   first, within the timeout
 *   {"type":"record","t_ns":T,"pid":P,"tid":T,"name":S,"ph":"i"|"B"|"E"[,"value":N]}
 *   {"type":"stats","dropped":N}
 *   {"type":"bye","status":"ok"|"no-events"|"failed"[,"reason":S]}
 * When the cohort has ended, pmurec closes the program's standard input;
 * the program then sends stats and bye and exits within the timeout.
 * A crash, a hang past the timeout, a malformed line or no bye is a
 * failed collector.  Records go to data/collectors/<name>/events.jsonl,
 * each attributed to the incarnation its pid belonged to at its time.
 *
 * pmurec's child is the collector's keeper (external.c), which starts the
 * collector and, when it exits or fails, when the run ends or when pmurec
 * dies (also by SIGKILL), ends it and everything it started.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "backend.h"

struct pmu_ext;

/* Parse "exec:PATH[,ARG...]"; NULL with a message on stderr when malformed. */
struct pmu_ext *pmu_ext_new(const char *spec, int timeout_ms);
void pmu_ext_free(struct pmu_ext *e);
void pmu_ext_set_timeout(struct pmu_ext *e, int timeout_ms);
/* Give it another bundle name (when two collectors would share one). */
void pmu_ext_rename(struct pmu_ext *e, const char *name);

/* Start, and wait for the hello (or the timeout, then end it). */
void pmu_ext_start(struct pmu_ext *e, pid_t root);
/* pid was reaped by the follower: true if it was this collector's keeper. */
bool pmu_ext_reaped(struct pmu_ext *e, pid_t pid, int status);
/* Close its stdin, wait for bye and exit (or the timeout, then SIGKILL),
 * and until nothing it started is left. */
void pmu_ext_stop(struct pmu_ext *e);

/* Its name in the bundle (from hello when valid, else from the path). */
const char *pmu_ext_name(const struct pmu_ext *e);
bool pmu_ext_failed(const struct pmu_ext *e);
const char *pmu_ext_reason(const struct pmu_ext *e);
/* Records not kept: reported dropped, or not attributable (after pmu_ext_events()). */
uint64_t pmu_ext_dropped(const struct pmu_ext *e);

/*
 * Lifecycle records (a JSON array, caller owns) and the events stream's
 * records (attributed against the cohort; unattributable ones are counted
 * as dropped).  t0/t1 bound the run window.
 */
json_t *pmu_ext_events(struct pmu_ext *e, const struct pmu_cohort *c, uint64_t t0, uint64_t t1);

#endif
