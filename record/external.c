/* External collectors: see external.h for the protocol. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bag.h"
#include "collector.h"
#include "lifecycle.h"
#include "error.h"
#include "bounds.h"
#include "external.h"
#include "spec_json.h"
#include "util.h"

#define LINE_MAX_ (1u << 20)

struct pmu_ext {
	char *path;
	char **argv;
	size_t argc;
	char name[64];
	char version[64];
	int timeout_ms;
	pid_t pid;             /* the collector's keeper (see keeper()), pmurec's child */
	int in_fd, out_fd;
	int life_fd;           /* closing it tells the keeper to end everything */
	int status_fd;         /* the collector's wait status, from the keeper */
	pthread_t th;
	bool started, thread_started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool hello, bye, eof, reaped, unavailable;
	bool exited;           /* the collector's own status is known */
	volatile bool stop_reading; /* the collector is gone: stop waiting for EOF */
	int status;            /* the collector's wait status (the keeper's if it never said) */
	char bye_status[16];
	char reason[600];      /* why it failed or is unavailable */
	char first_bad[200];   /* the first malformed line, described */
	uint64_t t_requested, t_opened, t_hello, t_stopped, t_detached;
	uint64_t dropped, malformed, records, last_t;
	uint64_t t_truncated;  /* the output bound was reached: later records not kept */
	FILE *tmp;             /* accepted records, one JSON line each */
};

struct pmu_ext *pmu_ext_new(const char *spec, int timeout_ms)
{
	struct pmu_ext *e;
	char *s, *tok, *save = NULL;
	const char *base;

