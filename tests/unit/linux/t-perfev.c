/* The event list as the Linux backend resolves it (backends/events.h):
 * generic names to perf numbers, modifiers, raw selectors, PMU/TERMS/ over a
 * synthetic sysfs tree, list splitting, CPUID to libpfm4 table, pfm: items
 * with libpfm4 absent and (when the host has it) present.  The grammar
 * alone is tests/unit/t-perfev.c's. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "../tap.h"
#include "error.h"
#include "events.h"
#include "linux/perfev-cpu.h"
#include "util.h"

static struct pmu_evenv env;
static struct pmu_evspec one;

static bool has(const char *s, const char *sub)
{
	return s && strstr(s, sub);
}

/* Parse a one-item list into `one`; the error, or 0. */
static int parse1(const char *item)
{
	struct pmu_evspec *v = NULL;
	size_t n = 0;
	int err = pmu_evlist_parse(item, &env, &v, &n);

	memset(&one, 0, sizeof(one));
	if (!err && n == 1)
		one = v[0];
	else if (!err)
		err = 1;
	free(v);
	return err;
}

/* The list is refused with PMU_ERR_INVAL and a detail holding want. */
static void refused(const char *list, const char *want)
{
	struct pmu_evspec *v = (struct pmu_evspec *)1;
	size_t n = 99;
	int err = pmu_evlist_parse(list, &env, &v, &n);

	if (!ok(err == PMU_ERR_INVAL && !v && !n && has(pmu_error_detail(), want), "'%s' refused: %s", list, want))
		printf("#   got %s, detail '%s'\n", pmu_errname(err), pmu_error_detail());
}

static void put(const char *root, const char *path, const char *text)
{
	char p[512];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", root, path);
	*strrchr(p, '/') = '\0';
	pmu_mkdir_p(AT_FDCWD, p);
	snprintf(p, sizeof(p), "%s/%s", root, path);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || pmu_write_all(fd, text, strlen(text), p))
		ok(0, "cannot write %s", p);
	if (fd >= 0)
		close(fd);
}

