/*
 * The eBPF follower (follow_ebpf.h): the records of the loader
 * (follow_bpf.c, bpf/follow.bpf.c) into the cohort model.  No task is ever
 * stopped: the kernel reports each fork, exec and exit of a member as it
 * happens, and the loop drains the ring on its tick.
 *
 * What each record does:
 *   fork, thread:  a thread of the incarnation its tgid is;
 *   fork, process: a new incarnation, parent the forking one, identity
 *                  (pid, /proc starttime in clock ticks) from the kernel;
 *   exec:          its exec (after a non-leader exec, the old tid is gone);
 *   exit:          one per thread, with the kernel's final accounting, summed
 *                  per incarnation; the group's last thread ends it, with
 *                  the wait(2) status of the process.
 * A record that names a task the model does not have (its fork record was
 * lost) is not attributable: it is counted with the lost ones, never made up.
 *
 * The group's last exit record is not always the last of its threads': each
 * record is sent at the thread's last context switch, and a thread that
 * left exit_notify() first may switch out for the last time after the last
 * one did (a thread killed by a non-leader exec is released at once, and
 * its last switch may come after the new image has run and ended).  So the
 * group's end waits, held, until every thread's record is in; what is still
 * missing once no record can come any more (pmu_ebpf_finish) is said so in
 * the totals.
 *
 * The totals and their sources (spec 12.5, resource records):
 *   cpu_user_ns, cpu_system_ns: sum_exec_runtime of the threads, split in
 *     the proportion of their utime:stime ticks, as /proc/PID/stat does
 *     (cputime_adjust);
 *   minor/major faults, voluntary/involuntary switches: the threads' sums;
 *   read_bytes, write_bytes: rchar, wchar of the threads, summed (the
 *     process's own, as the ptrace follower reads them);
 *   max_rss_bytes: signal->maxrss at the group's end (the largest RSS of
 *     the process, an exec'd-away image included).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "follow_bpf.h"
#include "follow_ebpf.h"
#include "perfev.h"
#include "util.h"

/* Per incarnation, while it lives: the sums of its threads' exits. */
struct acc {
	uint64_t runtime, utime, stime, minflt, majflt, nvcsw, nivcsw, rchar, wchar;
	uint32_t exits;
	uint64_t last_switch;   /* the latest of its threads' last switches (h.time_ns) */
	bool held;              /* its group's end waits in held[] */
};

/* A group's last exit record whose end waits for other threads' records. */
struct held {
	size_t inc;             /* incarnation index */
	struct pmu_bpf_exit x;
};

struct pmu_ebpf_follow {
	struct pmu_cohort *c;
	struct pmu_bpf_follow *bpf;
	pid_t root;
	int root_status;
	bool root_reaped;
	struct acc *acc;        /* by incarnation index, grown with the cohort */
	size_t nacc;
	uint64_t unknown;       /* records naming a task the model does not have */
	struct held *held;      /* few: only while a thread's last switch lags */
	size_t nheld, held_cap;
	int err;
	long page;
	/* per-thread counts (the per-CPU, charged-at-context-switch method):
	 * the run's events counted (their index in -e), and why the others
	 * are not; counted: the run asked for events at all */
	bool counted;
	unsigned nev;
	int ev_idx[PMU_BPF_NEV];
	struct perf_event_attr attr[PMU_BPF_NEV];
	char not_counted[600];
	/* counts records waiting for their thread's exit record (sent just
	 * before it, but another CPU's records may come between) */
	struct pmu_bpf_counts *pend;
	size_t npend, pend_cap;
};

static struct acc *acc_of(struct pmu_ebpf_follow *e, const struct pmu_incarnation *in)
{
	size_t i = (size_t)(in - e->c->incs);

	if (i >= e->nacc) {
		size_t n = e->nacc ? e->nacc : 64;
		struct acc *a;

		while (n <= i)
			n *= 2;
		if (!(a = realloc(e->acc, n * sizeof(*a))))
			return NULL;
		memset(a + e->nacc, 0, (n - e->nacc) * sizeof(*a));
		e->acc = a;
		e->nacc = n;
	}
	return &e->acc[i];
}

/*
 * True when the recorder is not in the initial PID namespace: the kernel
 * gives that one a fixed inode number (PROC_PID_INIT_INO, 0xEFFFFFFC), and
 * the eBPF programs see its pids.  (NSpid in /proc/self/status cannot
 * tell: with a /proc of the inner namespace it lists one pid.)
 */
