/*
 * bench-genbundle: writes a large, valid bundle for bench/validate through
 * the library's document and stream writer (lib/bagw.h, the code path
 * pmurec uses).
 *
 *   bench-genbundle OUTPUT [PAYLOAD_MIB]     (default 1100 MiB)
 *
 * Content: a run of one hour (CLOCK_MONOTONIC around 1.2e14 ns, as on a
 * host up for a day and a half); a cohort of five incarnations (root, three
 * children, one grandchild that exits early) with 1 to 6 threads each;
 * four requested collectors with healthy lifecycles, each with a large
 * events.jsonl of attributed records: per-thread nested enter/exit pairs of
 * syscall-like names, instants, exit values, with t_ns strictly increasing
 * inside the run window and inside each record's incarnation lifetime; one
 * not-requested collector; a few spans.  Deterministic (fixed seed, fixed
 * date), so a regenerated bundle is byte-identical.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bag.h"
#include "bagw.h"
#include "cohort.h"
#include "error.h"
#include "spec.h"
#include "spec_json.h"

#ifndef PMU_VERSION
#define PMU_VERSION "bench"
#endif

#define T0 123456789000000ull          /* run start, ns */
#define WINDOW 3600000000000ull        /* one hour */
#define TEND (T0 + WINDOW)
#define NCOLL 4
#define MAXDEPTH 6

/* The bundle being written, and the generator's state. */
struct gen {
	struct pmu_bagw w;
	uint64_t rng;           /* xorshift64*: deterministic and fast */
};

static void die(struct gen *g, int err)
{
	fprintf(stderr, "bench-genbundle: %s: %s\n", pmu_errname(err), pmu_error_detail());
	pmu_bag_abort(g->w.bag);
	exit(1);
}

static uint64_t rnd(struct gen *g)
{
	g->rng ^= g->rng >> 12;
	g->rng ^= g->rng << 25;
	g->rng ^= g->rng >> 27;
	return g->rng * 2685821657736338717ull;
}

/* A document of type: the header members (spec, type, units), then body's. */
static void put_doc(struct gen *g, const char *rel, const char *type, json_t *body)
{
	int err = pmu_bagw_put_doc(&g->w, rel, pmu_bagw_doc(&g->w, type, body));

	if (err)
		die(g, err);
}

/* ---- streams: one batch each, so the lines are not timed one by one ---- */

static void s_open(struct gen *g, struct pmu_bagw_stream *s, const char *rel, const char *kind)
{
	int err = pmu_bagw_open(&g->w, s, rel, kind);

	if (err)
		die(g, err);
	pmu_bagw_batch(s);
}

/* A failed line sticks in s and comes back from s_close(). */
#define s_printf(s, ...) ((void)pmu_bagw_printf((s), __VA_ARGS__))

static void s_close(struct gen *g, struct pmu_bagw_stream *s)
{
	int err;

	pmu_bagw_batch_end(s);
	err = pmu_bagw_close(s);
	if (err)
		die(g, err);
}

/* ---- the cohort --------------------------------------------------------- */

struct incar {
	const char *id, *parent, *comm, *exe;
	int pid;
	int ntids;
	uint64_t start, end;
};

static const struct incar cohort[] = {
	{ "i1", NULL, "server", "/usr/local/bin/server", 7000, 6, T0 + 1000, TEND - 1000 },
	{ "i2", "i1", "worker", "/usr/local/bin/worker", 7100, 4, T0 + 2000000, TEND - 2000000 },
	{ "i3", "i1", "worker", "/usr/local/bin/worker", 7200, 4, T0 + 3000000, TEND - 3000000 },
	{ "i4", "i1", "logger", "/usr/bin/logger", 7300, 1, T0 + 4000000, TEND - 4000000 },
	{ "i5", "i2", "sh", "/bin/sh", 7400, 2, T0 + 600000000000ull, T0 + 900000000000ull },
};
#define NINC (sizeof(cohort) / sizeof(cohort[0]))
#define MAXTHR 32

/* The cohort stream (spec 1.3): every incarnation's begin records in
 * cohort order, then their end records (the incarnations of incs, in the
 * document shape). */
static void put_cohort(struct gen *g, json_t *incs)
{
	json_t *recs = json_array(), *r;
	struct pmu_bagw_stream s;
	size_t i;
	int err = 0;

	json_array_foreach(incs, i, r)
		err = err ? err : pmu_cohort_begin_recs(r, recs);
	json_array_foreach(incs, i, r)
		err = err ? err : pmu_cohort_end_recs(r, recs);
	if (err)
		die(g, err);
	s_open(g, &s, "cohort.jsonl", "cohort");
	json_array_foreach(recs, i, r)
		pmu_bagw_put(&s, json_incref(r));
	s_close(g, &s);
	json_decref(recs);
	json_decref(incs);
}

