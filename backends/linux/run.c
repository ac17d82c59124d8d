/*
 * Launch behind a barrier and follow the cohort with ptrace(2).
 *
 * Why ptrace: it is the one interface that, unprivileged (Yama scope 1
 * lets a parent trace its descendants), reports every fork, clone, exec
 * and exit of the tree *before* the task goes on, so that each
 * incarnation's /proc files (stat, status, io) can be read at its exit
 * event, while it still exists, and its exit status is seen even when its
 * own parent reaps it.  perf task/comm records see the same births but
 * not exit codes or resources.  Only events stop the tracee (no syscall
 * tracing), so the cost is a few context switches per process.
 *
 * The barrier: the child blocks on a pipe until the recorder has seized
 * it (PTRACE_SEIZE with EXITKILL: if the recorder dies, the cohort dies
 * with it, so nothing runs unobserved); a close-on-exec pipe carries
 * exec's errno back when exec fails.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <linux/sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "cgroup.h"
#include "follow_ebpf.h"
#include "error.h"
#include "util.h"

volatile int pmu_backend_stop_signal;
volatile int pmu_backend_abort;

/*
 * A small /proc file into buf (NUL-terminated), or -1 with errno.  The
 * follower reads several per process while the process waits at a ptrace
 * stop: no allocation, no fstat, one buffer on the stack.
 */
