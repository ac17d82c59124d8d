/*
 * The counting collector (perf_event_open(2)).
 *
 * Per-incarnation values come from per-thread counter groups: the follower
 * holds every new task at its first ptrace stop, before it runs code of its
 * own, and we open its groups then (pid = tid, cpu = -1, inherit = 0); the
 * launched root's groups are opened before its exec with enable_on_exec, as
 * perf stat does.  Each group is read once, when the task is reaped (the
 * counts of a dead task stay readable until its fds close), with
 * read_format GROUP | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING | ID (| LOST).
 * So every thread has its own numbers and an incarnation's are the sum of
 * its threads': a background process cannot move them, because a per-task
 * counter only runs while its task does.
 *
 * With a cohort cgroup the same groups are also opened with
 * PERF_FLAG_PID_CGROUP on every online CPU: an independent cohort total.
 *
 * Features are probed on the recorder itself, newest first dropped (perf's
 * evsel fallback order): read_format LOST (6.0), PERF_FLAG_FD_CLOEXEC
 * (3.14), then kernel-mode counting refused by perf_event_paranoid (user
 * space only).  Every fallback taken is recorded.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "cgroup.h"
#include "collector.h"
#include "corepmu.h"
#include "counting.h"
#include "lifecycle.h"
#include "counts.h"
#include "error.h"
#include "perfev.h"
#include "spec_json.h"
#include "util.h"

#define MAXEV 64

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1u << 4)
#endif

enum { RD_NONE, RD_OK, RD_OPEN_FAILED, RD_READ_FAILED };

struct kev {
	const struct pmu_evspec *s;
	bool avail;
	char reason[400];
	char remedy[200];
	bool xu, xk, xh;        /* the exclude bits in effect */
	int group, pos;
};

struct kgroup {
	int ev[MAXEV];
	int n;
};

struct kread {
	uint64_t raw, enabled, running, lost;
	uint8_t state;
	uint8_t has_lost;
	int err;                /* errno when open or read failed */
};

struct ktask {
	pid_t tid;
	int inc;
	uint64_t t_end;
	bool open, ended;
	int *fd;                /* per event, -1 */
	struct kread r[];       /* per event */
};

/* An incarnation's counts, summed as its threads end. */
struct kinc {
	size_t tasks, open;     /* counted threads, and those still open */
	uint64_t t_last;        /* the latest end among its threads */
	uint64_t end_ns;
	bool ended;
	struct pmu_cnt_sum *sum; /* [event], from the first thread's end */
};

struct fallback {
	uint64_t t;
	char what[64];
	char reason[240];
	char counter[64];
};

struct pmu_counting {
	struct pmu_counting_opts o;
	struct kev ev[MAXEV];
	int nev;
	struct kgroup grp[MAXEV];
	int ngrp;
	uint64_t read_format;
	bool cloexec, user_only;
	long long paranoid;
	struct fallback fb[8];
	int nfb;
	/* the tasks whose counters are open; a task's counts are written
	 * (and it is freed) when it ends */
	struct ktask **tasks;
	size_t nopen, cap;
	size_t threads_counted, open_failures;
	/* per incarnation (by id - 1), while it has counts not yet totalled */
	struct kinc **incs;
	size_t nincs;
	size_t incs_counted;
	struct pmu_cnt_sum *cohort;  /* [event]: the totals so far */
	int (*emit)(void *ctx, json_t *rec);
	void *emit_ctx;
	uint64_t run_start;
	bool prelude_done;
	int err;                /* emit's first error */
	/* cohort cgroup */
	bool cg_tried, cg_ok;
	/* the follower does not hold new tasks: no per-thread groups, and why */
	bool no_stops;
	/* ... but counts each thread itself, per CPU and charged at each
	 * context switch (counting_switch.c): its threads' losses */
	bool by_switch;
	uint64_t sw_lost_slices, sw_lost_threads;
	char cg_reason[400];
	const char *cg_remedy;
	const struct pmu_cg *cgp; /* the cohort's cgroup (the recorder's) until stop, NULL */
	/* what the scope record says of it, kept at stop: the recorder ends it after */
	char cg_path[640], cg_controllers[128], cg_notes[1024];
	int ncpus;
	int *cpus;
	int *cgfd;              /* [cpu][event] */
	struct kread *cgr;      /* [cpu][event] */
	char cg_count_reason[400];
	const char *cg_count_remedy;
	bool cg_count_ok;
	bool cg_hw_left;        /* hardware groups left off the cgroup: per-thread groups need the counters */
	struct pmu_cgsnap cg_a, cg_b, sys_a, sys_b;
	bool cg_snap_ok, sys_snap_ok;
	uint64_t t_probe, t_stop;
	bool stopped;
	long fd_budget;         /* counter fds we may hold: the limit less a reserve */
	long fd_reserve, fd_limit;
	bool budget_again;      /* made again at the first task */
	long nfds;              /* counter fds open now */
};

/* Descriptors kept free for /proc reads, the bundle's files and the
 * collectors: counters never take the last of them (a quarter of a small
 * limit). */
#define FD_RESERVE 64
#define ENFILE_RESERVE 100000   /* not an errno: held back to keep the reserve */

static long perf_open(struct perf_event_attr *a, pid_t pid, int cpu, int group, unsigned long flags)
{
	return syscall(SYS_perf_event_open, a, pid, cpu, group, flags);
}

static long long paranoid_level(void)
{
	char *s = NULL;
	long long v = 2;

	if (pmu_read_file(AT_FDCWD, "/proc/sys/kernel/perf_event_paranoid", 64, &s, NULL) == 0)
		v = atoll(s);
	free(s);
	return v;
}

