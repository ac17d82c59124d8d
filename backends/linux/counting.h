#ifndef PMU_LINUX_COUNTING_H
#define PMU_LINUX_COUNTING_H

/*
 * The counting collector's own API (private to backends/linux): the
 * recorder drives it through its ops table (collector.h,
 * pmu_counting_collector at the end of counting.c), never through these.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "collector.h"
#include "counts.h"

/* ---- counting collector ------------------------------------------------- */

struct pmu_evspec;


struct pmu_counting_opts {
	const struct pmu_evspec *ev;   /* the events, resolved (lib/perfev.h) */
	size_t nev;
	bool scaled;                   /* accept labelled multiplex estimates */
	enum pmu_cohort_scope scope;
	bool attach;                   /* counting starts at attach, not at exec */
};

struct pmu_counting;

/*
 * The counting collector: per-thread counter groups opened while each task
 * is held at its first ptrace stop, read when it is reaped, and (scope
 * cgroup) the cohort's leaf cgroup counted on every CPU.
 * pmu_counting_new() probes the perf_event_attr features in the order the
 * kernel added them and records every fallback; the caller frees the
 * object with pmu_counting_free().  Per-event trouble is recorded, never
 * returned: only a failure of the recorder itself is an error.
 */
int pmu_counting_new(const struct pmu_counting_opts *o, struct pmu_counting **out);
void pmu_counting_free(struct pmu_counting *k);
/* Before the root may exec: the cohort's cgroup (scope cgroup/auto) and its
 * counters on every CPU; cg NULL: the cohort has none, and why. */
struct pmu_cg;
void pmu_counting_cgroup(struct pmu_counting *k, const struct pmu_cg *cg, const char *why, const char *remedy);
void pmu_counting_task(struct pmu_counting *k, int inc, pid_t pid, pid_t tid, unsigned flags, uint64_t t);
void pmu_counting_task_end(struct pmu_counting *k, int inc, pid_t tid, uint64_t t);
void pmu_counting_task_exec(struct pmu_counting *k, int inc, pid_t pid, pid_t former_tid, uint64_t t);
/* The cohort is gone (or let go): read what is open, the cgroup's counters
 * and statistics (the cgroup is ended after, by its owner). */
void pmu_counting_stop(struct pmu_counting *k, uint64_t t);
/* True when at least one event could be counted at all. */
bool pmu_counting_usable(const struct pmu_counting *k, char *why, size_t n, const char **remedy);
/*
 * The records of data/collectors/counting/counts.jsonl (header excluded),
 * in stream order, handed to emit as they are made, each a new reference
 * that emit releases: a thread's counts when it is reaped, an
 * incarnation's totals once it and all its counted threads have ended
 * (pmu_counting_inc_end), the rest at pmu_counting_finish().  So memory
 * holds only what is still running.  Set before the run; run_start bounds
 * the fallback times.  Without an output the counts are dropped.
 */
void pmu_counting_set_output(struct pmu_counting *k, int (*emit)(void *ctx, json_t *rec), void *ctx,
			     uint64_t run_start);
/* Incarnation inc has ended at end_ns (its totals may be written). */
void pmu_counting_inc_end(struct pmu_counting *k, int inc, uint64_t end_ns);
/*
 * After pmu_counting_stop(): the totals of what was still running, the
 * cohort totals and cgroup statistics; evidence gets the lifecycle's
 * attach evidence.  Returns 0 or the first negative pmu_err of emit.
 */
int pmu_counting_finish(struct pmu_counting *k, uint64_t run_end, char *evidence, size_t n);

/*
 * The per-CPU, charged-at-context-switch method (counting_switch.c): the
 * value of run event ev (its index in -e) in a thread's counts from the
 * follower, judged (lib/counts.h) into v, its sums into raw.  Returns true
 * when raw holds the thread's sums (v may still be unavailable: a slice
 * lost), false when there is none (v says why).
 */
struct pmu_cnt_val;
struct pmu_cnt_raw;
bool pmu_switch_judge(const struct pmu_task_counts *tc, int ev, bool on_pmu, bool scaled,
		      struct pmu_cnt_val *v, struct pmu_cnt_raw *raw);

#endif
