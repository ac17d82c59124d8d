#ifndef PMU_BACKEND_H
#define PMU_BACKEND_H

/*
 * The one contract between the recorder and a platform backend.  The
 * recorder never includes a backend's private header: it launches the
 * command, follows its cohort and probes the host through these calls.
 * backends/linux/ is the full body; a platform without a backend gets a
 * stub that reports every capability unavailable with the reason.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "spec.h"

/* ---- capability probe --------------------------------------------------- */

/*
 * Fill caps (a JSON array) with one object per capability: name, status,
 * value, and reason/remedy whenever the status is not ok.  host gets
 * os/arch/kernel/cpu.  Probed, never assumed.  Returns 0 or a negative
 * pmu_err.
 */
int pmu_backend_probe(json_t *host, json_t *caps);

/* Host settings that bear on timing (governor, SMT, turbo, clocksource),
 * in the same shape. */
int pmu_backend_settings(json_t *settings);

/* ---- cohort ------------------------------------------------------------- */

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
	int (*exec)(void *ctx, const struct pmu_incarnation *in, uint64_t t, const char *path);
	int (*object)(void *ctx, const char *path);
	int (*ended)(void *ctx, const struct pmu_incarnation *in);
	void *ctx;
};

/* The bounds of one repetition's cohort are lib/spec.h's
 * PMU_COHORT_MAX_INCARNATIONS / PMU_COHORT_MAX_THREADS, the validator's:
 * the recorder ends the run as truncated rather than exceed them. */

struct pmu_launch;
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
	/* the follower's: who hears of tasks joining, and how */
	const struct pmu_launch *launch;
	unsigned task_flags;
	uint32_t *by_pid;       /* indices sorted by (pid, start), after the run */
};

extern const char *const pmu_res_names[PMU_RES_COUNT_];

/* ---- launch and follow -------------------------------------------------- */

struct pmu_launch {
	char *const *argv;
	pid_t attach_pid;       /* attach to this running tree instead of launching argv */
	bool follow;            /* follow forks, execs and exits (else root only) */
	int max_duration_ms;    /* 0: none */
	int grace_ms;           /* SIGTERM -> SIGKILL */
	/* the command's RLIMIT_NOFILE soft limit, when the recorder raised its
	 * own (0: leave it): the command runs with the limit it was given */
	unsigned long long child_nofile;
	/* into_cgroup: create the command in the cgroup v2 directory open at
	 * cgroup_fd (clone3 CLONE_INTO_CGROUP), falling back to a plain fork
	 * where the kernel refuses; the collector that owns the cgroup still
	 * checks, and enters the command, before it may exec */
	bool into_cgroup;
	int cgroup_fd;
	/* Called once the command is seized and before it may exec: external
	 * collectors start here and attach.  Then, while following, the exit
	 * of any child of the recorder that is not in the cohort is passed to
	 * on_other_exit (the follower reaps every child). */
	void (*before_release)(void *ctx, pid_t root);
	void (*on_other_exit)(void *ctx, pid_t pid, int status);
	/* A task joined the cohort (flags: PMU_TASK_*) before it ran any code
	 * of its own (or, attached, while running); and it ended: reaped, or
	 * let go at detach.  inc is the incarnation's id; t CLOCK_MONOTONIC. */
	void (*on_task)(void *ctx, int inc, pid_t pid, pid_t tid, unsigned flags, uint64_t t);
	void (*on_task_end)(void *ctx, int inc, pid_t tid, uint64_t t);
	/* A thread other than the leader exec'd: the kernel gave it the
	 * process id pid; former_tid is its old id, and the old leader is gone. */
	void (*on_task_exec)(void *ctx, int inc, pid_t pid, pid_t former_tid, uint64_t t);
	/* Polled while following (every 50 ms at least): true ends the run
	 * as truncated, with the reason written to why. */
	bool (*over_bound)(void *ctx, char *why, size_t n);
	void *ctx;
	/* the cohort's records, as they happen (NULL: kept in memory only) */
	const struct pmu_cohort_sink *sink;
};

#define PMU_TASK_ROOT_PREEXEC 1u   /* the launched root, held before its exec */
#define PMU_TASK_PREEXISTING  2u   /* attach mode: the task was running already */

struct pmu_launch_result {
	bool exec_failed;
	int exec_errno;
	int wait_status;        /* of the root */
	bool interrupted;       /* a signal to the recorder ended the run */
	int signal;
	bool truncated;         /* a bound ended the run */
	char truncation[128];
	uint64_t start_ns, end_ns;
	bool detached;          /* attach mode: the recorder let go of a tree still running */
	char detach_reason[128];
	bool follow_ok;         /* the cohort was followed */
	/* wait4(2) of the launched command, in every mode: the same source in
	 * mode none and traced modes (it includes the descendants it waited for) */
	bool have_rusage;
	uint64_t ru_user_ns, ru_system_ns, ru_maxrss_bytes, ru_minflt, ru_majflt;
	char follow_reason[200];
	const char *follow_remedy;
};

/*
 * Fork the command behind a barrier, attach to it before it may exec,
 * release it, and follow its cohort until the whole tree has exited.
 * Fills cohort and res.  Returns 0 when the command ran (whatever its
 * exit), or a negative pmu_err when the recorder itself failed.
 */
int pmu_backend_run(const struct pmu_launch *l, struct pmu_cohort *cohort,
		    struct pmu_launch_result *res);

/* Set by the recorder's signal handler: forward to the cohort and finish. */
extern volatile int pmu_backend_stop_signal;
extern volatile int pmu_backend_abort;

void pmu_cohort_release(struct pmu_cohort *c);

/* The incarnation that pid was during [t0, t1], with tid among its
 * threads, or NULL: how records from outside the follower are attributed.
 * After pmu_backend_run() it is a binary search over the pid index. */
const struct pmu_incarnation *pmu_cohort_find(const struct pmu_cohort *c, pid_t pid, pid_t tid, uint64_t t0,
					      uint64_t t1);

/* ---- counting collector ------------------------------------------------- */

struct pmu_evspec;

enum pmu_cohort_scope { PMU_SCOPE_AUTO, PMU_SCOPE_INHERIT, PMU_SCOPE_CGROUP };

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
/* Before the root may exec: the cgroup (scope cgroup/auto) and its counters. */
void pmu_counting_before_release(struct pmu_counting *k, pid_t root, uint64_t t);
/* The cohort's cgroup leaf made for the command (a directory fd, for
 * pmu_launch.cgroup_fd; still owned by k), or -1 when there is none. */
int pmu_counting_cgroup_fd(const struct pmu_counting *k);
void pmu_counting_task(struct pmu_counting *k, int inc, pid_t pid, pid_t tid, unsigned flags, uint64_t t);
void pmu_counting_task_end(struct pmu_counting *k, int inc, pid_t tid, uint64_t t);
void pmu_counting_task_exec(struct pmu_counting *k, int inc, pid_t pid, pid_t former_tid, uint64_t t);
/* The cohort is gone (or let go): read what is open, the cgroup's counters
 * and statistics; remove the cgroup. */
void pmu_counting_stop(struct pmu_counting *k, uint64_t t);
/* Why the cohort cgroup asked for could not be had, or NULL. */
const char *pmu_counting_cgroup_problem(const struct pmu_counting *k);
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

#endif