static void add_fallback(struct pmu_counting *k, const char *what, const char *counter, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void add_fallback(struct pmu_counting *k, const char *what, const char *counter, const char *fmt, ...)
{
	struct fallback *f;
	va_list ap;

	if (k->nfb == (int)PMU_ARRAY_SIZE(k->fb))
		return;
	f = &k->fb[k->nfb++];
	f->t = pmu_now_mono_ns();
	snprintf(f->what, sizeof(f->what), "%s", what);
	snprintf(f->counter, sizeof(f->counter), "%s", counter ? counter : "");
	va_start(ap, fmt);
	vsnprintf(f->reason, sizeof(f->reason), fmt, ap);
	va_end(ap);
}

/* The first core (CPU) PMU this host exposes (corepmu.h: perf(1)'s rule);
 * false when there is none. */
static bool core_pmu(char *name, size_t n)
{
	char all[256];

	if (pmu_core_pmus(NULL, all, sizeof(all)) <= 0)
		return false;
	pmu_setf(name, n, "%.*s", (int)strcspn(all, " "), all);
	return true;
}

/* errno of perf_event_open(2) → why and what to do, where it happens. */
static void explain(const struct pmu_evspec *s, int e, bool cpu_wide, long long paranoid, char *why, size_t n,
		    char *remedy, size_t rn)
{
	const char *r;
	char pmu[64], rbuf[200];

	switch (e) {
	case ENOENT:
	case ENODEV:
		/* ENOENT means "no PMU took this event": either there is no
		 * hardware PMU at all, or there is one and its driver maps no
		 * event of this CPU to the generic one (armv8_pmuv3 on a CPU
		 * without BR_RETIRED for 'branches').  Only sysfs tells which. */
		if (cpu_wide && s->kind == PMU_EV_SOFTWARE) {
			snprintf(why, n, "perf_event_open of the cohort cgroup: %s: the perf_event controller is not on "
				 "cgroup v2 (bound to a cgroup v1 hierarchy?)", strerror(e));
			r = "unmount the v1 perf_event hierarchy, or boot with systemd.unified_cgroup_hierarchy=1";
		} else if ((s->kind == PMU_EV_HARDWARE || s->kind == PMU_EV_RAW || s->kind == PMU_EV_PFM) &&
			   !core_pmu(pmu, sizeof(pmu))) {
			snprintf(why, n, "perf_event_open: %s: this host exposes no hardware PMU that counts '%s' "
				 "(a virtual machine without a virtual PMU?)", strerror(e), s->name);
			r = "record on bare metal, or on a VM that exposes its PMU (KVM: -cpu host,pmu=on)";
		} else if (s->kind == PMU_EV_HARDWARE) {
			pmu_setf(why, n, "perf_event_open: %s: the hardware PMU '%s' does not implement '%s' on this CPU "
				 "(its driver maps the generic event to no event of this CPU)", strerror(e), pmu, s->name);
			pmu_setf(rbuf, sizeof(rbuf), "count another event (the PMU's own are listed in "
				 "/sys/bus/event_source/devices/%s/events)", pmu);
			r = rbuf;
		} else {
			snprintf(why, n, "perf_event_open: %s: the PMU does not know '%s' on this CPU", strerror(e),
				 s->name);
			r = "check the event's encoding for this CPU (pfm:NAME, or the PMU's sysfs events)";
		}
		break;
	case EOPNOTSUPP:
		snprintf(why, n, "perf_event_open: %s: the PMU cannot count '%s' as asked (no mode exclusion, or "
			 "no such feature)", strerror(e), s->name);
		r = "count it without :u/:k modifiers, or on hardware that supports it";
		break;
	case EACCES:
	case EPERM:
		if (cpu_wide)
			snprintf(why, n, "perf_event_paranoid=%lld: CPU-wide (cgroup) counting is refused (%s)",
				 paranoid, strerror(e));
		else
			snprintf(why, n, "perf_event_paranoid=%lld: %s counting of '%s' is refused (%s)", paranoid,
				 s->exclude_user ? "kernel-mode" : "this", s->name, strerror(e));
		r = cpu_wide ? "run as root, grant CAP_PERFMON, or set kernel.perf_event_paranoid=0"
			     : "run as root, grant CAP_PERFMON, or set kernel.perf_event_paranoid=1";
		break;
	case EINVAL:
		snprintf(why, n, "perf_event_open: %s: the kernel or PMU rejected '%s' (type %u, config 0x%llx)",
			 strerror(e), s->name, s->type, (unsigned long long)s->config);
		r = "check the event's encoding (r<hex>, pmu/term=value/, pfm:NAME) for this CPU";
		break;
	case EMFILE:
	case ENFILE:
		snprintf(why, n, "perf_event_open: %s: out of file descriptors", strerror(e));
		r = "raise the open-file limit (ulimit -n) or count fewer events";
		break;
	case EBUSY:
		snprintf(why, n, "perf_event_open: %s: another user holds the counter exclusively", strerror(e));
		r = "stop the other user of the PMU (or set kernel.nmi_watchdog=0)";
		break;
	case ESRCH:
		snprintf(why, n, "the task had exited before its counters were opened");
		r = "none";
		break;
	default:
		snprintf(why, n, "perf_event_open: %s", strerror(e));
		r = "see perf_event_open(2)";
		break;
	}
	snprintf(remedy, rn, "%s", r);
}

static void fill_attr(const struct pmu_counting *k, const struct kev *e, bool leader, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = e->s->type;
	a->config = e->s->config;
	a->config1 = e->s->config1;
	a->config2 = e->s->config2;
	a->exclude_user = e->xu;
	a->exclude_kernel = e->xk;
	a->exclude_hv = e->xh;
	a->read_format = k->read_format;
	a->disabled = leader;
}

/* One event alone on the recorder, with the feature ladder.  0 or errno. */
static int probe_one(struct pmu_counting *k, struct kev *e)
{
	struct perf_event_attr a;
	long fd;

	for (;;) {
		fill_attr(k, e, true, &a);
		fd = perf_open(&a, 0, -1, -1, k->cloexec ? PERF_FLAG_FD_CLOEXEC : 0);
		if (fd >= 0) {
			close((int)fd);
			return 0;
		}
		int err = errno;

		if (err == EINVAL && (k->read_format & PERF_FORMAT_LOST)) {
			k->read_format &= ~(uint64_t)PERF_FORMAT_LOST;
			fill_attr(k, e, true, &a);
			fd = perf_open(&a, 0, -1, -1, k->cloexec ? PERF_FLAG_FD_CLOEXEC : 0);
			if (fd >= 0) {
				close((int)fd);
				add_fallback(k, "read_format-lost", NULL,
					     "read_format LOST refused (EINVAL; kernels before 6.0): lost counts "
					     "are not read");
				return 0;
			}
			k->read_format |= PERF_FORMAT_LOST; /* not the cause */
		}
		if (err == EINVAL && k->cloexec) {
			k->cloexec = false;
			fill_attr(k, e, true, &a);
			fd = perf_open(&a, 0, -1, -1, 0);
			if (fd >= 0) {
				close((int)fd);
				add_fallback(k, "fd-cloexec", NULL,
					     "PERF_FLAG_FD_CLOEXEC refused (EINVAL; kernels before 3.14): "
					     "close-on-exec is set with fcntl");
				return 0;
			}
			k->cloexec = true;
		}
		if ((err == EACCES || err == EPERM) && !e->s->modifier && !e->xk) {
			int err2;

			e->xk = e->xh = true;
			fill_attr(k, e, true, &a);
			fd = perf_open(&a, 0, -1, -1, k->cloexec ? PERF_FLAG_FD_CLOEXEC : 0);
			if (fd >= 0) {
				close((int)fd);
				if (!k->user_only)
					add_fallback(k, "exclude-kernel", NULL,
						     "kernel counting refused by perf_event_paranoid=%lld, counting "
						     "user space only", k->paranoid);
				k->user_only = true;
				return 0;
			}
			/* user space only fails for another reason (no PMU...):
			 * that reason is the event's, whatever the order */
			err2 = errno;
			if (err2 != EACCES && err2 != EPERM)
				return err2;
			e->xk = e->xh = false;
		}
		return err;
	}
}

static int busy_ms(int ms)
{
	uint64_t end = pmu_now_mono_ns() + (uint64_t)ms * 1000000u;
	volatile int x = 0;

	while (pmu_now_mono_ns() < end)
		x++;
	return x;
}

/*
 * Exact-or-drop: a hardware group that does not fit the PMU's counters is
 * never scheduled, or only part of the time.  Open it on the recorder, run
 * for longer than one multiplexing interval (4 ms by default) and read it;
 * while it did not run all the time, drop its last member.
 */
static void shrink_group(struct pmu_counting *k, struct kgroup *g)
{
	while (g->n > 0) {
		struct perf_event_attr a;
		int fds[MAXEV], nfd = 0;
		uint64_t buf[3 + 3 * MAXEV];
		bool ran = false;
		uint64_t en = 0, run = 0;

		for (int i = 0; i < g->n; i++) {
			fill_attr(k, &k->ev[g->ev[i]], false, &a);
			long fd = perf_open(&a, 0, -1, i ? fds[0] : -1, k->cloexec ? PERF_FLAG_FD_CLOEXEC : 0);

			if (fd < 0)
				break;
			fds[nfd++] = (int)fd;
		}
		if (nfd == g->n) {
			busy_ms(6);
			if (read(fds[0], buf, sizeof(buf)) >= 24) {
				en = buf[1];
				run = buf[2];
				ran = run == en && run > 0;
			}
		}
		for (int i = 0; i < nfd; i++)
			close(fds[i]);
		if (ran)
			return;
		struct kev *last = &k->ev[g->ev[g->n - 1]];

		last->avail = false;
		if (g->n > 1)
			snprintf(last->reason, sizeof(last->reason),
				 "dropped from its group: the PMU could not count %d events at once "
				 "(a %d-event group ran %llu of %llu ns in a 6 ms test)",
				 g->n, g->n, (unsigned long long)run, (unsigned long long)en);
		else
			snprintf(last->reason, sizeof(last->reason),
				 "the PMU never scheduled it alone (ran %llu of %llu ns in a 6 ms test): its counters "
				 "are taken", (unsigned long long)run, (unsigned long long)en);
		snprintf(last->remedy, sizeof(last->remedy), "%s",
			 g->n > 1 ? "count fewer hardware events at once, or pass --scaled to accept labelled estimates"
				  : "stop other users of the PMU (or set kernel.nmi_watchdog=0)");
		g->n--;
	}
}

/*
 * Whether the PMU has room for the hardware groups twice over: a CPU's
 * cgroup groups and the running thread's at once.  Every hardware group is
 * opened twice on the recorder, run past one multiplexing interval and
 * read: room when every copy ran all the time (as shrink_group() decides).
 */
static bool hw_room_twice(struct pmu_counting *k)
{
	int fds[2 * MAXEV], lead[2 * MAXEV], nfd = 0, nl = 0;
	bool ok = true, any = false;

	for (int copy = 0; copy < 2 && ok; copy++)
		for (int gi = 0; gi < k->ngrp && ok; gi++) {
			const struct kgroup *g = &k->grp[gi];

			if (!k->ev[g->ev[0]].s->on_pmu)
				continue;
			any = true;
			for (int i = 0; i < g->n; i++) {
				struct perf_event_attr a;
				long fd;

				fill_attr(k, &k->ev[g->ev[i]], false, &a);
				fd = perf_open(&a, 0, -1, i ? lead[nl - 1] : -1, PERF_FLAG_FD_CLOEXEC);
				if (fd < 0) {
					ok = false;
					break;
				}
				fds[nfd++] = (int)fd;
				if (!i)
					lead[nl++] = (int)fd;
			}
		}
	if (ok && any) {
		busy_ms(6);
		for (int i = 0; i < nl && ok; i++) {
			uint64_t buf[3 + 3 * MAXEV];

			ok = read(lead[i], buf, sizeof(buf)) >= 24 && buf[2] == buf[1] && buf[2] > 0;
		}
	}
	for (int i = 0; i < nfd; i++)
		close(fds[i]);
	return ok;
}

/* The counters' share of the open-file limit: what the recorder does not
 * hold already, less a reserve.  Made again at the first task, once every
 * collector has opened (the sampling collector's per-CPU events and files
 * are not the counters'). */
static void fd_budget(struct pmu_counting *k)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		long lim = (long)rl.rlim_cur;

		k->fd_limit = lim;
		long used = 0;
		DIR *d = opendir("/proc/self/fd");

		/* what the recorder holds already is not the counters' */
		for (struct dirent *de; d && (de = readdir(d));)
			used += de->d_name[0] != '.';
		if (d)
			closedir(d);
		k->fd_reserve = lim / 4 < FD_RESERVE ? lim / 4 : FD_RESERVE;
		k->fd_budget = lim - k->fd_reserve - used;
	} else {
		k->fd_budget = 1L << 30;
	}
}