static void test_table(void)
{
	size_t n = pmu_evtable_count(), ndef = 0;
	static const char *const defaults[] = {
		"task-clock", "context-switches", "cpu-migrations", "page-faults", "minor-faults", "major-faults",
		"cycles", "instructions", "branches", "branch-misses", "cache-references", "cache-misses",
		"stalled-cycles-frontend", "stalled-cycles-backend",
	};
	/* What perfev.def must say, written out independently. */
	static const struct { const char *name, *alias; uint32_t type; uint64_t config; const char *unit; } want[] = {
		{ "task-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "ns" },
		{ "cpu-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "ns" },
		{ "context-switches", "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "count" },
		{ "cpu-migrations", "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "count" },
		{ "page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "count" },
		{ "minor-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, "count" },
		{ "major-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, "count" },
		{ "alignment-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, "count" },
		{ "emulation-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, "count" },
		{ "cycles", "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "count" },
		{ "instructions", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "count" },
		{ "branches", "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "count" },
		{ "branch-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, "count" },
		{ "cache-references", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, "count" },
		{ "cache-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, "count" },
		{ "bus-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, "count" },
		{ "ref-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, "count" },
		{ "stalled-cycles-frontend", "idle-cycles-frontend", PERF_TYPE_HARDWARE,
		  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, "count" },
		{ "stalled-cycles-backend", "idle-cycles-backend", PERF_TYPE_HARDWARE,
		  PERF_COUNT_HW_STALLED_CYCLES_BACKEND, "count" },
	};
	struct pmu_evspec *v;
	size_t nv;

	is_int((long long)n, (long long)PMU_ARRAY_SIZE(want), "the table has every generic event");
	ok(pmu_evtable_get(n) == NULL, "past the end is NULL");
	for (size_t i = 0; i < n; i++) {
		const struct pmu_evdef *d = pmu_evtable_get(i);

		ok(d && strlen(d->description) > 10 && (!strcmp(d->unit, "ns") || !strcmp(d->unit, "count")),
		   "row %zu '%s' is described and has a unit", i, d ? d->name : "?");
		for (size_t k = 0; k < i; k++)
			if (!strcmp(pmu_evtable_get(k)->name, d->name))
				ok(0, "'%s' occurs twice", d->name);
		ndef += d->in_default;
	}
	for (size_t i = 0; i < PMU_ARRAY_SIZE(want); i++) {
		const char *names[2] = { want[i].name, want[i].alias };

		for (int a = 0; a < 2 && names[a]; a++) {
			char what[128];
			int err = parse1(names[a]);

			snprintf(what, sizeof(what), "'%s' resolves", names[a]);
			if (!is_int(err, 0, what))
				continue;
			ok(one.type == want[i].type && one.config == want[i].config, "'%s' is type %u config %llu",
			   names[a], want[i].type, (unsigned long long)want[i].config);
			is_str(one.name, want[i].name, "display name is the canonical name");
			is_str(one.given, names[a], "given is as written");
			is_str(one.unit, want[i].unit, "unit");
			ok(one.available && !one.modifier && !one.exclude_user && !one.exclude_kernel && !one.exclude_hv,
			   "available, no modifier, nothing excluded");
			ok(one.kind == (want[i].type == PERF_TYPE_SOFTWARE ? PMU_EV_SOFTWARE : PMU_EV_HARDWARE) &&
			   one.on_pmu == (want[i].type == PERF_TYPE_HARDWARE), "kind and on_pmu");
			ok(pmu_evtable_find(names[a]) && !strcmp(pmu_evtable_find(names[a])->name, want[i].name),
			   "pmu_evtable_find('%s')", names[a]);
		}
	}
	ok(pmu_evtable_find("cyclez") == NULL, "pmu_evtable_find of an unknown name is NULL");

	is_int(pmu_evlist_defaults(&v, &nv), 0, "defaults");
	is_int((long long)nv, (long long)PMU_ARRAY_SIZE(defaults), "14 default events");
	is_int((long long)ndef, (long long)nv, "as many as DEFAULT rows");
	for (size_t i = 0; i < nv && i < PMU_ARRAY_SIZE(defaults); i++) {
		const struct pmu_evdef *d = pmu_evtable_find(defaults[i]);
		size_t w = 0;

		while (w < PMU_ARRAY_SIZE(want) - 1 && strcmp(want[w].name, defaults[i]))
			w++;
		is_str(v[i].name, defaults[i], "default event in order");
		ok(d && d->in_default && v[i].generic == d && v[i].type == want[w].type &&
		   v[i].config == want[w].config && v[i].available && !strcmp(v[i].unit, d->unit) &&
		   v[i].on_pmu == (d->kind == PMU_EV_HARDWARE), "'%s' fully resolved", defaults[i]);
	}
	free(v);
	is_str(pmu_evkind_name(PMU_EV_PFM), "pfm", "kind name");
	is_str(pmu_evkind_name(PMU_EV_RAW), "raw", "kind name");
}

static void test_modifiers(void)
{
	static const struct { const char *item, *name; bool eu, ek, eh; } m[] = {
		{ "cycles:u", "cycles:u", false, true, true },
		{ "cycles:k", "cycles:k", true, false, true },
		{ "cycles:h", "cycles:h", true, true, false },
		{ "cycles:uk", "cycles:uk", false, false, true },
		{ "cpu-cycles:ku", "cycles:uk", false, false, true },
		{ "instructions:hku", "instructions:ukh", false, false, false },
		{ "cs:k", "context-switches:k", true, false, true },
		{ "r04c2:k", "r4c2:k", true, false, true },
	};

	for (size_t i = 0; i < PMU_ARRAY_SIZE(m); i++) {
		if (!is_int(parse1(m[i].item), 0, m[i].item))
			continue;
		is_str(one.name, m[i].name, "display name has the modifier, letters in ukh order");
		ok(one.modifier && one.exclude_user == m[i].eu && one.exclude_kernel == m[i].ek &&
		   one.exclude_hv == m[i].eh, "'%s' excludes user=%d kernel=%d hv=%d", m[i].item, m[i].eu, m[i].ek,
		   m[i].eh);
	}
	refused("cycles:", "empty modifier in 'cycles:'");
	refused("cycles:x", "unknown modifier 'x' in 'cycles:x'");
	refused("cycles:p", "unknown modifier 'p'");
	refused("cycles:uu", "modifier 'u' repeated");
	refused("cycles:u:k", "unknown modifier ':'");
}

static void test_raw(void)
{
	static const struct { const char *item, *name; uint64_t config; } r[] = {
		{ "r04c2", "r4c2", 0x4c2 },
		{ "r1a8", "r1a8", 0x1a8 },
		{ "rab", "rab", 0xab },
		{ "r0", "r0", 0 },
		{ "rFFFFFFFFFFFFFFFF", "rffffffffffffffff", UINT64_MAX },
		{ "r00000000000000000001", "r1", 1 },
	};

	for (size_t i = 0; i < PMU_ARRAY_SIZE(r); i++) {
		if (!is_int(parse1(r[i].item), 0, r[i].item))
			continue;
		ok(one.kind == PMU_EV_RAW && one.type == PERF_TYPE_RAW && one.config == r[i].config && one.on_pmu &&
		   !one.modifier && !strcmp(one.unit, "count"), "'%s' is raw config 0x%llx", r[i].item,
		   (unsigned long long)r[i].config);
		is_str(one.name, r[i].name, "raw display name");
	}
	is_int(parse1("ref-cycles"), 0, "ref-cycles is a generic name, not a raw selector");
	ok(one.kind == PMU_EV_HARDWARE && one.config == PERF_COUNT_HW_REF_CPU_CYCLES, "ref-cycles resolved");
	refused("r", "empty raw selector 'r'");
	refused("r04g2", "raw selector 'r04g2' has 'g', which is not a hex digit");
	refused("r10000000000000000", "wider than 64 bits");
	refused("r0x1a8", "'x', which is not a hex digit");
	refused("cyclez", "unknown event 'cyclez' (did you mean 'cycles'?)");
	refused("instrucions", "(did you mean 'instructions'?)");
	refused("cs2", "(did you mean 'cs'?)");
	refused("frobnicate", "unknown event 'frobnicate' (not a generic name");
	refused("CYCLES", "unknown event 'CYCLES'");
}

static void test_sysfs(const char *root)
{
	char sysfs[512], want[600];

	snprintf(sysfs, sizeof(sysfs), "%s/devices", root);
	put(sysfs, "cpu/type", "4\n");
	put(sysfs, "cpu/format/event", "config:0-7\n");
	put(sysfs, "cpu/format/umask", "config:8-15\n");
	put(sysfs, "cpu/format/cmask", "config:24-31\n");
	put(sysfs, "cpu/format/any", "config:21\n");
	put(sysfs, "cpu/format/ldlat", "config1:0-15\n");
	put(sysfs, "cpu/format/split", "config:0-7,32-35\n");
	put(sysfs, "cpu/format/wide", "config2:0-63\n");
	put(sysfs, "cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
	put(sysfs, "cpu/events/cpu-cycles", "event=0x3c\n");
	put(sysfs, "cpu/events/needs-param", "event=0x3c,cmask=?\n");
	put(sysfs, "cpu/events/energy", "event=0x02\n");
	put(sysfs, "cpu/events/energy.unit", "Joules\n");
	put(sysfs, "cpu/events/energy.scale", "2.5e-10\n");
	put(sysfs, "sw/type", "1\n");
	put(sysfs, "odd/type", "12\n");
	put(sysfs, "odd/format/c3", "config3:0-7\n");
	put(sysfs, "odd/format/junk", "umask 0-7\n");
	put(sysfs, "notype/format/event", "config:0-7\n");
	env.sysfs = sysfs;

	static const struct { const char *item; uint64_t c, c1, c2; } good[] = {
		{ "cpu/event=0xc2,umask=0x4/", 0x04c2, 0, 0 },
		{ "cpu/event=0x3c,cmask=2,any/", 0x3c | 2ull << 24 | 1ull << 21, 0, 0 },
		{ "cpu/any=1,event=255/", 1ull << 21 | 0xff, 0, 0 },
		{ "cpu/event=0xcd,ldlat=30/", 0xcd, 30, 0 },
		{ "cpu/split=0xabc/", 0xbc | 0xaull << 32, 0, 0 },
		{ "cpu/split=0xfff/", 0xff | 0xfull << 32, 0, 0 },
		{ "cpu/config=0x1234,config1=5,config2=7/", 0x1234, 5, 7 },
		{ "cpu/config2=0xffffffffffffffff/", 0, 0, UINT64_MAX },
		{ "cpu/wide=0xffffffffffffffff/", 0, 0, UINT64_MAX },
		{ "cpu/mem-loads/", 0x1cd, 3, 0 },
		{ "cpu/mem-loads,ldlat=30/", 0x1cd, 30, 0 },
		{ "cpu/cpu-cycles,umask=2/", 0x23c, 0, 0 },
		{ "cpu/event=0/", 0, 0, 0 },
	};
	for (size_t i = 0; i < PMU_ARRAY_SIZE(good); i++) {
		if (!is_int(parse1(good[i].item), 0, good[i].item))
			continue;
		ok(one.available && one.kind == PMU_EV_PMU && one.type == 4 && one.config == good[i].c &&
		   one.config1 == good[i].c1 && one.config2 == good[i].c2 && one.on_pmu && !one.modifier,
		   "'%s' is type 4 config 0x%llx config1 0x%llx config2 0x%llx", good[i].item,
		   (unsigned long long)good[i].c, (unsigned long long)good[i].c1, (unsigned long long)good[i].c2);
		if (!one.available || one.config != good[i].c)
			printf("#   got config 0x%llx config1 0x%llx, reason '%s'\n", (unsigned long long)one.config,
			       (unsigned long long)one.config1, one.reason);
		is_str(one.name, good[i].item, "display name is the item");
	}

	is_int(parse1("cpu/energy/"), 0, "a sysfs event with a unit and scale");
	ok(one.available && one.config == 2, "resolves");
	is_str(one.note, "sysfs event 'energy' has unit 'Joules' and scale 2.5e-10; counts are recorded unscaled",
	       "and the note says the count is unscaled");
	is_int(parse1("cpu/mem-loads/"), 0, "a sysfs event without");
	is_str(one.note, "", "has no note");

	is_int(parse1("cpu/event=0x3c/u"), 0, "modifier after the closing slash");
	ok(one.modifier && !one.exclude_user && one.exclude_kernel && one.exclude_hv && one.config == 0x3c,
	   "cpu/event=0x3c/u counts user only");
	is_int(parse1("cpu/event=0x3c/:k"), 0, "modifier after /:");
	ok(one.modifier && one.exclude_user && !one.exclude_kernel && one.exclude_hv, "cpu/event=0x3c/:k counts kernel only");
	refused("cpu/event=0x3c/x", "unknown modifier 'x'");
	refused("cpu/event=0x3c/:", "empty modifier");

	is_int(parse1("sw/config=1/"), 0, "a PMU with no format directory takes config terms");
	ok(one.available && one.type == PERF_TYPE_SOFTWARE && one.config == 1 && !one.on_pmu &&
	   !strcmp(one.unit, "ns"), "sw/config=1/ is the task clock: software, ns, not on a PMU");

	refused("cpu/event=0x100/", "value 0x100 of term 'event' in 'cpu/event=0x100/' does not fit its 8 bits (config:0-7)");
	refused("cpu/any=2/", "does not fit its 1 bits (config:21)");
	refused("cpu/split=0x1000/", "does not fit its 12 bits (config:0-7,32-35)");
	refused("cpu/ldlat=65536/", "does not fit its 16 bits");
	refused("cpu/bogus=1/", "unknown term 'bogus' in 'cpu/bogus=1/' (PMU 'cpu' has format terms any, cmask, event, "
		"ldlat, split, umask, wide)");
	refused("cpu/bogus/", "unknown term 'bogus'");
	refused("cpu/event=1,event=2/", "term 'event' given twice");
	refused("cpu/event=/", "bad value '' for term 'event'");
	refused("cpu/event=0xzz/", "bad value '0xzz'");
	refused("cpu/event=-1/", "bad value '-1'");
	refused("cpu/event=18446744073709551616/", "bad value");
	refused("cpu//", "no terms");
	refused("cpu/event=1,,umask=1/", "empty term");
	refused("cpu/=1/", "bad term name ''");
	refused("/event=1/", "bad PMU name");
	refused("./event=1/", "bad PMU name '.'");
	refused("cpu/event=1", "no closing '/'");
	refused("cpu/event=1/u/", "no closing '/'");
	refused("a/b/c/d/", "unexpected '/'");

	is_int(parse1("foo/event=1/"), 0, "a missing PMU is not an error");
	snprintf(want, sizeof(want), "no PMU 'foo' in %s", sysfs);
	ok(!one.available && one.kind == PMU_EV_PMU && one.on_pmu, "foo/event=1/ is unavailable");
	is_str(one.reason, want, "reason names the PMU and the directory");
	ok(has(one.remedy, "ls ") && has(one.remedy, sysfs), "remedy says where to look");
	is_str(one.name, "foo/event=1/", "and the spec keeps its name");
	is_int(parse1("foo/anything_goes/k"), 0, "terms of a missing PMU cannot be checked");
	ok(!one.available && one.modifier && one.exclude_user, "but the modifier is still parsed");

	is_int(parse1("sw/event=1/"), 0, "a format term on a PMU with no format directory");
	ok(!one.available && has(one.reason, "has no format directory"), "is unavailable: %s", one.reason);
	is_int(parse1("odd/c3=1/"), 0, "a format in config3");
	ok(!one.available && has(one.reason, "a field pmu does not support"), "is unavailable: %s", one.reason);
	is_int(parse1("odd/junk=1/"), 0, "a malformed format file");
	ok(!one.available && has(one.reason, "not a format pmu understands"), "is unavailable: %s", one.reason);
	is_int(parse1("notype/event=1/"), 0, "a PMU without a type file");
	ok(!one.available && has(one.reason, "/notype has no type file"), "is unavailable: %s", one.reason);
	is_int(parse1("cpu/needs-param/"), 0, "a sysfs event with a '?' parameter");
	ok(!one.available && has(one.reason, "cannot use sysfs event"), "is unavailable: %s", one.reason);

	/* The default sysfs root is used when env.sysfs is NULL. */
	env.sysfs = NULL;
	is_int(parse1("no-such-pmu-here/event=1/"), 0, "default sysfs root");
	is_str(one.reason, "no PMU 'no-such-pmu-here' in /sys/bus/event_source/devices", "is /sys/bus/event_source/devices");
	env.sysfs = sysfs;
}

static void test_lists(void)
{
	static const char *const given[] = {
		"cycles", "cpu/event=0xc2,umask=0x4/", "instructions", "cpu/event=0x3c,any/u", "r1a8", "foo/a=1,b=2/",
	};
	struct pmu_evspec *v = NULL;
	size_t n = 0;
	char big[8192];
	size_t len = 0;
	int err;

	err = pmu_evlist_parse("cycles,cpu/event=0xc2,umask=0x4/,instructions,cpu/event=0x3c,any/u,r1a8,foo/a=1,b=2/",
			       &env, &v, &n);
	is_int(err, 0, "a list mixing PMU items with commas inside");
	is_int((long long)n, 6, "six items");
	for (size_t i = 0; i < n && i < PMU_ARRAY_SIZE(given); i++)
		is_str(v[i].given, given[i], "item split where it should be");
	if (n == 6)
		ok(v[1].config == 0x4c2 && v[3].config == (0x3c | 1u << 21) && v[3].modifier && !v[5].available,
		   "and each resolved");
	free(v);

	is_int(pmu_evlist_parse(" cycles , instructions\t", &env, &v, &n), 0, "blanks around items are trimmed");
	ok(n == 2 && !strcmp(v[0].given, "cycles") && !strcmp(v[1].given, "instructions"), "to the items");
	free(v);
	is_int(pmu_evlist_parse("cycles,cycles:u,cycles:k", &env, &v, &n), 0,
	       "one event with different privilege levels is no repeat");
	free(v);

	refused("", "empty event list");
	refused("cycles,,instructions", "empty item");
	refused("cycles,", "empty item");
	refused(",cycles", "empty item");
	refused("cyc les", "has a space");
	refused("cycles,cpu-cycles", "event 'cpu-cycles' repeats 'cycles'");
	refused("r4c2,r04c2", "event 'r04c2' repeats 'r4c2'");
	refused("cycles:uk,cycles:ku", "repeats");
	refused("cpu/event=0x3c/,cpu/cpu-cycles/", "event 'cpu/cpu-cycles/' repeats 'cpu/event=0x3c/'");
	refused("foo/x=1/,foo/x=1/", "repeats");
	refused("cycles,cyclez", "did you mean 'cycles'");

	memset(big, 'a', 300);
	big[300] = '\0';
	refused(big, "is longer than 255 characters");
	for (int i = 1; i <= PMU_EVLIST_MAX; i++)
		len += (size_t)snprintf(big + len, sizeof(big) - len, "%sr%x", i > 1 ? "," : "", i);
	is_int(pmu_evlist_parse(big, &env, &v, &n), 0, "64 events are allowed");
	ok(n == PMU_EVLIST_MAX && v[63].config == 64, "all 64 resolved");
	free(v);
	snprintf(big + len, sizeof(big) - len, ",r%x", PMU_EVLIST_MAX + 1);
	refused(big, "more than 64 events");
}

static void test_cpuid(void)
{
	static const struct { uint32_t eax; unsigned family, model, stepping; } dec[] = {
		{ 0x000306c3, 6, 0x3c, 3 },     /* Haswell */
		{ 0x00050654, 6, 0x55, 4 },     /* Skylake-SP */
		{ 0x00050657, 6, 0x55, 7 },     /* Cascade Lake */
		{ 0x000806f8, 6, 0x8f, 8 },     /* Sapphire Rapids */
		{ 0x000c06f2, 6, 0xcf, 2 },     /* Emerald Rapids */
		{ 0x00800f12, 0x17, 0x01, 2 },  /* Naples */
		{ 0x00830f10, 0x17, 0x31, 0 },  /* Rome */
		{ 0x00a00f11, 0x19, 0x01, 1 },  /* Milan */
		{ 0x00a10f11, 0x19, 0x11, 1 },  /* Genoa */
		{ 0x00a20f10, 0x19, 0x21, 0 },  /* Vermeer */
		{ 0x00000f29, 0xf, 0x2, 9 },    /* Pentium 4: family 0xf, no extension */
		{ 0x00010552, 5, 0x5, 2 },      /* family 5 ignores the extended model */
	};
	static const struct { const char *vendor; unsigned f, m, s; const char *table; } map[] = {
		{ "GenuineIntel", 6, 0x3c, 3, "hsw" },
		{ "GenuineIntel", 6, 0x3f, 2, "hsw_ep" },
		{ "GenuineIntel", 6, 0x3d, 4, "bdw" },
		{ "GenuineIntel", 6, 0x4f, 1, "bdw_ep" },
		{ "GenuineIntel", 6, 0x5e, 3, "skl" },
		{ "GenuineIntel", 6, 0x9e, 10, "skl" },
		{ "GenuineIntel", 6, 0x55, 4, "skx" },
		{ "GenuineIntel", 6, 0x55, 7, "clx" },
		{ "GenuineIntel", 6, 0x7e, 5, "icl" },
		{ "GenuineIntel", 6, 0x6a, 6, "icx" },
		{ "GenuineIntel", 6, 0x8f, 8, "spr" },
		{ "GenuineIntel", 6, 0xcf, 2, "spr" },
		{ "GenuineIntel", 6, 0x97, 2, "adl_glc" },
		{ "AuthenticAMD", 0x17, 0x01, 2, "amd64_fam17h_zen1" },
		{ "AuthenticAMD", 0x17, 0x08, 2, "amd64_fam17h_zen1" },
		{ "AuthenticAMD", 0x17, 0x31, 0, "amd64_fam17h_zen2" },
		{ "AuthenticAMD", 0x17, 0x71, 0, "amd64_fam17h_zen2" },
		{ "AuthenticAMD", 0x19, 0x01, 1, "amd64_fam19h_zen3" },
		{ "AuthenticAMD", 0x19, 0x21, 0, "amd64_fam19h_zen3" },
		{ "AuthenticAMD", 0x19, 0x50, 0, "amd64_fam19h_zen3" },
		{ "AuthenticAMD", 0x19, 0x11, 1, "amd64_fam19h_zen4" },
		{ "AuthenticAMD", 0x19, 0x61, 2, "amd64_fam19h_zen4" },
		{ "AuthenticAMD", 0x19, 0xa0, 0, "amd64_fam19h_zen4" },
		{ "GenuineIntel", 6, 0x1a, 5, NULL },   /* Nehalem: not in the table */
		{ "GenuineIntel", 0x19, 0x01, 1, NULL },
		{ "AuthenticAMD", 6, 0x55, 4, NULL },
		{ "AuthenticAMD", 0x15, 0x02, 0, NULL },
		{ "CentaurHauls", 6, 0x0f, 0, NULL },
	};
	static const struct {
		const char *vendor;
		unsigned f, mlo, mhi, slo, shi;
		const char *table;
	} rows[] = {
#define PMU_CPUTAB(vendor, family, mlo, mhi, slo, shi, table, what) { vendor, family, mlo, mhi, slo, shi, table },
#include "linux/perfev-cpu.def"
#undef PMU_CPUTAB
	};

	for (size_t i = 0; i < PMU_ARRAY_SIZE(dec); i++) {
		unsigned f, m, s;

		pmu_cpuid_decode(dec[i].eax, &f, &m, &s);
		if (!ok(f == dec[i].family && m == dec[i].model && s == dec[i].stepping,
			"CPUID eax 0x%08x is family 0x%x model 0x%x stepping %u", dec[i].eax, dec[i].family,
			dec[i].model, dec[i].stepping))
			printf("#   got family 0x%x model 0x%x stepping %u\n", f, m, s);
	}
	for (size_t i = 0; i < PMU_ARRAY_SIZE(map); i++) {
		const char *t = pmu_cpuid_pfm_table(map[i].vendor, map[i].f, map[i].m, map[i].s);

		if (!ok(map[i].table ? t && !strcmp(t, map[i].table) : !t, "%s family 0x%x model 0x%x stepping %u -> %s",
			map[i].vendor, map[i].f, map[i].m, map[i].s, map[i].table ? map[i].table : "none"))
			printf("#   got %s\n", t ? t : "none");
	}
	/* Every row's corners reach that row: no row hides another. */
	for (size_t i = 0; i < PMU_ARRAY_SIZE(rows); i++) {
		const char *lo = pmu_cpuid_pfm_table(rows[i].vendor, rows[i].f, rows[i].mlo, rows[i].slo);
		const char *hi = pmu_cpuid_pfm_table(rows[i].vendor, rows[i].f, rows[i].mhi, rows[i].shi);
		bool sane = rows[i].mlo <= rows[i].mhi && rows[i].slo <= rows[i].shi && rows[i].shi <= 15;

		for (size_t k = 0; k < i; k++)
			if (!strcmp(rows[i].vendor, rows[k].vendor) && rows[i].f == rows[k].f &&
			    rows[i].mlo <= rows[k].mhi && rows[k].mlo <= rows[i].mhi &&
			    rows[i].slo <= rows[k].shi && rows[k].slo <= rows[i].shi)
				sane = false;
		ok(sane && lo && hi && !strcmp(lo, rows[i].table) && !strcmp(hi, rows[i].table),
		   "perfev-cpu.def row %zu (%s 0x%x 0x%x-0x%x) is reachable and overlaps none", i, rows[i].vendor,
		   rows[i].f, rows[i].mlo, rows[i].mhi);
	}
}

static void test_midr(void)
{
	static const struct {
		uint64_t midr;
		unsigned impl, var, part, rev;
		const char *table;
	} m[] = {
		{ 0x410fd0c1, 0x41, 0, 0xd0c, 1, "arm_n1" },       /* Neoverse N1 r0p1 (Graviton2) */
		{ 0x411fd402, 0x41, 1, 0xd40, 2, "arm_v1" },       /* Neoverse V1 r1p2 */
		{ 0x410fd083, 0x41, 0, 0xd08, 3, "arm_ac57" },     /* Cortex-A72 r0p3 (Raspberry Pi 4) */
		{ 0x431f0af1, 0x43, 1, 0x0af, 1, "arm_thunderx2" },
		{ 0x000f0510, 0x00, 0, 0x051, 0, NULL },           /* QEMU -cpu max */
		{ 0x610f0220, 0x61, 0, 0x022, 0, NULL },           /* Apple M1: no libpfm4 table */
	};
	static const struct {
		unsigned impl, part;
		const char *table;
	} rows[] = {
#define PMU_MIDRTAB(implementer, part, table, what) { implementer, part, table },
#include "linux/perfev-midr.def"
#undef PMU_MIDRTAB
	};

	for (size_t i = 0; i < PMU_ARRAY_SIZE(m); i++) {
		unsigned impl, var, part, rev;
		const char *t;

		pmu_midr_decode(m[i].midr, &impl, &var, &part, &rev);
		ok(impl == m[i].impl && var == m[i].var && part == m[i].part && rev == m[i].rev,
		   "MIDR 0x%08llx is implementer 0x%x variant %u part 0x%x revision %u", (unsigned long long)m[i].midr,
		   m[i].impl, m[i].var, m[i].part, m[i].rev);
		t = pmu_midr_pfm_table(impl, part);
		ok(m[i].table ? t && !strcmp(t, m[i].table) : !t, "implementer 0x%x part 0x%x -> %s", impl, part,
		   m[i].table ? m[i].table : "none");
	}
	/* sorted by implementer and part, one row each */
	for (size_t i = 1; i < PMU_ARRAY_SIZE(rows); i++)
		ok(rows[i - 1].impl < rows[i].impl || (rows[i - 1].impl == rows[i].impl && rows[i - 1].part < rows[i].part),
		   "perfev-midr.def row %zu (0x%x 0x%03x) follows its predecessor", i, rows[i].impl, rows[i].part);
}

static void test_pfm_absent(void)
{
	struct pmu_evspec *v = NULL;
	size_t n = 0;
	const char *pfx = "libpfm4 is not installed (dlopen /nonexistent/libpfm.so.4: ";

	env.libpfm = "/nonexistent/libpfm.so.4";
	is_int(pmu_evlist_parse("r1a8,pfm:INST_RETIRED:ANY_P,cycles:u,pfm:cycles", &env, &v, &n), 0,
	       "pfm: items parse without libpfm4");
	is_int((long long)n, 4, "four items");
	if (n == 4) {
		ok(v[0].available && v[0].config == 0x1a8 && v[2].available && v[2].exclude_kernel,
		   "numeric and generic items still resolve");
		ok(!v[1].available && v[1].kind == PMU_EV_PFM && !strcmp(v[1].given, "pfm:INST_RETIRED:ANY_P") &&
		   !strcmp(v[1].name, "pfm:INST_RETIRED:ANY_P"), "the pfm: item is kept, unavailable");
		ok(!strncmp(v[1].reason, pfx, strlen(pfx)) && has(v[1].reason, "No such file or directory") &&
		   v[1].reason[strlen(v[1].reason) - 1] == ')', "reason: %s", v[1].reason);
		is_str(v[1].remedy, "apt-get install libpfm4, or give the event as a raw r<hex> selector", "remedy");
		ok(!v[3].available && !strcmp(v[3].reason, v[1].reason), "every pfm: item gets the reason");
	}
	free(v);
	refused("pfm:", "empty libpfm4 event name");

	/* The same through the environment, as the CLI tests do it. */
	env.libpfm = NULL;
	setenv("PMU_LIBPFM", "/nonexistent/libpfm.so.4", 1);
	is_int(parse1("pfm:cycles"), 0, "PMU_LIBPFM=/nonexistent");
	ok(!one.available && !strncmp(one.reason, pfx, strlen(pfx)), "makes libpfm4 absent: %s", one.reason);
	unsetenv("PMU_LIBPFM");
}

static void test_pfm_present(void)
{
	void *h = dlopen("libpfm.so.4", RTLD_NOW | RTLD_LOCAL);
	char vendor[13];
	unsigned f, m, s;
	uint64_t midr;
	const char *table = NULL, *known = " hsw hsw_ep bdw bdw_ep skl skx clx icl icx spr amd64_fam17h_zen1 "
					  "amd64_fam17h_zen2 amd64_fam19h_zen3 amd64_fam19h_zen4 ";
	char pad[64];

	if (!h) {
		skip("libpfm.so.4 is not installed: %s", dlerror());
		return;
	}
	dlclose(h);
	env.libpfm = NULL;

	is_int(parse1("pfm:perf::PERF_COUNT_HW_CPU_CYCLES"), 0, "pfm:perf::PERF_COUNT_HW_CPU_CYCLES");
	ok(one.available && one.kind == PMU_EV_PFM && one.type == PERF_TYPE_HARDWARE &&
	   one.config == PERF_COUNT_HW_CPU_CYCLES && one.on_pmu && !one.modifier && !one.exclude_user &&
	   !one.exclude_kernel, "is the hardware cycles event, user and kernel");
	ok(!strncmp(one.name, "pfm:perf::PERF_COUNT_HW_CPU_CYCLES:", 35), "named by libpfm4: %s", one.name);
	if (!one.available)
		printf("#   reason '%s'\n", one.reason);

	is_int(parse1("pfm:cycles:u"), 0, "pfm:cycles:u");
	ok(one.available && one.type == PERF_TYPE_HARDWARE && one.config == PERF_COUNT_HW_CPU_CYCLES &&
	   one.modifier && !one.exclude_user && one.exclude_kernel, "libpfm4's :u excludes the kernel (%s)", one.name);

	is_int(parse1("pfm:perf::PERF_COUNT_SW_TASK_CLOCK"), 0, "a software event through libpfm4");
	ok(one.available && one.type == PERF_TYPE_SOFTWARE && one.config == PERF_COUNT_SW_TASK_CLOCK &&
	   !one.on_pmu && !strcmp(one.unit, "ns"), "is the task clock: software, ns");

	is_int(parse1("pfm:no_such_event_xyz"), 0, "a name libpfm4 does not know is no list error");
	ok(!one.available && one.kind == PMU_EV_PFM && !strncmp(one.reason, "libpfm4 ", 8) &&
	   has(one.reason, "(core PMU table '") &&
	   has(one.reason, "cannot resolve 'no_such_event_xyz': event not found"), "reason: %s", one.reason);
	if (has(one.reason, "core PMU table 'none detected'") && has(one.reason, "has no libpfm4 table"))
		/* a CPU libpfm4 does not know and no table row names (QEMU's -cpu max) */
		ok(has(one.reason, "libpfm4 detected no core PMU, and ") && has(one.remedy, "LIBPFM_FORCE_PMU="),
		   "unknown CPU: the reason names it, the remedy LIBPFM_FORCE_PMU: %s", one.remedy);
	else
		is_str(one.remedy, "list this CPU's event names with showevtinfo (package libpfm4-tools), or give a "
		       "raw r<hex> selector", "remedy");
	ok(!has(one.reason, "libpfm4 4.0 "), "the version is the release, not the API's 4.0");
	ok(!getenv("LIBPFM_FORCE_PMU"), "LIBPFM_FORCE_PMU is not left in the environment");

	/* An Arm CPU's: INST_RETIRED is the Armv8 common event 0x08 in every
	 * libpfm4 Arm table, by libpfm4's detection, perfev-midr.def, or for
	 * a CPU neither knows (QEMU) a forced table. */
	if (pmu_midr_host(&midr) == 0) {
		char ident[96];
		const char *tab, *example;
		bool forced = pmu_cpu_pfm_table(ident, sizeof(ident), &tab, &example) == 0 && !tab;

		is_int(parse1("pfm:INST_RETIRED"), 0, "pfm:INST_RETIRED on this Arm CPU");
		printf("# %s\n", ident);
		if (forced) {
			ok(!one.available && has(one.reason, ident) && has(one.remedy, "LIBPFM_FORCE_PMU=arm_ac57"),
			   "%s has no table: unavailable, with the remedy (%s)", ident, one.reason);
			setenv("LIBPFM_FORCE_PMU", "arm_ac57", 1);
			is_int(parse1("pfm:INST_RETIRED"), 0, "pfm:INST_RETIRED with LIBPFM_FORCE_PMU=arm_ac57");
			unsetenv("LIBPFM_FORCE_PMU");
		}
		ok(one.available && one.type == PERF_TYPE_RAW && one.config == 0x08 && one.on_pmu,
		   "encodes as raw event 0x08 (%s)", one.available ? one.name : one.reason);
		return;
	}
	/* This CPU's own event names: through libpfm4's detection, or the
	 * CPUID table when it detects no core PMU (a VM). */
	if (pmu_cpuid_host(vendor, &f, &m, &s) == 0)
		table = pmu_cpuid_pfm_table(vendor, f, m, s);
	snprintf(pad, sizeof(pad), " %s ", table ? table : "-");
	if (!table || !strstr(known, pad)) {
		skip("CPUID %s family 0x%x model 0x%x maps to no table libpfm 4.13 has", vendor, f, m);
		return;
	}
	is_int(parse1(!strcmp(vendor, "GenuineIntel") ? "pfm:INST_RETIRED:ANY_P" : "pfm:RETIRED_INSTRUCTIONS"), 0,
	       "this CPU's instructions-retired event");
	ok(one.available && one.type == PERF_TYPE_RAW && (one.config & 0xff) == 0xc0 && one.on_pmu,
	   "encodes as raw event 0xc0 (%s)", one.available ? one.name : one.reason);
	if (one.note[0]) {
		char want[200];

		snprintf(want, sizeof(want), "libpfm4 detected no core PMU; using its '%s' table from CPUID %s family ",
			 table, vendor);
		ok(!strncmp(one.note, want, strlen(want)), "note: %s", one.note);
		ok(!strncmp(one.name, "pfm:", 4) && has(one.name, table), "named after the forced table: %s", one.name);
	}
	ok(!getenv("LIBPFM_FORCE_PMU"), "LIBPFM_FORCE_PMU is restored");
	is_int(parse1("pfm:cycles"), 0, "generic libpfm4 names");
	ok(one.available && one.type == PERF_TYPE_HARDWARE, "still resolve with a forced table");
}

int main(void)
{
	char root[] = "/tmp/t-perfev.XXXXXX";

	if (!mkdtemp(root)) {
		ok(0, "mkdtemp");
		return done_testing();
	}
	/* Hermetic: a forced libpfm4 table would hide its perf:: names. */
	unsetenv("PMU_LIBPFM");
	unsetenv("LIBPFM_FORCE_PMU");
	test_table();
	test_modifiers();
	test_raw();
	test_sysfs(root);
	test_lists();
	test_cpuid();
	test_midr();
	test_pfm_absent();
	test_pfm_present();
	pmu_rm_rf(AT_FDCWD, root);
	return done_testing();
}
