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

/* Whether this pmurec can attach to USDT probes (pmurec --list-probes):
 * true with why saying on what grounds, or false with why and *remedy. */
bool pmu_backend_usdt_attach(char *why, size_t n, const char **remedy);

/* Host settings that bear on timing (governor, SMT, turbo, clocksource),
 * in the same shape. */
int pmu_backend_settings(json_t *settings);

#include "cohort_model.h"
#include "collector.h"

/* ---- the host's CPU time ------------------------------------------------ */

/*
 * The host's CPU time at one instant, summed over every CPU, to be
 * differenced over a repetition: run.json's host_load (spec 1.4, scope
 * system).  Host-wide: it holds the cohort's own CPU time and everybody
 * else's, and never stands for the cohort's.  busy is user + nice + system
 * + irq + softirq (guest time is inside user); steal is the time a
 * hypervisor ran something else while a CPU of this host wanted to run.
 * The times are ticks converted to ns: resolution_ns is one tick.
 *
 * pmu_host_cpu_read: 0 with *s filled and s->ok, or a negative pmu_err
 * with s->reason and s->remedy (the stub: PMU_ERR_UNSUPPORTED).  It leaves
 * pmu_error_detail() alone: the recorder reads the host after a follow
 * that may have failed, and reports that failure.  t_ns is
 * CLOCK_MONOTONIC just after the read.
 */
struct pmu_host_cpu {
	bool ok;
	uint64_t t_ns;
	uint64_t busy_ns, steal_ns, idle_ns, iowait_ns;
	uint64_t resolution_ns;
	unsigned cpus;          /* the CPUs summed over (online when read) */
	const char *source;     /* what was read, e.g. "/proc/stat" */
	char reason[200];
	const char *remedy;
};

int pmu_host_cpu_read(struct pmu_host_cpu *s);

/* ---- the cohort's cgroup ------------------------------------------------ */

/*
 * A cgroup v2 leaf that is the cohort's own (--cohort cgroup or auto):
 * made before the command is forked (the recorder may have to step aside
 * to enable controllers), the command moved in before its exec, counted
 * and read by every collector that scopes by it (collector.h:
 * env->cohort_cgroup), and ended (what is left in it killed, the leaf
 * removed) once every collector has stopped.
 *   new: 0, or PMU_ERR_UNSUPPORTED with why and *remedy (this host or user
 *        cannot have one), or another negative pmu_err;
 *   enter: move pid in; 0 or a negative pmu_err with why;
 *   id: its cgroup id (the kernfs inode, what bpf_get_current_cgroup_id()
 *       gives), 0 unknown;
 *   end: NULL is a no-op; 0 or PMU_ERR_IO when the leaf could not go.
 */
struct pmu_cohort_cgroup;

int pmu_cohort_cgroup_new(struct pmu_cohort_cgroup **out, char *why, size_t n, const char **remedy);
int pmu_cohort_cgroup_enter(struct pmu_cohort_cgroup *g, pid_t pid, char *why, size_t n);
const char *pmu_cohort_cgroup_path(const struct pmu_cohort_cgroup *g);
uint64_t pmu_cohort_cgroup_id(const struct pmu_cohort_cgroup *g);
int pmu_cohort_cgroup_end(struct pmu_cohort_cgroup *g);

/* ---- launch and follow -------------------------------------------------- */

/*
 * How the cohort is followed.  ptrace stops every task at its fork, exec
 * and exit (unprivileged: a parent may trace its children); eBPF sees the
 * same events from kernel tracepoints without stopping anyone (root, or
 * CAP_BPF + CAP_PERFMON).  auto takes eBPF where it can be loaded, else
 * ptrace, and says why.  none follows nothing: the command alone, with its
 * wait4 totals (mode none).
 */
enum pmu_follower_kind { PMU_FOLLOW_NONE, PMU_FOLLOW_AUTO, PMU_FOLLOW_PTRACE, PMU_FOLLOW_EBPF };