static void put_docs(struct gen *g)
{
	json_t *colls = json_array(), *incs = json_array(), *run;
	static const char *const cname[NCOLL] = { "syscalls", "sched", "net", "io" };

	for (int c = 0; c < NCOLL; c++)
		json_array_append_new(colls, json_pack("{s:s,s:b}", "name", cname[c], "requested", 1));
	json_array_append_new(colls, json_pack("{s:s,s:b}", "name", "hwcount", "requested", 0));
	run = json_pack("{s:s,s:{s:s,s:s},s:s,s:[s,s,s],s:s,s:I,s:I,s:I,s:I,s:{s:s,s:i},s:s,s:b,s:o}",
			   "run_id", "b3f1c0de5eed4a11b3f1c0de5eed4a11", "tool", "name", "bench-genbundle",
			   "version", PMU_VERSION, "mode", "full", "argv", "server", "--workers", "3",
			   "cwd", "/srv", "start_ns", (json_int_t)T0, "end_ns", (json_int_t)TEND,
			   "realtime_anchor_ns", (json_int_t)1764460800000000000ll,
			   "monotonic_anchor_ns", (json_int_t)T0, "exit", "kind", "exited", "code", 0,
			   "result", "complete", "tolerate_loss", 0, "collectors", colls);
	/* spec 1.4: a synthetic bundle measured no host, and says so */
	json_object_set_new(run, "host_load",
			    json_pack("{s:s,s:s,s:s,s:s}", "scope", "system", "status", "unavailable", "reason",
				      "a synthetic bundle (bench/genbundle): no host was measured", "remedy",
				      "none: record with pmurec for the host's load"));
	put_doc(g, "run.json", "run", run);
	put_doc(g, "capabilities.json", "capabilities",
		json_pack("{s:{s:s,s:s,s:s,s:s},s:[{s:s,s:s,s:s},{s:s,s:s,s:s,s:s}]}",
			   "host", "os", "linux", "arch", "x86_64", "kernel", "6.1.0-bench", "cpu", "bench",
			   "capabilities", "name", "software-events", "status", "ok", "value", "task-clock",
			   "name", "hardware-events", "status", "unavailable", "reason", "no core PMU",
			   "remedy", "record on bare metal or a VM with a virtual PMU enabled"));
	put_doc(g, "provenance.json", "provenance",
		json_pack("{s:{s:s,s:s,s:s},s:s,s:[{s:s,s:s,s:I}],s:{}}",
			   "tool", "name", "bench-genbundle", "version", PMU_VERSION, "revision", "bench",
			   "config_hash", "0d5b1f3c8e2a4b6d9f7e1c3a5b7d9f1e3c5a7b9d1f3e5c7a9b1d3f5e7c9a1b3d",
			   "images", "path", "/usr/local/bin/server", "status", "ok", "size_bytes",
			   (json_int_t)2457600, "environment"));
	for (size_t i = 0; i < NINC; i++) {
		const struct incar *c = &cohort[i];
		json_t *tids = json_array(), *o;

		for (int t = 0; t < c->ntids; t++)
			json_array_append_new(tids, json_integer(c->pid + t));
		o = json_pack("{s:s,s:i,s:I,s:I}", "id", c->id, "pid", c->pid, "start_ns", (json_int_t)c->start,
			      "end_ns", (json_int_t)c->end);
		if (c->parent)
			json_object_set_new(o, "parent", json_string(c->parent));
		json_object_set_new(o, "preexisting", json_false());
		json_object_set_new(o, "comm", json_string(c->comm));
		json_object_set_new(o, "tids", tids);
		json_object_set_new(o, "exec", json_pack("[{s:I,s:s}]", "t_ns", (json_int_t)c->start + 500,
							 "path", c->exe));
		/* every exec has its argv from spec 1.4 */
		if (g->w.minor >= 4)
			json_object_set_new(json_array_get(json_object_get(o, "exec"), 0), "argv",
					    json_pack("[s]", c->comm));
		json_object_set_new(o, "exit", json_pack("{s:s,s:i}", "kind", "exited", "code", 0));
		json_array_append_new(incs, o);
	}
	put_cohort(g, incs);
}

