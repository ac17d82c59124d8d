#ifndef PMUREC_COLLECTORS_H
#define PMUREC_COLLECTORS_H

/*
 * The recorder's collectors of one repetition: the table's
 * (pmu_collectors[], collector.h) and one per --collector, each with its
 * live lifecycle, driven through the contract:
 *
 *   pmurec_colls_new       requested and probe, for each (not requested:
 *                          nothing until emit);
 *   pmurec_colls_followed  what the follower says, before any open;
 *   pmurec_colls_open      before the root may exec;
 *   pmurec_colls_listener  the cohort's task events, to every collector;
 *   pmurec_colls_fds/drain the recorder's loop (loop.h);
 *   pmurec_colls_reaped    a child outside the cohort exited;
 *   pmurec_colls_stop      the cohort is gone: every collector stops
 *                          (externals first, then the table backwards);
 *   pmurec_colls_emit      each one's streams and lifecycle, and the run's
 *                          collector list; *failed when one failed (the
 *                          first's why);
 *   pmurec_colls_free.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "backend.h"
#include "collector.h"

struct pmurec_colls;

/* table: NULL-ended (NULL: pmu_collectors); args[i]: the argument of
 * external collector i (its struct pmu_ext). */
int pmurec_colls_new(const struct pmu_collector_ops *const *table, const struct pmu_run_config *cfg,
		     struct pmu_cohort *c, struct pmu_out *out, void **args, size_t nargs, json_t *caps,
		     struct pmurec_colls **cs);
void pmurec_colls_followed(struct pmurec_colls *cs, const struct pmu_launch_result *lr, bool stops);
/* The cohort's cgroup (NULL: none, and why), before open. */
void pmurec_colls_cgroup(struct pmurec_colls *cs, const struct pmu_cohort_cgroup *g, const char *why,
			 const char *remedy);
/* After the follow: what the follower lost and could not decode. */
void pmurec_colls_follow_losses(struct pmurec_colls *cs, uint64_t lost, const char *lost_why, uint64_t malformed,
				 const char *malformed_first);
int pmurec_colls_open(struct pmurec_colls *cs, pid_t root, uint64_t t);
const struct pmu_task_listener *pmurec_colls_listener(struct pmurec_colls *cs);
int pmurec_colls_fds(void *cs, int *fds, int max);
int pmurec_colls_drain(void *cs, uint64_t now);
bool pmurec_colls_reaped(struct pmurec_colls *cs, pid_t pid, int status);
void pmurec_colls_stop(struct pmurec_colls *cs);
/* note: what writing cohort.jsonl took, for the cohort collector's evidence */
int pmurec_colls_emit(struct pmurec_colls *cs, const struct pmu_run_window *win, const char *note, json_t *list,
		      bool *failed, char *why, size_t n);
void pmurec_colls_free(struct pmurec_colls *cs);

#endif
