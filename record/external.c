/* External collectors: see external.h for the protocol. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bag.h"
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
	pid_t pid;
	int in_fd, out_fd;
	pthread_t th;
	bool started, thread_started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool hello, bye, eof, reaped, unavailable;
	volatile bool stop_reading; /* the collector is gone: stop waiting for EOF */
	int status;
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
	e->in_fd = e->out_fd = -1;
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

void pmu_ext_start(struct pmu_ext *e, pid_t root)
{
	int in[2], out[2], errp[2], err = 0;
	char pidbuf[24];
	struct timespec dl;
	ssize_t n;

	e->t_requested = pmu_now_mono_ns();
	if (access(e->path, X_OK) < 0) {
		e->unavailable = true;
		set_reason(e, "cannot run '%s': %s", e->path, strerror(errno));
		return;
	}
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		set_reason(e, "pipe: %s", strerror(errno));
		return;
	}
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)root);
	e->argv[e->argc] = strdup(pidbuf);
	/* set before the fork: after it only async-signal-safe calls are safe
	 * while other threads (earlier collectors' readers) run */
	setenv("PMU_COHORT_PID", pidbuf, 1);
	e->pid = fork();
	if (e->pid == 0) {
		/* its own process group: a ^C to the terminal is pmurec's to forward */
		setpgid(0, 0);
		dup2(in[0], 0);
		dup2(out[1], 1);
		execv(e->path, e->argv);
		err = errno;
		if (write(errp[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	unsetenv("PMU_COHORT_PID");
	close(in[0]);
	close(out[1]);
	close(errp[1]);
	if (e->pid < 0) {
		set_reason(e, "fork: %s", strerror(errno));
		close(in[1]);
		close(out[0]);
		close(errp[0]);
		return;
	}
	e->started = true;
	e->t_opened = pmu_now_mono_ns();
	e->in_fd = in[1];
	e->out_fd = out[0];
	while ((n = read(errp[0], &err, sizeof(err))) < 0 && errno == EINTR)
		;
	close(errp[0]);
	if (n == (ssize_t)sizeof(err))
		set_reason(e, "cannot run '%s': %s", e->path, strerror(err));
	if (pthread_create(&e->th, NULL, reader, e) != 0) {
		set_reason(e, "cannot start a reader thread");
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
	if (!e->hello)
		set_reason(e, e->eof ? "the collector ended before its hello" : "no hello within %d ms", e->timeout_ms);
	pthread_mutex_unlock(&e->mu);
}

bool pmu_ext_reaped(struct pmu_ext *e, pid_t pid, int status)
{
	if (!e->started || pid != e->pid || e->reaped)
		return false;
	e->reaped = true;
	e->status = status;
	return true;
}

void pmu_ext_stop(struct pmu_ext *e)
{
	uint64_t deadline;

	if (!e->started)
		return;
	e->t_stopped = pmu_now_mono_ns();
	close(e->in_fd);
	e->in_fd = -1;
	deadline = e->t_stopped + (uint64_t)e->timeout_ms * 1000000u;
	while (!e->reaped) {
		int st;
		pid_t w = waitpid(e->pid, &st, WNOHANG);

		if (w == e->pid) {
			e->reaped = true;
			e->status = st;
			break;
		}
		if (w < 0 && errno != EINTR)
			break;
		if (pmu_now_mono_ns() >= deadline) {
			set_reason(e, "the collector did not exit within %d ms after its input closed", e->timeout_ms);
			kill(e->pid, SIGKILL);
			if (waitpid(e->pid, &st, 0) == e->pid) {
				e->reaped = true;
				e->status = st;
			}
			break;
		}
		usleep(2000);
	}
	/* Its helpers go with it (it runs in its own process group), then
	 * whatever it wrote is read to the end, for one more timeout at most. */
	if (e->reaped)
		kill(-e->pid, SIGKILL);
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

json_t *pmu_ext_lifecycle(struct pmu_ext *e, const struct pmu_cohort *c)
{
	json_t *l = json_array(), *r;
	uint64_t t = e->t_requested, end = e->t_detached ? e->t_detached : pmu_now_mono_ns();
	const char *final;

	(void)c;
	if (e->unavailable) {
		pmu_lc_unavailable(l, t, e->reason, "check the path given to --collector exec:");
		return l;
	}
	json_array_append_new(l, pmu_lc_rec(t, "requested"));
	r = pmu_lc_rec(t, "probed");
	json_object_set_new(r, "status", json_string("ok"));
	json_array_append_new(l, r);
	if (e->started)
		json_array_append_new(l, pmu_lc_rec(e->t_opened, "opened"));
	if (e->hello) {
		char ev[200];

		r = pmu_lc_rec(e->t_hello, "attached");
		snprintf(ev, sizeof(ev), "hello from %s %s before the command was released", e->name, e->version);
		json_object_set_new(r, "evidence", json_string(ev));
		json_array_append_new(l, r);
	}
	if (e->hello && e->dropped) {
		r = pmu_lc_rec(e->t_stopped > e->t_hello ? e->t_stopped : e->t_hello, "drop");
		json_object_set_new(r, "count", json_integer((json_int_t)e->dropped));
		json_array_append_new(l, r);
	}
	if (e->started && e->malformed) {
		r = pmu_lc_rec(e->t_stopped > e->t_hello ? e->t_stopped : e->t_hello > e->t_opened ? e->t_hello : e->t_opened,
			  "malformed");
		json_object_set_new(r, "count", json_integer((json_int_t)e->malformed));
		json_array_append_new(l, r);
	}
	if (e->hello && e->t_stopped)
		json_array_append_new(l, pmu_lc_rec(e->t_stopped > e->t_hello ? e->t_stopped : e->t_hello, "stopped"));
	if (e->hello && e->t_detached)
		json_array_append_new(l, pmu_lc_rec(end > e->t_stopped ? end : e->t_stopped, "detached"));
	final = pmu_ext_failed(e) ? "failed" : !strcmp(e->bye_status, "no-events") || !e->records ? "no-events" : "ok";
	r = pmu_lc_rec(end > e->t_stopped ? end : e->t_stopped, "final");
	json_object_set_new(r, "status", json_string(final));
	if (!strcmp(final, "failed"))
		json_object_set_new(r, "reason", json_string(e->reason));
	json_array_append_new(l, r);
	return l;
}

uint64_t pmu_ext_dropped(const struct pmu_ext *e)
{
	return e->dropped;
}
