/*
 * The validator engine on bundles written here: a stream of many records
 * validates with flat memory (peak RSS of a child measured by wait4), the
 * hashing thread changes no verdict, and findings carry file and record.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bag.h"
#include "error.h"
#include "spec.h"
#include "tap.h"
#include "util.h"
#include "validate.h"

#define T0 1000000000ull

static char dir[] = "/tmp/t-validate.XXXXXX";

static int put(struct pmu_bag *b, const char *rel, const char *s)
{
	return pmu_bag_put(b, rel, s, strlen(s));
}

/* A valid bundle with one collector whose events.jsonl holds n B/E pairs,
 * then the lines of tail (NULL: none). */
static int write_bundle_tail(const char *path, long n, const char *tail);

static int write_bundle(const char *path, long n)
{
	return write_bundle_tail(path, n, NULL);
}

static int write_bundle_tail(const char *path, long n, const char *tail)
{
	struct pmu_bag_opts o = { .agent = "t-validate", .spec = "1.0", .date = 0 }; /* an older minor: still valid */
	struct pmu_bag *b;
	struct pmu_bag_file *f;
	uint64_t end = T0 + 10 * (uint64_t)n + 1000000;
	char buf[2048];
	int err = pmu_bag_open(&b, path, &o);

	if (err)
		return err;
	snprintf(buf, sizeof(buf),
		 "{\"spec\":\"1.0\",\"type\":\"run\",\"units\":{\"start_ns\":\"ns\",\"end_ns\":\"ns\","
		 "\"realtime_anchor_ns\":\"ns\",\"monotonic_anchor_ns\":\"ns\",\"code\":\"id\",\"signal\":\"id\"},"
		 "\"run_id\":\"r\",\"tool\":{\"name\":\"t\",\"version\":\"0\"},\"mode\":\"full\",\"argv\":[\"x\"],"
		 "\"cwd\":\"/\",\"start_ns\":%llu,\"end_ns\":%llu,\"realtime_anchor_ns\":1,\"monotonic_anchor_ns\":%llu,"
		 "\"exit\":{\"kind\":\"exited\",\"code\":0},\"result\":\"complete\",\"tolerate_loss\":false,"
		 "\"collectors\":[{\"name\":\"c\",\"requested\":true}]}\n",
		 T0, (unsigned long long)end, T0);
	err = put(b, "run.json", buf);
	if (!err)
		err = put(b, "capabilities.json",
			  "{\"spec\":\"1.0\",\"type\":\"capabilities\",\"units\":{},\"host\":{\"os\":\"linux\","
			  "\"arch\":\"x86_64\",\"kernel\":\"6\"},\"capabilities\":[]}\n");
	if (!err)
		err = put(b, "provenance.json",
			  "{\"spec\":\"1.0\",\"type\":\"provenance\",\"units\":{\"size_bytes\":\"bytes\"},"
			  "\"tool\":{\"name\":\"t\",\"version\":\"0\",\"revision\":\"x\"},\"config_hash\":"
			  "\"0000000000000000000000000000000000000000000000000000000000000000\",\"images\":[],"
			  "\"environment\":{}}\n");
	snprintf(buf, sizeof(buf),
		 "{\"spec\":\"1.0\",\"type\":\"cohort\",\"units\":{\"pid\":\"id\",\"start_ns\":\"ns\","
		 "\"end_ns\":\"ns\",\"tids\":\"id\",\"t_ns\":\"ns\",\"code\":\"id\",\"signal\":\"id\"},\"root\":\"i1\","
		 "\"incarnations\":[{\"id\":\"i1\",\"pid\":7,\"start_ns\":%llu,\"end_ns\":%llu,\"preexisting\":false,"
		 "\"comm\":\"x\",\"tids\":[7,8],\"exec\":[],\"exit\":{\"kind\":\"exited\",\"code\":0}}]}\n",
		 T0, (unsigned long long)end);
	if (!err)
		err = put(b, "cohort.json", buf);
	if (!err)
		err = put(b, "spans.jsonl",
			  "{\"type\":\"header\",\"spec\":\"1.0\",\"stream\":\"spans\",\"units\":{\"tid\":\"id\","
			  "\"begin_ns\":\"ns\",\"end_ns\":\"ns\"}}\n");
	snprintf(buf, sizeof(buf),
		 "{\"type\":\"header\",\"spec\":\"1.0\",\"stream\":\"lifecycle\",\"units\":{\"t_ns\":\"ns\",\"count\":\"count\"}}\n"
		 "{\"type\":\"lifecycle\",\"t_ns\":%llu,\"event\":\"requested\"}\n"
		 "{\"type\":\"lifecycle\",\"t_ns\":%llu,\"event\":\"probed\",\"status\":\"ok\"}\n"
		 "{\"type\":\"lifecycle\",\"t_ns\":%llu,\"event\":\"opened\"}\n"
		 "{\"type\":\"lifecycle\",\"t_ns\":%llu,\"event\":\"attached\",\"evidence\":\"test\"}\n"
		 "{\"type\":\"lifecycle\",\"t_ns\":%llu,\"event\":\"stopped\"}\n"
		 "{\"type\":\"lifecycle\",\"t_ns\":%llu,\"event\":\"detached\"}\n"
		 "{\"type\":\"lifecycle\",\"t_ns\":%llu,\"event\":\"final\",\"status\":\"ok\"}\n",
		 T0, T0, T0, T0, (unsigned long long)end, (unsigned long long)end, (unsigned long long)end);
	if (!err)
		err = put(b, "collectors/c/lifecycle.jsonl", buf);
	if (!err)
		err = pmu_bag_file_open(b, "collectors/c/events.jsonl", &f);
	if (err) {
		pmu_bag_abort(b);
		return err;
	}
	err = pmu_bag_file_write(f, buf, (size_t)snprintf(buf, sizeof(buf),
		"{\"type\":\"header\",\"spec\":\"1.0\",\"stream\":\"events\",\"units\":{\"t_ns\":\"ns\","
		"\"pid\":\"id\",\"tid\":\"id\",\"value\":\"count\",\"lost\":\"count\",\"bytes\":\"bytes\"}}\n"));
	for (long i = 0; !err && i < n; i++) {
		int len = snprintf(buf, sizeof(buf),
				   "{\"type\":\"event\",\"t_ns\":%llu,\"inc\":\"i1\",\"pid\":7,\"tid\":%d,\"name\":\"read\",\"ph\":\"B\"}\n"
				   "{\"type\":\"event\",\"t_ns\":%llu,\"inc\":\"i1\",\"pid\":7,\"tid\":%d,\"name\":\"read\",\"ph\":\"E\",\"value\":%ld}\n",
				   (unsigned long long)(T0 + 10 * (uint64_t)i), 7 + (int)(i & 1),
				   (unsigned long long)(T0 + 10 * (uint64_t)i + 5), 7 + (int)(i & 1), i);
		err = pmu_bag_file_write(f, buf, (size_t)len);
	}
	if (!err && tail)
		err = pmu_bag_file_write(f, tail, strlen(tail));
	if (err) {
		pmu_bag_file_close(f);
		pmu_bag_abort(b);
		return err;
	}
	err = pmu_bag_file_close(f);
	return err ? (pmu_bag_abort(b), err) : pmu_bag_finalize(b);
}

