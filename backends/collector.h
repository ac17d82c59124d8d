#ifndef PMU_COLLECTOR_H
#define PMU_COLLECTOR_H

/*
 * The collector contract: everything the recorder knows about a collector.
 *
 * A collector is one ops table (struct pmu_collector_ops) in its own file,
 * and one row in the recorder's table (record/collectors.c).  The recorder
 * drives every collector the same way, never knowing which it drives:
 *
 *   probe    decide whether it can run on this host and in this run; set up
 *            its state.  Capability rows go to caps; an unavailable
 *            collector says so in its lifecycle (pmu_lc_unavailable) and
 *            gets no further call but emit and release (a collector not
 *            requested gets only emit, with a NULL state).
 *   open     before the root may exec (the root is held behind the launch
 *            barrier): attach to the kernel, start children.  The cohort's
 *            cgroup, when there is one, is in env->cohort_cgroup by then.
 *   task     a task of the cohort joined, exec'd or ended (the follower's
 *            events, in order, with the incarnation).
 *   fds      the fds it wants polled (readable), at most max.
 *   drain    read what is ready, without blocking; also called on every
 *            tick of the loop's timer (now), so ring buffers are consumed on
 *            a timer, not a wakeup per record.
 *   stop     the cohort is gone (or let go): read what is left, detach.
 *   emit     write its streams into the bundle (its lifecycle is written by
 *            the recorder after emit, so emit may still add to it).
 *   release  free the state.
 *
 * Every op but probe, emit and release is optional (NULL).  The lifecycle
 * (lib/lifecycle.h) is recorded live, at the real time of each step: the
 * recorder stamps requested, probed and the final status; the collector
 * stamps opened, attached (with evidence), drop and malformed counts, and
 * stopped as they happen.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "cohort_model.h"

struct pmu_lifecycle;
struct pmu_evspec;
struct pmu_cohort_cgroup;
struct pmu_sampling_opts;

/*
 * The bundle as a collector writes it: streams of JSON records under the
 * repetition's data/ (rel: "collectors/<name>/<file>.jsonl"; the recorder
 * adds the header with the stream kind's units).  open gives a stream, put
 * appends one record (taking the reference, whatever the outcome), close
 * finishes it.  Each returns 0 or a negative pmu_err; after an error the
 * bundle is not written.  A collector may write while the cohort runs
 * (memory stays flat) or at emit.
 */
struct pmu_stream;
struct pmu_out {
	int (*open)(struct pmu_out *o, const char *rel, const char *kind, struct pmu_stream **s);
	int (*put)(struct pmu_stream *s, json_t *rec);
	int (*close)(struct pmu_stream *s);
	void *ctx;
	/*
	 * Binary payload (spec 1.6: perf.data, retained ELF files), closed
	 * with close.  rel is under the repetition's data/ (shared false,
	 * e.g. "collectors/sampling/perf.data") or under the bundle's data/
	 * for every repetition (shared true, e.g. "build-id/ab/cdef..."):
	 * a shared file another repetition already wrote gives
	 * -PMU_ERR_EXISTS (the caller keeps that copy).  NULL in writers
	 * without binary files.
	 */
	int (*blob_open)(struct pmu_out *o, const char *rel, bool shared, struct pmu_stream **s);
	int (*blob_write)(struct pmu_stream *s, const void *p, size_t n);
};

/* Write recs (a JSON array, its reference taken) as the stream rel of kind:
 * open, put each, close; 0 or the first negative pmu_err. */
static inline int pmu_out_stream(struct pmu_out *o, const char *rel, const char *kind, json_t *recs)
{
	struct pmu_stream *s = NULL;
	size_t i;
	json_t *r;
	int err = recs ? o->open(o, rel, kind, &s) : -1;

	json_array_foreach(recs, i, r)
		if (!err)
			err = o->put(s, json_incref(r));
	json_decref(recs);
	if (s) {
		int e2 = o->close(s);

		err = err ? err : e2;
	}
	return err;
}

/* The run's time window [start_ns, end_ns]: every record lies inside;
 * launch_ns: when the command was launched (or the tree attached). */
struct pmu_run_window {
	uint64_t start_ns, end_ns, launch_ns;
};

enum pmu_cohort_scope { PMU_SCOPE_AUTO, PMU_SCOPE_INHERIT, PMU_SCOPE_CGROUP };

/* --alloc: the allocation sampler's mean interval, bytes */
#define PMU_ALLOC_SAMPLE_DEFAULT (512u * 1024u)

/* What the run asked for, the same for every collector (read-only). */
struct pmu_run_config {
	int mode;                      /* 0 none, 1 light, 2 full */
	pid_t attach;                  /* attach mode: the running tree's root, else 0 */
	const struct pmu_evspec *ev;   /* -e, resolved (lib/perfev.h) */
	size_t nev;
	bool scaled;                   /* --scaled */
	enum pmu_cohort_scope scope;   /* --cohort */
	int collector_timeout_ms;
	int delay_ms;
	/* the sampling collector's options (backends/linux/sampling.h); NULL:
	 * the mode's defaults */
	const struct pmu_sampling_opts *sampling;
	/* --max-output-bytes (0: none): a collector of raw OS records
	 * (syscalls) keeps its raw records within it and records the
	 * truncation; its statistics are never cut */
	uint64_t max_output_bytes;
	/* --syscall-ring-kb: the syscalls collector's BPF ring (0: its default) */
	unsigned syscall_ring_kb;
	/* the command as given (argv[0] not resolved; the probes collector
	 * resolves it as execvp would); NULL in attach mode */
	char *const *argv;
	/* --probe PROVIDER:NAME (repeatable): probes the probes collector
	 * records raw, beyond its probe map */
	const char *const *probes;
	size_t nprobes;
	/* --alloc / --alloc-sample BYTES: the allocation sampler's mean
	 * interval in bytes; 0: allocation sampling not asked for */
	uint64_t alloc_sample_bytes;
	/* --alloc-via */
	enum pmu_alloc_via { PMU_ALLOC_AUTO, PMU_ALLOC_UPROBE, PMU_ALLOC_PRELOAD } alloc_via;
};