static ssize_t proc_read(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n = 0;

	if (fd < 0)
		return -1;
	while (len + 1 < cap && (n = read(fd, buf + len, cap - 1 - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (n < 0)
		return -1;
	buf[len] = '\0';
	return (ssize_t)len;
}

static void read_comm(pid_t pid, char *out, size_t n)
{
	char path[64], s[64];
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	out[0] = '\0';
	if ((len = proc_read(path, s, sizeof(s))) > 0) {
		while (len && s[len - 1] == '\n')
			s[--len] = '\0';
		snprintf(out, n, "%.31s", s);
	}
	if (!out[0])
		snprintf(out, n, "?");
}

/* "Key:\tvalue" lines of /proc/PID/status, read once: vals[i] for keys[i],
 * -1 when absent or unreadable. */
static void status_fields(pid_t pid, const char *const *keys, long long *vals, int n)
{
	char path[64], s[8192], *p;

	for (int i = 0; i < n; i++)
		vals[i] = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (proc_read(path, s, sizeof(s)) < 0)
		return;
	for (p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		for (int i = 0; i < n; i++) {
			size_t kl = strlen(keys[i]);

			if (!strncmp(p, keys[i], kl) && p[kl] == ':')
				vals[i] = strtoll(p + kl + 1, NULL, 10);
		}
}

/* A new incarnation as the model takes it, with its /proc identity and comm. */
static struct pmu_incarnation *join(struct pmu_cohort *c, pid_t pid, int parent, uint64_t t, bool preexisting)
{
	uint64_t boot = 0;
	char comm[32];

	pmu_pid_starttime((int)pid, &boot);
	read_comm(pid, comm, sizeof(comm));
	return pmu_cohort_add(c, pid, parent, t, boot, comm, preexisting);
}

/*
 * The argv of the exec that just happened: at PTRACE_EVENT_EXEC the tracee
 * is stopped in its new image, so /proc/PID/cmdline is the new
 * mm->arg_start .. arg_end (fs/proc/base.c proc_pid_cmdline_read), read
 * here up to the spec's byte bound and one byte more, which tells that it
 * went on.  buf must hold PMU_ARGV_MAX_BYTES + 1 bytes.
 */
struct argv_read {
	struct pmu_exec_argv a;
	char reason_buf[160];
};

static void read_argv(pid_t pid, char *buf, struct argv_read *r)
{
	struct pmu_exec_argv *a = &r->a;
	char file[64];
	size_t got = 0;
	int fd;

	memset(r, 0, sizeof(*r));
	snprintf(file, sizeof(file), "/proc/%d/cmdline", (int)pid);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(r->reason_buf, sizeof(r->reason_buf), "cannot open '%s': %s", file, strerror(errno));
		a->reason = r->reason_buf;
		return;
	}
	while (got < PMU_ARGV_MAX_BYTES + 1) {
		ssize_t n = read(fd, buf + got, PMU_ARGV_MAX_BYTES + 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(r->reason_buf, sizeof(r->reason_buf), "cannot read '%s': %s", file, strerror(errno));
			a->reason = r->reason_buf;
			close(fd);
			return;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	a->blob = buf;
	a->len = got > PMU_ARGV_MAX_BYTES ? PMU_ARGV_MAX_BYTES : got;
	a->truncated = got > PMU_ARGV_MAX_BYTES;
}

static void add_exec(struct pmu_cohort *c, struct pmu_incarnation *in, pid_t pid, uint64_t t)
{
	char link[64], path[4096], argv[PMU_ARGV_MAX_BYTES + 1];
	struct argv_read a;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < 0)
		snprintf(path, sizeof(path), "?");
	else
		path[n] = '\0';
	read_argv(pid, argv, &a);
	pmu_cohort_exec(c, in, t, path, &a.a);
	read_comm(pid, in->d->comm, sizeof(in->d->comm));
}

/* Executable file mappings of a process, for provenance (the sink keeps
 * the distinct ones, up to its bound). */
static void read_objects(struct pmu_cohort *c, pid_t pid)
{
	char path[64], *s = NULL, *line, *save = NULL;

	if (!c->sink || !c->sink->object)
		return;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (pmu_read_file(AT_FDCWD, path, 16 << 20, &s, NULL))
		return;
	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char perms[8] = "", *file = strchr(line, '/');

		if (sscanf(line, "%*s %7s", perms) != 1 || !strchr(perms, 'x') || !file)
			continue;
		if (c->sink->object(c->sink->ctx, file) < 0)
			break;
	}
	free(s);
}

/*
 * Read a process's totals at its exit event, while /proc still has it.
 * /proc/PID/stat counts every thread of the process (living and dead);
 * context switches in /proc/PID/status are the leader thread's own.
 */
static void read_resources(struct pmu_incarnation *in)
{
	static const char *const remedy = "run pmurec as the owner of the command, or as root";
	static const char *const keys[] = { "VmHWM", "voluntary_ctxt_switches", "nonvoluntary_ctxt_switches" };
	char path[64], s[4096], *p = NULL;
	long tick = sysconf(_SC_CLK_TCK);
	long long v, vals[3];
	struct pmu_resource *res = pmu_cohort_res(in);

	if (!res)
		return; /* out of memory: the end writes "not observed" */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)in->pid);
	if (proc_read(path, s, sizeof(s)) > 0 && (p = strrchr(s, ')'))) {
		unsigned long long f[64] = { 0 };
		int n;

		/* p + 2 is field 3, the state letter: skip it, then read numbers */
		p += 2;
		p = strchr(p, ' ');
		for (n = 4, p = p ? p + 1 : ""; *p && n < 60; n++) {
			f[n] = strtoull(p, &p, 10);
			if (*p != ' ')
				break;
			p++;
		}
		/* fields (1-based, proc(5)): 10 minflt, 12 majflt, 14 utime, 15 stime */
		pmu_res_set(&res[PMU_RES_MINOR_FAULTS], f[10], "/proc/PID/stat minflt at exit");
		pmu_res_set(&res[PMU_RES_MAJOR_FAULTS], f[12], "/proc/PID/stat majflt at exit");
		pmu_res_set(&res[PMU_RES_CPU_USER_NS], f[14] * (1000000000ull / (unsigned long long)tick),
			"/proc/PID/stat utime at exit (clock ticks)");
		pmu_res_set(&res[PMU_RES_CPU_SYSTEM_NS], f[15] * (1000000000ull / (unsigned long long)tick),
			"/proc/PID/stat stime at exit (clock ticks)");
	} else {
		int e = errno;

		for (int r = PMU_RES_CPU_USER_NS; r <= PMU_RES_MAJOR_FAULTS; r++)
			if (r != PMU_RES_MAX_RSS_BYTES)
				pmu_res_unavail(&res[r], "/proc/PID/stat", remedy, "cannot read '%s': %s", path,
					    p ? "unexpected format" : strerror(e));
	}
	status_fields(in->pid, keys, vals, 3);
	v = vals[0];
	if (v >= 0)
		pmu_res_set(&res[PMU_RES_MAX_RSS_BYTES], (uint64_t)v * 1024, "/proc/PID/status VmHWM at exit");
	else
		pmu_res_unavail(&res[PMU_RES_MAX_RSS_BYTES], "/proc/PID/status", remedy,
			    "VmHWM not readable at exit");
	v = vals[1];
	if (v >= 0 && (size_t)in->ntids == 1)
		pmu_res_set(&res[PMU_RES_VOLUNTARY_SWITCHES], (uint64_t)v, "/proc/PID/status at exit");
	else
		pmu_res_unavail(&res[PMU_RES_VOLUNTARY_SWITCHES], "/proc/PID/status", "count them per thread with the counting collector (pmurec -e context-switches)",
			    v < 0 ? "not readable at exit" : "the process had %zu threads; /proc/PID/status counts the leader only",
			    (size_t)in->ntids);
	v = vals[2];
	if (v >= 0 && (size_t)in->ntids == 1)
		pmu_res_set(&res[PMU_RES_INVOLUNTARY_SWITCHES], (uint64_t)v, "/proc/PID/status at exit");
	else
		pmu_res_unavail(&res[PMU_RES_INVOLUNTARY_SWITCHES], "/proc/PID/status", "count them per thread with the counting collector (pmurec -e context-switches)",
			    v < 0 ? "not readable at exit" : "the process had %zu threads; /proc/PID/status counts the leader only",
			    (size_t)in->ntids);
	/* byte counts: see thread_io() and end_inc() */
}

/*
 * A thread's own byte counts, read at its exit event.  /proc/PID/io would
 * be wrong here: it adds the counts of every child the process reaped, so a
 * shell would be charged for its commands' reads.  /proc/PID/task/TID/io
 * is the thread's alone; summed over the threads of a process at their
 * exits, it is the process's own.
 */
static void thread_io(struct pmu_incarnation *in, pid_t tid)
{
	char path[96], s[1024], *r, *w;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/io", (int)in->pid, (int)tid);
	if (proc_read(path, s, sizeof(s)) > 0 && (r = strstr(s, "rchar: ")) && (w = strstr(s, "wchar: "))) {
		in->d->io_read += strtoull(r + 7, NULL, 10);
		in->d->io_write += strtoull(w + 7, NULL, 10);
		in->d->io_threads++;
	} else {
		in->d->io_failed = true;
	}
}

static void keep_rusage(struct pmu_launch_result *res, const struct rusage *ru)
{
	res->have_rusage = true;
	res->ru_user_ns = (uint64_t)ru->ru_utime.tv_sec * 1000000000ull + (uint64_t)ru->ru_utime.tv_usec * 1000u;
	res->ru_system_ns = (uint64_t)ru->ru_stime.tv_sec * 1000000000ull + (uint64_t)ru->ru_stime.tv_usec * 1000u;
	res->ru_maxrss_bytes = (uint64_t)ru->ru_maxrss * 1024;
	res->ru_minflt = (uint64_t)ru->ru_minflt;
	res->ru_majflt = (uint64_t)ru->ru_majflt;
}

/* mode none: the root's totals from wait4, which include the descendants it waited for. */
static void rusage_resources(struct pmu_incarnation *in, const struct rusage *ru)
{
	static const char src[] = "wait4 rusage of the command (includes the descendants it waited for)";
	static const char *const remedy = "record with --mode light to read /proc/PID/io at exit";
	struct pmu_resource *res = pmu_cohort_res(in);

	if (!res)
		return;
	pmu_res_set(&res[PMU_RES_CPU_USER_NS],
		(uint64_t)ru->ru_utime.tv_sec * 1000000000ull + (uint64_t)ru->ru_utime.tv_usec * 1000u, src);
	pmu_res_set(&res[PMU_RES_CPU_SYSTEM_NS],
		(uint64_t)ru->ru_stime.tv_sec * 1000000000ull + (uint64_t)ru->ru_stime.tv_usec * 1000u, src);
	pmu_res_set(&res[PMU_RES_MAX_RSS_BYTES], (uint64_t)ru->ru_maxrss * 1024, src);
	pmu_res_set(&res[PMU_RES_MINOR_FAULTS], (uint64_t)ru->ru_minflt, src);
	pmu_res_set(&res[PMU_RES_MAJOR_FAULTS], (uint64_t)ru->ru_majflt, src);
	pmu_res_set(&res[PMU_RES_VOLUNTARY_SWITCHES], (uint64_t)ru->ru_nvcsw, src);
	pmu_res_set(&res[PMU_RES_INVOLUNTARY_SWITCHES], (uint64_t)ru->ru_nivcsw, src);
	pmu_res_unavail(&res[PMU_RES_READ_BYTES], "wait4 rusage", remedy,
		    "wait4 rusage has no byte counts and mode none reads nothing else");
	pmu_res_unavail(&res[PMU_RES_WRITE_BYTES], "wait4 rusage", remedy,
		    "wait4 rusage has no byte counts and mode none reads nothing else");
}

static void end_inc(struct pmu_cohort *c, struct pmu_incarnation *in, int status, uint64_t t, bool followed)
{
	static const char src[] = "/proc/PID/task/TID/io rchar, wchar at each thread's exit, summed";
	struct pmu_inc_detail *d = in->d;
	struct pmu_resource *res = followed ? pmu_cohort_res(in) : d->res;

	if (!res) {
		/* out of memory, or mode none without rusage: "not observed" */
	} else if (followed && !d->io_failed && d->io_threads < in->ntids) {
		/* a thread ended unseen (it exec'd away, or was reaped early):
		 * a sum without it would be short, so there is no sum */
		pmu_res_unavail(&res[PMU_RES_READ_BYTES], src, "none: a thread's exit event was not delivered",
			    "%u of %u threads were read at their exits", d->io_threads, in->ntids);
		pmu_res_unavail(&res[PMU_RES_WRITE_BYTES], src, "none: a thread's exit event was not delivered",
			    "%u of %u threads were read at their exits", d->io_threads, in->ntids);
	} else if (followed && !d->io_failed) {
		pmu_res_set(&res[PMU_RES_READ_BYTES], d->io_read, src);
		pmu_res_set(&res[PMU_RES_WRITE_BYTES], d->io_write, src);
	} else if (followed) {
		pmu_res_unavail(&res[PMU_RES_READ_BYTES], src, "run pmurec as the owner of the command, or as root",
			    "a thread's /proc/PID/task/TID/io was not readable at its exit");
		pmu_res_unavail(&res[PMU_RES_WRITE_BYTES], src, "run pmurec as the owner of the command, or as root",
			    "a thread's /proc/PID/task/TID/io was not readable at its exit");
	}
	pmu_cohort_end(c, in, WIFEXITED(status) ? 1 : WIFSIGNALED(status) ? 2 : 0,
		       WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? WTERMSIG(status) : 0, t);
}

static void kill_all(struct pmu_cohort *c, int sig)
{
	for (size_t i = 0; i < c->n; i++)
		if (!c->incs[i].ended)
			kill(c->incs[i].pid, sig);
}

static bool all_ended(const struct pmu_cohort *c)
{
	return c->live_incs == 0;
}

/* A task we have not seen yet (its first stop can come before its
 * parent's fork event): a thread of a known process, or a new process
 * whose parent is its PPid. */
static struct pmu_incarnation *adopt(struct pmu_cohort *c, pid_t tid, uint64_t t, struct pmu_incarnation *by,
				     int hint)
{
	static const char *const keys[] = { "Tgid", "PPid" };
	long long v[2], tgid, ppid;
	struct pmu_incarnation *in, *p;

	status_fields(tid, keys, v, 2);
	tgid = v[0];
	ppid = v[1];
	in = tgid > 0 ? pmu_cohort_of_pid(c, (pid_t)tgid) : NULL;
	int parent_id;

	/* /proc unreadable (the task is gone, or no descriptor is left): the
	 * ptrace event says what it is; a clone event is a thread of its
	 * reporter, never a process made up */
	if (tgid <= 0 && hint == 1 && by)
		in = by, tgid = by->pid;
	if (in && (pid_t)tgid != tid) {
		int r = pmu_cohort_add_tid(c, in, tid);

		return r < 0 || r == 2 ? NULL : in;
	}
	/* The parent: PPid, or (CLONE_PARENT, or a parent already gone) the
	 * task that reported the fork, or else the root: every task here
	 * descends from it. */
	p = ppid > 0 ? pmu_cohort_of_pid(c, (pid_t)ppid) : NULL;
	parent_id = p ? p->id : by ? by->id : c->n ? 1 : 0;
	return join(c, tid, parent_id, t, false);
}

/*
 * A new task the cohort cannot take (at its bound, or out of memory): it
 * is held at its first stop and has run no code of its own.  Launched, it
 * is killed now (the run ends as truncated, the cohort is sent SIGTERM);
 * attached, it is let go, as the rest of the tree will be.
 */
static void refuse(const struct pmu_launch *l, pid_t tid)
{
	if (l->attach_pid)
		ptrace(PTRACE_DETACH, tid, 0, 0);
	else
		kill(tid, SIGKILL);
}

/* Attach mode: let go of every task, delivering any signal that was
 * stopped on its way, and leave the tree running. */
static void detach_all(struct pmu_cohort *c)
{
	for (size_t i = 0; i < c->n; i++) {
		struct pmu_incarnation *in = &c->incs[i];

		if (in->ended)
			continue;
		for (uint32_t k = 0; k < in->ntids; k++) {
			pid_t tid = in->tids[k];
			int st;

			if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0)
				continue;
			while (waitpid(tid, &st, __WALL) == tid) {
				if (!WIFSTOPPED(st))
					break;
				ptrace(PTRACE_DETACH, tid, 0, (st >> 16) == 0 ? WSTOPSIG(st) : 0);
				break;
			}
		}
	}
}