struct count {
	unsigned n;
	char first[512];
};

static void on_finding(void *ctx, const struct pmu_finding *f)
{
	struct count *c = ctx;

	if (!c->n++)
		snprintf(c->first, sizeof(c->first), "%s %s:%llu %s", pmu_checks[f->check].id,
			 f->file ? f->file : "-", (unsigned long long)f->record, f->message);
}

/* Validate in a child; returns its peak RSS in KiB, or -1. */
static long validate_rss(const char *path, bool thread, unsigned *errors)
{
	int fds[2];
	struct rusage ru;
	pid_t pid;
	int st;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		struct pmu_validate_opts o;
		struct pmu_validate_result r;
		struct count c = { 0 };

		pmu_validate_default_opts(&o);
		o.hash_thread = thread;
		if (pmu_validate_path(path, &o, on_finding, &c, &r))
			_exit(2);
		if (c.n)
			fprintf(stderr, "# first finding: %s\n", c.first);
		if (write(fds[1], &r.errors, sizeof(r.errors)) != sizeof(r.errors))
			_exit(3);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], errors, sizeof(*errors)) != sizeof(*errors))
		*errors = 9999;
	close(fds[0]);
	if (wait4(pid, &st, 0, &ru) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	return ru.ru_maxrss;
}

/* ---- the fast path (learned record shapes) against the full path ------- */