/* Whether the follower in use holds each new task before it runs
 * (ptrace: yes; eBPF: no, it reports tasks as they go). */
enum pmu_follow_stops { PMU_STOPS_NONE, PMU_STOPS_BEFORE_RUN };

/* What a collector is given: the same for all, but for its lifecycle. */
struct pmu_collector_env {
	const struct pmu_run_config *cfg;
	struct pmu_cohort *cohort;     /* the cohort model (lib/cohort_model.h) */
	struct pmu_lifecycle *lc;      /* this collector's, live */
	/* the cohort's cgroup (backend.h), set before open; NULL: none, and
	 * cgroup_why/cgroup_remedy say why when one was asked for */
	const struct pmu_cohort_cgroup *cohort_cgroup;
	const char *cgroup_why, *cgroup_remedy;
	enum pmu_follow_stops stops;   /* of the follower in use */
	const char *follower;          /* its name: "ptrace", "ebpf", "none" */
	struct pmu_out *out;           /* the bundle */
	/* set once the follow has started: whether the cohort is followed,
	 * and if not why (a collector scoped by the cohort cannot run then) */
	bool followed;
	const char *follow_reason, *follow_remedy;
	/* the follower's own account (the cohort collector's lifecycle):
	 * why this follower, what proves it attached, what it lost */
	const char *follower_why, *follower_evidence;
	uint64_t follow_lost, follow_malformed;
	const char *follow_lost_why;        /* what the loss was made of */
	const char *follow_malformed_first; /* the first undecodable record, described */
	const char *cohort_note;       /* what writing cohort.jsonl took */
	void *arg;                     /* the table row's argument (an external collector's spec) */
};

/* joined, exec'd, ended (a thread); INC_ENDED: the whole incarnation has
 * ended at t and its cohort records are written */
enum pmu_task_what { PMU_TASK_JOINED, PMU_TASK_EXEC, PMU_TASK_ENDED, PMU_TASK_INC_ENDED };

struct pmu_task_event {
	enum pmu_task_what what;
	int inc;                       /* the incarnation's id */
	pid_t pid, tid;                /* exec: tid is the former tid of a non-leader exec, else pid */
	unsigned flags;                /* joined: PMU_TASK_* */
	uint64_t t;                    /* CLOCK_MONOTONIC ns */
	/* ended: the thread's counts when the follower counted them itself
	 * (lib/cohort_model.h), else NULL; valid during the call */
	const struct pmu_task_counts *counts;
};

struct pmu_collector_ops {
	const char *name;              /* its directory in the bundle: data/collectors/<name>/ */
	unsigned modes;                /* requested in these modes: bit 0 none, 1 light, 2 full */
	/* Optional: whether the run asks for it at all (e.g. alloc: only with
	 * --alloc); NULL: in every run of its modes.  Not wanted: not-requested. */
	bool (*wanted)(const struct pmu_run_config *cfg);
	/* Returns 0 (state set, possibly to a state that says "unavailable")
	 * or a negative pmu_err when the recorder itself failed. */
	int (*probe)(struct pmu_collector_env *env, json_t *caps, void **state);
	/* Whether it is running (false: unavailable, say no more). */
	bool (*usable)(void *state);
	int (*open)(void *state, pid_t root, uint64_t t);
	void (*task)(void *state, const struct pmu_task_event *ev);
	int (*fds)(void *state, int *fds, int max);
	int (*drain)(void *state, uint64_t now);
	void (*stop)(void *state, uint64_t t);
	/* Its streams (env->out) of the run's window.  Called for every
	 * collector of the table, requested or not (state is then NULL), so
	 * that what the bundle always has is always written.  Returns 0 or a
	 * negative pmu_err. */
	int (*emit)(void *state, struct pmu_collector_env *env, const struct pmu_run_window *win);
	/* true when the bundle must not validate because of it (failed, loss) */
	bool (*failed)(void *state, char *why, size_t n);
	void (*release)(void *state);
	/* Its name in the bundle when not .name (an external collector names
	 * itself in its hello); NULL: .name. */
	const char *(*instance)(void *state);
	/* Give the instance another name (two would share one). */
	void (*rename)(void *state, const char *name);
	/* A child of the recorder outside the cohort exited: true when it
	 * was this collector's (its keeper). */
	bool (*reaped)(void *state, pid_t pid, int status);
};

/* The collectors of this pmu, in the order run.json lists them, NULL-ended
 * (record/collectors.c); and the one op table each external collector
 * (pmurec --collector) is driven by. */
extern const struct pmu_collector_ops *const pmu_collectors[];
extern const struct pmu_collector_ops pmu_external_collector;

#endif