static bool nested_pidns(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) == 0 && st.st_ino != 0xEFFFFFFCu;
}

/* append ("; " between) to e->not_counted */
static void why_not(struct pmu_ebpf_follow *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void why_not(struct pmu_ebpf_follow *e, const char *fmt, ...)
{
	size_t k = strlen(e->not_counted);
	va_list ap;

	if (k && k + 2 < sizeof(e->not_counted)) {
		memcpy(e->not_counted + k, "; ", 3);
		k += 2;
	}
	va_start(ap, fmt);
	vsnprintf(e->not_counted + k, sizeof(e->not_counted) - k, fmt, ap);
	va_end(ap);
}

/*
 * Which of the run's events the follower counts per thread: the available
 * ones, in the order given, at most PMU_BPF_NEV, each opened once on CPU 0
 * first (the loader needs every event on some CPU; one the PMU refuses,
 * such as a hardware event on a host without a PMU, is left out with the
 * reason and the others still count).
 */
static void pick_events(struct pmu_ebpf_follow *e, const struct pmu_launch *l)
{
	e->counted = l->ev && l->nev;
	for (size_t i = 0; i < l->nev && l->ev; i++) {
		const struct pmu_evspec *s = &l->ev[i];
		struct perf_event_attr *a = &e->attr[e->nev];
		long fd;

		if (!s->available)
			continue; /* the counting collector says why */
		if (e->nev == PMU_BPF_NEV) {
			why_not(e, "%s: the eBPF follower counts at most %d events per thread", s->name, PMU_BPF_NEV);
			continue;
		}
		memset(a, 0, sizeof(*a));
		a->size = sizeof(*a);
		a->type = s->type;
		a->config = s->config;
		a->config1 = s->config1;
		a->config2 = s->config2;
		a->exclude_user = s->exclude_user;
		a->exclude_kernel = s->exclude_kernel;
		a->exclude_hv = s->exclude_hv;
		fd = syscall(SYS_perf_event_open, a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			why_not(e, "%s: cannot be opened per CPU (perf_event_open on CPU 0: %s)", s->name, strerror(errno));
			continue;
		}
		close((int)fd);
		e->ev_idx[e->nev++] = (int)i;
	}
}

int pmu_ebpf_open(struct pmu_cohort *c, const struct pmu_launch *l, struct pmu_ebpf_follow **out, char *why,
		  size_t n, const char **remedy)
{
	/* a fork in the cohort's cgroup joins too (the membership map is the
	 * rule; the cgroup catches what the map could not hold) */
	struct pmu_bpf_follow_opts o = { .ring_bytes = l->ring_bytes, .cgroup_id = pmu_cohort_cgroup_id(l->cgroup) };
	struct pmu_bpf_why w = { 0 };
	struct pmu_ebpf_follow *e;
	int err;

	*out = NULL;
	if (nested_pidns()) {
		/* the programs see the kernel's pids, the recorder its namespace's:
		 * the root would never be recognized */
		snprintf(why, n, "pmurec runs in a PID namespace other than the initial one (/proc/self/ns/pid), "
			 "and the eBPF programs see the pids of the initial namespace");
		*remedy = "record from the initial PID namespace, or with --follower ptrace";
		return PMU_ERR_UNSUPPORTED;
	}
	if (!(e = calloc(1, sizeof(*e))))
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	e->c = c;
	e->page = sysconf(_SC_PAGESIZE);
	pick_events(e, l);
	o.nev = e->nev;
	for (unsigned i = 0; i < e->nev; i++)
		o.ev_attr[i] = &e->attr[i];
	err = pmu_bpf_follow_open(&o, &e->bpf, &w);
	if (err && e->nev && err != PMU_ERR_INVAL) {
		/* the follower without its counters rather than none: the
		 * counts say why they are missing */
		char first[sizeof(w.reason)];

		snprintf(first, sizeof(first), "%s", w.reason[0] ? w.reason : pmu_error_detail());
		e->nev = 0;
		e->not_counted[0] = '\0';
		why_not(e, "the eBPF follower's per-CPU counters could not be set up: %s", first);
		o.nev = 0;
		memset(&w, 0, sizeof(w));
		err = pmu_bpf_follow_open(&o, &e->bpf, &w);
	}
	if (err) {
		snprintf(why, n, "%s", w.reason[0] ? w.reason : pmu_error_detail());
		*remedy = w.remedy ? w.remedy : "record with --follower ptrace";
		free(e);
		return err == PMU_ERR_INVAL ? err : PMU_ERR_UNSUPPORTED;
	}
	*out = e;
	return 0;
}

int pmu_ebpf_add_root(struct pmu_ebpf_follow *e, pid_t root, char *why, size_t n)
{
	int err = pmu_bpf_follow_add_root(e->bpf, root);

	if (err)
		snprintf(why, n, "cannot add the command (pid %d) to the membership map: %s", (int)root,
			 pmu_error_detail());
	else
		e->root = root;
	return err;
}

int pmu_ebpf_fds(const struct pmu_ebpf_follow *e, int *fds, int max)
{
	if (!e || max < 1 || pmu_bpf_follow_fd(e->bpf) < 0)
		return 0;
	fds[0] = pmu_bpf_follow_fd(e->bpf);
	return 1;
}

/* The command's name after exec: what the kernel sets (the file's basename,
 * TASK_COMM_LEN - 1 bytes). */
static void comm_of_path(const char *path, char *comm, size_t n)
{
	const char *b = strrchr(path, '/');

	snprintf(comm, n, "%.15s", b ? b + 1 : path);
}

/*
 * The exec'd file's path, resolved as /proc/PID/exe would give it: the
 * kernel has the name exec was given; an absolute one is resolved (symbolic
 * links followed), a relative one through /proc/PID/exe while the process
 * is still that incarnation, else kept as given.
 */
static void exec_path(const struct pmu_bpf_exec *x, const struct pmu_incarnation *in, char *out, size_t n)
{
	char link[64], buf[PATH_MAX];
	ssize_t len;
	uint64_t st = 0;

	if (x->filename[0] == '/' && realpath(x->filename, buf)) {
		snprintf(out, n, "%s", buf);
		return;
	}
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)x->tgid);
	if (pmu_pid_starttime((int)x->tgid, &st) == 0 && st == in->boot_start &&
	    (len = readlink(link, buf, sizeof(buf) - 1)) > 0) {
		buf[len] = '\0';
		snprintf(out, n, "%s", buf);
		return;
	}
	snprintf(out, n, "%s", x->filename[0] ? x->filename : "?");
}