int pmu_counting_new(const struct pmu_counting_opts *o, struct pmu_counting **out)
{
	struct pmu_counting *k = calloc(1, sizeof(*k));
	int sw = -1, hw = -1;

	if (!k)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	if (o->nev > MAXEV) {
		free(k);
		return pmu_error(PMU_ERR_LIMIT, "at most %d events may be counted", MAXEV);
	}
	k->o = *o;
	k->nev = (int)o->nev;
	k->paranoid = paranoid_level();
	k->cloexec = true;
	k->read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
			 PERF_FORMAT_ID | PERF_FORMAT_LOST;
	k->t_probe = pmu_now_mono_ns();
	pmu_cgsnap_init(&k->cg_a);
	pmu_cgsnap_init(&k->cg_b);
	pmu_cgsnap_init(&k->sys_a);
	pmu_cgsnap_init(&k->sys_b);
	for (int i = 0; i < k->nev; i++) {
		struct kev *e = &k->ev[i];

		e->s = &o->ev[i];
		e->group = -1;
		e->xu = e->s->exclude_user;
		e->xk = e->s->exclude_kernel;
		e->xh = e->s->exclude_hv;
		if (!e->s->available) {
			snprintf(e->reason, sizeof(e->reason), "%s", e->s->reason);
			snprintf(e->remedy, sizeof(e->remedy), "%s", e->s->remedy);
			continue;
		}
		/* once kernel counting was refused, every event without a
		 * modifier counts user space only: the same rule for all */
		if (k->user_only && !e->s->modifier)
			e->xk = e->xh = true;
		int err = probe_one(k, e);

		if (err) {
			explain(e->s, err, false, k->paranoid, e->reason, sizeof(e->reason), e->remedy,
				sizeof(e->remedy));
			continue;
		}
		e->avail = true;
	}
	/* a fallback found late applies to the events probed before it */
	for (int i = 0; k->user_only && i < k->nev; i++)
		if (k->ev[i].avail && !k->ev[i].s->modifier)
			k->ev[i].xk = k->ev[i].xh = true;
	/*
	 * Groups: the software events together (they never multiplex); the
	 * hardware ones together (exact-or-drop, shrunk to what schedules),
	 * or each alone with --scaled so that the kernel rotates them.
	 */
	/* the core PMU's types: generic hardware, cache and raw events */
	uint32_t hw_type[MAXEV];

	for (int i = 0; i < k->nev; i++) {
		struct kev *e = &k->ev[i];
		struct kgroup *g = NULL;
		uint32_t t = e->s->type == PERF_TYPE_HW_CACHE || e->s->type == PERF_TYPE_RAW ? PERF_TYPE_HARDWARE
											   : e->s->type;

		if (!e->avail)
			continue;
		if (!e->s->on_pmu) {
			if (sw < 0)
				sw = k->ngrp++;
			g = &k->grp[sw];
		} else if (!o->scaled) {
			/* one group per PMU: events of two PMUs cannot share one */
			for (int gi = 0; gi < k->ngrp && !g; gi++)
				if (gi != sw && k->grp[gi].n && hw_type[gi] == t)
					g = &k->grp[gi];
			if (!g) {
				hw_type[k->ngrp] = t;
				g = &k->grp[k->ngrp++];
			}
			hw = 1;
		} else {
			g = &k->grp[k->ngrp++];
		}
		g->ev[g->n++] = i;
	}
	for (int gi = 0; hw >= 0 && !o->scaled && gi < k->ngrp; gi++)
		if (gi != sw && k->grp[gi].n > 1)
			shrink_group(k, &k->grp[gi]);
	/* a group shrunk to nothing is no group */
	for (int gi = 0; gi < k->ngrp;)
		if (!k->grp[gi].n) {
			memmove(&k->grp[gi], &k->grp[gi + 1], (size_t)(k->ngrp - gi - 1) * sizeof(k->grp[0]));
			k->ngrp--;
		} else {
			gi++;
		}
	for (int gi = 0; gi < k->ngrp; gi++)
		for (int p = 0; p < k->grp[gi].n; p++) {
			k->ev[k->grp[gi].ev[p]].group = gi;
			k->ev[k->grp[gi].ev[p]].pos = p;
		}
	fd_budget(k);
	/* the cohort's cgroup is the cohort's (the recorder makes it and
	 * moves the command in); it is counted when there is one */
	k->cg_tried = o->scope != PMU_SCOPE_INHERIT;
	*out = k;
	return 0;
}

static struct kinc *kinc_of(struct pmu_counting *k, int inc, bool make)
{
	if (inc < 1)
		return NULL;
	if ((size_t)inc > k->nincs) {
		size_t n = k->nincs ? k->nincs : 64;
		struct kinc **v;

		if (!make)
			return NULL;
		while (n < (size_t)inc)
			n *= 2;
		if (!(v = realloc(k->incs, n * sizeof(*v))))
			return NULL;
		memset(v + k->nincs, 0, (n - k->nincs) * sizeof(*v));
		k->incs = v;
		k->nincs = n;
	}
	if (!k->incs[inc - 1] && make)
		k->incs[inc - 1] = calloc(1, sizeof(struct kinc));
	return k->incs[inc - 1];
}

static struct ktask *task_new(struct pmu_counting *k, int inc, pid_t tid)
{
	struct kinc *ki = kinc_of(k, inc, true);
	struct ktask *t;

	if (!ki)
		return NULL;
	if (k->nopen == k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 64;
		struct ktask **v = realloc(k->tasks, cap * sizeof(*v));

		if (!v)
			return NULL;
		k->tasks = v;
		k->cap = cap;
	}
	t = calloc(1, sizeof(*t) + (size_t)k->nev * sizeof(struct kread));
	if (!t)
		return NULL;
	t->fd = malloc((size_t)(k->nev ? k->nev : 1) * sizeof(int));
	if (!t->fd) {
		free(t);
		return NULL;
	}
	for (int i = 0; i < k->nev; i++)
		t->fd[i] = -1;
	t->tid = tid;
	t->inc = inc;
	t->open = true;
	k->tasks[k->nopen++] = t;
	ki->tasks++;
	ki->open++;
	return t;
}