static int seize_tree(struct pmu_cohort *c, pid_t pid, int parent, uint64_t t, int depth)
{
	char path[96], *s = NULL;
	struct pmu_incarnation *in;
	DIR *d;
	int id;

	if (depth > 64 || pmu_cohort_of_pid(c, pid) || pid == getpid())
		return 0;
	/* a zombie has exited already: nothing to follow, and it cannot be seized */
	{
		char st[64], *z = NULL, *rp;

		snprintf(st, sizeof(st), "/proc/%d/stat", (int)pid);
		if (pmu_read_file(AT_FDCWD, st, 4096, &z, NULL) == 0 && (rp = strrchr(z, ')')) && rp[1] == ' ' &&
		    (rp[2] == 'Z' || rp[2] == 'X')) {
			free(z);
			return 0;
		}
		free(z);
	}
	in = join(c, pid, parent, t, true);
	if (!in && c->limit_reason[0])
		return 0; /* the bound ends the run: what is not seized stays untraced */
	if (!in)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	id = in->id;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return pmu_error(PMU_ERR_NOTFOUND, "no process %d", (int)pid);
	for (struct dirent *e; (e = readdir(d));) {
		pid_t tid = (pid_t)atoi(e->d_name);

		if (tid <= 0)
			continue;
		if (ptrace(PTRACE_SEIZE, tid, 0,
			   PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC |
				   PTRACE_O_TRACEEXIT) < 0) {
			int e2 = errno;

			closedir(d);
			return pmu_error(e2 == EPERM ? PMU_ERR_INVAL : PMU_ERR_IO, "cannot attach to thread %d of %d: %s",
					 (int)tid, (int)pid, strerror(e2));
		}
		in = &c->incs[id - 1];
		switch (pmu_cohort_add_tid(c, in, tid)) {
		case 2:
			ptrace(PTRACE_DETACH, tid, 0, 0); /* past the bound: not followed */
			break;
		}
	}
	closedir(d);
	/* children, from every thread's list */
	d = opendir(path);
	for (struct dirent *e; d && (e = readdir(d));) {
		char cp[128], *w, *save = NULL;

		if (atoi(e->d_name) <= 0)
			continue;
		snprintf(cp, sizeof(cp), "/proc/%d/task/%d/children", (int)pid, atoi(e->d_name));
		if (pmu_read_file(AT_FDCWD, cp, 1 << 20, &s, NULL))
			continue;
		for (w = strtok_r(s, " \n", &save); w; w = strtok_r(NULL, " \n", &save))
			seize_tree(c, (pid_t)atoi(w), id, t, depth + 1);
		free(s);
		s = NULL;
	}
	if (d)
		closedir(d);
	return 0;
}


