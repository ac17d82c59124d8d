/*
 * The Chrome Trace Event Format export of one repetition of a bundle
 * (pmuanalyze --trace).  The format is "Trace Event Format", the JSON
 * object form read by chrome://tracing and the Perfetto UI: an array of
 * events, each with a phase "ph" (M metadata, X complete, i instant), a
 * process and thread id, and times in microseconds.
 *
 * Events are written one at a time as they are built, the cohort's first
 * (one incarnation at a time, as an_cohort_each() gives them) and then the
 * spans in stream order, so memory holds one incarnation, one span record
 * and a compact index of the cohort's ids and pids (a few bytes per
 * incarnation, for the spans' pids), never the cohort or the span stream.  Viewers sort events by
 * time themselves; the one order that matters is that an X event which
 * begins at the same microsecond as another on its thread and encloses it
 * come first, which holds for an incarnation's lifetime and the spans in
 * it (the lifetime is written first).  Two spans on one thread that begin
 * at the same time are written child first (spans.jsonl is ordered by
 * end_ns), which a viewer may draw side by side instead of nested.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "error.h"
#include "model.h"
#include "oscall.h"
#include "runtime.h"
#include "trace.h"

/*
 * 15 significant digits print a time of up to 11 days in microseconds
 * exactly to the nanosecond (three decimals), and no more digits than it
 * has: %.17g would turn 1.001 into 1.0009999999999999.
 */
#define TRACE_DUMP_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(15))

/* A stream record, including its LF, is at most 1 MiB (spec 8.2); a longer
 * line is not a record and is skipped rather than parsed. */
#define TRACE_LINE_MAX (1u << 20)

struct trace {
	FILE *out;
	json_int_t start_ns;  /* the run's start_ns: time zero of the trace */
	json_int_t end_ns;    /* the run's end_ns, or -1: the end of incarnations alive at the end */
	struct an_ids ids;    /* incarnation ids, numbered ... */
	json_int_t *pid;      /* ... to their pids, for spans and marks */
	size_t pcap;
	size_t index;         /* incarnations read */
	bool first;           /* no event written yet */
};