/* The group's end: totals from the sums, the status from the kernel. */
static void group_end(struct pmu_ebpf_follow *e, struct pmu_incarnation *in, const struct pmu_bpf_exit *x)
{
	static const char cpu_src[] = "eBPF: the threads' sum_exec_runtime at exit, split by their utime:stime "
				      "ticks (as /proc/PID/stat)";
	static const char sum_src[] = "eBPF: the threads' task accounting at exit, summed";
	static const char io_src[] = "eBPF: the threads' rchar, wchar (task io accounting) at exit, summed";
	static const char rss_src[] = "eBPF: signal->maxrss at the group's exit";
	struct acc *a = acc_of(e, in);
	struct pmu_resource *res = pmu_cohort_res(in);
	int st = x->group_status, kind = WIFEXITED(st) ? 1 : WIFSIGNALED(st) ? 2 : 0;

	if (res && a) {
		uint64_t ticks = a->utime + a->stime, user;

		/* cputime_adjust: all to one side when the other has no tick
		 * (no tick at all: all to user) */
		if (!a->stime)
			user = a->runtime;
		else if (!a->utime)
			user = 0;
		else
			user = (uint64_t)((unsigned __int128)a->runtime * a->utime / ticks);
		pmu_res_set(&res[PMU_RES_CPU_USER_NS], user, cpu_src);
		pmu_res_set(&res[PMU_RES_CPU_SYSTEM_NS], a->runtime - user, cpu_src);
		pmu_res_set(&res[PMU_RES_MINOR_FAULTS], a->minflt, sum_src);
		pmu_res_set(&res[PMU_RES_MAJOR_FAULTS], a->majflt, sum_src);
		pmu_res_set(&res[PMU_RES_VOLUNTARY_SWITCHES], a->nvcsw, sum_src);
		pmu_res_set(&res[PMU_RES_INVOLUNTARY_SWITCHES], a->nivcsw, sum_src);
		pmu_res_set(&res[PMU_RES_MAX_RSS_BYTES], x->maxrss_pages * (uint64_t)e->page, rss_src);
		if (a->exits < in->ntids) {
			/* a thread's exit record was lost: a sum without it would be short */
			for (int r = 0; r < PMU_RES_COUNT_; r++)
				if (r != PMU_RES_MAX_RSS_BYTES)
					pmu_res_unavail(&res[r], sum_src, "none: the loss is recorded in the cohort lifecycle",
							"%u of %u threads' exit records were received", a->exits,
							in->ntids);
		} else {
			pmu_res_set(&res[PMU_RES_READ_BYTES], a->rchar, io_src);
			pmu_res_set(&res[PMU_RES_WRITE_BYTES], a->wchar, io_src);
		}
	}
	if (in->d && x->comm[0])
		snprintf(in->d->comm, sizeof(in->d->comm), "%.*s", (int)strnlen(x->comm, sizeof(x->comm)), x->comm);
	/* its end: the group's exit, or, when later, its threads' last
	 * context switch (each thread's end, and the time of its counts, is
	 * its last switch: a thread ends inside its incarnation) */
	uint64_t end = x->exit_ns ? x->exit_ns : x->h.time_ns;

	if (a && a->last_switch > end)
		end = a->last_switch;
	pmu_cohort_end(e->c, in, kind, kind == 1 ? WEXITSTATUS(st) : kind == 2 ? WTERMSIG(st) : 0, end);
}