/* ---- the follow, step by step (backend.h) -------------------------------- */

struct pmu_follow {
	const struct pmu_launch *l;
	struct pmu_cohort *c;
	struct pmu_launch_result *res;
	enum pmu_follower_kind kind;  /* what runs: NONE, PTRACE or EBPF */
	pid_t root;
	int errpipe;                  /* exec's errno, -1 once read */
	bool root_reaped;
	struct pmu_ebpf_follow *ebpf;
	struct sigaction old_chld;
	uint64_t killed_at;           /* when SIGKILL was sent to the cohort, 0 never */
	uint64_t gone_since;          /* eBPF: since when no incarnation left is alive, 0 */
	pid_t keeper;                 /* eBPF: kills the cohort's cgroup if the recorder dies */
	int keeper_fd;                /* its pipe: EOF without 'd' means the recorder is gone */
};

/*
 * Nothing the recorder started may outlive it.  Traced, the kernel sees to
 * that (PTRACE_O_EXITKILL); with the eBPF follower no one holds the cohort,
 * so a keeper does: a child that waits on a pipe only the recorder writes.
 * At the end the recorder sends 'd' (done) and the keeper exits; if the
 * recorder dies first, the pipe ends without it and the keeper kills the
 * cohort's cgroup (cgroup.kill: every process in it, however it was
 * reparented), then exits.  It ignores the terminal's signals: ^C reaches
 * the recorder, which forwards it.
 */
static int keeper_start(struct pmu_follow *f)
{
	const char *cg = pmu_cohort_cgroup_path(f->l->cgroup);
	char kill_path[700];
	int p[2];
	pid_t pid;

	snprintf(kill_path, sizeof(kill_path), "%s/cgroup.kill", cg);
	if (pipe2(p, O_CLOEXEC) < 0)
		return pmu_error(PMU_ERR_IO, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return pmu_error(PMU_ERR_IO, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		char c = 0;
		ssize_t n;
		int fd;

		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGCHLD, SIG_DFL);
		close(p[1]);
		prctl(PR_SET_NAME, "pmurec-keeper", 0, 0, 0);
		while ((n = read(p[0], &c, 1)) < 0 && errno == EINTR)
			;
		if (n == 1 && c == 'd')
			_exit(0);
		if ((fd = open(kill_path, O_WRONLY | O_CLOEXEC)) >= 0) {
			if (write(fd, "1", 1) < 0) {
				/* nothing more a keeper can do */
			}
			close(fd);
		}
		_exit(0);
	}
	close(p[0]);
	f->keeper = pid;
	f->keeper_fd = p[1];
	return 0;
}