/* Lines after the valid B/E pairs (the end of the run is T0 + 10n + 1 ms):
 * each variant follows a valid line of the shape it bends, so that shape is
 * the one tried first.  Every variant must get exactly the findings the
 * full parser and schema check give it. */
#define GOOD_B "{\"type\":\"event\",\"t_ns\":1000900000,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"read\",\"ph\":\"B\"}\n"
#define GOOD_E "{\"type\":\"event\",\"t_ns\":1000900001,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"read\",\"ph\":\"E\",\"value\":3}\n"
static const char *const variants[] = {
	"{\"type\":\"event\",\"t_ns\":-1000900000,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"read\",\"ph\":\"B\"}\n",
	"{\"type\":\"event\",\"t_ns\":1000900000,\"inc\":\"i1\",\"pid\":07,\"tid\":7,\"name\":\"read\",\"ph\":\"B\"}\n",
	"{\"type\":\"event\",\"t_ns\":10009000000000000,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"read\",\"ph\":\"B\"}\n",
	"{\"type\":\"event\",\"t_ns\":100090000000000000000,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"read\",\"ph\":\"B\"}\n",
	"{\"type\":\"event\",\"t_ns\":1000900000,\"inc\":\"i1\",\"pid\":7,\"tid\":7.0,\"name\":\"read\",\"ph\":\"B\"}\n",
	"{\"type\":\"event\",\"t_ns\":1000900000,\"inc\":\"i1\",\"pid\":7,\"tid\":7e0,\"name\":\"read\",\"ph\":\"B\"}\n",
	"{\"type\":\"event\",\"t_ns\":1000900000,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"\",\"ph\":\"B\"}\n",
	"{\"type\":\"event\",\"t_ns\":1000900000,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"re\\u0061d\",\"ph\":\"B\"}\n",
	"{\"type\":\"event\",\"t_ns\":1000900000,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"r\xc3\xa9" "ad\",\"ph\":\"B\"}\n",
	"{\"type\":\"event\",\"t_ns\":1000900000,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"r\xe9" "ad\",\"ph\":\"B\"}\n",
	"{\"type\":\"event\",\"t_ns\":1000900000,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"re\\\"ad\",\"ph\":\"B\"}\n",
	"{\"type\":\"event\",\"t_ns\":1000900000,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"re\tad\",\"ph\":\"B\"}\n",
	"{\"type\":\"event\",\"t_ns\":1000900000,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"read\",\"ph\":\"X\"}\n",
	"{\"type\":\"event\",\"t_ns\":1000900000,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"read\",\"ph\":\"\"}\n",
	"{\"type\":\"event\",\"t_ns\":1000900000,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"read\",\"ph\":\"BB\"}\n",
	"{\"type\": \"event\",\"t_ns\":1000900000,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"read\",\"ph\":\"B\"}\n",
	"{\"t_ns\":1000900000,\"type\":\"event\",\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"read\",\"ph\":\"B\"}\n",
	"{\"type\":\"event\",\"t_ns\":1000900000,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"read\",\"ph\":\"B\",\"zzz\":1}\n",
	"{\"type\":\"event\",\"t_ns\":1000900000,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"read\"}\n",
	"{\"type\":\"event\",\"t_ns\":1000900000,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"read\",\"ph\":\"B\",\"ph\":\"E\"}\n",
	"{\"type\":\"event\",\"t_ns\":1000900000,\"inc\":\"i1\",\"pid\":true,\"tid\":7,\"name\":\"read\",\"ph\":\"B\"}\n",
	"{\"type\":\"event\",\"t_ns\":1000900000,\"inc\":\"i1\",\"pid\":\"7\",\"tid\":7,\"name\":\"read\",\"ph\":\"B\"}\n",
	"{\"type\":\"event\",\"t_ns\":1000900000,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"read\",\"ph\":\"B\"}x\n",
	"{\"type\":\"event\",\"t_ns\":1000900000,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"read\",\"ph\":\"B\"\n",
	"{\"type\":\"event\",\"t_ns\":1000900\n",
	"{\"type\":\"event\",\"t_ns\":1000900000,\"inc\":\"i9\",\"pid\":7,\"tid\":7,\"name\":\"read\",\"ph\":\"B\"}\n",
	"{\"type\":\"event\",\"t_ns\":1000900000,\"inc\":\"i1\",\"pid\":8,\"tid\":7,\"name\":\"read\",\"ph\":\"B\"}\n",
	"{\"type\":\"event\",\"t_ns\":1000900000,\"inc\":\"i1\",\"pid\":7,\"tid\":9,\"name\":\"read\",\"ph\":\"B\"}\n",
	"{\"type\":\"event\",\"t_ns\":999,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"read\",\"ph\":\"B\"}\n",
	"{\"type\":\"event\",\"t_ns\":1000900001,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"write\",\"ph\":\"E\",\"value\":-3}\n",
	"{\"type\":\"event\",\"t_ns\":1000900001,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"read\",\"ph\":\"E\",\"value\":3.5}\n",
	"{\"type\":\"event\",\"t_ns\":1000900001,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"read\",\"ph\":\"E\",\"value\":null}\n",
	"{\"type\":\"event\",\"t_ns\":1000900001,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"read\",\"ph\":\"E\",\"value\":{}}\n",
	"{\"type\":\"loss\",\"t_ns\":1000900002,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"lost\":4}\n",
	"{\"type\":\"loss\",\"t_ns\":1000900002,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"lost\":0}\n",
	"{\"type\":\"evenT\",\"t_ns\":1000900000,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"read\",\"ph\":\"B\"}\n",
	"{\"type\":\"event\",\"t_ns\":1000900000,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"read\",\"ph\":\"i\"}\n",
	"{\"type\":\"event\",\"t_ns\":0,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"read\",\"ph\":\"B\"}\n",
	"{\"type\":\"event\",\"t_ns\":00,\"inc\":\"i1\",\"pid\":7,\"tid\":7,\"name\":\"read\",\"ph\":\"B\"}\n",
	"{}\n",
	"[]\n",
};