/* Open group g for (pid, cpu); fds[] indexed by event.  0 or errno. */
static int open_group(struct pmu_counting *k, const struct kgroup *g, pid_t pid, int cpu, unsigned long flags,
		      bool enable_on_exec, int *fds)
{
	struct perf_event_attr a;
	int leader = -1;

	for (int p = 0; p < g->n; p++) {
		const struct kev *e = &k->ev[g->ev[p]];
		long fd;

		fill_attr(k, e, p == 0, &a);
		if (p == 0) {
			a.disabled = enable_on_exec;
			a.enable_on_exec = enable_on_exec;
		}
		fd = perf_open(&a, pid, cpu, leader, flags | (k->cloexec ? PERF_FLAG_FD_CLOEXEC : 0));
		if (fd < 0) {
			int err = errno;

			for (int q = 0; q < p; q++) {
				close(fds[g->ev[q]]);
				fds[g->ev[q]] = -1;
			}
			return err;
		}
		if (!k->cloexec)
			fcntl((int)fd, F_SETFD, FD_CLOEXEC);
		fds[e - k->ev] = (int)fd;
		if (p == 0)
			leader = (int)fd;
	}
	return 0;
}

void pmu_counting_task(struct pmu_counting *k, int inc, pid_t pid, pid_t tid, unsigned flags, uint64_t t)
{
	struct ktask *task;

	(void)pid;
	(void)t;
	if (!k || k->stopped || !k->ngrp)
		return;
	/* a tid seen again while its counters are open: the same task */
	for (size_t i = 0; i < k->nopen; i++)
		if (k->tasks[i]->tid == tid)
			return;
	if (!k->budget_again) {
		k->budget_again = true;
		fd_budget(k);
	}
	task = task_new(k, inc, tid);
	if (!task) {
		k->open_failures++;
		return;
	}
	for (int gi = 0; gi < k->ngrp; gi++) {
		int err = k->nfds + k->grp[gi].n > k->fd_budget
			? ENFILE_RESERVE
			: open_group(k, &k->grp[gi], tid, -1, 0, flags & PMU_TASK_ROOT_PREEXEC, task->fd);

		if (!err)
			k->nfds += k->grp[gi].n;

		for (int p = 0; err && p < k->grp[gi].n; p++) {
			task->r[k->grp[gi].ev[p]].state = RD_OPEN_FAILED;
			task->r[k->grp[gi].ev[p]].err = err;
		}
		if (err)
			k->open_failures++;
	}
	k->threads_counted++;
}

/* Read every group of task (the fds stay open). */
static void read_groups(struct pmu_counting *k, int *fds, struct kread *r, int ncpu_stride)
{
	(void)ncpu_stride;
	for (int gi = 0; gi < k->ngrp; gi++) {
		const struct kgroup *g = &k->grp[gi];
		int lead = fds[g->ev[0]];
		size_t per = (k->read_format & PERF_FORMAT_LOST) ? 3 : 2;
		uint64_t buf[3 + 3 * MAXEV];
		ssize_t n;

		if (lead < 0)
			continue;
		n = read(lead, buf, sizeof(buf));
		/* never trust a size: nr must be ours and the bytes must hold it */
		if (n < 24 || buf[0] != (uint64_t)g->n || (size_t)n < (3 + per * (size_t)g->n) * 8) {
			int err = n < 0 ? errno : EIO;

			for (int p = 0; p < g->n; p++) {
				r[g->ev[p]].state = RD_READ_FAILED;
				r[g->ev[p]].err = err;
			}
			continue;
		}
		for (int p = 0; p < g->n; p++) {
			struct kread *x = &r[g->ev[p]];
			const uint64_t *v = &buf[3 + per * (size_t)p];

			x->raw = v[0];
			x->enabled = buf[1];
			x->running = buf[2];
			x->has_lost = per == 3;
			x->lost = per == 3 ? v[2] : 0;
			x->state = RD_OK;
		}
	}
}

static void close_fds(struct pmu_counting *k, int *fds)
{
	for (int i = 0; i < k->nev; i++)
		if (fds[i] >= 0) {
			close(fds[i]);
			fds[i] = -1;
		}
}

static void emit_counts(struct pmu_counting *k, const struct ktask *task, struct kinc *ki,
			const struct pmu_task_counts *tc);
static void emit_total(struct pmu_counting *k, int inc);

/* The task at tasks[oi] ended at t: read, close, write its counts, free it;
 * its incarnation's totals follow when nothing of it is left open. */
static void end_task(struct pmu_counting *k, size_t oi, uint64_t t)
{
	struct ktask *task = k->tasks[oi];
	struct kinc *ki = kinc_of(k, task->inc, false);

	read_groups(k, task->fd, task->r, 0);
	for (int i = 0; i < k->nev; i++)
		k->nfds -= task->fd[i] >= 0;
	close_fds(k, task->fd);
	free(task->fd);
	task->fd = NULL;
	task->open = false;
	task->ended = true;
	task->t_end = t;
	k->tasks[oi] = k->tasks[--k->nopen];
	if (ki) {
		if (t > ki->t_last)
			ki->t_last = t;
		emit_counts(k, task, ki, NULL);
		ki->open--;
		if (ki->ended && !ki->open)
			emit_total(k, task->inc);
	}
	free(task);
}

/*
 * The per-CPU, charged-at-context-switch method (counting_switch.c): a
 * thread joined (its incarnation's total waits for its counts), and a
 * thread ended with its counts from the follower.
 */
static void switch_joined(struct pmu_counting *k, int inc)
{
	struct kinc *ki = kinc_of(k, inc, true);

	if (!ki) {
		if (!k->err)
			k->err = pmu_error(PMU_ERR_NOMEM, "out of memory");
		return;
	}
	ki->tasks++;
	ki->open++;
	k->threads_counted++;
}

static void switch_ended(struct pmu_counting *k, int inc, pid_t tid, uint64_t t, const struct pmu_task_counts *tc)
{
	struct kinc *ki = kinc_of(k, inc, true);
	struct ktask task = { .tid = tid, .inc = inc, .t_end = t, .ended = true };

	if (!ki) {
		if (!k->err)
			k->err = pmu_error(PMU_ERR_NOMEM, "out of memory");
		return;
	}
	if (tc->missing || tc->no_entry)
		k->sw_lost_threads++;
	k->sw_lost_slices += tc->lost_slices;
	if (t > ki->t_last)
		ki->t_last = t;
	emit_counts(k, &task, ki, tc);
	if (ki->open)
		ki->open--;
	if (ki->ended && !ki->open)
		emit_total(k, inc);
}

void pmu_counting_task_end(struct pmu_counting *k, int inc, pid_t tid, uint64_t t)
{
	(void)inc;
	if (!k)
		return;
	for (size_t i = 0; i < k->nopen; i++)
		if (k->tasks[i]->tid == tid) {
			end_task(k, i, t);
			return;
		}
}

/*
 * A thread other than the leader exec'd: the old leader is gone (its
 * counters hold its final counts: read them now) and the exec'ing thread's
 * counters go on under its new id, the process id.
 */
void pmu_counting_task_exec(struct pmu_counting *k, int inc, pid_t pid, pid_t former_tid, uint64_t t)
{
	(void)inc;
	if (!k)
		return;
	for (size_t i = 0; i < k->nopen; i++)
		if (k->tasks[i]->tid == pid) {
			end_task(k, i, t);
			break;
		}
	for (size_t i = 0; i < k->nopen; i++)
		if (k->tasks[i]->tid == former_tid) {
			k->tasks[i]->tid = pid;
			break;
		}
}

