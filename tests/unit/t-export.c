/*
 * The profile's exports (analyze/export.c) over stacks this test makes: a
 * profile.h walk with known stacks (an inline chain, a shared library
 * frame, a stale binary's frame, a kernel frame, two incarnations of one
 * program), written as folded stacks, speedscope JSON and gzip'd pprof,
 * then read back: folded lines and counts, speedscope's frames and
 * weights, and the pprof message decoded with protobuf-c (string table
 * deduplicated, inline frames as lines of one location innermost first,
 * leaf first, values, period type, mappings with build-ids).  The real
 * tools (go tool pprof, jq, Chromium) read real bundles' exports in
 * tests/cli/t3610-exports.bats.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <zlib.h>

#include "error.h"
#include "export.h"
#include "profile.h"
#include "profile.pb-c.h"

static int failed, ntest;

static void ok(int cond, const char *what)
{
	ntest++;
	printf("%sok %d - %s\n", cond ? "" : "not ", ntest, what);
	if (!cond)
		failed++;
}

/* ---- a profile.h walk over fixed stacks --------------------------------------- */

struct an_prof {
	struct an_prof_info info;
	struct an_prof_stack *stacks;
	size_t n;
};

int an_prof_load(struct an_prof **p, const struct pmu_bundle *b, int rep)
{
	(void)b;
	(void)rep;
	*p = NULL;
	return 0;
}

void an_prof_free(struct an_prof *p)
{
	(void)p;
}

json_t *an_prof_json(const struct an_prof *p)
{
	(void)p;
	return json_object();
}

const struct an_prof_info *an_prof_info(const struct an_prof *p)
{
	return &p->info;
}

int an_prof_each_stack(const struct an_prof *p, int (*fn)(void *ctx, const struct an_prof_stack *s), void *ctx)
{
	for (size_t i = 0; i < p->n; i++) {
		int r = fn(ctx, &p->stacks[i]);

		if (r)
			return r;
	}
	return 0;
}

#define HOT_BID "0123456789abcdef0123456789abcdef01234567"
#define LIB_BID "89abcdef0123456789abcdef0123456789abcdef"

/* root first; mix inlined into hot_loop at one address */
static const struct pmu_frame f_main = { PMU_FRAME_OK, "main", "hot.c", 60, "/x/hot", HOT_BID, NULL, 0x555555555100, 0x1100, false };
static const struct pmu_frame f_hot = { PMU_FRAME_OK, "hot_loop", "hot.c", 39, "/x/hot", HOT_BID, NULL, 0x555555555230, 0x1230, false };
static const struct pmu_frame f_mix = { PMU_FRAME_OK, "mix", "hot.c", 30, "/x/hot", HOT_BID, NULL, 0x555555555230, 0x1230, true };
static const struct pmu_frame f_lib = { PMU_FRAME_OK, "lib_work", "hotlib.c", 12, "/x/libhot.so", LIB_BID, NULL, 0x7ffff7fc1120, 0x1120, false };
static const struct pmu_frame f_stale = { PMU_FRAME_STALE, NULL, NULL, 0, "/x/hot", HOT_BID, "stale binary (build-id mismatch)", 0x555555556234, 0x1234, false };
static const struct pmu_frame f_kern = { PMU_FRAME_KERNEL, "do_syscall_64", NULL, 0, "[kernel.kallsyms]", NULL, NULL, 0xffffffff81000100, 0, false };
static const struct pmu_frame f_main2 = { PMU_FRAME_OK, "main", "hot.c", 62, "/x/hot", HOT_BID, NULL, 0x555555555108, 0x1108, false };

static const struct pmu_frame s1[] = { f_main, f_hot, f_mix };
static const struct pmu_frame s2[] = { f_main2, f_lib };
static const struct pmu_frame s3[] = { f_main, f_stale };
static const struct pmu_frame s4[] = { f_main, f_kern };