struct pmu_launch {
	char *const *argv;
	pid_t attach_pid;       /* attach to this running tree instead of launching argv (ptrace) */
	enum pmu_follower_kind follower;
	/* the command's RLIMIT_NOFILE soft limit, when the recorder raised its
	 * own (0: leave it): the command runs with the limit it was given */
	unsigned long long child_nofile;
	/* the eBPF follower's ring buffer, bytes (0: its default); tests make it tiny */
	size_t ring_bytes;
	/* the run's counting events (-e), resolved: the eBPF follower counts
	 * them per thread itself (per CPU, charged at each context switch),
	 * since it holds no task for per-thread counters; NULL: none */
	const struct pmu_evspec *ev;
	size_t nev;
	/* the cohort's cgroup (the command enters it in before_release), or
	 * NULL.  The eBPF follower needs it: no tracer holds the cohort, so a
	 * keeper kills the cgroup if the recorder dies (auto: ptrace without it) */
	const struct pmu_cohort_cgroup *cgroup;
	/* Called once the command is held behind the barrier with the follower
	 * attached, before it may exec: collectors open here.  Then, while
	 * following, the exit of any child of the recorder that is not in the
	 * cohort is passed to on_other_exit (the follower reaps every child). */
	void (*before_release)(void *ctx, pid_t root);
	void (*on_other_exit)(void *ctx, pid_t pid, int status);
	void *ctx;
	/* the cohort's records, as they happen (NULL: kept in memory only) */
	const struct pmu_cohort_sink *sink;
	/* who hears of every task joining, exec'ing and ending */
	const struct pmu_task_listener *listener;
};

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
	/* the follower that ran ("ptrace", "ebpf", "none"), why it was chosen
	 * (auto: why not eBPF), and what proves it attached */
	const char *follower;
	char follower_why[300];
	char follower_evidence[300];
	/* eBPF: records lost (failed reserves, map updates) and undecodable;
	 * what the loss was made of, and the first undecodable record
	 * described ("" when none) */
	uint64_t lost, malformed;
	char lost_why[300];
	char malformed_first[200];
};

/*
 * A follow in progress.  The recorder's loop (record/loop.c) drives it:
 *
 *   pmu_follow_start   fork the command behind a barrier (or attach to
 *                      l->attach_pid), attach the follower, call
 *                      before_release, release the command;
 *   pmu_follow_fds     the fds to poll for it (readable);
 *   pmu_follow_drain   handle what is ready, never blocking; *done once
 *                      the whole cohort has ended;
 *   pmu_follow_kill    send sig to every process of the cohort;
 *   pmu_follow_detach  attach mode: let go of the tree, leaving it running;
 *   pmu_follow_end     finish the cohort (what lives is written out as
 *                      alive), read exec's outcome, free f.
 *
 * start returns 0 or a negative pmu_err (f is then NULL and nothing runs);
 * end returns err, or the follower's or the cohort sink's first error.
 */
struct pmu_follow;

int pmu_follow_start(const struct pmu_launch *l, struct pmu_cohort *c, struct pmu_launch_result *res,
		     struct pmu_follow **f);
int pmu_follow_fds(const struct pmu_follow *f, int *fds, int max);
int pmu_follow_drain(struct pmu_follow *f, bool *done);
void pmu_follow_kill(struct pmu_follow *f, int sig);
void pmu_follow_detach(struct pmu_follow *f);
/* Whether this follower holds each new task before it runs (ptrace). */
bool pmu_follow_stops(const struct pmu_follow *f);
int pmu_follow_end(struct pmu_follow *f, int err);

/* Set by the recorder's signal handler: forward to the cohort and finish. */
extern volatile int pmu_backend_stop_signal;
extern volatile int pmu_backend_abort;

/* The counting collector is a collector like the others (collector.h):
 * its ops table is the backend's pmu_counting_collector. */

#endif