void pmu_counting_cgroup(struct pmu_counting *k, const struct pmu_cg *cg, const char *why, const char *remedy)
{
	if (!k || !k->cg_tried)
		return;
	if (!cg) {
		snprintf(k->cg_reason, sizeof(k->cg_reason), "%s", why ? why : "the cohort has no cgroup");
		k->cg_remedy = remedy ? remedy : "run as root, or under a delegated cgroup "
						 "(systemd-run --user --scope -p Delegate=yes pmurec ...)";
		return;
	}
	k->cgp = cg;
	snprintf(k->cg_path, sizeof(k->cg_path), "%s", cg->path);
	snprintf(k->cg_controllers, sizeof(k->cg_controllers), "%s", cg->controllers);
	snprintf(k->cg_notes, sizeof(k->cg_notes), "%s", cg->notes);
	k->cg_ok = true;
	k->cg_snap_ok = pmu_cg_snapshot(k->cgp, &k->cg_a) == 0;
	k->sys_snap_ok = pmu_sys_pressure(&k->sys_a) == 0;
	/* the cohort's counters on every CPU */
	k->ncpus = pmu_online_cpus(&k->cpus);
	if (k->ncpus <= 0) {
		snprintf(k->cg_count_reason, sizeof(k->cg_count_reason),
			 "cannot read /sys/devices/system/cpu/online");
		k->cg_count_remedy = "mount sysfs";
		k->ncpus = 0;
		return;
	}
	if (!k->ngrp) {
		snprintf(k->cg_count_reason, sizeof(k->cg_count_reason), "no event could be counted");
		k->cg_count_remedy = "see the counter records";
		return;
	}
	k->cgfd = malloc((size_t)k->ncpus * (size_t)k->nev * sizeof(int));
	k->cgr = calloc((size_t)k->ncpus * (size_t)k->nev, sizeof(struct kread));
	if (!k->cgfd || !k->cgr) {
		snprintf(k->cg_count_reason, sizeof(k->cg_count_reason), "out of memory");
		k->cg_count_remedy = "none";
		return;
	}
	for (int i = 0; i < k->ncpus * k->nev; i++)
		k->cgfd[i] = -1;
	/*
	 * The kernel schedules a CPU's own events (these cgroup groups) before
	 * the running task's, so hardware groups here would take the PMU's
	 * counters from the per-thread groups, which would then never run
	 * ("not counted" for every incarnation).  With per-thread groups (the
	 * ptrace follower) the cgroup counts the hardware events only when the
	 * PMU has room for both; otherwise the software events only, and the
	 * cohort's hardware total is the incarnations' sum.
	 */
	bool hw_left = (!k->no_stops || k->by_switch) && !hw_room_twice(k);

	for (int c = 0; c < k->ncpus; c++)
		for (int gi = 0; gi < k->ngrp; gi++) {
			if (hw_left && k->ev[k->grp[gi].ev[0]].s->on_pmu) {
				k->cg_hw_left = true;
				continue;
			}
			int err = open_group(k, &k->grp[gi], k->cgp->dirfd, k->cpus[c], PERF_FLAG_PID_CGROUP, false,
					     &k->cgfd[c * k->nev]);

			if (err) {
				char rem[200];

				explain(k->ev[k->grp[gi].ev[0]].s, err, true, k->paranoid, k->cg_count_reason,
					sizeof(k->cg_count_reason), rem, sizeof(rem));
				k->cg_count_remedy = err == EACCES || err == EPERM
					? "run as root, grant CAP_PERFMON, or set kernel.perf_event_paranoid=0"
					: "see perf_event_open(2)";
				for (int x = 0; x < k->ncpus * k->nev; x++)
					if (k->cgfd[x] >= 0) {
						close(k->cgfd[x]);
						k->cgfd[x] = -1;
					}
				return;
			}
		}
	k->cg_count_ok = true;
}

void pmu_counting_stop(struct pmu_counting *k, uint64_t t)
{
	if (!k || k->stopped)
		return;
	k->stopped = true;
	k->t_stop = t;
	while (k->nopen)
		end_task(k, k->nopen - 1, t);
	if (k->cg_count_ok)
		for (int c = 0; c < k->ncpus; c++) {
			read_groups(k, &k->cgfd[c * k->nev], &k->cgr[c * k->nev], 0);
			close_fds(k, &k->cgfd[c * k->nev]);
		}
	if (k->cg_ok) {
		if (k->cg_snap_ok)
			k->cg_snap_ok = pmu_cg_snapshot(k->cgp, &k->cg_b) == 0;
		if (k->sys_snap_ok)
			k->sys_snap_ok = pmu_sys_pressure(&k->sys_b) == 0;
		snprintf(k->cg_notes, sizeof(k->cg_notes), "%s", k->cgp->notes);
	}
	k->cgp = NULL; /* its owner ends it now */
}

bool pmu_counting_usable(const struct pmu_counting *k, char *why, size_t n, const char **remedy)
{
	if (k->ngrp)
		return true;
	if (!k->nev) {
		snprintf(why, n, "no event was asked for");
		*remedy = "name events with -e";
		return false;
	}
	snprintf(why, n, "none of the %d event(s) can be counted here (first: %s: %s)", k->nev, k->ev[0].s->name,
		 k->ev[0].reason);
	*remedy = k->ev[0].remedy[0] ? k->ev[0].remedy : "see the counter records";
	return false;
}

void pmu_counting_free(struct pmu_counting *k)
{
	if (!k)
		return;
	k->emit = NULL; /* whatever was not written is dropped now */
	if (!k->stopped)
		pmu_counting_stop(k, pmu_now_mono_ns());
	for (size_t i = 0; i < k->nopen; i++) {
		free(k->tasks[i]->fd);
		free(k->tasks[i]);
	}
	free(k->tasks);
	for (size_t i = 0; i < k->nincs; i++)
		if (k->incs[i]) {
			free(k->incs[i]->sum);
			free(k->incs[i]);
		}
	free(k->incs);
	free(k->cohort);
	free(k->cpus);
	free(k->cgfd);
	free(k->cgr);
	pmu_cgsnap_release(&k->cg_a);
	pmu_cgsnap_release(&k->cg_b);
	pmu_cgsnap_release(&k->sys_a);
	pmu_cgsnap_release(&k->sys_b);
	free(k);
}

/* ---- records ------------------------------------------------------------- */

static bool is_ns(const struct kev *e)
{
	return !strcmp(e->s->unit, "ns");
}

/* value fields by the counter's unit: one unit per field name */
static void put_val(json_t *o, const struct kev *e, const struct pmu_cnt_val *v)
{
	json_object_set_new(o, "status", json_string(v->ok ? "ok" : "unavailable"));
	if (v->ok) {
		json_object_set_new(o, is_ns(e) ? "value_ns" : "value", json_integer((json_int_t)v->value));
		json_object_set_new(o, "estimate", json_boolean(v->estimate));
		json_object_set_new(o, "running_ppm", json_integer(v->running_ppm));
		if (v->suspect_zero)
			json_object_set_new(o, "suspect_zero", json_true());
	} else {
		json_object_set_new(o, "reason", pmu_json_text(v->reason));
		json_object_set_new(o, "remedy", json_string(v->remedy ? v->remedy : "none"));
	}
}

static void judge_read(const struct pmu_counting *k, const struct kev *e, const struct kread *r,
		       struct pmu_cnt_val *v)
{
	if (r->state == RD_OK) {
		struct pmu_cnt_raw raw = { r->raw, r->enabled, r->running, e->s->on_pmu };

		pmu_cnt_judge(&raw, k->o.scaled, v);
		return;
	}
	memset(v, 0, sizeof(*v));
	if (r->state == RD_OPEN_FAILED) {
		char rem[200];

		if (r->err == ENFILE_RESERVE) {
			snprintf(v->reason, sizeof(v->reason),
				 "not opened: the open-file limit (%ld less %ld kept in reserve) was taken by the "
				 "recorder and the counters of other live threads", k->fd_limit, k->fd_reserve);
			v->remedy = "raise the open-file limit (ulimit -Hn), or count fewer events";
			return;
		}
		explain(e->s, r->err, false, k->paranoid, v->reason, sizeof(v->reason), rem, sizeof(rem));
		v->remedy = r->err == EMFILE || r->err == ENFILE ? "raise the open-file limit (ulimit -n)"
				 : r->err == ESRCH ? "none" : "see the counter's record";
	} else if (r->state == RD_READ_FAILED) {
		snprintf(v->reason, sizeof(v->reason), "reading the group failed: %s", strerror(r->err));
		v->remedy = "none";
	} else {
		snprintf(v->reason, sizeof(v->reason), "not counted: the task was never read");
		v->remedy = "none";
	}
}