static void keeper_stop(struct pmu_follow *f)
{
	if (f->keeper_fd < 0)
		return;
	if (write(f->keeper_fd, "d", 1) < 0) {
		/* the keeper is gone already */
	}
	close(f->keeper_fd);
	f->keeper_fd = -1;
	while (waitpid(f->keeper, NULL, 0) < 0 && errno == EINTR)
		;
}

/*
 * SIGCHLD wakes the loop through a pipe: the handler writes a byte, the
 * loop polls the read end.  (A signalfd would need SIGCHLD blocked, and
 * every process the recorder starts — the command, collectors, their
 * keepers — would inherit the blocked mask.)
 */
static int chld_pipe[2] = { -1, -1 };

static void on_chld(int sig)
{
	int e = errno;

	(void)sig;
	if (chld_pipe[1] >= 0 && write(chld_pipe[1], "c", 1) < 0) {
		/* full: a wakeup is pending anyway */
	}
	errno = e;
}

static int chld_watch(struct pmu_follow *f)
{
	struct sigaction sa = { 0 };

	if (chld_pipe[0] < 0 && pipe2(chld_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return pmu_error(PMU_ERR_IO, "pipe: %s", strerror(errno));
	sa.sa_handler = on_chld;
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	sigemptyset(&sa.sa_mask);
	/* ptrace stops are reported by SIGCHLD too: SA_NOCLDSTOP does not
	 * hide them from a tracer (the kernel notifies the tracer always) */
	sa.sa_flags &= ~SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, &f->old_chld);
	return 0;
}

static void chld_unwatch(struct pmu_follow *f)
{
	sigaction(SIGCHLD, &f->old_chld, NULL);
}

static void chld_clear(void)
{
	char buf[256];

	while (chld_pipe[0] >= 0 && read(chld_pipe[0], buf, sizeof(buf)) > 0)
		;
}

/* One wait result of a traced task (the ptrace follower); true when the
 * cohort is gone. */
static bool ptrace_event(struct pmu_follow *f, pid_t pid, int st, const struct rusage *ru)
{
	struct pmu_cohort *c = f->c;
	const struct pmu_launch *l = f->l;
	uint64_t now = pmu_now_mono_ns();
	struct pmu_incarnation *in;

	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		in = pmu_cohort_of_tid(c, pid);
		if (!in) {
			/* not a traced task: an external collector */
			if (l->on_other_exit)
				l->on_other_exit(l->ctx, pid, st);
			return false;
		}
		pmu_cohort_task_ended(c, in, pid, now, NULL);
		if (in->pid == pid)
			end_inc(c, in, st, now, true);
		if (pid == f->root) {
			f->root_reaped = true;
			f->res->wait_status = st;
			if (!l->attach_pid) /* only a launched command is our child */
				keep_rusage(f->res, ru);
		}
		return all_ended(c); /* the whole cohort is gone */
	}
	if (!WIFSTOPPED(st))
		return false;
	in = pmu_cohort_of_tid(c, pid);
	if (!in)
		in = adopt(c, pid, now, NULL, 0);
	if (!in && (st >> 16) == PTRACE_EVENT_STOP && WSTOPSIG(st) == SIGTRAP) {
		/* a new task's first stop, and no room for it */
		refuse(l, pid);
		if (!l->attach_pid)
			ptrace(PTRACE_CONT, pid, 0, 0);
		return false;
	}
	switch (st >> 16) {
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE: {
		unsigned long msg = 0;

		if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg) == 0) {
			struct pmu_incarnation *x = pmu_cohort_of_tid(c, (pid_t)msg);

			if (!x && !adopt(c, (pid_t)msg, now, in, (st >> 16) == PTRACE_EVENT_CLONE ? 1 : 2))
				refuse(l, (pid_t)msg);
			else if (x)
				/* a thread id seen before in this process (a thread
				 * that ended, or an exec'd thread's old id): a new
				 * task all the same; the listener drops repeats */
				pmu_cohort_task_joined(c, x, (pid_t)msg, now);
		}
		ptrace(PTRACE_CONT, pid, 0, 0);
		break;
	}
	case PTRACE_EVENT_EXEC: {
		unsigned long former = 0;

		/* exec by a thread other than the leader: it now has the
		 * process id, and the old leader is gone (ptrace(2)) */
		if (in && ptrace(PTRACE_GETEVENTMSG, pid, 0, &former) == 0 && (pid_t)former != pid && former)
			pmu_cohort_task_exec(c, in, (pid_t)former, now);
		if (in)
			add_exec(c, in, pid, now);
		ptrace(PTRACE_CONT, pid, 0, 0);
		break;
	}
	case PTRACE_EVENT_EXIT:
		if (in)
			thread_io(in, pid);
		if (in && in->pid == pid) {
			read_resources(in);
			read_objects(c, pid);
		}
		ptrace(PTRACE_CONT, pid, 0, 0);
		break;
	case PTRACE_EVENT_STOP:
		/*
		 * A group stop (SIGSTOP, SIGTSTP, ^Z...) reports the stopping
		 * signal: the task stays stopped until SIGCONT, as untraced
		 * (PTRACE_LISTEN).  The first stop of a new task and an
		 * interrupt report SIGTRAP: go on.
		 */
		if (WSTOPSIG(st) == SIGSTOP || WSTOPSIG(st) == SIGTSTP || WSTOPSIG(st) == SIGTTIN ||
		    WSTOPSIG(st) == SIGTTOU)
			ptrace(PTRACE_LISTEN, pid, 0, 0);
		else
			ptrace(PTRACE_CONT, pid, 0, 0);
		break;
	default:
		/* signal-delivery stop: deliver the signal */
		ptrace(PTRACE_CONT, pid, 0, WSTOPSIG(st));
		break;
	}
	return false;
}