struct log {
	char *buf;
	size_t len, cap;
};

static void log_finding(void *ctx, const struct pmu_finding *f)
{
	struct log *l = ctx;
	char line[1400];
	int n = snprintf(line, sizeof(line), "%s %d %s:%llu %s\n", pmu_checks[f->check].id, (int)f->severity,
			 f->file ? f->file : "-", (unsigned long long)f->record, f->message);

	if (n < 0)
		return;
	if (l->len + (size_t)n + 1 > l->cap) {
		size_t cap = (l->cap + (size_t)n + 1) * 2;
		char *nb = realloc(l->buf, cap);

		if (!nb)
			return;
		l->buf = nb;
		l->cap = cap;
	}
	memcpy(l->buf + l->len, line, (size_t)n + 1);
	l->len += (size_t)n;
}

static int validate_log(const char *path, bool no_shapes, enum pmu_line_masks masks, struct log *l,
			struct pmu_validate_result *r)
{
	struct pmu_validate_opts o;

	pmu_validate_default_opts(&o);
	o.no_shapes = no_shapes;
	o.line_masks = masks;
	o.max_per_check = 100000;
	l->len = 0;
	if (l->buf)
		l->buf[0] = '\0';
	return pmu_validate_path(path, &o, log_finding, l, r);
}

/* Lines whose values end on either side of the 64- and 128-byte marks of
 * the line masks (a name of 20 to 90 bytes moves the name, ph and value
 * across them), good and bent. */
static size_t long_lines(char *out)
{
	size_t used = 0;

	for (int n = 20; n <= 90; n++) {
		char name[100];

		memset(name, 'a' + n % 26, (size_t)n);
		name[n] = '\0';
		if (!out) {
			used += 3 * 200;
			continue;
		}
		used += (size_t)sprintf(out + used,
					"{\"type\":\"event\",\"t_ns\":1000900000,\"inc\":\"i1\",\"pid\":7,\"tid\":7,"
					"\"name\":\"%s\",\"ph\":\"B\"}\n"
					"{\"type\":\"event\",\"t_ns\":1000900001,\"inc\":\"i1\",\"pid\":7,\"tid\":7,"
					"\"name\":\"%s\",\"ph\":\"E\",\"value\":%d}\n",
					name, name, 1000 * n + 7);
		/* bent: a value with a leading zero, a long number, a tab */
		used += (size_t)sprintf(out + used,
					"{\"type\":\"event\",\"t_ns\":1000900001,\"inc\":\"i1\",\"pid\":7,\"tid\":7,"
					"\"name\":\"%s\",\"ph\":\"E\",\"value\":%s}\n",
					name, n % 3 == 0 ? "0123" : n % 3 == 1 ? "12345678901234567" : "\"x\ty\"");
	}
	return used;
}