static void put_lifecycle(struct gen *g, const char *name, bool requested, uint64_t t0, uint64_t t1)
{
	char rel[128];
	struct pmu_bagw_stream s;

	snprintf(rel, sizeof(rel), "collectors/%s/lifecycle.jsonl", name);
	s_open(g, &s, rel, "lifecycle");
	if (!requested) {
		s_printf(&s, "{\"type\":\"lifecycle\",\"t_ns\":%llu,\"event\":\"final\",\"status\":\"not-requested\"}",
			 (unsigned long long)t0);
		s_close(g, &s);
		return;
	}
	s_printf(&s, "{\"type\":\"lifecycle\",\"t_ns\":%llu,\"event\":\"requested\"}", (unsigned long long)t0);
	s_printf(&s, "{\"type\":\"lifecycle\",\"t_ns\":%llu,\"event\":\"probed\",\"status\":\"ok\"}",
		 (unsigned long long)t0 + 10);
	s_printf(&s, "{\"type\":\"lifecycle\",\"t_ns\":%llu,\"event\":\"opened\"}", (unsigned long long)t0 + 20);
	s_printf(&s, "{\"type\":\"lifecycle\",\"t_ns\":%llu,\"event\":\"attached\",\"evidence\":\"first record at t_ns %llu\"}",
		 (unsigned long long)t0 + 30, (unsigned long long)T0 + 5000000);
	s_printf(&s, "{\"type\":\"lifecycle\",\"t_ns\":%llu,\"event\":\"stopped\"}", (unsigned long long)t1);
	s_printf(&s, "{\"type\":\"lifecycle\",\"t_ns\":%llu,\"event\":\"detached\"}", (unsigned long long)t1 + 10);
	s_printf(&s, "{\"type\":\"lifecycle\",\"t_ns\":%llu,\"event\":\"final\",\"status\":\"ok\"}",
		 (unsigned long long)t1 + 20);
	s_close(g, &s);
}

static void put_spans(struct gen *g)
{
	struct pmu_bagw_stream s;

	s_open(g, &s, "spans.jsonl", "spans");
	/* ordered by end_ns */
	s_printf(&s, "{\"type\":\"span\",\"id\":\"startup\",\"parent\":\"serve\",\"inc\":\"i1\",\"tid\":7000,\"name\":\"startup\",\"begin_ns\":%llu,\"end_ns\":%llu}",
		 (unsigned long long)T0 + 10000, (unsigned long long)T0 + 900000000);
	s_printf(&s, "{\"type\":\"span\",\"id\":\"batch\",\"parent\":\"serve\",\"inc\":\"i5\",\"tid\":7400,\"name\":\"batch\",\"begin_ns\":%llu,\"end_ns\":%llu}",
		 (unsigned long long)T0 + 600000001000ull, (unsigned long long)T0 + 899000000000ull);
	s_printf(&s, "{\"type\":\"span\",\"id\":\"serve\",\"inc\":\"i1\",\"tid\":7000,\"name\":\"serve\",\"begin_ns\":%llu,\"end_ns\":%llu}",
		 (unsigned long long)T0 + 5000, (unsigned long long)TEND - 5000);
	s_close(g, &s);
}

/* One collector's events: per-thread stacks of open enters, closed before
 * the thread's incarnation ends and at the end of the stream. */
static const char *const syscalls[] = { "read", "write", "openat", "close", "futex", "epoll_wait", "mmap",
					"munmap", "recvfrom", "sendto", "clock_nanosleep", "fstat", "ioctl",
					"pread64", "pwrite64", "getrandom" };
#define NSYS (sizeof(syscalls) / sizeof(syscalls[0]))

struct thr {
	const struct incar *in;
	int tid;
	int depth;
	unsigned char open[MAXDEPTH];
	bool closed;
};

static void ev_line(struct pmu_bagw_stream *s, uint64_t t, const struct thr *th, const char *name, char ph,
		    int64_t value)
{
	if (value >= 0)
		s_printf(s, "{\"type\":\"event\",\"t_ns\":%llu,\"inc\":\"%s\",\"pid\":%d,\"tid\":%d,\"name\":\"%s\",\"ph\":\"%c\",\"value\":%lld}",
			 (unsigned long long)t, th->in->id, th->in->pid, th->tid, name, ph, (long long)value);
	else
		s_printf(s, "{\"type\":\"event\",\"t_ns\":%llu,\"inc\":\"%s\",\"pid\":%d,\"tid\":%d,\"name\":\"%s\",\"ph\":\"%c\"}",
			 (unsigned long long)t, th->in->id, th->in->pid, th->tid, name, ph);
}

