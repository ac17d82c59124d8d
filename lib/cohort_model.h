#ifndef PMU_COHORT_MODEL_H
#define PMU_COHORT_MODEL_H

/*
 * The cohort as the recorder keeps it while following: its incarnations
 * (pid + start time), their threads, lookup by pid/tid/time, the bounds of
 * a bundle, and release.  Platform-free: a follower (backends/) reads the
 * kernel and tells the model what happened; the model keeps the compact
 * index, writes each incarnation out through its sink as it goes, and
 * tells the listener (the recorder, which passes it on to every collector)
 * of every task that joins, execs or ends.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum pmu_res {
	PMU_RES_CPU_USER_NS,
	PMU_RES_CPU_SYSTEM_NS,
	PMU_RES_MAX_RSS_BYTES,
	PMU_RES_MINOR_FAULTS,
	PMU_RES_MAJOR_FAULTS,
	PMU_RES_VOLUNTARY_SWITCHES,
	PMU_RES_INVOLUNTARY_SWITCHES,
	PMU_RES_READ_BYTES,
	PMU_RES_WRITE_BYTES,
	PMU_RES_COUNT_
};

struct pmu_resource {
	bool ok;
	uint64_t value;
	const char *source;    /* static: where the value was read */
	char reason[160];      /* when !ok */
	const char *remedy;    /* static, when !ok */
};

/*
 * The cohort as the follower keeps it.  Each incarnation is written out as
 * it goes (pmu_cohort_sink: its joining, its threads and execs, its
 * resources and end), so what stays in memory for the whole run is the
 * compact part below: what attributes records of other collectors to an
 * incarnation (pid, threads, start, end, id).  The detail (comm, resource
 * totals, exit) lives only while the incarnation does: once its end is
 * written, d is freed and NULL.
 */
struct pmu_inc_detail {
	char comm[32];
	uint64_t io_read, io_write; /* own bytes, summed over threads at their exits */
	uint32_t io_threads;    /* threads whose exit was seen and read */
	bool io_failed;
	int exit_kind;          /* 0 unknown, 1 exited, 2 signaled */
	int exit_value;
	/* the nine totals, read at the exit event; NULL until then (their
	 * reason is then that the end was not observed) */
	struct pmu_resource *res;
};

struct pmu_incarnation {
	int id;                 /* 1-based; "i<id>" in the bundle */
	int parent;             /* 0 for the root */
	pid_t pid;
	uint32_t ntids;
	uint64_t boot_start;    /* /proc/PID/stat starttime, for identity */
	uint64_t start_ns, end_ns;
	bool ended, preexisting;
	pid_t *tids;            /* the pid first */
	struct pmu_inc_detail *d; /* while not yet written out */
};

/*
 * The argv of one exec as a follower read it from the kernel: blob[0..len)
 * holds the strings, each ended by a NUL (the last one may lack it when the
 * capture cut it), raw bytes that need not be UTF-8.  truncated: the
 * follower's capture ended before the kernel's argv did.  When the argv
 * could not be read, blob is NULL and reason (static or the follower's, valid
 * for the call) says why.  The sink applies the spec's bounds
 * (PMU_ARGV_MAX_ARGS / PMU_ARGV_MAX_BYTES, lib/spec.h).
 */
struct pmu_exec_argv {
	const char *blob;
	size_t len;
	bool truncated;
	const char *reason;
};

/*
 * Where the cohort goes as it grows.  The follower calls these in the
 * order the cohort stream needs (an incarnation before its threads, execs
 * and end; a parent before its children): joined when an incarnation
 * joins, thread for each of its threads (its pid first), exec at each
 * successful exec, object for each executable mapping seen at an exit,
 * and ended when it ends (in->ended) or, still alive, when the run is
 * over (!in->ended); in->d is valid in every call.  A call that fails
 * returns a negative pmu_err: the follower keeps the first (pmu_cohort.err)
 * and calls the sink no more.
 */
struct pmu_cohort_sink {
	int (*joined)(void *ctx, const struct pmu_incarnation *in);
	int (*thread)(void *ctx, const struct pmu_incarnation *in, pid_t tid);
	int (*exec)(void *ctx, const struct pmu_incarnation *in, uint64_t t, const char *path,
		    const struct pmu_exec_argv *argv);
	int (*object)(void *ctx, const char *path);
	int (*ended)(void *ctx, const struct pmu_incarnation *in);
	void *ctx;
};

/* The bounds of one repetition's cohort are lib/spec.h's
 * PMU_COHORT_MAX_INCARNATIONS / PMU_COHORT_MAX_THREADS, the validator's:
 * the recorder ends the run as truncated rather than exceed them. */

/*
 * Who hears of the cohort's tasks: joined (flags PMU_TASK_*) before the
 * task ran any code of its own (or, attached, while running); exec when a
 * thread other than the leader exec'd (the kernel gave it the process id
 * pid; former_tid is its old id, and the old leader is gone); ended when
 * the task is gone (reaped, or let go at detach); inc_ended when the whole
 * incarnation has (its end is written).  inc is the
 * incarnation's id; t CLOCK_MONOTONIC ns.  A tid may be reported joined
 * again (a thread id seen before in the process): listeners drop repeats.
 */
/*
 * A thread's counts as a follower that counts them itself gives them with
 * its end (the eBPF follower's per-CPU, charged-at-context-switch method:
 * backends/linux/bpf/follow.h struct pmu_bpf_counts).  ev[i] is the index
 * in the run's event list (-e) of the i-th event counted; value, enabled_ns
 * and running_ns are sums over the thread's slices.  lost_slices: slices
 * whose read or charge failed (the values are then a lower bound);
 * no_entry: the follower had no room for the thread (nothing charged).
 * not_counted says why the run's other events are not counted this way.
 */