	if (strncmp(spec, "exec:", 5) || !spec[5]) {
		fprintf(stderr, "pmurec: --collector '%s': expected exec:PATH[,ARG...]\n", spec);
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	s = strdup(spec + 5);
	if (!e || !s) {
		free(e);
		free(s);
		return NULL;
	}
	e->argv = calloc(strlen(s) + 3, sizeof(*e->argv));
	for (tok = strtok_r(s, ",", &save); tok && e->argv; tok = strtok_r(NULL, ",", &save))
		e->argv[e->argc++] = strdup(tok);
	free(s);
	if (!e->argv || !e->argc) {
		pmu_ext_free(e);
		return NULL;
	}
	e->path = e->argv[0];
	e->timeout_ms = timeout_ms;
	e->in_fd = e->out_fd = e->life_fd = e->status_fd = -1;
	e->pid = -1;
	pthread_mutex_init(&e->mu, NULL);
	pthread_cond_init(&e->cv, NULL);
	/* a name from the path until the hello gives one: [a-z0-9_-] */
	base = strrchr(e->path, '/') ? strrchr(e->path, '/') + 1 : e->path;
	for (size_t i = 0, k = 0; base[i] && k < 40; i++) {
		char c = base[i];

		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')
			e->name[k++] = c;
		else if (c >= 'A' && c <= 'Z')
			e->name[k++] = (char)(c + 32);
	}
	if (!e->name[0] || e->name[0] == '-' || e->name[0] == '_')
		snprintf(e->name, sizeof(e->name), "external");
	e->t_requested = pmu_now_mono_ns();
	return e;
}

void pmu_ext_free(struct pmu_ext *e)
{
	if (!e)
		return;
	for (size_t i = 0; e->argv && i <= e->argc; i++)
		free(e->argv[i]); /* argv[argc] is the root pid, once started */
	free(e->argv);
	if (e->tmp)
		fclose(e->tmp);
	if (e->in_fd >= 0)
		close(e->in_fd);
	if (e->life_fd >= 0)
		close(e->life_fd); /* a keeper still running ends its collector now */
	if (e->status_fd >= 0)
		close(e->status_fd);
	pthread_mutex_destroy(&e->mu);
	pthread_cond_destroy(&e->cv);
	free(e);
}

void pmu_ext_set_timeout(struct pmu_ext *e, int timeout_ms)
{
	e->timeout_ms = timeout_ms;
}

void pmu_ext_rename(struct pmu_ext *e, const char *name)
{
	snprintf(e->name, sizeof(e->name), "%s", name);
}

const char *pmu_ext_name(const struct pmu_ext *e)
{
	return e->name;
}

static void set_reason(struct pmu_ext *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_reason(struct pmu_ext *e, const char *fmt, ...)
{
	va_list ap;

	if (e->reason[0])
		return; /* the first cause is the one that counts */
	va_start(ap, fmt);
	vsnprintf(e->reason, sizeof(e->reason), fmt, ap);
	va_end(ap);
}

static void set_bad(struct pmu_ext *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_bad(struct pmu_ext *e, const char *fmt, ...)
{
	va_list ap;

	if (e->first_bad[0])
		return;
	va_start(ap, fmt);
	vsnprintf(e->first_bad, sizeof(e->first_bad), fmt, ap);
	va_end(ap);
}

/* Append one cause to the reason. */
static void add_reason(struct pmu_ext *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_reason(struct pmu_ext *e, const char *fmt, ...)
{
	size_t n = strlen(e->reason);
	va_list ap;

	if (n && n + 2 < sizeof(e->reason)) {
		memcpy(e->reason + n, "; ", 3);
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(e->reason + n, sizeof(e->reason) - n, fmt, ap);
	va_end(ap);
}

static bool valid_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 40 || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '_'))
			return false;
	return true;
}

static bool uint_field(json_t *o, const char *k, bool required)
{
	json_t *v = json_object_get(o, k);

	return v ? json_is_integer(v) && json_integer_value(v) >= 0 : !required;
}

/* One protocol line; called with the lock held. */
static void on_line(struct pmu_ext *e, const char *line, size_t len)
{
	json_error_t je;
	json_t *j = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	const char *type = json_string_value(json_object_get(j, "type"));

	if (!j || !json_is_object(j) || !type) {
		e->malformed++;
		set_bad(e, "malformed line %llu from the collector: %s",
			   (unsigned long long)(e->records + e->malformed), j ? "no type" : je.text);
	} else if (!e->hello) {
		const char *name = json_string_value(json_object_get(j, "name"));
		const char *ver = json_string_value(json_object_get(j, "version"));
		const char *schema = json_string_value(json_object_get(j, "schema"));

		if (strcmp(type, "hello") || !name || !ver || !schema || strcmp(schema, "events")) {
			e->malformed++;
			set_bad(e, "first line is not a hello with name, version and schema \"events\"");
		} else {
			if (valid_name(name))
				snprintf(e->name, sizeof(e->name), "%s", name);
			snprintf(e->version, sizeof(e->version), "%s", ver);
			e->hello = true;
			e->t_hello = pmu_now_mono_ns();
			pthread_cond_broadcast(&e->cv);
		}
	} else if (e->bye) {
		e->malformed++;
		set_bad(e, "a '%s' line after bye", type);
	} else if (!strcmp(type, "record")) {
		json_t *ph = json_object_get(j, "ph");
		uint64_t t = (uint64_t)json_integer_value(json_object_get(j, "t_ns"));
		const char *k;
		json_t *v;
		bool ok = uint_field(j, "t_ns", true) && uint_field(j, "pid", true) && uint_field(j, "tid", true) &&
			  uint_field(j, "value", false) && json_string_length(json_object_get(j, "name")) > 0 &&
			  json_is_string(ph) && strlen(json_string_value(ph)) == 1 &&
			  strchr("iBE", json_string_value(ph)[0]);

		json_object_foreach(j, k, v)
			ok = ok && (!strcmp(k, "type") || !strcmp(k, "t_ns") || !strcmp(k, "pid") || !strcmp(k, "tid") ||
				    !strcmp(k, "name") || !strcmp(k, "ph") || !strcmp(k, "value"));
		if (ok && t < e->last_t) {
			ok = false;
			set_bad(e, "record at t_ns %llu is older than the one before it", (unsigned long long)t);
		}
		if (!ok) {
			e->malformed++;
			set_bad(e, "a record without t_ns, pid, tid, name and ph, or with other fields");
		} else if (e->t_truncated || !pmurec_bound_take(len + 1)) {
			if (!e->t_truncated)
				e->t_truncated = t;
		} else {
			char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);

			e->last_t = t;
			if (!e->tmp)
				e->tmp = tmpfile();
			if (!s || !e->tmp || fprintf(e->tmp, "%s\n", s) < 0) {
				e->dropped++;
				set_reason(e, "pmurec could not keep a record: %s", strerror(errno));
			} else {
				e->records++;
			}
			free(s);
		}
	} else if (!strcmp(type, "stats")) {
		if (!uint_field(j, "dropped", true)) {
			e->malformed++;
			set_bad(e, "stats without a dropped count");
		} else {
			e->dropped += (uint64_t)json_integer_value(json_object_get(j, "dropped"));
		}
	} else if (!strcmp(type, "bye")) {
		const char *st = json_string_value(json_object_get(j, "status"));
		const char *why = json_string_value(json_object_get(j, "reason"));

		if (!st || (strcmp(st, "ok") && strcmp(st, "no-events") && strcmp(st, "failed"))) {
			e->malformed++;
			set_bad(e, "bye without a status of ok, no-events or failed");
		} else {
			e->bye = true;
			snprintf(e->bye_status, sizeof(e->bye_status), "%s", st);
			if (!strcmp(st, "failed"))
				set_reason(e, "the collector reported failure: %s", why ? why : "no reason given");
		}
	} else {
		e->malformed++;
		set_bad(e, "unknown line type '%s'", type);
	}
	json_decref(j);
}

static void *reader(void *arg)
{
	struct pmu_ext *e = arg;
	char *buf = malloc(2 * LINE_MAX_);
	size_t have = 0;
	bool skipping = false;

	for (;;) {
		struct pollfd pf = { e->out_fd, POLLIN, 0 };
		ssize_t n;
		char *p, *nl;

		/* Poll, so that a helper the collector left holding its stdout
		 * cannot keep the recorder waiting once the collector is gone. */
		if (poll(&pf, 1, 100) == 0) {
			if (e->stop_reading)
				break;
			continue;
		}
		n = buf ? read(e->out_fd, buf + have, 2 * LINE_MAX_ - have) : 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		pthread_mutex_lock(&e->mu);
		for (p = buf; (nl = memchr(p, '\n', have - (size_t)(p - buf)));) {
			if (!skipping)
				on_line(e, p, (size_t)(nl - p));
			skipping = false;
			p = nl + 1;
		}
		have -= (size_t)(p - buf);
		memmove(buf, p, have);
		if (have >= LINE_MAX_) {
			e->malformed++;
			set_bad(e, "a line longer than %u bytes", LINE_MAX_);
			have = 0;
			skipping = true;
		}
		pthread_mutex_unlock(&e->mu);
	}
	pthread_mutex_lock(&e->mu);
	if (have && !skipping) {
		e->malformed++;
		set_bad(e, "the last line has no newline");
	}
	e->eof = true;
	e->t_detached = pmu_now_mono_ns();
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
	free(buf);
	close(e->out_fd);
	return NULL;
}

/*
 * The keeper: nothing a collector starts outlives it, or pmurec.
 *
 * A collector is not pmurec's child but its grandchild: pmurec forks a
 * keeper, which forks and execs the collector and then only waits.
 *  - The keeper is a child subreaper (PR_SET_CHILD_SUBREAPER, prctl(2)):
 *    whatever the collector starts and orphans (a helper that left its
 *    process group with setsid, then lost its parent) reparents to the
 *    keeper, not to init, and can still be found.
 *  - It waits on the read end of a pipe whose one write end pmurec holds.
 *    EOF comes when pmurec closes it (a collector past its timeout, or with
 *    no hello) and when pmurec dies, also by SIGKILL, which no handler of
 *    pmurec's could see.  PR_SET_PDEATHSIG could not do that job: it ends
 *    the collector alone, not what the collector started.
 *  - When the collector exits, or at that EOF, it SIGKILLs the collector's
 *    process group, then every process descended from itself, found by the
 *    PPid chains in /proc/PID/stat (/proc/PID/task/TID/children needs
 *    CONFIG_PROC_CHILDREN, which not every kernel has), and reaps until it
 *    has no child left; then it reports the collector's wait status on a
 *    second pipe and exits.
 * The collector gets PR_SET_PDEATHSIG (SIGKILL) for the case where the
 * keeper itself is killed.  Keeper and collector each lead a process group
 * of their own: a ^C to the terminal is pmurec's to forward.
 *
 * The keeper is forked from a threaded process and never execs: it makes
 * only async-signal-safe calls (system calls; no malloc, no stdio, no
 * exit()) and touches no lock.
 */
static volatile sig_atomic_t keeper_told; /* SIGTERM, SIGINT or SIGHUP: end everything */

static void keeper_on_signal(int sig)
{
	if (sig != SIGCHLD)
		keeper_told = 1;
}

static void close_fds(unsigned lo, unsigned hi)
{
	struct rlimit rl;
	unsigned max = 1u << 20;

#ifdef SYS_close_range
	if (syscall(SYS_close_range, lo, hi, 0) == 0)
		return;
#endif
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < max)
		max = (unsigned)rl.rlim_cur;
	for (unsigned fd = lo; fd <= hi && fd < max; fd++)
		close((int)fd);
}