static struct an_prof_stack stacks[] = {
	{ "hot", "i1", s1, 3, false, 60, 60000000 },
	{ "hot", "i2", s1, 3, false, 25, 25000000 }, /* the same stack in another incarnation */
	{ "hot", "i1", s2, 2, false, 10, 10000000 },
	{ "hot", "i1", s3, 2, true, 3, 3000000 },
	{ "hot", "i2", s4, 2, false, 2, 2000000 },
};

static struct an_prof prof = {
	{ "cpu-clock", 999, 0, "fp", 100, 0, 0, 0, 0 }, stacks, sizeof(stacks) / sizeof(stacks[0]),
};

/* ---- reading back ------------------------------------------------------------------ */

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (!f)
		return NULL;
	do {
		if (n + 4096 > cap && !(buf = realloc(buf, cap = (n + 4096) * 2)))
			break;
		r = fread(buf + n, 1, 4096, f);
		n += r;
	} while (r > 0);
	fclose(f);
	if (buf)
		buf[n] = 0;
	*len = n;
	return buf;
}

static uint8_t *gunzip(const char *path, size_t *len)
{
	gzFile g = gzopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, n = 0;
	int r;

	if (!g)
		return NULL;
	do {
		if (n + 65536 > cap && !(buf = realloc(buf, cap = (n + 65536) * 2)))
			break;
		r = gzread(g, buf + n, 65536);
		if (r > 0)
			n += (size_t)r;
	} while (r > 0);
	gzclose(g);
	*len = n;
	return buf;
}

static const char *str(const Perftools__Profiles__Profile *p, int64_t i)
{
	return i >= 0 && (size_t)i < p->n_string_table ? p->string_table[i] : "<bad index>";
}

static const Perftools__Profiles__Location *loc(const Perftools__Profiles__Profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_location; i++)
		if (p->location[i]->id == id)
			return p->location[i];
	return NULL;
}

static const char *fname(const Perftools__Profiles__Profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_function; i++)
		if (p->function[i]->id == id)
			return str(p, p->function[i]->name);
	return "<no function>";
}

static void test_folded(const char *dir)
{
	char path[512];
	size_t len;
	char *t;

	snprintf(path, sizeof(path), "%s/p.folded", dir);
	ok(an_export_folded(&prof, path) == 0, "folded: written");
	t = slurp(path, &len);
	ok(t != NULL, "folded: read back");
	ok(t && strstr(t, "hot;main;hot_loop;mix_[i] 85\n") != NULL, "folded: the inline chain, two incarnations merged");
	ok(t && strstr(t, "hot;main;lib_work 10\n") != NULL, "folded: the shared library's frame");
	ok(t && strstr(t, "hot;[chain cut];main;[stale hot 0x1234] 3\n") != NULL,
	   "folded: a stale frame's placeholder, a cut chain on [chain cut]");
	ok(t && strstr(t, "hot;main;do_syscall_64_[k] 2\n") != NULL, "folded: a kernel frame");
	{
		unsigned long sum = 0, lines = 0;

		for (char *l = t; l && *l; l = strchr(l, '\n') + 1) {
			char *e = strchr(l, '\n'), *sp;

			*e = 0;
			sp = strrchr(l, ' ');
			sum += sp ? strtoul(sp + 1, NULL, 10) : 0;
			*e = '\n';
			lines++;
		}
		ok(sum == 100 && lines == 4, "folded: 4 distinct stacks, counts summing to 100 samples");
	}
	free(t);
}