#define PMU_TASK_COUNTS_MAX 4
struct pmu_task_counts {
	const char *method;        /* "per-cpu-switch" */
	unsigned n;
	int ev[PMU_TASK_COUNTS_MAX];
	uint64_t value[PMU_TASK_COUNTS_MAX], enabled_ns[PMU_TASK_COUNTS_MAX], running_ns[PMU_TASK_COUNTS_MAX];
	uint32_t slices, lost_slices;
	bool no_entry;
	bool missing;              /* the thread's counts never came (lost): nothing is known */
	const char *not_counted;   /* "" when every available event is counted */
};

struct pmu_task_listener {
	void (*joined)(void *ctx, int inc, pid_t pid, pid_t tid, unsigned flags, uint64_t t);
	void (*exec)(void *ctx, int inc, pid_t pid, pid_t former_tid, uint64_t t);
	/* counts: the thread's, when the follower counts (NULL: it does not, or
	 * they were lost: see pmu_task_counts) */
	void (*ended)(void *ctx, int inc, pid_t tid, uint64_t t, const struct pmu_task_counts *counts);
	/* the incarnation ended at end_ns, and its records are written */
	void (*inc_ended)(void *ctx, int inc, uint64_t end_ns);
	void *ctx;
};

#define PMU_TASK_ROOT_PREEXEC 1u   /* the launched root, held before its exec */
#define PMU_TASK_PREEXISTING  2u   /* attach mode: the task was running already */

struct pmu_tidmap;

struct pmu_cohort {
	struct pmu_incarnation *incs;
	size_t n, cap;
	size_t nthreads;        /* thread records, over all incarnations */
	size_t live_tasks;      /* traced tasks not yet reaped */
	/* the bounds in force (0: the spec's), and why the cohort stopped
	 * growing ("" while it grows) */
	size_t max_incs, max_threads;
	char limit_reason[120];
	int err;                /* the sink's first error */
	const struct pmu_cohort_sink *sink;
	size_t live_incs;       /* incarnations not yet ended */
	struct pmu_tidmap *tidmap; /* live tid -> incarnation, while following */
	/* who hears of tasks joining and ending (NULL: nobody), and the
	 * flags of the tasks joining now (PMU_TASK_*) */
	const struct pmu_task_listener *listener;
	unsigned task_flags;
	uint32_t *by_pid;       /* indices sorted by (pid, start), after the run */
};

extern const char *const pmu_res_names[PMU_RES_COUNT_];


void pmu_cohort_release(struct pmu_cohort *c);

/* The incarnation that pid was during [t0, t1], with tid among its
 * threads, or NULL: how records from outside the follower are attributed.
 * After pmu_cohort_finish() it is a binary search over the pid index. */
const struct pmu_incarnation *pmu_cohort_find(const struct pmu_cohort *c, pid_t pid, pid_t tid, uint64_t t0,
					      uint64_t t1);

/* ---- what followers call ------------------------------------------------ */

/*
 * A new incarnation: pid, its parent's id (0 for the root), when it joined,
 * its /proc starttime (clock ticks since boot; 0 unknown) and comm.  It gets
 * its pid as first thread (reported to the listener).  NULL when the cohort
 * is at its bound (c->limit_reason says so) or out of memory (c->err).
 */
struct pmu_incarnation *pmu_cohort_add(struct pmu_cohort *c, pid_t pid, int parent, uint64_t t,
				       uint64_t boot_start, const char *comm, bool preexisting);
/* 0 added, 1 known already, 2 refused at the bound, or a negative pmu_err. */
int pmu_cohort_add_tid(struct pmu_cohort *c, struct pmu_incarnation *in, pid_t tid);
/* The incarnation not yet ended that has tid among its threads / is pid. */
struct pmu_incarnation *pmu_cohort_of_tid(struct pmu_cohort *c, pid_t tid);
struct pmu_incarnation *pmu_cohort_of_pid(struct pmu_cohort *c, pid_t pid);
/* A successful exec of path at t, with its argv (never NULL). */
void pmu_cohort_exec(struct pmu_cohort *c, struct pmu_incarnation *in, uint64_t t, const char *path,
		     const struct pmu_exec_argv *argv);
/* Each of the listener's calls, as the follower sees them. */
void pmu_cohort_task_joined(struct pmu_cohort *c, const struct pmu_incarnation *in, pid_t tid, uint64_t t);
void pmu_cohort_task_exec(struct pmu_cohort *c, const struct pmu_incarnation *in, pid_t former_tid, uint64_t t);
void pmu_cohort_task_ended(struct pmu_cohort *c, const struct pmu_incarnation *in, pid_t tid, uint64_t t,
			   const struct pmu_task_counts *counts);
/* The nine totals of in (each "not observed" until set), or NULL out of memory. */
struct pmu_resource *pmu_cohort_res(struct pmu_incarnation *in);
void pmu_res_set(struct pmu_resource *r, uint64_t v, const char *source);
void pmu_res_unavail(struct pmu_resource *r, const char *source, const char *remedy, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* in ended at t (exit_kind 0 unknown, 1 exited with exit_value, 2 killed by
 * signal exit_value): it is written out and only its compact part stays. */
void pmu_cohort_end(struct pmu_cohort *c, struct pmu_incarnation *in, int exit_kind, int exit_value, uint64_t t);
/*
 * The run is over: what is still alive is written out as alive, the live
 * index goes, and the pid index of pmu_cohort_find() is made.  Returns err,
 * or the sink's first error when err is 0.
 */
int pmu_cohort_finish(struct pmu_cohort *c, int err);

#endif