static void test_shapes(void)
{
	static const struct {
		enum pmu_line_masks m;
		const char *name;
	} modes[] = {
		{ PMU_LINE_MASKS_NONE, "byte scans" },
		{ PMU_LINE_MASKS_AVX2, "AVX2 line masks" },
		{ PMU_LINE_MASKS_AVX512, "AVX-512 line masks" },
		{ PMU_LINE_MASKS_AUTO, "the default" },
	};
	char path[600], *tail;
	size_t cap = 1, used = 0;
	size_t nv = sizeof(variants) / sizeof(variants[0]);
	struct log fast = { 0 }, full = { 0 };
	struct pmu_validate_result rf, rs;
	uint64_t scan_records = 0;

	for (size_t i = 0; i < nv; i++)
		cap += 2 * (strlen(GOOD_B) + strlen(GOOD_E)) + strlen(variants[i]);
	cap += long_lines(NULL);
	tail = malloc(cap);
	if (!tail) {
		ok(0, "out of memory");
		return;
	}
	/* each variant after a good line of both shapes, the bent one last */
	for (size_t i = 0; i < nv; i++) {
		bool e = strstr(variants[i], "value") != NULL;

		used += (size_t)sprintf(tail + used, "%s%s%s%s", e ? GOOD_B : GOOD_E, e ? "" : GOOD_B, e ? GOOD_E : "",
					variants[i]);
		if (!e) /* close the enter of the good B line */
			used += (size_t)sprintf(tail + used, "%s", GOOD_E);
	}
	used += long_lines(tail + used);
	snprintf(path, sizeof(path), "%s/shapes.bundle", dir);
	ok(write_bundle_tail(path, 5000, tail) == 0, "bundle with %zu bent records and 213 long ones after 10k good ones written",
	   nv);
	is_int(validate_log(path, true, PMU_LINE_MASKS_NONE, &full, &rs), 0, "validated with the full path only");
	is_int((long)rs.shape_records, 0, "no_shapes takes no record through a shape");
	ok(rs.errors > 100, "the bent records are findings (%u errors)", rs.errors);
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		if (pmu_validate_line_masks(modes[m].m) != modes[m].m) {
#if defined(__x86_64__)
			skip("%s: this CPU does not have them", modes[m].name);
#else
			skip("%s: x86-64 only (this build falls back to byte scans)", modes[m].name);
#endif
			continue;
		}
		ok(validate_log(path, false, modes[m].m, &fast, &rf) == 0, "validated with learned shapes, %s",
		   modes[m].name);
		ok(rf.shape_records >= 10000, "%s: the fast path took %llu records", modes[m].name,
		   (unsigned long long)rf.shape_records);
		/* the masks find where values end, as the byte scans do: the
		 * same records match (a wrong end would only send some to the
		 * full path, with the same verdict) */
		if (m == 0)
			scan_records = rf.shape_records;
		else
			ok(rf.shape_records == scan_records, "%s: as many records matched as with byte scans (%llu)",
			   modes[m].name, (unsigned long long)scan_records);
		ok(rf.errors == rs.errors && rf.warnings == rs.warnings, "%s: same counts: %u/%u errors, %u/%u warnings",
		   modes[m].name, rf.errors, rs.errors, rf.warnings, rs.warnings);
		ok(fast.buf && full.buf && !strcmp(fast.buf, full.buf), "%s: same findings, same order, same words",
		   modes[m].name);
		if (fast.buf && full.buf && strcmp(fast.buf, full.buf))
			fprintf(stderr, "# with shapes:\n%s\n# full path:\n%s", fast.buf, full.buf);
	}
	free(fast.buf);
	free(full.buf);
	free(tail);
}


/*
 * The sampling collector's streams (spec 1.6) through the shapes and
 * through the full parser: the same findings in the same order, on the
 * committed sampled fixture, its mutations (fixtures/invalid/<ID>/) and a
 * larger recording-like bundle with loss written by mkfixture.  Run from
 * the source tree (tests/run); elsewhere skipped.
 */