/* Keep x until the incarnation's other threads' records are in; false
 * without memory (the caller ends the group now). */
static bool hold(struct pmu_ebpf_follow *e, struct pmu_incarnation *in, struct acc *a, const struct pmu_bpf_exit *x)
{
	if (e->nheld == e->held_cap) {
		size_t n = e->held_cap ? 2 * e->held_cap : 8;
		struct held *h = realloc(e->held, n * sizeof(*h));

		if (!h)
			return false;
		e->held = h;
		e->held_cap = n;
	}
	e->held[e->nheld++] = (struct held){ (size_t)(in - e->c->incs), *x };
	a->held = true;
	return true;
}

/* End the held group of incarnation index i (its record leaves held[]). */
static void release(struct pmu_ebpf_follow *e, size_t i)
{
	for (size_t k = 0; k < e->nheld; k++) {
		if (e->held[k].inc != i)
			continue;
		struct pmu_bpf_exit x = e->held[k].x;

		e->held[k] = e->held[--e->nheld];
		e->acc[i].held = false;
		group_end(e, &e->c->incs[i], &x);
		return;
	}
}

/* The thread's counts record (it came before its exit record), taken out
 * of pend into tc; false when there is none. */
static bool take_counts(struct pmu_ebpf_follow *e, const struct pmu_bpf_exit *x, struct pmu_task_counts *tc)
{
	for (size_t k = 0; k < e->npend; k++) {
		const struct pmu_bpf_counts *p = &e->pend[k];

		if (p->tid != x->tid || p->tgid != x->tgid)
			continue;
		tc->n = p->nev < e->nev ? p->nev : e->nev;
		for (unsigned i = 0; i < tc->n; i++) {
			tc->ev[i] = e->ev_idx[i];
			tc->value[i] = p->value[i];
			tc->enabled_ns[i] = p->enabled_ns[i];
			tc->running_ns[i] = p->running_ns[i];
		}
		tc->slices = p->slices;
		tc->lost_slices = p->read_fail;
		tc->no_entry = p->flags & PMU_BPF_COUNTS_NOENTRY;
		e->pend[k] = e->pend[--e->npend];
		return true;
	}
	return false;
}

static void keep_counts(struct pmu_ebpf_follow *e, const struct pmu_bpf_counts *p)
{
	if (e->npend == e->pend_cap) {
		size_t n = e->pend_cap ? 2 * e->pend_cap : 8;
		struct pmu_bpf_counts *v = realloc(e->pend, n * sizeof(*v));

		if (!v) {
			/* its thread's counts are then said lost, never made up */
			e->unknown++;
			return;
		}
		e->pend = v;
		e->pend_cap = n;
	}
	e->pend[e->npend++] = *p;
}