static void test_speedscope(const char *dir)
{
	char path[512];
	json_error_t je;
	json_t *d, *fr, *pr, *x;
	size_t i;
	json_int_t sum = 0;
	int hot = -1, mix = -1;

	snprintf(path, sizeof(path), "%s/p.speedscope.json", dir);
	ok(an_export_speedscope(&prof, path) == 0 || (printf("# %s\n", pmu_error_detail()), 0), "speedscope: written");
	d = json_load_file(path, 0, &je);
	ok(d != NULL, "speedscope: JSON");
	ok(!strcmp(json_string_value(json_object_get(d, "$schema")) ?: "",
		   "https://www.speedscope.app/file-format-schema.json"), "speedscope: the schema named");
	fr = json_object_get(json_object_get(d, "shared"), "frames");
	json_array_foreach(fr, i, x) {
		if (!strcmp(json_string_value(json_object_get(x, "name")), "hot_loop"))
			hot = (int)i;
		if (!strcmp(json_string_value(json_object_get(x, "name")), "mix"))
			mix = (int)i;
	}
	ok(hot >= 0 && json_integer_value(json_object_get(json_array_get(fr, hot), "line")) == 39 &&
		   !strcmp(json_string_value(json_object_get(json_array_get(fr, hot), "file")) ?: "", "hot.c"),
	   "speedscope: a frame with name, file and line");
	ok(mix >= 0, "speedscope: the inlined function is a frame");
	{
		int m1 = -1;

		json_array_foreach(fr, i, x)
			if (!strcmp(json_string_value(json_object_get(x, "name")), "main"))
				m1 = (int)i;
		ok(m1 >= 0 && !json_object_get(json_array_get(fr, m1), "line"),
		   "speedscope: no line where a function's samples had several");
	}
	pr = json_object_get(d, "profiles");
	ok(json_array_size(pr) == 1, "speedscope: one profile per program");
	x = json_array_get(pr, 0);
	ok(!strcmp(json_string_value(json_object_get(x, "type")) ?: "", "sampled"), "speedscope: a sampled profile");
	json_array_foreach(json_object_get(x, "weights"), i, fr)
		sum += json_integer_value(fr);
	ok(sum == 100 && json_integer_value(json_object_get(x, "endValue")) == 100,
	   "speedscope: weights sum to the samples");
	ok(json_array_size(json_object_get(x, "samples")) == 5, "speedscope: a stack per distinct stack");
	json_decref(d);
}

static void test_pprof(const char *dir)
{
	char path[512];
	size_t len;
	uint8_t *raw;
	Perftools__Profiles__Profile *p;
	bool dup = false, inl = false, leaf = false, bid = false, stale = false;
	int64_t sum = 0, psum = 0;

	snprintf(path, sizeof(path), "%s/p.pb.gz", dir);
	ok(an_export_pprof(&prof, path) == 0 || (printf("# %s\n", pmu_error_detail()), 0), "pprof: written");
	raw = gunzip(path, &len);
	ok(raw && len > 0, "pprof: gzip");
	p = raw ? perftools__profiles__profile__unpack(NULL, len, raw) : NULL;
	ok(p != NULL, "pprof: a Profile message");
	if (!p) {
		free(raw);
		return;
	}
	ok(p->n_string_table > 0 && !strcmp(p->string_table[0], ""), "pprof: string_table[0] is \"\"");
	for (size_t i = 0; i < p->n_string_table; i++)
		for (size_t j = i + 1; j < p->n_string_table; j++)
			if (!strcmp(p->string_table[i], p->string_table[j]))
				dup = true;
	ok(!dup, "pprof: the string table deduplicated");
	ok(p->n_sample_type == 2 && !strcmp(str(p, p->sample_type[0]->type), "samples") &&
		   !strcmp(str(p, p->sample_type[0]->unit), "count") && !strcmp(str(p, p->sample_type[1]->type), "cpu") &&
		   !strcmp(str(p, p->sample_type[1]->unit), "nanoseconds"),
	   "pprof: sample types samples/count and cpu/nanoseconds for cpu-clock");
	ok(p->period_type && !strcmp(str(p, p->period_type->type), "cpu") && p->period == 0,
	   "pprof: a frequency's period is not made up");
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		const Perftools__Profiles__Location *l0 = loc(p, s->location_id[0]);

		sum += s->value[0];
		psum += s->value[1];
		if (l0 && l0->n_line == 2 && !strcmp(fname(p, l0->line[0]->function_id), "mix") &&
		    !strcmp(fname(p, l0->line[1]->function_id), "hot_loop") && l0->line[0]->line == 30 &&
		    l0->line[1]->line == 39 && s->n_location_id == 2)
			inl = true;
		if (l0 && !strcmp(fname(p, l0->line[0]->function_id), "lib_work"))
			leaf = !strcmp(fname(p, loc(p, s->location_id[s->n_location_id - 1])->line[0]->function_id),
				       "main");
		if (l0 && !strcmp(fname(p, l0->line[0]->function_id), "[stale hot 0x1234]"))
			stale = !strcmp(fname(p, loc(p, s->location_id[s->n_location_id - 1])->line[0]->function_id),
					"[chain cut]");
	}
	ok(sum == 100 && psum == 100000000, "pprof: values sum to the samples and their periods");
	ok(inl, "pprof: an inline chain is one location's lines, innermost first");
	ok(leaf, "pprof: the leaf first, the root last");
	ok(stale, "pprof: an unresolved frame keeps its placeholder name, a cut chain's root is [chain cut]");
	for (size_t i = 0; i < p->n_mapping; i++)
		if (!strcmp(str(p, p->mapping[i]->filename), "/x/libhot.so") &&
		    !strcmp(str(p, p->mapping[i]->build_id), LIB_BID) && p->mapping[i]->has_functions)
			bid = true;
	ok(bid, "pprof: mappings with filename and build-id");
	ok(p->n_mapping > 0 && !strcmp(str(p, p->mapping[0]->filename), "/x/hot"),
	   "pprof: mapping[0] the object with the most samples");
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
}