static void test_sampled_shapes(void)
{
	static const char *const bundles[] = {
		"fixtures/valid/sampled",
		"fixtures/invalid/SAMPLES-SHAPE/bundle",
		"fixtures/invalid/SAMPLES-SUMMARY/bundle",
		"fixtures/invalid/MAPS-SHAPE/bundle",
		"fixtures/invalid/BUILD-ID/bundle",
		"fixtures/invalid/RETAINED/bundle",
		"fixtures/invalid/PERF-DATA/bundle",
		NULL, /* the mkfixture bundle */
	};
	const char *build = getenv("PMU_BUILD");
	char big[600], cmd[1400];
	struct log fast = { 0 }, full = { 0 };
	struct pmu_validate_result rf, rs;

	if (access("fixtures/valid/sampled/bagit.txt", R_OK)) {
		skip("fixtures/valid/sampled: not run from the source tree");
		return;
	}
	snprintf(big, sizeof(big), "%s/sampled-big.bundle", dir);
	snprintf(cmd, sizeof(cmd), "'%s/mkfixture' sampled '%s' --samples 5000 --loss >/dev/null", build ? build : "build",
		 big);
	ok(system(cmd) == 0, "mkfixture sampled --samples 5000 --loss");
	for (size_t i = 0; i < sizeof(bundles) / sizeof(*bundles); i++) {
		const char *b = bundles[i] ? bundles[i] : big;
		int e1 = validate_log(b, true, PMU_LINE_MASKS_NONE, &full, &rs);
		int e2 = validate_log(b, false, PMU_LINE_MASKS_AUTO, &fast, &rf);

		ok(e1 == 0 && e2 == 0 && rs.errors == rf.errors && rs.warnings == rf.warnings &&
		   (full.len == 0 ? fast.len == 0 : fast.len == full.len && !memcmp(fast.buf, full.buf, full.len)),
		   "%s: the same %u errors and %u warnings through the shapes (%llu records) and the full parser",
		   b, rf.errors, rf.warnings, (unsigned long long)rf.shape_records);
		if (!bundles[i])
			ok(rf.shape_records > 4000 && rf.errors == 2, "the big bundle's samples took the shapes; its loss "
			   "and throttle are its 2 errors");
	}
	free(fast.buf);
	free(full.buf);
}

/*
 * The OS-event collectors' streams (spec 1.7) through the shapes and
 * through the full parser: the same findings in the same order, on the
 * committed oscall fixture, its mutations and its --loss variant.
 */
static void test_oscall_shapes(void)
{
	static const char *const bundles[] = {
		"fixtures/valid/oscall",
		"fixtures/invalid/SYSCALLS-SHAPE/bundle",
		"fixtures/invalid/SYSCALL-STATS/bundle",
		"fixtures/invalid/SCHED-SHAPE/bundle",
		NULL, /* mkfixture oscall --loss */
	};
	const char *build = getenv("PMU_BUILD");
	char loss[600], cmd[1400];
	struct log fast = { 0 }, full = { 0 };
	struct pmu_validate_result rf, rs;

	if (access("fixtures/valid/oscall/bagit.txt", R_OK)) {
		skip("fixtures/valid/oscall: not run from the source tree");
		return;
	}
	snprintf(loss, sizeof(loss), "%s/oscall-loss.bundle", dir);
	snprintf(cmd, sizeof(cmd), "'%s/mkfixture' oscall '%s' --loss >/dev/null", build ? build : "build", loss);
	ok(system(cmd) == 0, "mkfixture oscall --loss");
	for (size_t i = 0; i < sizeof(bundles) / sizeof(*bundles); i++) {
		const char *b = bundles[i] ? bundles[i] : loss;
		int e1 = validate_log(b, true, PMU_LINE_MASKS_NONE, &full, &rs);
		int e2 = validate_log(b, false, PMU_LINE_MASKS_AUTO, &fast, &rf);

		ok(e1 == 0 && e2 == 0 && rs.errors == rf.errors && rs.warnings == rf.warnings &&
		   (full.len == 0 ? fast.len == 0 : fast.len == full.len && !memcmp(fast.buf, full.buf, full.len)),
		   "%s: the same %u errors and %u warnings through the shapes (%llu records) and the full parser",
		   b, rf.errors, rf.warnings, (unsigned long long)rf.shape_records);
		ok(i == 0 ? rf.errors == 0 : rf.errors > 0, "%s: %s", b, i == 0 ? "valid" : "invalid");
	}
	free(fast.buf);
	free(full.buf);
}