static uint64_t put_events(struct gen *g, const char *coll, uint64_t target)
{
	char rel[128];
	struct pmu_bagw_stream s;
	struct thr th[MAXTHR];
	int nth = 0, live;
	/* ~100-105 bytes a record: the step spreads the records over 90% of the window */
	uint64_t nrec = target / 100 + 1, step = (WINDOW - 20000000) / 10 * 9 / nrec, t = T0 + 5000000, margin;

	if (step < 1)
		step = 1;
	margin = 4 * step + 1000000;
	for (size_t i = 0; i < NINC; i++)
		for (int k = 0; k < cohort[i].ntids && nth < MAXTHR; k++)
			th[nth++] = (struct thr){ &cohort[i], cohort[i].pid + k, 0, { 0 }, false };
	live = nth;
	snprintf(rel, sizeof(rel), "collectors/%s/events.jsonl", coll);
	s_open(g, &s, rel, "events");
	while (s.bytes < target && t < TEND - 10000000 && live > 0) {
		struct thr *x = &th[rnd(g) % (unsigned)nth];
		uint64_t r = rnd(g), next = t + 1 + (r >> 16) % (2 * step);

		if (x->closed || next < x->in->start)
			continue; /* pick another thread; time does not advance */
		t = next;
		/* close everything a thread holds before its incarnation ends */
		for (int i = 0; i < nth; i++) {
			struct thr *y = &th[i];

			if (y->closed || t + margin < y->in->end)
				continue;
			while (y->depth > 0) {
				y->depth--;
				ev_line(&s, t++, y, syscalls[y->open[y->depth]], 'E', -1);
			}
			y->closed = true;
			live--;
		}
		if (x->closed)
			continue;
		if (x->depth < MAXDEPTH && (x->depth == 0 || r % 100 < 40)) {
			unsigned n = (unsigned)(r >> 8) % NSYS;

			x->open[x->depth++] = (unsigned char)n;
			ev_line(&s, t, x, syscalls[n], 'B', -1);
		} else if (x->depth > 0 && r % 100 < 92) {
			x->depth--;
			ev_line(&s, t, x, syscalls[x->open[x->depth]], 'E', r % 3 ? (int64_t)((r >> 20) % 65536) : -1);
		} else {
			ev_line(&s, t, x, r % 2 ? "page_fault" : "signal_deliver", 'i', -1);
		}
	}
	for (int i = 0; i < nth; i++) {
		while (th[i].depth > 0 && !th[i].closed) {
			th[i].depth--;
			ev_line(&s, ++t, &th[i], syscalls[th[i].open[th[i].depth]], 'E', -1);
		}
	}
	if (t >= TEND - 1000) {
		fprintf(stderr, "bench-genbundle: events ran past the window (payload too large)\n");
		pmu_bag_abort(g->w.bag);
		exit(1);
	}
	s_close(g, &s);
	return s.bytes;
}

int main(int argc, char **argv)
{
	struct pmu_bag_opts o = { .agent = "bench-genbundle " PMU_VERSION, .spec = PMU_SPEC_VERSION,
				  .date = 1764460800 };
	static const char *const cname[NCOLL] = { "syscalls", "sched", "net", "io" };
	uint64_t mib = argc > 2 ? strtoull(argv[2], NULL, 10) : 1100, total = 0;
	struct gen gen = { .rng = 0x9e3779b97f4a7c15ull }, *g = &gen;
	struct pmu_bag *bag;
	int err;

	if (argc < 2 || mib == 0) {
		fprintf(stderr, "usage: bench-genbundle OUTPUT [PAYLOAD_MIB]\n");
		return 2;
	}
	err = pmu_bag_open(&bag, argv[1], &o);
	if (err) {
		fprintf(stderr, "bench-genbundle: %s\n", pmu_error_detail());
		return 1;
	}
	pmu_bagw_init(&g->w, bag, 1, PMU_SPEC_VERSION, PMU_SPEC_MINOR);
	put_docs(g);
	put_spans(g);
	for (int c = 0; c < NCOLL; c++) {
		put_lifecycle(g, cname[c], true, T0 + 100 + 100 * (uint64_t)c, TEND - 9000000 + 100 * (uint64_t)c);
		total += put_events(g, cname[c], (mib << 20) / NCOLL);
	}
	put_lifecycle(g, "hwcount", false, T0 + 50, 0);
	err = pmu_bag_finalize(bag);
	if (err) {
		fprintf(stderr, "bench-genbundle: %s\n", pmu_error_detail());
		return 1;
	}
	printf("%llu\n", (unsigned long long)total);
	return 0;
}