static void test_errors(const char *dir)
{
	char path[512];
	struct an_prof empty = { { "cpu-clock", 999, 0, "fp", 0, 0, 0, 0, 0 }, NULL, 0 };
	struct stat st;

	snprintf(path, sizeof(path), "%s/none/p.folded", dir);
	ok(an_export_folded(&prof, path) < 0, "folded: a directory that does not exist is an error");
	snprintf(path, sizeof(path), "%s/none", dir);
	ok(stat(path, &st) < 0, "folded: and leaves nothing behind");
	snprintf(path, sizeof(path), "%s/empty.pb.gz", dir);
	ok(an_export_pprof(&empty, path) < 0 && stat(path, &st) < 0, "pprof: no samples is an error, no file left");
	snprintf(path, sizeof(path), "%s/empty.folded", dir);
	ok(an_export_folded(&empty, path) < 0 && stat(path, &st) < 0, "folded: no samples is an error, no file left");
}

static void test_flame(void)
{
	json_t *j = an_flame_json(&prof), *root, *progs, *hot;

	ok(j && json_is_true(json_object_get(j, "available")) && json_integer_value(json_object_get(j, "samples")) == 100,
	   "flame: the samples counted");
	root = json_object_get(j, "root");
	progs = json_array_get(root, 4);
	hot = json_array_get(progs, 0);
	ok(json_array_size(progs) == 1 && !strcmp(json_string_value(json_array_get(hot, 0)) ?: "", "hot") &&
		   json_integer_value(json_array_get(hot, 1)) == 100,
	   "flame: one program with all the samples");
	json_decref(j);
}

int main(void)
{
	char dir[] = "/tmp/t-export-XXXXXX";

	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	test_folded(dir);
	test_speedscope(dir);
	test_pprof(dir);
	test_errors(dir);
	test_flame();
	printf("1..%d\n", ntest);
	if (getenv("T_EXPORT_KEEP")) {
		printf("# kept %s\n", dir);
	} else {
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			fprintf(stderr, "# could not remove %s\n", dir);
	}
	return failed != 0;
}