static int on_record(const union pmu_bpf_rec *r, void *arg)
{
	struct pmu_ebpf_follow *e = arg;
	struct pmu_cohort *c = e->c;
	struct pmu_incarnation *in;

	switch (r->h.kind) {
	case PMU_BPF_REC_FORK: {
		const struct pmu_bpf_fork *f = &r->fork;

		if (f->flags & PMU_BPF_FORK_NOTRACK)
			break; /* counted by the loader as a map failure: a loss */
		in = pmu_cohort_of_pid(c, (pid_t)f->parent_tgid);
		if (!in) {
			e->unknown++;
			break;
		}
		if (f->flags & PMU_BPF_FORK_THREAD) {
			int k = pmu_cohort_add_tid(c, in, (pid_t)f->child_tid);

			if (k == 1)
				/* a tid the process had before: a new task all the same */
				pmu_cohort_task_joined(c, in, (pid_t)f->child_tid, f->h.time_ns);
			else if (k < 0 && !e->err)
				e->err = k;
			break;
		}
		/* a child inherits its parent's comm until it execs */
		if (!pmu_cohort_add(c, (pid_t)f->child_tgid, in->id, f->h.time_ns, f->child_start_ticks,
				    in->d ? in->d->comm : "?", false)) {
			if (c->limit_reason[0]) {
				/* past the bound: it has run already (no task is held),
				 * so it goes now, and what it did is a counted loss */
				uint64_t st = 0;

				if (pmu_pid_starttime((int)f->child_tgid, &st) == 0 && st == f->child_start_ticks)
					kill((pid_t)f->child_tgid, SIGKILL);
				e->unknown++;
			} else if (!e->err) {
				e->err = c->err ? c->err : pmu_error(PMU_ERR_NOMEM, "out of memory");
			}
		}
		break;
	}
	case PMU_BPF_REC_EXEC: {
		const struct pmu_bpf_exec *x = &r->exec;
		struct pmu_exec_argv argv;
		char path[PATH_MAX];

		in = pmu_cohort_of_pid(c, (pid_t)x->tgid);
		if (!in) {
			e->unknown++;
			break;
		}
		if (x->old_tid != x->tid)
			pmu_cohort_task_exec(c, in, (pid_t)x->old_tid, x->h.time_ns);
		exec_path(x, in, path, sizeof(path));
		/* the argv the program read at the exec (decode checked its bounds) */
		argv.blob = x->flags & PMU_BPF_EXEC_ARGV_FAULT ? NULL : x->argv;
		argv.len = x->argv_len;
		argv.truncated = x->flags & PMU_BPF_EXEC_ARGV_TRUNCATED;
		argv.reason = "the new image's argv could not be read at the exec (bpf_probe_read_user failed)";
		pmu_cohort_exec(c, in, x->h.time_ns, path, &argv);
		if (in->d)
			comm_of_path(x->filename, in->d->comm, sizeof(in->d->comm));
		break;
	}
	case PMU_BPF_REC_COUNTS:
		if (e->nev)
			keep_counts(e, &r->counts);
		break;
	case PMU_BPF_REC_EXIT: {
		const struct pmu_bpf_exit *x = &r->exit;
		struct pmu_task_counts tc = { .method = "per-cpu-switch", .not_counted = e->not_counted };
		struct acc *a;

		in = pmu_cohort_of_tid(c, (pid_t)x->tid);
		if (!in || in->pid != (pid_t)x->tgid) {
			e->unknown++;
			break;
		}
		if ((a = acc_of(e, in))) {
			a->runtime += x->sum_exec_runtime_ns;
			a->utime += x->utime_ns;
			a->stime += x->stime_ns;
			a->minflt += x->min_flt;
			a->majflt += x->maj_flt;
			a->nvcsw += x->nvcsw;
			a->nivcsw += x->nivcsw;
			a->rchar += x->rchar;
			a->wchar += x->wchar;
			a->exits++;
			if (x->h.time_ns > a->last_switch)
				a->last_switch = x->h.time_ns;
		}
		/* no counts record with the exit: it was lost (a failed reserve) */
		if (e->nev && !take_counts(e, x, &tc))
			tc.missing = true;
		pmu_cohort_task_ended(c, in, (pid_t)x->tid, x->h.time_ns, e->counted ? &tc : NULL);
		if (x->flags & PMU_BPF_EXIT_GROUP_DEAD) {
			/* a thread's record still to come: the end waits for it */
			if (!a || a->exits >= in->ntids || !hold(e, in, a, x))
				group_end(e, in, x);
		} else if (a && a->held && a->exits >= in->ntids) {
			release(e, (size_t)(in - c->incs));
		}
		break;
	}
	default:
		e->unknown++;
	}
	return 0;
}

