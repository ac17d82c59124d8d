/*
 * fuzz-validate: the whole validator, pmu_validate_path() (lib/validate.c),
 * on directory bundles built from the input.
 *
 * A valid base bundle (the multiproc fixture's content) is written once, at
 * the first input, with the library's bag writer and read back into memory.
 * Each input then describes one change to it:
 *
 *   byte 0:  bits 0-3  file index i (mod 13) into names[] below: the nine
 *                      payload files, then the four tag files;
 *            bits 4-5  mode:
 *                      0  replace file i with the rest of the input, then
 *                         RE-BAG (manifests, Payload-Oxum, tag manifest
 *                         recomputed) so checksums pass and the semantic
 *                         checks run on the new content;
 *                      1  replace file i, no re-bagging (checksum and
 *                         tag-file parsing paths);
 *                      2  remove file i, re-bag;
 *                      3  add one more file: its path is the rest of the
 *                         input up to the first '\n' (made safe: relative,
 *                         no '.'/'..'/empty component), its content what
 *                         follows; re-bag;
 *            bit 6     hash in a second thread (opts.hash_thread);
 *            bit 7     max_per_check 1 (the suppression path).
 *   rest:    content.
 *
 * The bundle is written into a fresh temporary directory, validated twice,
 * with and without learned record shapes (opts.no_shapes), which must give
 * the same findings in the same order, and removed.  The shapes' value
 * scans (opts.line_masks) are picked by the input's length.
 * In mode 0 with a payload file, the bag-level checks must pass (the
 * harness's re-bagging is then consistent with the validator); the base
 * bundle itself must validate without findings.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "bag.h"
#include "error.h"
#include "sha256.h"
#include "spec.h"
#include "util.h"
#include "validate.h"

#define NPAYLOAD 9
#define NFILES 13

static const char *const names[NFILES] = {
	"data/run.json",
	"data/cohort.jsonl",
	"data/spans.jsonl",
	"data/collectors/syscalls/lifecycle.jsonl",
	"data/collectors/syscalls/events.jsonl",
	"data/capabilities.json",
	"data/provenance.json",
	"data/collectors/sched/lifecycle.jsonl",
	"data/collectors/hwcount/lifecycle.jsonl",
	"bagit.txt",
	"bag-info.txt",
	"manifest-sha256.txt",
	"tagmanifest-sha256.txt",
};

/* The base bundle's payload (data/ + name), written through the bag writer. */
static const struct {
	const char *rel, *txt;
} base[NPAYLOAD] = {
	{ "run.json",
	  "{\"spec\":\"1.0\",\"type\":\"run\",\"units\":{\"start_ns\":\"ns\",\"end_ns\":\"ns\",\"realtime_anchor_ns\":\"ns\",\"monotonic_anchor_ns\":\"ns\",\"code\":\"id\",\"signal\":\"id\"},\"run_id\":\"0f1e2d3c4b5a69788796a5b4c3d2e1f0\",\"tool\":{\"name\":\"mkfixture\",\"version\":\"0.1.0\"},\"mode\":\"light\",\"argv\":[\"sh\",\"-c\",\"ls / >/dev/null; sleep 0.1 & wait\"],\"cwd\":\"/work\",\"start_ns\":1000000000,\"end_ns\":1200000000,\"realtime_anchor_ns\":1764460800000000000,\"monotonic_anchor_ns\":1000000000,\"exit\":{\"kind\":\"exited\",\"code\":0},\"result\":\"complete\",\"tolerate_loss\":false,\"collectors\":[{\"name\":\"syscalls\",\"requested\":true},{\"name\":\"sched\",\"requested\":false},{\"name\":\"hwcount\",\"requested\":true}],\"host_load\":{\"scope\":\"system\",\"status\":\"unavailable\",\"reason\":\"a fuzz base bundle: no host was measured\",\"remedy\":\"none\"}}\n" },
	/* the cohort as the stream of spec 1.3 (12.6) */
	{ "cohort.jsonl",
	  "{\"type\":\"header\",\"spec\":\"1.0\",\"stream\":\"cohort\",\"units\":{}}\n"
	  "{\"type\":\"incarnation\",\"id\":\"i1\",\"pid\":5000,\"start_ns\":1000001000,\"preexisting\":false}\n"
	  "{\"type\":\"thread\",\"inc\":\"i1\",\"tid\":5000}\n"
	  "{\"type\":\"thread\",\"inc\":\"i1\",\"tid\":5003}\n"
	  "{\"type\":\"exec\",\"inc\":\"i1\",\"t_ns\":1000001100,\"path\":\"/bin/sh\",\"argv\":[\"sh\"]}\n"
	  "{\"type\":\"incarnation\",\"id\":\"i2\",\"pid\":5001,\"start_ns\":1002000000,\"preexisting\":false,\"parent\":\"i1\"}\n"
	  "{\"type\":\"thread\",\"inc\":\"i2\",\"tid\":5001}\n"
	  "{\"type\":\"exec\",\"inc\":\"i2\",\"t_ns\":1002000100,\"path\":\"/usr/bin/ls\",\"argv\":[\"ls\"]}\n"
	  "{\"type\":\"end\",\"inc\":\"i2\",\"end_ns\":1009000000,\"comm\":\"ls\",\"exit\":\"exited\",\"code\":0}\n"
	  "{\"type\":\"incarnation\",\"id\":\"i3\",\"pid\":5002,\"start_ns\":1010000000,\"preexisting\":false,\"parent\":\"i1\"}\n"
	  "{\"type\":\"thread\",\"inc\":\"i3\",\"tid\":5002}\n"
	  "{\"type\":\"exec\",\"inc\":\"i3\",\"t_ns\":1010000100,\"path\":\"/usr/bin/sleep\",\"argv\":[\"sleep\"]}\n"
	  "{\"type\":\"end\",\"inc\":\"i3\",\"end_ns\":1120000000,\"comm\":\"sleep\",\"exit\":\"exited\",\"code\":0}\n"
	  "{\"type\":\"end\",\"inc\":\"i1\",\"end_ns\":1190000000,\"comm\":\"sh\",\"exit\":\"exited\",\"code\":0}\n" },
	{ "spans.jsonl",
	  "{\"type\":\"header\",\"spec\":\"1.0\",\"stream\":\"spans\",\"units\":{\"tid\":\"id\",\"begin_ns\":\"ns\",\"end_ns\":\"ns\"}}\n"
	  "{\"type\":\"span\",\"id\":\"s2\",\"parent\":\"s1\",\"inc\":\"i1\",\"tid\":5000,\"name\":\"list\",\"begin_ns\":1002000000,\"end_ns\":1009500000}\n"
	  "{\"type\":\"span\",\"id\":\"s3\",\"parent\":\"s1\",\"inc\":\"i1\",\"tid\":5003,\"name\":\"wait\",\"begin_ns\":1010000000,\"end_ns\":1121000000}\n"
	  "{\"type\":\"span\",\"id\":\"s1\",\"inc\":\"i1\",\"tid\":5000,\"name\":\"script\",\"begin_ns\":1001500000,\"end_ns\":1150000000}\n" },
	{ "collectors/syscalls/lifecycle.jsonl",
	  "{\"type\":\"header\",\"spec\":\"1.0\",\"stream\":\"lifecycle\",\"units\":{\"t_ns\":\"ns\",\"count\":\"count\"}}\n"
	  "{\"type\":\"lifecycle\",\"t_ns\":1000000100,\"event\":\"requested\"}\n"
	  "{\"type\":\"lifecycle\",\"t_ns\":1000000110,\"event\":\"probed\",\"status\":\"ok\"}\n"
	  "{\"type\":\"lifecycle\",\"t_ns\":1000000120,\"event\":\"opened\"}\n"
	  "{\"type\":\"lifecycle\",\"t_ns\":1000000130,\"event\":\"attached\",\"evidence\":\"first record seen at t_ns 1000000100\"}\n"
	  "{\"type\":\"lifecycle\",\"t_ns\":1000000140,\"event\":\"stopped\"}\n"
	  "{\"type\":\"lifecycle\",\"t_ns\":1000000150,\"event\":\"detached\"}\n"
	  "{\"type\":\"lifecycle\",\"t_ns\":1000000160,\"event\":\"final\",\"status\":\"ok\"}\n" },
	{ "collectors/syscalls/events.jsonl",
	  "{\"type\":\"header\",\"spec\":\"1.0\",\"stream\":\"events\",\"units\":{\"t_ns\":\"ns\",\"pid\":\"id\",\"tid\":\"id\",\"value\":\"count\",\"lost\":\"count\",\"bytes\":\"bytes\"}}\n"
	  "{\"type\":\"event\",\"t_ns\":1001500000,\"inc\":\"i1\",\"pid\":5000,\"tid\":5000,\"name\":\"clone\",\"ph\":\"B\"}\n"
	  "{\"type\":\"event\",\"t_ns\":1001900000,\"inc\":\"i1\",\"pid\":5000,\"tid\":5000,\"name\":\"clone\",\"ph\":\"E\"}\n"
	  "{\"type\":\"event\",\"t_ns\":1003000000,\"inc\":\"i2\",\"pid\":5001,\"tid\":5001,\"name\":\"openat\",\"ph\":\"B\"}\n"
	  "{\"type\":\"event\",\"t_ns\":1003100000,\"inc\":\"i2\",\"pid\":5001,\"tid\":5001,\"name\":\"openat\",\"ph\":\"E\"}\n"
	  "{\"type\":\"event\",\"t_ns\":1004000000,\"inc\":\"i2\",\"pid\":5001,\"tid\":5001,\"name\":\"write\",\"ph\":\"B\"}\n"
	  "{\"type\":\"event\",\"t_ns\":1004100000,\"inc\":\"i2\",\"pid\":5001,\"tid\":5001,\"name\":\"write\",\"ph\":\"E\"}\n"
	  "{\"type\":\"event\",\"t_ns\":1011000000,\"inc\":\"i3\",\"pid\":5002,\"tid\":5002,\"name\":\"clock_nanosleep\",\"ph\":\"B\"}\n"
	  "{\"type\":\"event\",\"t_ns\":1020000000,\"inc\":\"i1\",\"pid\":5000,\"tid\":5003,\"name\":\"wait4\",\"ph\":\"B\"}\n"
	  "{\"type\":\"event\",\"t_ns\":1111000000,\"inc\":\"i3\",\"pid\":5002,\"tid\":5002,\"name\":\"clock_nanosleep\",\"ph\":\"E\"}\n"
	  "{\"type\":\"event\",\"t_ns\":1121000000,\"inc\":\"i1\",\"pid\":5000,\"tid\":5003,\"name\":\"wait4\",\"ph\":\"E\",\"value\":5002}\n"
	  "{\"type\":\"event\",\"t_ns\":1185000000,\"inc\":\"i1\",\"pid\":5000,\"tid\":5000,\"name\":\"exit_group\",\"ph\":\"i\"}\n" },
	{ "capabilities.json",
	  "{\"spec\":\"1.0\",\"type\":\"capabilities\",\"units\":{},\"host\":{\"os\":\"linux\",\"arch\":\"x86_64\",\"kernel\":\"6.1.0-fixture\"},\"capabilities\":[{\"name\":\"software-events\",\"status\":\"ok\",\"value\":\"task-clock\"},{\"name\":\"hardware-events\",\"status\":\"unavailable\",\"value\":\"no core PMU\",\"reason\":\"no PMU under /sys/bus/event_source/devices supports cycles\",\"remedy\":\"record on bare metal or a VM with a virtual PMU (vPMU) enabled\"}]}\n" },
	{ "provenance.json",
	  "{\"spec\":\"1.0\",\"type\":\"provenance\",\"units\":{\"size_bytes\":\"bytes\"},\"tool\":{\"name\":\"mkfixture\",\"version\":\"0.1.0\",\"revision\":\"fixture\"},\"config_hash\":\"5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef\",\"images\":[{\"path\":\"/bin/sh\",\"status\":\"ok\",\"size_bytes\":125688,\"sha256\":\"2c3b1e1d2e0f6a7b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d\"}],\"environment\":{}}\n" },
	{ "collectors/sched/lifecycle.jsonl",
	  "{\"type\":\"header\",\"spec\":\"1.0\",\"stream\":\"lifecycle\",\"units\":{\"t_ns\":\"ns\",\"count\":\"count\"}}\n"
	  "{\"type\":\"lifecycle\",\"t_ns\":1195000000,\"event\":\"final\",\"status\":\"not-requested\"}\n" },
	{ "collectors/hwcount/lifecycle.jsonl",
	  "{\"type\":\"header\",\"spec\":\"1.0\",\"stream\":\"lifecycle\",\"units\":{\"t_ns\":\"ns\",\"count\":\"count\"}}\n"
	  "{\"type\":\"lifecycle\",\"t_ns\":1000000100,\"event\":\"requested\"}\n"
	  "{\"type\":\"lifecycle\",\"t_ns\":1000000200,\"event\":\"probed\",\"status\":\"unavailable\",\"reason\":\"cycles: no hardware PMU (perf_event_open: ENOENT)\",\"remedy\":\"record on bare metal or a VM with a virtual PMU enabled\"}\n"
	  "{\"type\":\"lifecycle\",\"t_ns\":1000000300,\"event\":\"final\",\"status\":\"unavailable\",\"reason\":\"cycles: no hardware PMU (perf_event_open: ENOENT)\",\"remedy\":\"record on bare metal or a VM with a virtual PMU enabled\"}\n" },
};