/* Close every descriptor but the n in keep (n <= 8). */
static void close_all_but(const int *keep, int n)
{
	int k[8];
	unsigned lo = 0;

	for (int i = 0; i < n; i++) {
		int j = i;

		for (; j > 0 && k[j - 1] > keep[i]; j--)
			k[j] = k[j - 1];
		k[j] = keep[i];
	}
	for (int i = 0; i < n; i++) {
		if ((unsigned)k[i] > lo)
			close_fds(lo, (unsigned)k[i] - 1);
		lo = (unsigned)k[i] + 1;
	}
	close_fds(lo, ~0u);
}

/* PPid and state from /proc/NAME/stat; false when it is gone or unreadable. */
static bool proc_parent(int procfd, const char *name, pid_t *ppid, char *state)
{
	char path[32], buf[512];
	size_t k = 0;
	ssize_t n;
	char *p;
	int fd;
	long v = 0;

	while (name[k] && k < 20) {
		path[k] = name[k];
		k++;
	}
	memcpy(path + k, "/stat", 6);
	fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	/* "PID (COMM) S PPID ...": COMM may hold ')' and spaces, and nothing
	 * after it does, so its end is the last ')' */
	p = memrchr(buf, ')', (size_t)n);
	if (!p || p + 4 >= buf + n)
		return false;
	*state = p[2];
	for (p += 4; p < buf + n && *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (*p - '0');
	*ppid = (pid_t)v;
	return true;
}

/* The set of pids found so far, sorted: a pid's index, or -(insertion point)-1. */
static long set_find(const pid_t *set, size_t n, pid_t pid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (set[mid] == pid)
			return (long)mid;
		if (set[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -(long)lo - 1;
}

/*
 * SIGKILL pid, found with a parent in the set.  Through a pidfd when the
 * kernel has them: the pid is looked at again once the pidfd holds the
 * process, so a pid that was reaped and reused since /proc was read is not
 * signalled (only a descendant has its parent in the set).
 */
static void kill_descendant(int procfd, const char *name, pid_t pid, const pid_t *set, size_t n)
{
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_send_signal)
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	pid_t ppid;
	char st;

	if (pfd >= 0) {
		if (proc_parent(procfd, name, &ppid, &st) && set_find(set, n, ppid) >= 0)
			syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0);
		close(pfd);
		return;
	}
	if (errno != ENOSYS)
		return; /* gone */
#else
	(void)procfd;
	(void)name;
	(void)set;
	(void)n;
#endif
	kill(pid, SIGKILL);
}

/*
 * SIGKILL every process descended from self: passes over /proc add the
 * processes whose parent is in the set until a pass adds none.  set has
 * room for cap pids; what does not fit is found in the next sweep, once
 * its killed parents have made it the keeper's child.
 */
static void sweep(pid_t self, pid_t *set, size_t cap)
{
	size_t n = 1;
	bool added = true;

	set[0] = self;
	while (added && n < cap) {
		char dents[4096];
		long got;
		int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (procfd < 0)
			return;
		added = false;
		while (n < cap && (got = syscall(SYS_getdents64, procfd, dents, sizeof(dents))) > 0) {
			for (long off = 0; off < got && n < cap;) {
				/* struct linux_dirent64: ino, off, reclen, type, name */
				unsigned short reclen;
				const char *name = dents + off + 19;
				pid_t pid = 0, ppid;
				long at;
				char st;

				memcpy(&reclen, dents + off + 16, sizeof(reclen));
				off += reclen;
				for (const char *c = name; pid >= 0 && *c; c++)
					pid = *c >= '0' && *c <= '9' && pid < 1 << 27 ? pid * 10 + (*c - '0') : -1;
				/* not a process directory, the keeper, or one seen */
				if (pid <= 0 || set_find(set, n, pid) >= 0 || !proc_parent(procfd, name, &ppid, &st) ||
				    set_find(set, n, ppid) < 0)
					continue;
				if (st != 'Z')
					kill_descendant(procfd, name, pid, set, n);
				at = -set_find(set, n, pid) - 1;
				memmove(set + at + 1, set + at, (n - (size_t)at) * sizeof(*set));
				set[at] = pid;
				n++;
				added = true;
			}
		}
		close(procfd);
	}
}

static void keeper(const struct pmu_ext *e, int in_r, int out_w, int err_w, int life_r, int status_w)
{
	struct sigaction sa = { 0 };
	sigset_t block, orig, waitmask;
	pid_t self = getpid(), child;
	size_t cap = 1u << 16;
	pid_t *set;
	int err;
	bool exited = false;

	setpgid(0, 0);
	prctl(PR_SET_NAME, "pmurec-keeper", 0, 0, 0);
	/* without it (Linux < 3.4) orphans go to init: the sweeps still find
	 * whatever is alive when they run */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	/* the collector's stdin and stdout must be above 2 for dup2 below */
	if ((in_r <= 2 && (in_r = fcntl(in_r, F_DUPFD_CLOEXEC, 3)) < 0) ||
	    (out_w <= 2 && (out_w = fcntl(out_w, F_DUPFD_CLOEXEC, 3)) < 0)) {
		err = errno;
		if (write(err_w, &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &orig);
	waitmask = orig;
	sigdelset(&waitmask, SIGCHLD);
	sigdelset(&waitmask, SIGTERM);
	sigdelset(&waitmask, SIGINT);
	sigdelset(&waitmask, SIGHUP);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
	child = _Fork(); /* no atfork handlers: they could wait on a lock of pmurec's */
#else
	child = fork();
#endif
	if (child == 0) {
		setpgid(0, 0);
		/* dies with the keeper; and if the keeper is gone already, its
		 * parent is someone else now and it must not run at all */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != self)
			_exit(127);
		sigprocmask(SIG_SETMASK, &orig, NULL);
		if (dup2(in_r, 0) >= 0 && dup2(out_w, 1) >= 0)
			execv(e->path, e->argv);
		err = errno;
		if (write(err_w, &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	if (child < 0) {
		err = errno;
		if (write(err_w, &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	/* The collector has what it inherits from pmurec (close-on-exec
	 * descriptors go at its exec).  The keeper execs nothing: it closes
	 * all, or it would hold the collector's stdout open, and the pipes of
	 * other collectors (whose input would not close while it lives). */
	close_all_but((int[]){ life_r, status_w }, 2);
	sa.sa_handler = keeper_on_signal;
	sa.sa_flags = SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL); /* pmurec may be gone when the status is written */

	/* Wait: reap the orphans that reparent here, until the collector exits
	 * (seen, not reaped: its pid stays its group's id) or the pipe ends. */
	while (!keeper_told) {
		struct pollfd pf = { life_r, POLLIN, 0 };
		siginfo_t si;

		si.si_pid = 0;
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid > 0) {
			if (si.si_pid == child)
				break;
			waitpid(si.si_pid, NULL, 0);
			continue;
		}
		if (ppoll(&pf, 1, NULL, &waitmask) > 0)
			break; /* EOF (or anything): end now */
	}

	/* End everything: the group at once, then all the descendants, until
	 * none is left. */
	kill(-child, SIGKILL);
	kill(child, SIGKILL);
	set = mmap(NULL, cap * sizeof(*set), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	for (;;) {
		struct timespec ts = { 0, 10 * 1000000L };
		pid_t w;
		int s;

		if (set != MAP_FAILED)
			sweep(self, set, cap);
		while ((w = waitpid(-1, &s, WNOHANG)) > 0)
			if (w == child && !exited) {
				/* reported now: pmurec times the collector, not the clean-up */
				exited = true;
				if (write(status_w, &s, sizeof(s)) < 0)
					close(status_w); /* pmurec is gone */
			}
		if (w < 0 && errno == ECHILD)
			break;
		ppoll(NULL, 0, &ts, &waitmask); /* a child's exit, or 10 ms */
	}
	_exit(0);
}

/* Tell the keeper to end the collector and what it started (no wait). */
static void end_collector(struct pmu_ext *e)
{
	if (e->life_fd >= 0)
		close(e->life_fd);
	e->life_fd = -1;
}

/* The keeper's report of the collector's wait status, if it has come. */
static void read_status(struct pmu_ext *e)
{
	int st;

	if (!e->exited && e->status_fd >= 0 && read(e->status_fd, &st, sizeof(st)) == (ssize_t)sizeof(st)) {
		e->exited = true;
		e->status = st;
	}
}

void pmu_ext_start(struct pmu_ext *e, pid_t root)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, errp[2] = { -1, -1 }, life[2] = { -1, -1 }, stp[2] = { -1, -1 };
	int err = 0;
	char pidbuf[24];
	struct timespec dl;
	ssize_t n;

	e->t_requested = pmu_now_mono_ns();
	if (access(e->path, X_OK) < 0) {
		e->unavailable = true;
		set_reason(e, "cannot run '%s': %s", e->path, strerror(errno));
		return;
	}
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0 ||
	    pipe2(life, O_CLOEXEC) < 0 || pipe2(stp, O_CLOEXEC | O_NONBLOCK) < 0) {
		int *fds[] = { in, out, errp, life, stp };

		set_reason(e, "pipe: %s", strerror(errno));
		for (size_t i = 0; i < PMU_ARRAY_SIZE(fds); i++)
			for (int k = 0; k < 2; k++)
				if (fds[i][k] >= 0)
					close(fds[i][k]);
		return;
	}
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)root);
	e->argv[e->argc] = strdup(pidbuf);
	/* set before the fork: after it only async-signal-safe calls are safe
	 * while other threads (earlier collectors' readers) run */
	setenv("PMU_COHORT_PID", pidbuf, 1);
	e->pid = fork();
	if (e->pid == 0)
		keeper(e, in[0], out[1], errp[1], life[0], stp[1]); /* does not return */
	unsetenv("PMU_COHORT_PID");
	close(in[0]);
	close(out[1]);
	close(errp[1]);
	close(life[0]);
	close(stp[1]);
	if (e->pid < 0) {
		set_reason(e, "fork: %s", strerror(errno));
		close(in[1]);
		close(out[0]);
		close(errp[0]);
		close(life[1]);
		close(stp[0]);
		return;
	}
	e->started = true;
	e->t_opened = pmu_now_mono_ns();
	e->in_fd = in[1];
	e->out_fd = out[0];
	e->life_fd = life[1];
	e->status_fd = stp[0];
	while ((n = read(errp[0], &err, sizeof(err))) < 0 && errno == EINTR)
		;
	close(errp[0]);
	if (n == (ssize_t)sizeof(err))
		set_reason(e, "cannot run '%s': %s", e->path, strerror(err));
	if (pthread_create(&e->th, NULL, reader, e) != 0) {
		set_reason(e, "cannot start a reader thread");
		close(e->out_fd);
		e->out_fd = -1;
		end_collector(e);
		return;
	}
	e->thread_started = true;
	/* the command is released only once the collector said hello */
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += e->timeout_ms / 1000;
	dl.tv_nsec += (long)(e->timeout_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&e->mu);
	while (!e->hello && !e->eof)
		if (pthread_cond_timedwait(&e->cv, &e->mu, &dl) == ETIMEDOUT)
			break;
	if (!e->hello) {
		set_reason(e, e->eof ? "the collector ended before its hello" : "no hello within %d ms", e->timeout_ms);
		/* failed now: it does not run on beside the command, nor its helpers */
		end_collector(e);
	}
	pthread_mutex_unlock(&e->mu);
}

bool pmu_ext_reaped(struct pmu_ext *e, pid_t pid, int status)
{
	if (!e->started || pid != e->pid || e->reaped)
		return false;
	e->reaped = true;
	read_status(e);
	if (!e->exited)
		e->status = status; /* the keeper died without a report */
	return true;
}

/* Wait up to ms for the keeper to exit (until_exited: or for the
 * collector's status to come); true once the keeper has exited. */
static bool wait_keeper(struct pmu_ext *e, uint64_t ms, bool until_exited)
{
	uint64_t deadline = pmu_now_mono_ns() + ms * 1000000u;

	while (!e->reaped) {
		int st;
		pid_t w = waitpid(e->pid, &st, WNOHANG);

		if (w == e->pid) {
			pmu_ext_reaped(e, w, st);
			break;
		}
		if (w < 0 && errno != EINTR)
			break;
		read_status(e);
		if ((until_exited && e->exited) || pmu_now_mono_ns() >= deadline)
			return false;
		usleep(2000);
	}
	return true;
}

void pmu_ext_stop(struct pmu_ext *e)
{
	if (!e->started)
		return;
	e->t_stopped = pmu_now_mono_ns();
	close(e->in_fd);
	e->in_fd = -1;
	/* the collector's own exit, within the timeout */
	if (!wait_keeper(e, (uint64_t)e->timeout_ms, true) && !e->exited && e->life_fd >= 0)
		set_reason(e, "the collector did not exit within %d ms after its input closed", e->timeout_ms);
	/* Then everything it started is ended by its keeper: at once when it
	 * ran past the timeout; a keeper that cannot end it all in another
	 * timeout (a process in uninterruptible sleep) is killed. */
	end_collector(e);
	if (!wait_keeper(e, (uint64_t)e->timeout_ms, false)) {
		set_reason(e, "its processes did not end within %d ms after it was stopped", e->timeout_ms);
		kill(e->pid, SIGKILL);
		while (waitpid(e->pid, NULL, 0) < 0 && errno == EINTR)
			;
		e->reaped = true;
		read_status(e);
		if (!e->exited)
			e->status = W_EXITCODE(0, SIGKILL);
	}
	/* whatever it wrote is read to the end, for one more timeout at most */
	if (e->thread_started) {
		uint64_t until = pmu_now_mono_ns() + (uint64_t)e->timeout_ms * 1000000u;

		while (!e->eof && pmu_now_mono_ns() < until)
			usleep(2000);
		if (!e->eof)
			set_reason(e, "its output stayed open after it exited (a helper process still holds it)");
		e->stop_reading = true;
		pthread_join(e->th, NULL);
	}
	e->thread_started = false;
	/* every cause, the most telling first */
	if (e->reaped && WIFSIGNALED(e->status))
		add_reason(e, "killed by signal %d (SIG%s)%s", WTERMSIG(e->status),
			   sigabbrev_np(WTERMSIG(e->status)) ? sigabbrev_np(WTERMSIG(e->status)) : "?",
			   e->bye ? "" : " before its bye");
	else if (e->reaped && WEXITSTATUS(e->status))
		add_reason(e, "exited with status %d", WEXITSTATUS(e->status));
	if (!e->bye && !(e->reaped && WIFSIGNALED(e->status)))
		add_reason(e, "ended without a bye");
	if (e->malformed)
		add_reason(e, "%llu malformed line(s), the first: %s", (unsigned long long)e->malformed, e->first_bad);
}

const char *pmu_ext_reason(const struct pmu_ext *e)
{
	return e->reason;
}

bool pmu_ext_failed(const struct pmu_ext *e)
{
	return !e->unavailable && e->reason[0];
}

json_t *pmu_ext_events(struct pmu_ext *e, const struct pmu_cohort *c, uint64_t t0, uint64_t t1)
{
	json_t *out = json_array();
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!e->tmp)
		return out;
	rewind(e->tmp);
	while ((n = getline(&line, &cap, e->tmp)) > 0) {
		json_t *r = json_loadb(line, (size_t)n, 0, NULL), *ev;
		uint64_t t = (uint64_t)json_integer_value(json_object_get(r, "t_ns"));
		int64_t pid = json_integer_value(json_object_get(r, "pid"));
		const struct pmu_incarnation *in =
			r ? pmu_cohort_find(c, (pid_t)pid, (pid_t)json_integer_value(json_object_get(r, "tid")), t, t) : NULL;
		char id[32];

		if (!in || t < t0 || t > t1) {
			/* not attributable to the cohort: it is not in the bundle, and counted */
			e->dropped++;
			json_decref(r);
			continue;
		}
		snprintf(id, sizeof(id), "i%d", in->id);
		ev = json_pack("{s:s,s:I,s:s,s:I,s:O,s:O,s:O}", "type", "event", "t_ns", (json_int_t)t, "inc", id, "pid",
			       (json_int_t)pid, "tid", json_object_get(r, "tid"), "name", json_object_get(r, "name"), "ph",
			       json_object_get(r, "ph"));
		if (json_object_get(r, "value"))
			json_object_set(ev, "value", json_object_get(r, "value"));
		json_array_append_new(out, ev);
		json_decref(r);
	}
	free(line);
	if (e->t_truncated) {
		char why[160];

		snprintf(why, sizeof(why), "--max-output-bytes %llu reached: later records were not kept",
			 (unsigned long long)pmurec_bound_limit());
		json_array_append_new(out, json_pack("{s:s,s:I,s:s}", "type", "truncation", "t_ns",
						     (json_int_t)(e->t_truncated < t1 ? e->t_truncated : t1), "reason", why));
	}
	return out;
}

uint64_t pmu_ext_dropped(const struct pmu_ext *e)
{
	return e->dropped;
}

/* ---- external collectors on the contract (collector.h) ---------------- */

struct ext_coll {
	struct pmu_collector_env *env;
	struct pmu_ext *e;      /* env->arg: made by the recorder from --collector */
};

static int ext_probe(struct pmu_collector_env *env, json_t *caps, void **state)
{
	struct ext_coll *x = calloc(1, sizeof(*x));

	(void)caps;
	if (!x)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	x->env = env;
	x->e = env->arg;
	*state = x;
	return 0;
}

static bool ext_usable(void *state)
{
	(void)state;
	return true; /* whether it starts is known at open */
}

static int ext_open(void *state, pid_t root, uint64_t t)
{
	struct ext_coll *x = state;

	(void)t;
	pmu_ext_start(x->e, root);
	return 0;
}

static void ext_stop(void *state, uint64_t t)
{
	struct ext_coll *x = state;

	(void)t;
	pmu_ext_stop(x->e);
}

static bool ext_reaped(void *state, pid_t pid, int status)
{
	struct ext_coll *x = state;

	return pmu_ext_reaped(x->e, pid, status);
}

/* Its lifecycle, from the times the keeper and the reader recorded as they
 * happened (the reader thread records them; lifecycle.c is filled here). */
static void ext_lifecycle(struct pmu_ext *e, struct pmu_lifecycle *lc)
{
	uint64_t end = e->t_detached ? e->t_detached : pmu_now_mono_ns();
	const char *final;

	if (e->unavailable) {
		pmu_lc_unavailable_at(lc, e->t_requested, e->reason, "check the path given to --collector exec:");
		return;
	}
	pmu_lc_step(lc, "requested", e->t_requested);
	pmu_lc_probed_ok(lc, e->t_requested);
	if (e->started)
		pmu_lc_step(lc, "opened", e->t_opened);
	if (e->hello) {
		char ev[200];

		snprintf(ev, sizeof(ev), "hello from %s %s before the command was released", e->name, e->version);
		pmu_lc_attached(lc, e->t_hello, ev);
	}
	if (e->hello && e->dropped)
		pmu_lc_lost(lc, "drop", e->t_stopped > e->t_hello ? e->t_stopped : e->t_hello, e->dropped, NULL);
	if (e->started && e->malformed)
		pmu_lc_lost(lc, "malformed",
			    e->t_stopped > e->t_hello ? e->t_stopped : e->t_hello > e->t_opened ? e->t_hello : e->t_opened,
			    e->malformed, NULL);
	if (e->hello && e->t_stopped)
		pmu_lc_step(lc, "stopped", e->t_stopped > e->t_hello ? e->t_stopped : e->t_hello);
	if (e->hello && e->t_detached)
		pmu_lc_step(lc, "detached", end > e->t_stopped ? end : e->t_stopped);
	final = pmu_ext_failed(e) ? "failed" : !strcmp(e->bye_status, "no-events") || !e->records ? "no-events" : "ok";
	pmu_lc_final(lc, end > e->t_stopped ? end : e->t_stopped, final, !strcmp(final, "failed") ? e->reason : NULL);
}

static int ext_emit(void *state, struct pmu_collector_env *env, const struct pmu_run_window *win)
{
	struct ext_coll *x = state;
	json_t *ev;
	char rel[128];
	int err = 0;

	if (!x)
		return 0;
	ev = pmu_ext_events(x->e, env->cohort, win->start_ns, win->end_ns);
	if (json_array_size(ev)) {
		snprintf(rel, sizeof(rel), "collectors/%s/events.jsonl", pmu_ext_name(x->e));
		err = pmu_out_stream(env->out, rel, "events", ev);
	} else {
		json_decref(ev);
	}
	ext_lifecycle(x->e, env->lc);
	if (!pmu_ext_failed(x->e) && pmu_ext_dropped(x->e))
		fprintf(stderr, "pmurec: collector '%s': %llu record(s) dropped or not attributable to the cohort; "
			"the bundle will not validate (LOSS)\n", pmu_ext_name(x->e),
			(unsigned long long)pmu_ext_dropped(x->e));
	return err;
}

static bool ext_failed(void *state, char *why, size_t n)
{
	struct ext_coll *x = state;

	if (!x || !pmu_ext_failed(x->e))
		return false;
	snprintf(why, n, "%s", pmu_ext_reason(x->e));
	return true;
}

static const char *ext_instance(void *state)
{
	struct ext_coll *x = state;

	return pmu_ext_name(x->e);
}

static void ext_rename(void *state, const char *name)
{
	struct ext_coll *x = state;

	pmu_ext_rename(x->e, name);
}

static void ext_release(void *state)
{
	free(state); /* the pmu_ext is the recorder's */
}

const struct pmu_collector_ops pmu_external_collector = {
	.name = "external",
	.modes = 1 | 2 | 4,
	.probe = ext_probe,
	.usable = ext_usable,
	.open = ext_open,
	.stop = ext_stop,
	.emit = ext_emit,
	.failed = ext_failed,
	.release = ext_release,
	.instance = ext_instance,
	.rename = ext_rename,
	.reaped = ext_reaped,
};