/* An exit the untraced followers reap: the root (its status and wait4
 * totals), or another child of the recorder. */
static void child_exit(struct pmu_follow *f, pid_t pid, int st, const struct rusage *ru)
{
	if (pid != f->root) {
		if (f->l->on_other_exit)
			f->l->on_other_exit(f->l->ctx, pid, st);
		return;
	}
	f->root_reaped = true;
	f->res->wait_status = st;
	keep_rusage(f->res, ru);
	if (f->kind == PMU_FOLLOW_NONE) {
		rusage_resources(&f->c->incs[0], ru);
		end_inc(f->c, &f->c->incs[0], st, pmu_now_mono_ns(), false);
	} else {
		pmu_ebpf_root_status(f->ebpf, st);
	}
}

/*
 * The eBPF follower's backstop.  It ends when the kernel has no member
 * left; should records be lost so that the model still holds incarnations
 * the kernel has no more, the follow must end all the same: once the root
 * is reaped and none of them is alive for 1 s, or 2 s after SIGKILL was
 * sent to the cohort.  What was not seen to end is written as such, and
 * the loss is counted (pmu_ebpf_stats).
 */
static bool ebpf_gone(struct pmu_follow *f)
{
	uint64_t now = pmu_now_mono_ns();
	bool alive = false;

	if (f->killed_at && now > f->killed_at + 2000000000ull)
		return true;
	for (size_t i = 0; !alive && i < f->c->n; i++)
		alive = !f->c->incs[i].ended && (kill(f->c->incs[i].pid, 0) == 0 || errno != ESRCH);
	if (alive) {
		f->gone_since = 0;
		return false;
	}
	if (!f->gone_since)
		f->gone_since = now;
	return now > f->gone_since + 1000000000ull;
}

int pmu_follow_drain(struct pmu_follow *f, bool *done)
{
	struct rusage ru;
	int st, err = 0;
	pid_t pid;

	*done = false;
	chld_clear();
	if (f->kind == PMU_FOLLOW_EBPF)
		err = pmu_ebpf_drain(f->ebpf);
	/* __WALL: the traced threads of the cohort, and every child */
	while ((pid = wait4(-1, &st, __WALL | WNOHANG, &ru)) > 0) {
		if (f->kind == PMU_FOLLOW_PTRACE) {
			if (ptrace_event(f, pid, st, &ru))
				*done = true;
		} else if (WIFEXITED(st) || WIFSIGNALED(st)) {
			child_exit(f, pid, st, &ru);
		}
	}
	if (pid < 0 && errno != ECHILD && errno != EINTR)
		return pmu_error(PMU_ERR_IO, "waitpid: %s", strerror(errno));
	if (pid < 0 && errno == ECHILD && f->kind == PMU_FOLLOW_PTRACE)
		*done = true; /* nothing traced is left */
	if (f->kind == PMU_FOLLOW_NONE)
		*done = f->root_reaped;
	if (f->kind == PMU_FOLLOW_EBPF && !err && f->root_reaped && (pmu_ebpf_done(f->ebpf) || ebpf_gone(f))) {
		/* no member is left: the last records are in the ring */
		err = pmu_ebpf_drain(f->ebpf);
		pmu_ebpf_finish(f->ebpf);
		*done = true;
	}
	return err;
}

int pmu_follow_fds(const struct pmu_follow *f, int *fds, int max)
{
	int n = 0;

	if (n < max && chld_pipe[0] >= 0)
		fds[n++] = chld_pipe[0];
	if (f->kind == PMU_FOLLOW_EBPF)
		n += pmu_ebpf_fds(f->ebpf, fds + n, max - n);
	return n;
}

void pmu_follow_kill(struct pmu_follow *f, int sig)
{
	if (sig == SIGKILL && !f->killed_at)
		f->killed_at = pmu_now_mono_ns();
	if (f->kind == PMU_FOLLOW_NONE) {
		if (!f->root_reaped)
			kill(f->root, sig);
		return;
	}
	kill_all(f->c, sig);
}

void pmu_follow_detach(struct pmu_follow *f)
{
	if (f->kind == PMU_FOLLOW_PTRACE)
		detach_all(f->c);
}

bool pmu_follow_stops(const struct pmu_follow *f)
{
	return f && f->kind == PMU_FOLLOW_PTRACE;
}

/* Why ptrace could not seize the command, and what to do. */
static void seize_failed(struct pmu_launch_result *res, int pe)
{
	long long scope = -1;
	char *s = NULL;

	if (pmu_read_file(AT_FDCWD, "/proc/sys/kernel/yama/ptrace_scope", 16, &s, NULL) == 0)
		scope = atoll(s);
	free(s);
	if (scope >= 0)
		snprintf(res->follow_reason, sizeof(res->follow_reason),
			 "ptrace(PTRACE_SEIZE) of the command failed: %s (kernel.yama.ptrace_scope=%lld)",
			 strerror(pe), scope);
	else
		snprintf(res->follow_reason, sizeof(res->follow_reason), "ptrace(PTRACE_SEIZE) of the command failed: %s",
			 strerror(pe));
	res->follow_remedy = pe == EPERM
		? "set kernel.yama.ptrace_scope=1 (or 0), or allow ptrace in the container's seccomp profile"
		: "check that ptrace is available on this kernel";
}