/* One file of the bundle being built: path relative to the bag's top. */
struct file {
	char *path;
	const char *data;
	size_t len;
};

static char work[4096];
static struct file basef[NFILES]; /* read back from the written base bag */
static volatile size_t sink;
static bool sanity; /* checking the base bundle: print its findings */

__attribute__((noreturn)) static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz-validate: FAIL: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	abort();
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
	return h;
}

/* ctx: a uint64_t digest of every finding, in order */
static void on_finding(void *ctx, const struct pmu_finding *f)
{
	uint64_t *h = ctx;

	if (f->check < 0 || f->check >= PMU_CHECK_COUNT_)
		fail("finding with a bad check index", NULL);
	sink += strlen(f->message) + (f->file ? strlen(f->file) : 0);
	*h = fnv(*h, &f->check, sizeof(f->check));
	*h = fnv(*h, &f->severity, sizeof(f->severity));
	*h = fnv(*h, &f->record, sizeof(f->record));
	*h = fnv(*h, f->message, strlen(f->message) + 1);
	if (f->file)
		*h = fnv(*h, f->file, strlen(f->file) + 1);
	if (sanity)
		fprintf(stderr, "fuzz-validate: base bundle: %s %s: %s\n", pmu_checks[f->check].id,
			f->file ? f->file : "-", f->message);
}