static void add_cgstats(json_t *out, const struct pmu_cgsnap *a, const struct pmu_cgsnap *b, const char *scope,
			uint64_t t)
{
	struct pmu_cgdelta d;
	bool sys = !strcmp(scope, "system");

	pmu_cgdelta_init(&d);
	if (pmu_cgstat_delta(a, b, &d)) {
		pmu_cgdelta_release(&d);
		return;
	}
	for (int f = 0; f < PMU_CGF_COUNT_; f++) {
		char file[64];

		if (d.files[f].status == PMU_CGS_NOT_READ)
			continue;
		if (sys)
			snprintf(file, sizeof(file), "/proc/pressure/%.*s", (int)strcspn(pmu_cgfiles[f].name, "."),
				 pmu_cgfiles[f].name);
		else
			snprintf(file, sizeof(file), "%s", pmu_cgfiles[f].name);
		if (d.files[f].status != PMU_CGS_OK) {
			/* a file this host lacks, or could not be parsed: no value */
			json_array_append_new(out, json_pack("{s:s,s:I,s:s,s:o,s:s,s:s,s:o,s:s}", "type", "cgstat",
							     "t_ns", (json_int_t)t, "scope", scope, "file", pmu_json_text(file),
							     "key", "-", "status", "unavailable", "reason",
							     pmu_json_text(d.files[f].reason), "remedy",
							     d.files[f].remedy ? d.files[f].remedy : "none"));
			continue;
		}
		for (size_t i = 0; i < d.n; i++) {
			const struct pmu_cgrow *r = &d.rows[i];
			json_t *o;

			if ((int)r->file != f)
				continue;
			o = json_pack("{s:s,s:I,s:s,s:s,s:s}", "type", "cgstat", "t_ns", (json_int_t)t, "scope", scope,
				      "file", file, "key", r->key);
			if (r->ok) {
				const char *fld = !strcmp(r->unit, "ns") ? "value_ns"
						  : !strcmp(r->unit, "bytes") ? "value_bytes" : "value";

				json_object_set_new(o, "status", json_string("ok"));
				json_object_set_new(o, fld, json_integer((json_int_t)r->value));
				json_object_set_new(o, "gauge", json_boolean(r->kind == PMU_CGK_GAUGE));
			} else {
				json_object_set_new(o, "status", json_string("unavailable"));
				json_object_set_new(o, "reason", pmu_json_text(r->reason));
				json_object_set_new(o, "remedy", json_string("none"));
			}
			json_array_append_new(out, o);
		}
	}
	pmu_cgdelta_release(&d);
}

void pmu_counting_set_output(struct pmu_counting *k, int (*emit)(void *ctx, json_t *rec), void *ctx,
			     uint64_t run_start)
{
	if (!k)
		return;
	k->emit = emit;
	k->emit_ctx = ctx;
	k->run_start = run_start;
}

/* One record out (rec is taken); after emit's first error, none. */
static void put(struct pmu_counting *k, json_t *rec)
{
	if (!rec && !k->err)
		k->err = pmu_error(PMU_ERR_NOMEM, "out of memory");
	if (rec && k->emit && !k->err)
		k->err = k->emit(k->emit_ctx, json_incref(rec));
	json_decref(rec);
}

/* What the stream says first: the scope, the counters, the fallbacks. */
static void prelude(struct pmu_counting *k)
{
	json_t *o;

	if (k->prelude_done)
		return;
	k->prelude_done = true;
	o = json_pack("{s:s,s:s,s:s}", "type", "scope", "requested",
		      k->o.scope == PMU_SCOPE_AUTO ? "auto" : k->o.scope == PMU_SCOPE_CGROUP ? "cgroup" : "inherit",
		      "used", k->cg_ok ? "cgroup" : "inherit");
	if (!k->cg_tried) {
		json_object_set_new(o, "status", json_string("not-requested"));
	} else if (k->cg_ok) {
		json_object_set_new(o, "status", json_string("ok"));
		json_object_set_new(o, "cgroup", pmu_json_text(k->cg_path));
		if (k->cg_controllers[0])
			json_object_set_new(o, "controllers", pmu_json_text(k->cg_controllers));
		if (k->cg_notes[0])
			json_object_set_new(o, "note", pmu_json_text(k->cg_notes));
	} else {
		json_object_set_new(o, "status", json_string("unavailable"));
		json_object_set_new(o, "reason", pmu_json_text(k->cg_reason));
		json_object_set_new(o, "remedy", json_string(k->cg_remedy));
	}
	put(k, o);
	for (int i = 0; i < k->nev; i++) {
		const struct kev *e = &k->ev[i];
		char cfg[24];

		snprintf(cfg, sizeof(cfg), "0x%" PRIx64, e->s->config);
		o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:I,s:s,s:b,s:b,s:b}", "type", "counter", "name", e->s->name,
			      "given", e->s->given, "kind", pmu_evkind_name(e->s->kind), "unit", e->s->unit, "perf_type",
			      (json_int_t)e->s->type, "config", cfg, "exclude_user", e->xu, "exclude_kernel", e->xk,
			      "exclude_hv", e->xh);
		if (e->s->config1) {
			snprintf(cfg, sizeof(cfg), "0x%" PRIx64, e->s->config1);
			json_object_set_new(o, "config1", json_string(cfg));
		}
		if (e->s->config2) {
			snprintf(cfg, sizeof(cfg), "0x%" PRIx64, e->s->config2);
			json_object_set_new(o, "config2", json_string(cfg));
		}
		if (e->avail) {
			json_object_set_new(o, "group", json_integer(e->group));
			json_object_set_new(o, "status", json_string("ok"));
		} else {
			json_object_set_new(o, "status", json_string("unavailable"));
			json_object_set_new(o, "reason", pmu_json_text(e->reason));
			json_object_set_new(o, "remedy", pmu_json_text(e->remedy[0] ? e->remedy : "none"));
		}
		if (e->s->note[0])
			json_object_set_new(o, "note", pmu_json_text(e->s->note));
		put(k, o);
	}
	for (int i = 0; i < k->nfb; i++) {
		uint64_t t = k->fb[i].t < k->run_start ? k->run_start : k->fb[i].t;

		o = json_pack("{s:s,s:I,s:s,s:s}", "type", "fallback", "t_ns", (json_int_t)t, "what", k->fb[i].what,
			      "reason", k->fb[i].reason);
		if (k->fb[i].counter[0])
			json_object_set_new(o, "counter", pmu_json_text(k->fb[i].counter));
		put(k, o);
	}
}

/* How the per-incarnation counts were counted (bundle-spec/README.md 19.3). */
static const char *method(const struct pmu_counting *k)
{
	return k->by_switch ? "per-cpu-switch" : "per-thread";
}

/* A thread's count records, at its end (tc: with the follower's counts);
 * its values join its incarnation's sums. */
static void emit_counts(struct pmu_counting *k, const struct ktask *task, struct kinc *ki,
			const struct pmu_task_counts *tc)
{
	char label[48], inc[24];

	if (!ki->sum) {
		if (!(ki->sum = calloc((size_t)(k->nev ? k->nev : 1), sizeof(*ki->sum)))) {
			if (!k->err)
				k->err = pmu_error(PMU_ERR_NOMEM, "out of memory");
			return;
		}
		for (int i = 0; i < k->nev; i++)
			pmu_cnt_sum_init(&ki->sum[i]);
	}
	prelude(k);
	snprintf(label, sizeof(label), "thread %d", (int)task->tid);
	snprintf(inc, sizeof(inc), "i%d", task->inc);
	for (int i = 0; i < k->nev; i++) {
		const struct kev *e = &k->ev[i];
		struct kread sw = { 0 };
		const struct kread *r = tc ? &sw : &task->r[i];
		struct pmu_cnt_val v;
		json_t *o;

		if (!e->avail)
			continue;
		if (tc) {
			struct pmu_cnt_raw raw;

			if (pmu_switch_judge(tc, (int)(e->s - k->o.ev), e->s->on_pmu, k->o.scaled, &v, &raw))
				sw = (struct kread){ raw.raw, raw.enabled_ns, raw.running_ns, 0, RD_OK, 0, 0 };
		} else {
			judge_read(k, e, r, &v);
		}
		pmu_cnt_sum_add(&ki->sum[i], &v, label);
		o = json_pack("{s:s,s:I,s:s,s:I,s:s,s:s}", "type", "count", "t_ns", (json_int_t)task->t_end, "inc", inc,
			      "tid", (json_int_t)task->tid, "counter", e->s->name, "method", method(k));
		if (!o) {
			put(k, NULL);
			continue;
		}
		put_val(o, e, &v);
		if (r->state == RD_OK) {
			if (r->running)
				json_object_set_new(o, is_ns(e) ? "raw_ns" : "raw", json_integer((json_int_t)r->raw));
			json_object_set_new(o, "enabled_ns", json_integer((json_int_t)r->enabled));
			json_object_set_new(o, "running_ns", json_integer((json_int_t)r->running));
			if (r->has_lost)
				json_object_set_new(o, "lost", json_integer((json_int_t)r->lost));
		}
		put(k, o);
	}
}