/*
 * The runtime-evidence collectors' streams (spec 1.8) the same way: the
 * committed runtime fixture, its mutations and its --loss variant.
 */
static void test_runtime_shapes(void)
{
	static const char *const bundles[] = {
		"fixtures/valid/runtime",
		"fixtures/invalid/PROBES-SHAPE/bundle",
		"fixtures/invalid/PROBE-ATTACH/bundle",
		"fixtures/invalid/PROBE-ATTACH/bundle-provider",
		"fixtures/invalid/ALLOC-SHAPE/bundle",
		"fixtures/invalid/ALLOC-ESTIMATE/bundle",
		"fixtures/invalid/SPAN-CYCLE/bundle-probes",
		NULL, /* mkfixture runtime --loss */
	};
	const char *build = getenv("PMU_BUILD");
	char loss[600], cmd[1400];
	struct log fast = { 0 }, full = { 0 };
	struct pmu_validate_result rf, rs;

	if (access("fixtures/valid/runtime/bagit.txt", R_OK)) {
		skip("fixtures/valid/runtime: not run from the source tree");
		return;
	}
	snprintf(loss, sizeof(loss), "%s/runtime-loss.bundle", dir);
	snprintf(cmd, sizeof(cmd), "'%s/mkfixture' runtime '%s' --loss >/dev/null", build ? build : "build", loss);
	ok(system(cmd) == 0, "mkfixture runtime --loss");
	for (size_t i = 0; i < sizeof(bundles) / sizeof(*bundles); i++) {
		const char *b = bundles[i] ? bundles[i] : loss;
		int e1 = validate_log(b, true, PMU_LINE_MASKS_NONE, &full, &rs);
		int e2 = validate_log(b, false, PMU_LINE_MASKS_AUTO, &fast, &rf);

		ok(e1 == 0 && e2 == 0 && rs.errors == rf.errors && rs.warnings == rf.warnings &&
		   (full.len == 0 ? fast.len == 0 : fast.len == full.len && !memcmp(fast.buf, full.buf, full.len)),
		   "%s: the same %u errors and %u warnings through the shapes (%llu records) and the full parser",
		   b, rf.errors, rf.warnings, (unsigned long long)rf.shape_records);
		ok(i == 0 ? rf.errors == 0 : rf.errors > 0, "%s: %s", b, i == 0 ? "valid" : "invalid");
	}
	free(fast.buf);
	free(full.buf);
}

int main(void)
{
	char small[600], large[600];
	unsigned e1 = 1, e2 = 1, e3 = 1;
	long r1, r2, r3;

	if (!mkdtemp(dir))
		return 1;
	snprintf(small, sizeof(small), "%s/small.bundle", dir);
	snprintf(large, sizeof(large), "%s/large.bundle", dir);
	is_int(write_bundle(small, 20000), 0, "bundle with 40k event records written");
	is_int(write_bundle(large, 1000000), 0, "bundle with 2M event records written");
	r1 = validate_rss(small, true, &e1);
	r2 = validate_rss(large, true, &e2);
	r3 = validate_rss(large, false, &e3);
	is_int(e1, 0, "small bundle is valid");
	is_int(e2, 0, "large bundle is valid");
	is_int(e3, 0, "large bundle is valid without the hashing thread too");
	ok(r1 > 0 && r2 > 0, "peak RSS measured: %ld KiB for 40k records, %ld KiB for 2M", r1, r2);
	/* 50x the records (~100 MiB more stream) must not grow memory by more
	 * than the 4 MiB of read buffers and allocator slack. */
	ok(r2 - r1 < 4096, "memory stays flat: %ld KiB more for 50x the records", r2 - r1);
	ok(r2 < 64 * 1024, "peak RSS %ld KiB is under 64 MiB", r2);
	(void)r3;
	test_shapes();
	test_sampled_shapes();
	test_oscall_shapes();
	test_runtime_shapes();
	pmu_rm_rf(AT_FDCWD, dir);
	return done_testing();
}