static void cleanup(void)
{
	if (work[0])
		pmu_rm_rf(AT_FDCWD, work);
}

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct file *)a)->path, ((const struct file *)b)->path);
}

/* The base texts were written for spec 1.0: their "spec" and "units" members
 * and stream headers are rewritten from this library's spec tables, so the
 * base stays valid as the spec grows optional fields. */
static void ucb(void *ctx, const char *key, const char *unit)
{
	if (!json_object_get(ctx, key))
		json_object_set_new(ctx, key, json_string(unit));
}

static char *dump_line(json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
	struct pmu_buf b;

	if (!s)
		fail("json_dumps", NULL);
	pmu_buf_init(&b);
	pmu_buf_add(&b, s, strlen(s));
	pmu_buf_add(&b, "\n", 1);
	free(s);
	return pmu_buf_detach(&b);
}

static char *with_spec(const char *txt)
{
	json_error_t je;
	const char *nl = strchr(txt, '\n');
	json_t *j = json_loadb(txt, (size_t)(nl - txt), JSON_DECODE_ANY, &je), *units = json_object();
	const char *type = json_string_value(json_object_get(j, "type"));
	char *line, *out;
	struct pmu_buf b;

	if (!j || !type)
		fail("base text is not JSON", je.text);
	if (!strcmp(type, "header")) {
		const char *kind = json_string_value(json_object_get(j, "stream"));

		for (size_t i = 0; kind && i < pmu_nstreams; i++)
			if (!strcmp(pmu_streams[i].kind, kind))
				for (size_t k = 0; k < pmu_streams[i].nrecs; k++)
					pmu_objdef_units(pmu_streams[i].recs[k].obj, ucb, units);
	} else {
		for (size_t i = 0; i < pmu_ndocs; i++)
			if (!strcmp(pmu_docs[i].type, type))
				pmu_objdef_units(pmu_docs[i].obj, ucb, units);
	}
	json_object_set_new(j, "spec", json_string(PMU_SPEC_VERSION));
	json_object_set_new(j, "units", units);
	line = dump_line(j);
	json_decref(j);
	pmu_buf_init(&b);
	pmu_buf_add(&b, line, strlen(line));
	pmu_buf_add(&b, nl + 1, strlen(nl + 1));
	free(line);
	out = pmu_buf_detach(&b);
	if (!out)
		fail("out of memory", NULL);
	return out;
}