/* An incarnation's totals, once nothing of it is open; then it is forgotten. */
static void emit_total(struct pmu_counting *k, int id)
{
	struct kinc *ki = kinc_of(k, id, false);
	uint64_t t;
	char inc[24], label[48];

	if (!ki)
		return;
	k->incs[id - 1] = NULL;
	t = ki->t_last;
	if (ki->ended && ki->end_ns > t)
		t = ki->end_ns;
	if (ki->sum && !k->cohort && (k->cohort = calloc((size_t)(k->nev ? k->nev : 1), sizeof(*k->cohort))))
		for (int i = 0; i < k->nev; i++)
			pmu_cnt_sum_init(&k->cohort[i]);
	if (ki->sum && !k->cohort && !k->err)
		k->err = pmu_error(PMU_ERR_NOMEM, "out of memory");
	snprintf(inc, sizeof(inc), "i%d", id);
	snprintf(label, sizeof(label), "incarnation i%d", id);
	/* threads that joined but whose end never came with counts (the
	 * follower lost their exit records): parts of the sum that are missing */
	for (int i = 0; ki->open && ki->sum && i < k->nev; i++) {
		struct pmu_cnt_val v = { 0 };

		snprintf(v.reason, sizeof(v.reason), "the thread's exit and counts never came from the follower");
		v.remedy = "none: the loss is recorded in the cohort lifecycle";
		for (size_t x = 0; x < ki->open; x++)
			pmu_cnt_sum_add(&ki->sum[i], &v, "a thread");
	}
	for (int i = 0; ki->sum && k->cohort && i < k->nev; i++) {
		const struct kev *e = &k->ev[i];
		struct pmu_cnt_sum *sm = &ki->sum[i];
		size_t parts = sm->parts;
		json_t *o;

		if (!e->avail)
			continue;
		pmu_cnt_sum_done(sm);
		pmu_cnt_sum_add(&k->cohort[i], &sm->v, label);
		o = json_pack("{s:s,s:I,s:s,s:s,s:I,s:s}", "type", "total", "t_ns", (json_int_t)t, "inc", inc,
			      "counter", e->s->name, "threads", (json_int_t)parts, "method", method(k));
		if (o)
			put_val(o, e, &sm->v);
		put(k, o);
	}
	if (ki->sum)
		k->incs_counted++;
	free(ki->sum);
	free(ki);
}

void pmu_counting_inc_end(struct pmu_counting *k, int inc, uint64_t end_ns)
{
	struct kinc *ki = k ? kinc_of(k, inc, false) : NULL;

	if (!ki)
		return;
	ki->ended = true;
	ki->end_ns = end_ns;
	if (!ki->open)
		emit_total(k, inc);
}

int pmu_counting_finish(struct pmu_counting *k, uint64_t run_end, char *evidence, size_t en)
{
	json_t *cg;
	size_t i;
	json_t *o;

	prelude(k);
	/* the totals of what was still running when the run ended */
	for (size_t x = 0; x < k->nincs; x++)
		if (k->incs[x])
			emit_total(k, (int)x + 1);
	/* cohort totals: the sum of the incarnations, and the cgroup's own */
	for (int ei = 0; ei < k->nev; ei++) {
		const struct kev *e = &k->ev[ei];
		struct pmu_cnt_sum s;
		size_t parts;

		if (!e->avail)
			continue;
		if (k->cohort)
			s = k->cohort[ei];
		else
			pmu_cnt_sum_init(&s);
		parts = s.parts;
		pmu_cnt_sum_done(&s);
		if (k->no_stops && !k->by_switch) {
			snprintf(s.v.reason, sizeof(s.v.reason),
				 "per-incarnation counts need each new task held before it runs, and the eBPF follower "
				 "holds none: no per-thread counter could be opened%s",
				 k->cg_tried ? "; the cohort total is the cgroup's" : "");
			s.v.remedy = "record with --follower ptrace for per-incarnation counts";
		}
		o = json_pack("{s:s,s:I,s:s,s:s,s:I,s:s}", "type", "cohort", "t_ns", (json_int_t)run_end, "counter",
			      e->s->name, "scope", "incarnations", "parts", (json_int_t)parts, "method", method(k));
		if (o)
			put_val(o, e, &s.v);
		put(k, o);
		if (!k->cg_tried)
			continue;
		o = json_pack("{s:s,s:I,s:s,s:s}", "type", "cohort", "t_ns", (json_int_t)run_end, "counter", e->s->name,
			      "scope", "cgroup");
		if (!o) {
			put(k, NULL);
			continue;
		}
		if (k->cg_ok && k->cg_count_ok && k->cg_hw_left && e->s->on_pmu) {
			json_object_set_new(o, "status", json_string("unavailable"));
			json_object_set_new(o, "reason", json_string(
				k->by_switch
				? "not counted on the cohort's cgroup: the PMU has no room for the hardware events twice "
				  "(the cgroup's and the eBPF follower's, both on each CPU), and the follower's would be "
				  "multiplexed; the cohort's total is the incarnations' sum"
				: "not counted on the cohort's cgroup: the PMU has no room for the hardware events twice "
				  "(the cgroup's on each CPU and each thread's), and CPU-wide counters are scheduled "
				  "before the per-thread ones, whose counters they would take; the cohort's total is the "
				  "incarnations' sum"));
			json_object_set_new(o, "remedy", json_string(
				"none needed: use the incarnations' sum (count fewer hardware events to have the "
				"cgroup's too)"));
		} else if (!k->cg_ok || !k->cg_count_ok) {
			json_object_set_new(o, "status", json_string("unavailable"));
			json_object_set_new(o, "reason", pmu_json_text(!k->cg_ok ? k->cg_reason : k->cg_count_reason));
			json_object_set_new(o, "remedy",
					    json_string(!k->cg_ok ? k->cg_remedy
								  : k->cg_count_remedy ? k->cg_count_remedy : "none"));
		} else {
			pmu_cnt_sum_init(&s);
			for (int cc = 0; cc < k->ncpus; cc++) {
				struct pmu_cnt_val v;
				char label[32];
				struct kread r = k->cgr[cc * k->nev + ei];

				/* a cgroup event's times advance only while the
				 * cgroup runs on that CPU: none at all means the
				 * cohort never ran there, an exact 0 */
				if (r.state == RD_OK && r.enabled == 0 && r.running == 0 && r.raw == 0) {
					memset(&v, 0, sizeof(v));
					v.ok = true;
					v.running_ppm = PMU_CNT_PPM;
				} else {
					judge_read(k, e, &r, &v);
				}
				snprintf(label, sizeof(label), "cpu %d", k->cpus[cc]);
				pmu_cnt_sum_add(&s, &v, label);
			}
			parts = s.parts;
			pmu_cnt_sum_done(&s);
			json_object_set_new(o, "parts", json_integer((json_int_t)parts));
			put_val(o, e, &s.v);
		}
		put(k, o);
	}
	cg = json_array();
	if (cg && k->cg_ok && k->cg_snap_ok)
		add_cgstats(cg, &k->cg_a, &k->cg_b, "cgroup", run_end);
	if (cg && k->cg_ok && k->sys_snap_ok)
		add_cgstats(cg, &k->sys_a, &k->sys_b, "system", run_end);
	json_array_foreach(cg, i, o)
		put(k, json_incref(o));
	json_decref(cg);
	if (evidence && k->by_switch)
		snprintf(evidence, en,
			 "no task is held before it runs (eBPF follower): each thread counted by the follower per CPU, "
			 "charged at each context switch: %zu thread(s) of %zu incarnation(s)%s; %s",
			 k->threads_counted, k->incs_counted,
			 k->sw_lost_slices || k->sw_lost_threads ? " (some slices or threads lost: see the count records)" : "",
			 k->cg_count_ok ? "the cohort's cgroup counted on every CPU" : "the cohort's cgroup not counted");
	else if (evidence && k->no_stops)
		snprintf(evidence, en, "no task is held before it runs (eBPF follower): no per-thread group; %s",
			 k->cg_count_ok ? "the cohort's cgroup counted on every CPU" : "and the cohort's cgroup not counted");
	else if (evidence)
		snprintf(evidence, en,
			 "perf_event_open per thread at its first ptrace stop: %zu thread(s) of %zu incarnation(s) "
			 "counted in %d group(s)%s%s",
			 k->threads_counted, k->incs_counted, k->ngrp,
			 !k->cg_count_ok ? "" : k->cg_hw_left ? "; cgroup counted on every CPU (software events only)"
							     : "; cgroup counted on every CPU",
			 k->open_failures ? "; some opens failed (see the count records)" : "");
	return k->err;
}