static int attach_start(struct pmu_follow *f)
{
	struct pmu_cohort *c = f->c;
	const struct pmu_launch *l = f->l;
	int err;

	f->kind = PMU_FOLLOW_PTRACE;
	f->res->follower = "ptrace";
	f->root = l->attach_pid;
	snprintf(f->res->follower_why, sizeof(f->res->follower_why),
		 "attach mode: only ptrace can take over a tree that is already running");
	c->listener = l->listener;
	c->task_flags = PMU_TASK_PREEXISTING;
	err = seize_tree(c, l->attach_pid, 0, f->res->start_ns, 0);
	c->task_flags = 0;
	if (err) {
		c->listener = NULL;
		detach_all(c);
		return err;
	}
	f->res->follow_ok = true;
	snprintf(f->res->follower_evidence, sizeof(f->res->follower_evidence),
		 "PTRACE_SEIZE of the running tree of pid %d", (int)l->attach_pid);
	if (l->before_release)
		l->before_release(l->ctx, l->attach_pid);
	return 0;
}

/*
 * fork(2), or, when the cohort has a cgroup, clone3(2) with
 * CLONE_INTO_CGROUP so that the command is born in the leaf.  Moving it
 * there after a fork (a write to cgroup.procs) takes the cgroup
 * threadgroup rwsem for writing, which waits for an RCU grace period:
 * 7-15 ms on a 2-CPU VM, the largest single cost of pmurec -- true
 * (docs/fixed-cost.md); a child born in the cgroup takes only the read
 * side.  Where clone3 or the flag is refused (before Linux 5.7, a seccomp
 * filter, a leaf that may not be entered) the plain fork is used and the
 * leaf is entered as before (pmu_cg_enter() sees which happened).  Either
 * way the child is a fork: no CLONE_VM, SIGCHLD at its end, and it calls
 * only what is safe after fork.
 */
static pid_t spawn(const struct pmu_launch *l)
{
#ifdef CLONE_INTO_CGROUP
	if (l->cgroup && l->cgroup->cg.dirfd >= 0) {
		struct clone_args ca;
		long pid;

		memset(&ca, 0, sizeof(ca));
		ca.flags = CLONE_INTO_CGROUP;
		ca.exit_signal = SIGCHLD;
		ca.cgroup = (uint64_t)l->cgroup->cg.dirfd;
		pid = syscall(SYS_clone3, &ca, sizeof(ca));
		if (pid >= 0)
			return (pid_t)pid;
	}
#endif
	return fork();
}

int pmu_follow_start(const struct pmu_launch *l, struct pmu_cohort *c, struct pmu_launch_result *res,
		     struct pmu_follow **out)
{
	int barrier[2], errpipe[2], e = 0, err = 0;
	struct pmu_follow *f;
	pid_t pid, recorder = getpid();
	char why[300] = "";
	const char *remedy = NULL;