static void build_base(void)
{
	struct pmu_bag_opts o = { .agent = "fuzz-validate", .spec = PMU_SPEC_VERSION, .date = 1764460800 };
	struct pmu_bag *bag;
	char final[4200];
	int err, fd;

	snprintf(final, sizeof(final), "%s/base", work);
	err = pmu_bag_open(&bag, final, &o);
	for (size_t i = 0; !err && i < NPAYLOAD; i++) {
		char *txt = with_spec(base[i].txt);

		err = pmu_bag_put(bag, base[i].rel, txt, strlen(txt));
		free(txt);
	}
	if (err) {
		pmu_bag_abort(bag);
		fail("cannot write the base bundle", pmu_error_detail());
	}
	if (pmu_bag_finalize(bag))
		fail("cannot finalize the base bundle", pmu_error_detail());
	fd = open(final, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		fail("cannot open the base bundle", final);
	for (size_t i = 0; i < NFILES; i++) {
		char *txt;
		size_t n;

		if (pmu_read_file(fd, names[i], 1 << 20, &txt, &n))
			fail("cannot read back the base bundle", pmu_error_detail());
		basef[i] = (struct file){ strdup(names[i]), txt, n };
	}
	close(fd);
	pmu_rm_rf(AT_FDCWD, final);
}

static int write_file(int rootfd, const char *path, const void *data, size_t len)
{
	char *dir = strdup(path), *slash = strrchr(dir, '/');
	int fd, err = 0;

	if (slash) {
		*slash = '\0';
		err = pmu_mkdir_p(rootfd, dir);
	}
	free(dir);
	if (err)
		return err;
	fd = openat(rootfd, path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return pmu_error(PMU_ERR_IO, "cannot create '%s': %s", path, strerror(errno));
	err = pmu_write_all(fd, data, len, path);
	close(fd);
	return err;
}

/* A path from the input, made safe to create under the bag's top; NULL when
 * nothing usable is left. */
static char *safe_path(const char *s, size_t n)
{
	char *p = malloc(n + 1), *o = p;
	size_t comps = 0;

	if (!p)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t m = 0;

		while (i < n && s[i] == '/')
			i++;
		while (i + m < n && s[i + m] != '/')
			m++;
		if (m == 0)
			break;
		if (!memchr(s + i, '\0', m) && !(m == 1 && s[i] == '.') &&
		    !(m == 2 && s[i] == '.' && s[i + 1] == '.') && m < 200 && comps < 12) {
			if (o != p)
				*o++ = '/';
			memcpy(o, s + i, m);
			o += m;
			comps++;
		}
		i += m;
	}
	*o = '\0';
	if (o == p) {
		free(p);
		return NULL;
	}
	return p;
}

static void hex_line(struct pmu_buf *b, const struct file *f)
{
	char hex[PMU_SHA256_HEX];

	if (pmu_sha256_buf(f->data, f->len, hex))
		fail("sha256", pmu_error_detail());
	pmu_buf_addf(b, "%s  %s\n", hex, f->path);
}

static struct file *find(struct file *fs, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (fs[i].path && !strcmp(fs[i].path, path))
			return &fs[i];
	return NULL;
}

static void one(const uint8_t *data, size_t size, struct pmu_validate_result *res);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pmu_validate_result res;

	if (!work[0]) {
		const char *t = getenv("TMPDIR");
		uint8_t *b;
		size_t n;

		/* $TMPDIR (tests/fuzz/run points it at its scratch), else memory */
		snprintf(work, sizeof(work), "%s/pmu-fuzz-validate.XXXXXX",
			 t && *t ? t : access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
		if (!mkdtemp(work))
			fail("cannot create the work directory", work);
		atexit(cleanup);
		build_base();
		/* sanity: the base bundle, re-bagged by this harness, is valid */
		n = basef[0].len;
		b = malloc(n + 1);
		b[0] = 0x00;
		memcpy(b + 1, basef[0].data, n);
		memset(&res, 0xff, sizeof(res));
		sanity = true;
		one(b, n + 1, &res);
		sanity = false;
		free(b);
		if (res.errors || res.warnings || !res.evaluated[PMU_CHECK_PAIRING] ||
		    !res.evaluated[PMU_CHECK_SPAN_NESTING] || !res.evaluated[PMU_CHECK_LIFECYCLE])
			fail("the base bundle is not valid, or not fully checked", NULL);
	}
	if (size < 1)
		return 0;
	one(data, size, &res);
	return 0;
}

static void one(const uint8_t *data, size_t size, struct pmu_validate_result *resp)
{
	struct file fs[NFILES + 1];
	struct pmu_buf man, info, tag;
	struct pmu_validate_opts opts;
	struct pmu_validate_result res;
	char dir[4200];
	char *extra = NULL;
	size_t nfs = 0;
	int mode, idx, rootfd, err;
	bool rebag, keep[4] = { false };
	uint64_t bytes = 0, count = 0;

	idx = (data[0] & 15) % NFILES;
	mode = (data[0] >> 4) & 3;
	rebag = mode != 1;
	pmu_validate_default_opts(&opts);
	opts.tmpbase = work;
	opts.hash_thread = data[0] & 0x40;
	/* the fast path's value scans: byte scans, AVX2 or AVX-512 masks (the
	 * same verdicts), by the input's length; NONE where the CPU lacks one */
	{
		static const enum pmu_line_masks lm[] = { PMU_LINE_MASKS_NONE, PMU_LINE_MASKS_AVX2,
							  PMU_LINE_MASKS_AVX512 };

		opts.line_masks = pmu_validate_line_masks(lm[size % 3]);
	}
	opts.max_per_check = data[0] & 0x80 ? 1 : 20;
	data++, size--;

	/* the files, with the change applied */
	for (int i = 0; i < NFILES; i++) {
		if (mode == 2 && i == idx)
			continue;
		fs[nfs] = basef[i];
		if ((mode == 0 || mode == 1) && i == idx) {
			fs[nfs].data = (const char *)data;
			fs[nfs].len = size;
			if (i >= NPAYLOAD)
				keep[i - NPAYLOAD] = true;
		}
		nfs++;
	}
	if (mode == 3) {
		const char *nl = memchr(data, '\n', size);
		size_t pl = nl ? (size_t)(nl - (const char *)data) : size;

		extra = safe_path((const char *)data, pl);
		if (!extra || find(fs, nfs, extra)) {
			free(extra);
			return;
		}
		fs[nfs].path = extra;
		fs[nfs].data = nl ? nl + 1 : "";
		fs[nfs].len = nl ? size - pl - 1 : 0;
		nfs++;
	}
	qsort(fs, nfs, sizeof(*fs), cmp_file);

	/* re-bag: manifest, bag-info (Payload-Oxum), tag manifest */
	pmu_buf_init(&man);
	pmu_buf_init(&info);
	pmu_buf_init(&tag);
	if (rebag) {
		struct file *f;

		for (size_t i = 0; i < nfs; i++)
			if (!strncmp(fs[i].path, "data/", 5)) {
				hex_line(&man, &fs[i]);
				bytes += fs[i].len;
				count++;
			}
		pmu_buf_addf(&info, "Bag-Software-Agent: fuzz-validate\nBagging-Date: 2025-11-30\n"
				    "Payload-Oxum: %llu.%llu\nPMU-Spec-Version: %s\n",
			     (unsigned long long)bytes, (unsigned long long)count, PMU_SPEC_VERSION);
		if (!keep[2] && (f = find(fs, nfs, "manifest-sha256.txt")))
			f->data = man.p ? man.p : "", f->len = man.len;
		if (!keep[1] && (f = find(fs, nfs, "bag-info.txt")))
			f->data = info.p, f->len = info.len;
		for (size_t i = 0; i < nfs; i++)
			if (!strcmp(fs[i].path, "bag-info.txt") || !strcmp(fs[i].path, "bagit.txt") ||
			    !strcmp(fs[i].path, "manifest-sha256.txt"))
				hex_line(&tag, &fs[i]);
		if (!keep[3] && (f = find(fs, nfs, "tagmanifest-sha256.txt")))
			f->data = tag.p ? tag.p : "", f->len = tag.len;
	}

	/* write, validate, remove */
	snprintf(dir, sizeof(dir), "%s/b.XXXXXX", work);
	if (!mkdtemp(dir))
		fail("mkdtemp", strerror(errno));
	rootfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		fail("open", dir);
	err = 0;
	for (size_t i = 0; !err && i < nfs; i++)
		err = write_file(rootfd, fs[i].path, fs[i].data, fs[i].len);
	close(rootfd);
	memset(&res, 0, sizeof(res));
	if (!err) {
		struct pmu_validate_result ref;
		uint64_t h1 = 1469598103934665603ull, h2 = h1;

		err = pmu_validate_path(dir, &opts, on_finding, &h1, &res);
		if (err)
			fail("pmu_validate_path could not run", pmu_error_detail());
		/* the learned shapes (the fast path) change no finding */
		opts.no_shapes = true;
		if (pmu_validate_path(dir, &opts, on_finding, &h2, &ref))
			fail("pmu_validate_path could not run", pmu_error_detail());
		if (h1 != h2 || res.errors != ref.errors || res.warnings != ref.warnings ||
		    memcmp(res.count, ref.count, sizeof(res.count)))
			fail("the fast path and the full path disagree", NULL);
		if (res.errors + res.warnings == 0 && res.evaluated[PMU_CHECK_JSON_SYNTAX] == false)
			fail("no findings, but the payload was not checked", NULL);
		if (mode == 0 && idx < NPAYLOAD) {
			static const enum pmu_check bagchecks[] = {
				PMU_CHECK_BAG_STRUCTURE, PMU_CHECK_BAG_DECLARATION, PMU_CHECK_BAG_INFO,
				PMU_CHECK_BAG_OXUM, PMU_CHECK_MANIFEST_FORMAT, PMU_CHECK_MANIFEST_UNLISTED,
				PMU_CHECK_MANIFEST_MISSING, PMU_CHECK_TAGMANIFEST, PMU_CHECK_CHECKSUM_PAYLOAD,
				PMU_CHECK_CHECKSUM_TAG,
			};

			for (size_t i = 0; i < PMU_ARRAY_SIZE(bagchecks); i++)
				if (res.count[bagchecks[i]] || !res.evaluated[bagchecks[i]])
					fail("re-bagged bundle fails a bag-level check", pmu_checks[bagchecks[i]].id);
		}
	}
	if (pmu_rm_rf(AT_FDCWD, dir))
		fail("cannot remove the bundle", pmu_error_detail());
	pmu_buf_release(&man);
	pmu_buf_release(&info);
	pmu_buf_release(&tag);
	free(extra);
	*resp = res;
}