static const char *str(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* A non-negative integer member: every time stamp and id of the spec is
 * one (8.3); anything else means the record is skipped. */
static bool uint_of(json_t *o, const char *k, json_int_t *v)
{
	json_t *x = json_object_get(o, k);

	if (!json_is_integer(x) || json_integer_value(x) < 0)
		return false;
	*v = json_integer_value(x);
	return true;
}

/* ns (>= 0) as microseconds: an integer when whole, else a real with the
 * nanoseconds as its three decimals. */
static json_t *usec(json_int_t ns)
{
	if (ns % 1000 == 0)
		return json_integer(ns / 1000);
	return json_real((double)ns / 1e3);
}

/* Write one event and take ownership of ev (NULL: it could not be built). */
static int emit(struct trace *t, json_t *ev)
{
	int rc;

	if (!ev)
		return pmu_error(PMU_ERR_NOMEM, "cannot build a trace event: out of memory");
	errno = 0;
	if (!t->first && fputs(",\n", t->out) == EOF)
		rc = -1;
	else
		rc = json_dumpf(ev, t->out, TRACE_DUMP_FLAGS);
	json_decref(ev);
	t->first = false;
	if (rc < 0 || ferror(t->out))
		return pmu_error(PMU_ERR_IO, "cannot write the trace: %s", strerror(errno ? errno : EIO));
	return 0;
}

/*
 * An X event for [begin, end] on pid/tid; args is stolen.  The part before
 * the run start (a preexisting incarnation's life before pmurec attached)
 * is cut off, so that no ts is negative; an interval that ends before it
 * begins, or before the run, is not drawn.
 */
static int emit_complete(struct trace *t, const char *name, const char *cat, json_int_t pid, json_int_t tid,
			 json_int_t begin, json_int_t end, json_t *args)
{
	if (begin < t->start_ns)
		begin = t->start_ns;
	if (end < begin) {
		json_decref(args);
		return 0;
	}
	return emit(t, json_pack("{s:s,s:s,s:s,s:o,s:o,s:I,s:I,s:o}", "name", name, "cat", cat, "ph", "X", "ts",
				 usec(begin - t->start_ns), "dur", usec(end - begin), "pid", pid, "tid", tid, "args",
				 args ? args : json_object()));
}

/* An instant: scope "p" (process) or "t" (thread); args is stolen.  An
 * instant before the run start has no place in the trace. */
static int emit_instant(struct trace *t, const char *name, const char *cat, const char *scope, json_int_t pid,
			json_int_t tid, json_int_t at, json_t *args)
{
	if (at < t->start_ns) {
		json_decref(args);
		return 0;
	}
	return emit(t, json_pack("{s:s,s:s,s:s,s:s,s:o,s:I,s:I,s:o}", "name", name, "cat", cat, "ph", "i", "s",
				 scope, "ts", usec(at - t->start_ns), "pid", pid, "tid", tid, "args",
				 args ? args : json_object()));
}

static int emit_meta(struct trace *t, const char *what, json_int_t pid, json_int_t tid, json_t *args)
{
	return emit(t, json_pack("{s:s,s:s,s:I,s:I,s:o}", "name", what, "ph", "M", "pid", pid, "tid", tid, "args",
				 args));
}

/* The exit of an incarnation as X-event args: kind, and code or signal. */
static json_t *exit_args(json_t *in)
{
	json_t *e = json_object_get(in, "exit"), *args = json_object();
	json_int_t v;

	if (!args)
		return NULL;
	json_object_set_new(args, "inc", json_string(str(in, "id")));
	if (str(in, "parent"))
		json_object_set_new(args, "parent", json_string(str(in, "parent")));
	if (str(e, "kind"))
		json_object_set_new(args, "exit", json_string(str(e, "kind")));
	if (uint_of(e, "code", &v))
		json_object_set_new(args, "code", json_integer(v));
	if (uint_of(e, "signal", &v))
		json_object_set_new(args, "signal", json_integer(v));
	if (json_is_true(json_object_get(in, "preexisting")))
		json_object_set_new(args, "preexisting", json_true());
	return args;
}

/* An exec as instant-event args: its path and (spec 1.4) its argv, with
 * argv_truncated when the recorder cut it, or argv_reason. */
static json_t *exec_args(json_t *x)
{
	json_t *args = json_pack("{s:s}", "path", str(x, "path")), *v;

	if (!args)
		return NULL;
	if (json_is_array(v = json_object_get(x, "argv")))
		json_object_set(args, "argv", v);
	if (json_is_true(json_object_get(x, "argv_truncated")))
		json_object_set_new(args, "argv_truncated", json_true());
	if (json_is_string(v = json_object_get(x, "argv_reason")))
		json_object_set(args, "argv_reason", v);
	return args;
}

/*
 * One incarnation: its process (named "comm (iN)", sorted in cohort order)
 * and thread names, its lifetime on its main thread (with the argv of its
 * last exec), its execs (each with its argv).  An
 * incarnation alive at the end of the run lasts to the run's end.
 */
static int put_incarnation(struct trace *t, json_t *in, size_t index)
{
	const char *id = str(in, "id"), *comm = str(in, "comm");
	json_int_t pid, start, end, tid;
	json_t *x, *args;
	char *name;
	size_t i;
	int err;

	bool added;
	long num;

	if (!id || !comm || !uint_of(in, "pid", &pid))
		return 0;
	if ((num = an_ids_put(&t->ids, id, &added)) < 0)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	if ((size_t)num >= t->pcap) {
		size_t nc = t->pcap ? 2 * t->pcap : 256;
		json_int_t *p = realloc(t->pid, nc * sizeof(*p));

		if (!p)
			return pmu_error(PMU_ERR_NOMEM, "out of memory");
		t->pid = p;
		t->pcap = nc;
	}
	if (added)
		t->pid[num] = pid;
	if (asprintf(&name, "%s (%s)", comm, id) < 0)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	err = emit_meta(t, "process_name", pid, pid, json_pack("{s:s}", "name", name));
	if (!err)
		err = emit_meta(t, "process_sort_index", pid, pid, json_pack("{s:I}", "sort_index", (json_int_t)index));
	if (!err)
		err = emit_meta(t, "thread_name", pid, pid, json_pack("{s:s}", "name", comm));
	json_array_foreach(json_object_get(in, "tids"), i, x) {
		if (err)
			break;
		if (!json_is_integer(x) || (tid = json_integer_value(x)) < 0 || tid == pid)
			continue;
		err = emit_meta(t, "thread_name", pid, tid, json_pack("{s:s}", "name", comm));
	}
	if (!err && uint_of(in, "start_ns", &start)) {
		bool alive = !uint_of(in, "end_ns", &end);

		if (alive)
			end = t->end_ns;
		if (end >= 0) {
			json_t *execs = json_object_get(in, "exec"), *last, *av;

			args = exit_args(in);
			if (alive && args)
				json_object_set_new(args, "alive_at_end", json_true());
			last = json_array_get(execs, json_array_size(execs) ? json_array_size(execs) - 1 : 0);
			if (args && json_is_array(av = json_object_get(last, "argv")))
				json_object_set(args, "argv", av);
			err = args ? emit_complete(t, name, "process", pid, pid, start, end, args)
				   : pmu_error(PMU_ERR_NOMEM, "out of memory");
		}
	}
	json_array_foreach(json_object_get(in, "exec"), i, x) {
		json_int_t at;

		if (err)
			break;
		if (!str(x, "path") || !uint_of(x, "t_ns", &at))
			continue;
		err = emit_instant(t, "exec", "exec", "p", pid, pid, at, exec_args(x));
	}
	free(name);
	return err;
}

/* One record of spans.jsonl: a span as an X event, a mark as a thread
 * instant, on the thread that made it; anything else is skipped. */
static int put_span_record(struct trace *t, json_t *r)
{
	const char *type = str(r, "type"), *name = str(r, "name"), *inc = str(r, "inc");
	json_int_t tid, pid, a, z;
	long num;

	if (!type || !name || !inc || !uint_of(r, "tid", &tid))
		return 0;
	if ((num = an_ids_find(&t->ids, inc)) < 0)
		return 0; /* not an incarnation of the cohort: no process to draw it in */
	pid = t->pid[num];
	if (!strcmp(type, "span")) {
		const char *id = str(r, "id");
		json_t *args;

		if (!id || !uint_of(r, "begin_ns", &a) || !uint_of(r, "end_ns", &z))
			return 0;
		args = json_pack("{s:s,s:s}", "id", id, "inc", inc);
		if (args && str(r, "parent"))
			json_object_set_new(args, "parent", json_string(str(r, "parent")));
		if (!args)
			return pmu_error(PMU_ERR_NOMEM, "out of memory");
		return emit_complete(t, name, "span", pid, tid, a, z, args);
	}
	if (!strcmp(type, "mark") && uint_of(r, "t_ns", &a))
		return emit_instant(t, name, "mark", "t", pid, tid, a, json_pack("{s:s}", "inc", inc));
	return 0;
}

/* Stream <dir>spans.jsonl line by line, header skipped.  A bundle without
 * the file has no spans to show; that is not an error here. */
static int put_spans(struct trace *t, const struct pmu_bundle *b, const char *dir)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	ssize_t n;
	bool header = true;
	FILE *f;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%sspans.jsonl", dir);
	fd = openat(b->rootfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : pmu_error(PMU_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return pmu_error(PMU_ERR_NOMEM, "cannot read '%s': %s", path, strerror(errno));
	}
	while (!err && (n = getline(&line, &cap, f)) > 0) {
		json_t *r;

		if (header) {
			header = false;
			continue;
		}
		if ((size_t)n > TRACE_LINE_MAX)
			continue;
		r = json_loadb(line, (size_t)n, 0, NULL);
		if (json_is_object(r))
			err = put_span_record(t, r);
		json_decref(r);
	}
	if (!err && ferror(f))
		err = pmu_error(PMU_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
	free(line);
	fclose(f);
	return err;
}

/* otherData: what the trace is of, and how to read its times. */
/* A raw system call or an off-CPU interval (oscall.h) on its thread's track. */
static int os_emit(void *ctx, const char *name, const char *cat, int64_t pid, int64_t tid, int64_t begin, int64_t end,
		   json_t *args)
{
	return emit_complete(ctx, name, cat, pid, tid, begin, end, args);
}

/* A span, GC pause or JIT compile of the probes stream (an X event) or a
 * mark (a thread instant) on its thread's track (runtime.h). */
static int rt_emit(void *ctx, char ph, const char *name, const char *cat, int64_t pid, int64_t tid, int64_t begin,
		   int64_t end, json_t *args)
{
	if (ph == 'i')
		return emit_instant(ctx, name, cat, "t", pid, tid, begin, args);
	return emit_complete(ctx, name, cat, pid, tid, begin, end, args);
}

static json_t *other_data(json_t *run, json_int_t start_ns, json_int_t repeat, int rep, size_t incarnations)
{
	json_t *argv = json_object_get(run, "argv");

	argv = json_is_array(argv) ? json_incref(argv) : json_array();
	return json_pack("{s:s,s:o,s:I,s:I,s:I,s:I,s:s,s:s}", "run_id", str(run, "run_id") ? str(run, "run_id") : "",
			 "argv", argv, "repetition", (json_int_t)rep, "repeat", repeat, "run_start_ns", start_ns,
			 "incarnations", (json_int_t)incarnations,
			 "clock",
			 "ts and dur are microseconds of CLOCK_MONOTONIC relative to the run start (run_start_ns, "
			 "the start_ns of run.json); pid and tid are the recorded process and thread ids",
			 "source", "pmuanalyze " PMU_VERSION);
}

/* One incarnation, as an_cohort_each() gives it. */
static int trace_inc(void *ctx, json_t *in, size_t seq)
{
	struct trace *t = ctx;

	t->index++;
	return put_incarnation(t, in, seq);
}

int pmu_export_chrome_trace(const struct pmu_bundle *b, int rep, FILE *out)
{
	struct trace t = { .out = out, .end_ns = -1, .first = true };
	json_t *top = NULL, *run = NULL, *other = NULL;
	json_int_t repeat = 1;
	char dir[48], doc[64];
	int err;

	an_ids_init(&t.ids);

	if (rep < 1)
		return pmu_error(PMU_ERR_INVAL, "repetition %d: repetitions count from 1", rep);
	/* data/run.json alone says how many repetitions there are (7.1). */
	err = pmu_bundle_read_doc(b, "run.json", &top);
	if (err)
		return err;
	if (!uint_of(top, "repeat", &repeat) || repeat < 1)
		repeat = 1; /* absent means 1 */
	if (rep > repeat) {
		json_decref(top);
		return pmu_error(PMU_ERR_NOTFOUND, "the bundle has no repetition %d: it holds %lld", rep,
				 (long long)repeat);
	}
	if (rep == 1) {
		snprintf(dir, sizeof(dir), "data/");
		run = json_incref(top);
	} else {
		snprintf(dir, sizeof(dir), "data/repeats/%d/", rep);
		snprintf(doc, sizeof(doc), "repeats/%d/run.json", rep);
		err = pmu_bundle_read_doc(b, doc, &run);
	}
	if (err)
		goto out;
	if (!uint_of(run, "start_ns", &t.start_ns))
		t.start_ns = 0;
	if (!uint_of(run, "end_ns", &t.end_ns) || t.end_ns < t.start_ns)
		t.end_ns = -1;
	if (fputs("{\"traceEvents\":[\n", out) == EOF) {
		err = pmu_error(PMU_ERR_IO, "cannot write the trace: %s", strerror(errno));
		goto out;
	}
	if ((err = an_cohort_each(b, rep, trace_inc, &t)))
		goto out;
	err = put_spans(&t, b, dir);
	if (!err)
		err = an_oscall_trace(b, rep, os_emit, &t);
	if (!err)
		err = an_runtime_trace(b, rep, rt_emit, &t);
	if (err)
		goto out;
	/* otherData last: only now is the number of incarnations known */
	other = other_data(run, t.start_ns, repeat, rep, t.index);
	if (!other)
		err = pmu_error(PMU_ERR_NOMEM, "out of memory");
	if (err)
		goto out;
	if (fputs("\n],\"displayTimeUnit\":\"ns\",\"otherData\":", out) == EOF ||
	    json_dumpf(other, out, TRACE_DUMP_FLAGS) < 0 || fputs("}\n", out) == EOF || fflush(out) == EOF ||
	    ferror(out))
		err = pmu_error(PMU_ERR_IO, "cannot write the trace: %s", strerror(errno ? errno : EIO));
out:
	json_decref(top);
	json_decref(run);
	json_decref(other);
	an_ids_release(&t.ids);
	free(t.pid);
	return err;
}