/* ---- the counting collector on the contract (collector.h) ------------- */

struct counting_coll {
	struct pmu_collector_env *env;
	struct pmu_counting *k;
	struct pmu_stream *s;
	int err;
	bool unusable;          /* no event can be counted here */
};

/* The counting records go to their stream as they come. */
static int counting_put(void *ctx, json_t *rec)
{
	struct counting_coll *cc = ctx;
	struct pmu_out *o = cc->env->out;

	if (cc->err) {
		json_decref(rec);
		return cc->err;
	}
	if (!cc->s && (cc->err = o->open(o, "collectors/counting/counts.jsonl", "counts", &cc->s))) {
		json_decref(rec);
		return cc->err;
	}
	return cc->err = o->put(cc->s, rec);
}

static int counting_probe(struct pmu_collector_env *env, json_t *caps, void **state)
{
	const struct pmu_run_config *cfg = env->cfg;
	struct pmu_counting_opts co = { cfg->ev, cfg->nev, cfg->scaled, cfg->scope, cfg->attach != 0 };
	struct counting_coll *cc = calloc(1, sizeof(*cc));
	int err;

	(void)caps;
	if (!cc)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	cc->env = env;
	if ((err = pmu_counting_new(&co, &cc->k))) {
		free(cc);
		return err;
	}
	pmu_counting_set_output(cc->k, counting_put, cc, pmu_now_mono_ns());
	*state = cc;
	{
		char why[1024];
		const char *remedy = NULL;

		/* the events were probed on the recorder itself just now */
		if (!pmu_counting_usable(cc->k, why, sizeof(why), &remedy)) {
			cc->unusable = true;
			pmu_lc_unavailable_at(env->lc, pmu_now_mono_ns(), why, remedy);
			return 0;
		}
	}
	pmu_lc_probed_ok(env->lc, pmu_now_mono_ns());
	return 0;
}

static int counting_open(void *state, pid_t root, uint64_t t)
{
	struct counting_coll *cc = state;

	if (!cc->env->followed)
		return 0;
	(void)root;
	cc->k->no_stops = cc->env->stops != PMU_STOPS_BEFORE_RUN;
	/* the eBPF follower counts each thread itself (counting_switch.c) */
	cc->k->by_switch = cc->k->no_stops && cc->env->follower && !strcmp(cc->env->follower, "ebpf") &&
			   cc->k->ngrp > 0;
	pmu_lc_step(cc->env->lc, "opened", t);
	pmu_counting_cgroup(cc->k, cc->env->cohort_cgroup ? &cc->env->cohort_cgroup->cg : NULL, cc->env->cgroup_why,
			    cc->env->cgroup_remedy);
	/* the evidence grows at the end: what was counted */
	pmu_lc_attached(cc->env->lc, t, cc->k->no_stops ? "the cohort's cgroup counted before the command's exec"
							  : "counter groups opened before the command's exec");
	return 0;
}

static void counting_task(void *state, const struct pmu_task_event *ev)
{
	struct counting_coll *cc = state;

	/* a task reported after it ran cannot be counted from its start by a
	 * counter of its own; the eBPF follower counts it itself */
	if (cc->env->stops != PMU_STOPS_BEFORE_RUN) {
		if (!cc->k->by_switch || cc->k->stopped)
			return;
		if (ev->what == PMU_TASK_JOINED)
			switch_joined(cc->k, ev->inc);
		else if (ev->what == PMU_TASK_ENDED && ev->counts)
			switch_ended(cc->k, ev->inc, ev->tid, ev->t, ev->counts);
		else if (ev->what == PMU_TASK_INC_ENDED)
			pmu_counting_inc_end(cc->k, ev->inc, ev->t);
		return;
	}
	switch (ev->what) {
	case PMU_TASK_JOINED:
		pmu_counting_task(cc->k, ev->inc, ev->pid, ev->tid, ev->flags, ev->t);
		break;
	case PMU_TASK_EXEC:
		pmu_counting_task_exec(cc->k, ev->inc, ev->pid, ev->tid, ev->t);
		break;
	case PMU_TASK_ENDED:
		pmu_counting_task_end(cc->k, ev->inc, ev->tid, ev->t);
		break;
	case PMU_TASK_INC_ENDED:
		pmu_counting_inc_end(cc->k, ev->inc, ev->t);
		break;
	}
}

static void counting_stop(void *state, uint64_t t)
{
	struct counting_coll *cc = state;

	/* the cgroup's last statistics, before its owner ends it */
	pmu_counting_stop(cc->k, t);
	if (cc->env->followed)
		pmu_lc_step(cc->env->lc, "stopped", t);
}

static int counting_emit(void *state, struct pmu_collector_env *env, const struct pmu_run_window *win)
{
	struct counting_coll *cc = state;
	char ev[400];
	int err;

	if (!cc)
		return 0;
	if (!env->followed) {
		pmu_lc_unavailable_at(env->lc, win->start_ns, env->follow_reason, env->follow_remedy);
		return 0;
	}
	/* the counts written while following, then the rest */
	err = pmu_counting_finish(cc->k, win->end_ns, ev, sizeof(ev));
	if (!err && !cc->s)
		err = cc->err = env->out->open(env->out, "collectors/counting/counts.jsonl", "counts", &cc->s);
	if (cc->s) {
		int e2 = env->out->close(cc->s);

		cc->s = NULL;
		err = err ? err : e2;
	}
	if (err || cc->unusable)
		return err; /* err: the recorder's own failure, no bundle */
	if (cc->k->by_switch) {
		char why[300];

		snprintf(why, sizeof(why),
			 "slices of member threads not charged by the eBPF follower's per-CPU counting (a failed "
			 "counter read), and %llu thread(s) whose counts were lost or had no room: their counts "
			 "are unavailable",
			 (unsigned long long)cc->k->sw_lost_threads);
		pmu_lc_lost(env->lc, "drop", win->end_ns, cc->k->sw_lost_slices + cc->k->sw_lost_threads, why);
	}
	pmu_lc_set_evidence(env->lc, ev);
	pmu_lc_step(env->lc, "detached", win->end_ns);
	pmu_lc_final(env->lc, win->end_ns, "ok", NULL);
	return 0;
}

static bool counting_usable(void *state)
{
	struct counting_coll *cc = state;

	return !cc->unusable;
}

static void counting_release(void *state)
{
	struct counting_coll *cc = state;

	if (!cc)
		return;
	if (cc->s)
		cc->env->out->close(cc->s);
	pmu_counting_free(cc->k);
	free(cc);
}

const struct pmu_collector_ops pmu_counting_collector = {
	.name = "counting",
	.modes = 2 | 4,
	.probe = counting_probe,
	.usable = counting_usable,
	.open = counting_open,
	.task = counting_task,
	.stop = counting_stop,
	.emit = counting_emit,
	.release = counting_release,
};