int pmu_ebpf_drain(struct pmu_ebpf_follow *e)
{
	int n;

	if (!e)
		return 0;
	n = pmu_bpf_follow_drain(e->bpf, on_record, e);
	if (n < 0)
		return n;
	return e->err;
}

void pmu_ebpf_finish(struct pmu_ebpf_follow *e)
{
	/* no record can come any more: a group still held lacks a thread's
	 * record for good (group_end says how many arrived) */
	while (e && e->nheld)
		release(e, e->held[0].inc);
}

void pmu_ebpf_root_status(struct pmu_ebpf_follow *e, int status)
{
	if (!e)
		return;
	e->root_reaped = true;
	e->root_status = status;
}

bool pmu_ebpf_done(struct pmu_ebpf_follow *e)
{
	size_t n = 1;

	/* once the root is reaped, the members left say whether more records
	 * will come; none: every record is in the ring (drained by the caller).
	 * Every incarnation seen to end is not enough: a thread's exit record
	 * can still be on its way (an old leader's last switch may come after
	 * the exec'd image it was replaced by has ended), so the threads
	 * between their two exit hooks are waited for too. */
	if (!e || !e->root_reaped)
		return false;
	if (e->c->live_incs == 0)
		return pmu_bpf_follow_dying(e->bpf, &n) == 0 && n == 0;
	return pmu_bpf_follow_members(e->bpf, &n) == 0 && n == 0;
}

void pmu_ebpf_evidence(const struct pmu_ebpf_follow *e, char *out, size_t n)
{
	struct pmu_bpf_follow_stats st;

	pmu_bpf_follow_stats(e->bpf, &st);
	snprintf(out, n,
		 "tracepoints sched_process_fork, sched_process_exec and sched_switch and the %s attached and pid %d "
		 "in the membership map before its exec (load %.1f ms, attach %.1f ms; BTF: %s)",
		 st.exit_hook, (int)e->root, st.load_ms, st.attach_ms, st.btf_source);
}

/* "N on cpu0, N on cpu1": where a per-CPU counter counted */
static void per_cpu(char *out, size_t n, const uint64_t *v, unsigned ncpu)
{
	size_t k = 0;

	out[0] = '\0';
	for (unsigned i = 0; i < ncpu && k < n; i++)
		if (v[i])
			k += (size_t)snprintf(out + k, n - k, "%s%llu on cpu%u", k ? ", " : "", (unsigned long long)v[i], i);
}

void pmu_ebpf_stats(const struct pmu_ebpf_follow *e, uint64_t *lost, char *why, size_t whyn, uint64_t *malformed,
		    char *first, size_t n)
{
	struct pmu_bpf_follow_stats st;
	char rcpu[120], mcpu[120];
	uint64_t gaps;

	*lost = *malformed = 0;
	if (n)
		first[0] = '\0';
	if (whyn)
		why[0] = '\0';
	if (!e)
		return;
	pmu_bpf_follow_stats(e->bpf, &st);
	/* every sequence number not delivered is a lost record: failed
	 * reserves, and children not followed because the map was full */
	gaps = st.gaps > st.dropped ? st.gaps - st.dropped : 0;
	*lost = st.dropped + st.map_fail + gaps + e->unknown;
	/* what it was made of, so that a failed run says which mechanism lost */
	per_cpu(rcpu, sizeof(rcpu), st.dropped_cpu, st.ncpu);
	per_cpu(mcpu, sizeof(mcpu), st.map_fail_cpu, st.ncpu);
	if (*lost)
		snprintf(why, whyn,
			 "%llu failed ring reserve(s)%s%s%s, %llu failed map update(s)%s%s%s, %llu sequence gap(s) "
			 "beyond them (%llu of %llu seqs delivered), %llu record(s) of tasks not followed",
			 (unsigned long long)st.dropped, rcpu[0] ? " (" : "", rcpu, rcpu[0] ? ")" : "",
			 (unsigned long long)st.map_fail, mcpu[0] ? " (" : "", mcpu, mcpu[0] ? ")" : "",
			 (unsigned long long)gaps, (unsigned long long)st.delivered, (unsigned long long)st.assigned,
			 (unsigned long long)e->unknown);
	*malformed = st.malformed;
	snprintf(first, n, "%s", st.first_malformed);
}

void pmu_ebpf_close(struct pmu_ebpf_follow *e)
{
	if (!e)
		return;
	pmu_bpf_follow_close(e->bpf);
	free(e->acc);
	free(e->held);
	free(e->pend);
	free(e);
}