	*out = NULL;
	memset(res, 0, sizeof(*res));
	if (!(f = calloc(1, sizeof(*f))))
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	f->l = l;
	f->c = c;
	f->res = res;
	f->errpipe = -1;
	f->keeper_fd = -1;
	c->sink = l->sink;
	if ((err = chld_watch(f))) {
		free(f);
		return err;
	}
	res->start_ns = pmu_now_mono_ns();
	if (l->attach_pid) {
		if ((err = attach_start(f))) {
			chld_unwatch(f);
			free(f);
			return err;
		}
		*out = f;
		return 0;
	}
	/* the eBPF follower is loaded before the fork: its load is the fixed cost */
	f->kind = l->follower == PMU_FOLLOW_AUTO ? PMU_FOLLOW_EBPF : l->follower;
	if (f->kind == PMU_FOLLOW_EBPF && !l->cgroup) {
		snprintf(why, sizeof(why), "the cohort has no cgroup of its own, and without one a recorder killed "
			 "by SIGKILL could leave the cohort running (only ptrace's EXITKILL guarantees it then)");
		remedy = "record with --cohort auto or cgroup, as root";
		if (l->follower == PMU_FOLLOW_EBPF) {
			snprintf(res->follow_reason, sizeof(res->follow_reason), "the eBPF follower: %s", why);
			res->follow_remedy = remedy;
			res->follower = "ebpf";
			snprintf(res->follower_why, sizeof(res->follower_why), "--follower ebpf was asked for");
			f->kind = PMU_FOLLOW_NONE;
		} else {
			f->kind = PMU_FOLLOW_PTRACE;
			snprintf(res->follower_why, sizeof(res->follower_why),
				 "auto: the eBPF follower is unavailable (%s); ptrace follows instead", why);
		}
	} else if (f->kind == PMU_FOLLOW_EBPF) {
		int r = pmu_ebpf_open(c, l, &f->ebpf, why, sizeof(why), &remedy);

		if (r < 0 && r != PMU_ERR_UNSUPPORTED) {
			chld_unwatch(f);
			free(f);
			return r;
		}
		if (r < 0 && l->follower == PMU_FOLLOW_EBPF) {
			/* asked for by name: no other follower will do */
			snprintf(res->follow_reason, sizeof(res->follow_reason), "the eBPF follower: %s", why);
			res->follow_remedy = remedy;
			f->kind = PMU_FOLLOW_NONE;
			res->follower = "ebpf";
			snprintf(res->follower_why, sizeof(res->follower_why), "--follower ebpf was asked for");
		} else if (r < 0) {
			f->kind = PMU_FOLLOW_PTRACE;
			snprintf(res->follower_why, sizeof(res->follower_why),
				 "auto: the eBPF follower is unavailable (%s); ptrace follows instead", why);
		} else {
			snprintf(res->follower_why, sizeof(res->follower_why), "%s",
				 l->follower == PMU_FOLLOW_AUTO ? "auto: the eBPF follower could be loaded"
								: "--follower ebpf was asked for");
		}
	} else if (f->kind == PMU_FOLLOW_PTRACE) {
		snprintf(res->follower_why, sizeof(res->follower_why), "--follower ptrace was asked for");
	}
	if (f->kind == PMU_FOLLOW_EBPF && (err = keeper_start(f))) {
		pmu_ebpf_close(f->ebpf);
		chld_unwatch(f);
		free(f);
		return err;
	}
	if (pipe2(barrier, O_CLOEXEC) < 0 || pipe2(errpipe, O_CLOEXEC) < 0) {
		err = pmu_error(PMU_ERR_IO, "pipe: %s", strerror(errno));
		keeper_stop(f);
		pmu_ebpf_close(f->ebpf);
		chld_unwatch(f);
		free(f);
		return err;
	}
	pid = spawn(l);
	if (pid < 0) {
		err = pmu_error(PMU_ERR_IO, "fork: %s", strerror(errno));
		keeper_stop(f);
		pmu_ebpf_close(f->ebpf);
		chld_unwatch(f);
		free(f);
		return err;
	}
	if (pid == 0) {
		char go;
		ssize_t got;

		/* The command dies with the recorder: traced, by EXITKILL;
		 * untraced, by this alone.  It is sent when the forking thread
		 * exits: the fork stays on the main thread. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != recorder)
			_exit(127);
		/* the recorder's handlers are not the command's: a signal
		 * forwarded before the exec acts as it would after */
		signal(SIGCHLD, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		close(barrier[1]);
		close(errpipe[0]);
		while ((got = read(barrier[0], &go, 1)) < 0 && errno == EINTR)
			;
		/* EOF instead of the go-ahead: the recorder died before it could
		 * attach, so nothing may run unobserved */
		if (got != 1)
			_exit(127);
		close(barrier[0]);
		if (l->child_nofile) {
			struct rlimit rl;

			if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
				rl.rlim_cur = (rlim_t)l->child_nofile;
				setrlimit(RLIMIT_NOFILE, &rl);
			}
		}
		execvp(l->argv[0], l->argv);
		e = errno;
		if (write(errpipe[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	f->root = pid;
	close(barrier[0]);
	close(errpipe[1]);
	f->errpipe = errpipe[0];
	if (!join(c, pid, 0, res->start_ns, false)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(barrier[1]);
		keeper_stop(f);
		pmu_ebpf_close(f->ebpf);
		chld_unwatch(f);
		close(f->errpipe);
		free(f);
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	}
	if (f->kind == PMU_FOLLOW_EBPF) {
		/* the root in the membership map before it may exec */
		if (pmu_ebpf_add_root(f->ebpf, pid, why, sizeof(why)) == 0) {
			res->follow_ok = true;
			res->follower = "ebpf";
			pmu_ebpf_evidence(f->ebpf, res->follower_evidence, sizeof(res->follower_evidence));
		} else {
			snprintf(res->follow_reason, sizeof(res->follow_reason), "the eBPF follower: %s", why);
			res->follow_remedy = "record with --follower ptrace";
			res->follower = "ebpf";
			pmu_ebpf_close(f->ebpf);
			f->ebpf = NULL;
			f->kind = PMU_FOLLOW_NONE;
		}
	} else if (f->kind == PMU_FOLLOW_PTRACE) {
		res->follower = "ptrace";
		if (ptrace(PTRACE_SEIZE, pid, 0,
			   PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC |
				   PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL) == 0) {
			res->follow_ok = true;
			snprintf(res->follower_evidence, sizeof(res->follower_evidence),
				 "PTRACE_SEIZE of the command before its exec");
		} else {
			seize_failed(res, errno);
			f->kind = PMU_FOLLOW_NONE;
		}
	} else {
		res->follower = "none";
	}
	if (l->before_release)
		l->before_release(l->ctx, pid);
	if (res->follow_ok) {
		/* from here on every task that joins is reported, the root
		 * first, still held before its exec */
		c->listener = l->listener;
		c->task_flags = PMU_TASK_ROOT_PREEXEC;
		pmu_cohort_task_joined(c, &c->incs[0], pid, pmu_now_mono_ns());
		c->task_flags = 0;
	}
	/* release the child */
	if (write(barrier[1], "g", 1) != 1)
		err = pmu_error(PMU_ERR_IO, "cannot release the command: %s", strerror(errno));
	close(barrier[1]);
	/*
	 * A traced child may stop (a signal on its way, a group stop) before
	 * it execs, and only the follow loop can let it go on: so exec's
	 * outcome is read after following.  Untraced, it is read now; the
	 * pipe ends at the exec, or carries its errno.
	 */
	if (f->kind != PMU_FOLLOW_PTRACE) {
		ssize_t n;

		while ((n = read(f->errpipe, &e, sizeof(e))) < 0 && errno == EINTR)
			;
		close(f->errpipe);
		f->errpipe = -1;
		if (n == (ssize_t)sizeof(e)) {
			res->exec_failed = true;
			res->exec_errno = e;
		}
	}
	*out = f;
	return err;
}

int pmu_follow_end(struct pmu_follow *f, int err)
{
	struct pmu_cohort *c;

	if (!f)
		return err;
	c = f->c;
	if (f->errpipe >= 0) {
		ssize_t n;
		int e = 0;

		while ((n = read(f->errpipe, &e, sizeof(e))) < 0 && errno == EINTR)
			;
		close(f->errpipe);
		if (n == (ssize_t)sizeof(e)) {
			f->res->exec_failed = true;
			f->res->exec_errno = e;
		}
	}
	if (f->ebpf) {
		pmu_ebpf_finish(f->ebpf); /* done or not: the groups held end */
		pmu_ebpf_stats(f->ebpf, &f->res->lost, f->res->lost_why, sizeof(f->res->lost_why), &f->res->malformed,
			       f->res->malformed_first, sizeof(f->res->malformed_first));
		pmu_ebpf_close(f->ebpf);
	}
	keeper_stop(f);
	c->listener = NULL;
	chld_unwatch(f);
	f->res->end_ns = pmu_now_mono_ns();
	free(f);
	return pmu_cohort_finish(c, err);
}
