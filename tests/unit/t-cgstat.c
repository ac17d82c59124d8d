/* cgroup v2 file parsers, classification and delta on synthetic contents. */
#include <stdlib.h>
#include <string.h>

#include "cgstat.h"
#include "error.h"
#include "tap.h"

static int parse(enum pmu_cgfile f, const char *text, struct pmu_cgstat *st)
{
	return pmu_cgstat_parse(f, text, strlen(text), st);
}

static long long val(const struct pmu_cgstat *st, const char *key)
{
	const uint64_t *v = pmu_cgstat_get(st, key);

	return v ? (long long)*v : -1;
}

/* The row of the delta for file f and bundle key, or NULL. */
static const struct pmu_cgrow *row(const struct pmu_cgdelta *d, enum pmu_cgfile f, const char *key)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->rows[i].file == f && !strcmp(d->rows[i].key, key))
			return &d->rows[i];
	return NULL;
}

static void corrupt_case(enum pmu_cgfile f, const char *text, size_t len, const char *what)
{
	struct pmu_cgstat st;
	int err;

	pmu_cgstat_init(&st);
	err = pmu_cgstat_parse(f, text, len, &st);
	ok(err == PMU_ERR_CORRUPT && st.status == PMU_CGS_FAILED && st.n == 0 && st.reason[0],
	   "%s: %s is corrupt (%s)", pmu_cgfiles[f].name, what, st.reason);
	pmu_cgstat_release(&st);
}

static void test_flat(void)
{
	struct pmu_cgstat st;

	pmu_cgstat_init(&st);
	is_int(parse(PMU_CGF_CPU_STAT, "usage_usec 1234\nuser_usec 1000\nsystem_usec 234\nnice_usec 0\n", &st), 0,
	       "cpu.stat parses");
	ok(st.status == PMU_CGS_OK && st.n == 4, "four keys, OK");
	is_int(val(&st, "usage_usec"), 1234, "usage_usec");
	is_int(val(&st, "nice_usec"), 0, "a measured zero");
	is_int(val(&st, "nr_periods"), -1, "a missing key is absent");
	is_int(parse(PMU_CGF_CPU_STAT, "usage_usec 18446744073709551615", &st), 0, "2^64-1 without newline");
	ok(pmu_cgstat_get(&st, "usage_usec") && *pmu_cgstat_get(&st, "usage_usec") == UINT64_MAX, "kept exactly");
	is_int(parse(PMU_CGF_MEMORY_STAT, "", &st), 0, "an empty flat file has no keys");
	is_int((long long)st.n, 0, "no keys");
	pmu_cgstat_release(&st);

	corrupt_case(PMU_CGF_CPU_STAT, "usage_usec 18446744073709551616\n", 32, "2^64");
	corrupt_case(PMU_CGF_CPU_STAT, "usage_usec 99999999999999999999999\n", 35, "a huge number");
	corrupt_case(PMU_CGF_CPU_STAT, "usage_usec -1\n", 14, "a negative number");
	corrupt_case(PMU_CGF_CPU_STAT, "usage_usec\n", 11, "a key without value");
	corrupt_case(PMU_CGF_CPU_STAT, "usage_usec 12x\n", 15, "trailing garbage");
	corrupt_case(PMU_CGF_CPU_STAT, "usage_usec  12\n", 15, "two spaces");
	corrupt_case(PMU_CGF_CPU_STAT, "usage_usec \n", 12, "an empty value");
	corrupt_case(PMU_CGF_CPU_STAT, "a 1\n\nb 2\n", 9, "an empty line");
	corrupt_case(PMU_CGF_CPU_STAT, "a 1\na 2\n", 8, "a duplicate key");
	corrupt_case(PMU_CGF_CPU_STAT, "a 1\0b 2\n", 8, "a NUL byte");
	corrupt_case(PMU_CGF_CPU_STAT, " 1\n", 3, "an empty key");
	corrupt_case(PMU_CGF_MEMORY_STAT, "a=b 1\n", 6, "a key with '='");
	{
		char big[200];

		memset(big, 'k', 100);
		strcpy(big + 100, " 1\n");
		corrupt_case(PMU_CGF_MEMORY_STAT, big, strlen(big), "a 100-byte key");
	}
}

static void test_nested(void)
{
	struct pmu_cgstat st;

	pmu_cgstat_init(&st);
	is_int(parse(PMU_CGF_IO_STAT,
		     "8:0 rbytes=100 wbytes=200 rios=1 wios=2 dbytes=0 dios=0\n"
		     "259:0 rbytes=5 wbytes=7 rios=3 wios=4 dbytes=1 dios=1 cost.vrate=100.00 cost.usage=3\n",
		     &st),
	       0, "io.stat with two devices and iocost fields parses");
	is_int(val(&st, "rbytes"), 105, "rbytes summed over devices");
	is_int(val(&st, "wios"), 6, "wios summed");
	is_int(val(&st, "dios"), 1, "dios summed");
	is_int(val(&st, "cost.vrate"), -1, "per-device settings are dropped");
	is_int(parse(PMU_CGF_IO_STAT, "", &st), 0, "an empty io.stat (no I/O yet) parses");
	is_int((long long)st.n, 0, "with no keys");
	is_int(parse(PMU_CGF_IO_STAT, "8:0 rbytes=1 wbytes=2 \n", &st), 0, "a trailing space is tolerated");
	is_int(val(&st, "dbytes"), -1, "a key no device had is absent");
	is_int(parse(PMU_CGF_IO_STAT, "8:0\n", &st), 0, "a device line without stats");
	pmu_cgstat_release(&st);

	corrupt_case(PMU_CGF_IO_STAT, "sda rbytes=1\n", 13, "a device name that is not MAJ:MIN");
	corrupt_case(PMU_CGF_IO_STAT, "8: rbytes=1\n", 12, "a device without minor");
	corrupt_case(PMU_CGF_IO_STAT, "8:0 rbytes\n", 11, "a token without '='");
	corrupt_case(PMU_CGF_IO_STAT, "8:0 rbytes=\n", 12, "an empty value");
	corrupt_case(PMU_CGF_IO_STAT, "8:0 rbytes=1.5\n", 15, "a fraction in a summed key");
	corrupt_case(PMU_CGF_IO_STAT, "8:0 rbytes=1 rbytes=2\n", 22, "a key twice for one device");
	corrupt_case(PMU_CGF_IO_STAT,
		     "8:0 rbytes=18446744073709551615\n8:16 rbytes=1\n", 45, "a sum over devices beyond 2^64");
	corrupt_case(PMU_CGF_IO_STAT, "\n", 1, "an empty line");
}

static void test_pressure(void)
{
	struct pmu_cgstat st;

	pmu_cgstat_init(&st);
	is_int(parse(PMU_CGF_CPU_PRESSURE,
		     "some avg10=0.00 avg60=0.04 avg300=0.67 total=129011688\n"
		     "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		     &st),
	       0, "cpu.pressure parses");
	is_int(val(&st, "some_total_usec"), 129011688, "some total");
	is_int(val(&st, "full_total_usec"), 0, "full total");
	is_int(parse(PMU_CGF_CPU_PRESSURE, "some avg10=1.00 avg60=0.00 avg300=0.00 total=5\n", &st), 0,
	       "a kernel without a cpu 'full' line");
	is_int(val(&st, "full_total_usec"), -1, "full is absent, not zero");
	pmu_cgstat_release(&st);

	corrupt_case(PMU_CGF_IO_PRESSURE, "some avg10=0.00 avg60=0.00 avg300=0.00\n", 39, "a line without total");
	corrupt_case(PMU_CGF_IO_PRESSURE, "half avg10=0.00 total=1\n", 24, "neither some nor full");
	corrupt_case(PMU_CGF_IO_PRESSURE, "full avg10=0.00 total=1\n", 24, "no some line");
	corrupt_case(PMU_CGF_IO_PRESSURE, "some total=1\nsome total=2\n", 26, "two some lines");
	corrupt_case(PMU_CGF_IO_PRESSURE, "some total=abc\n", 15, "a total that is not a number");
	corrupt_case(PMU_CGF_IO_PRESSURE, "some total=1 total=2\n", 21, "total twice");
	corrupt_case(PMU_CGF_IO_PRESSURE, "some avg10\n", 11, "a token without '='");
	corrupt_case(PMU_CGF_IO_PRESSURE, "", 0, "an empty file");
}

static void test_single(void)
{
	struct pmu_cgstat st;

	pmu_cgstat_init(&st);
	is_int(parse(PMU_CGF_MEMORY_PEAK, "1048576\n", &st), 0, "memory.peak parses");
	is_int(val(&st, "peak"), 1048576, "as key 'peak'");
	is_int(parse(PMU_CGF_PIDS_PEAK, "3", &st), 0, "pids.peak without newline");
	pmu_cgstat_release(&st);
	corrupt_case(PMU_CGF_MEMORY_PEAK, "max\n", 4, "'max'");
	corrupt_case(PMU_CGF_MEMORY_PEAK, "", 0, "an empty file");
	corrupt_case(PMU_CGF_MEMORY_PEAK, "1\n2\n", 4, "two lines");
	corrupt_case(PMU_CGF_MEMORY_PEAK, " 1\n", 3, "a leading space");
}

static void test_classify(void)
{
	static const struct {
		enum pmu_cgfile f;
		const char *key;
		enum pmu_cgkind kind;
		const char *unit;
	} cases[] = {
		{ PMU_CGF_CPU_STAT, "usage_usec", PMU_CGK_COUNTER, "ns" },
		{ PMU_CGF_CPU_STAT, "core_sched.force_idle_usec", PMU_CGK_COUNTER, "ns" },
		{ PMU_CGF_CPU_STAT, "nr_throttled", PMU_CGK_COUNTER, "count" },
		{ PMU_CGF_IO_STAT, "wbytes", PMU_CGK_COUNTER, "bytes" },
		{ PMU_CGF_IO_STAT, "dios", PMU_CGK_COUNTER, "count" },
		{ PMU_CGF_MEMORY_STAT, "pgfault", PMU_CGK_COUNTER, "count" },
		{ PMU_CGF_MEMORY_STAT, "pgmajfault", PMU_CGK_COUNTER, "count" },
		{ PMU_CGF_MEMORY_STAT, "workingset_refault_file", PMU_CGK_COUNTER, "count" },
		{ PMU_CGF_MEMORY_STAT, "thp_fault_alloc", PMU_CGK_COUNTER, "count" },
		{ PMU_CGF_MEMORY_STAT, "zswpin", PMU_CGK_COUNTER, "count" },
		{ PMU_CGF_MEMORY_STAT, "swpout_zero", PMU_CGK_COUNTER, "count" },
		{ PMU_CGF_MEMORY_STAT, "anon", PMU_CGK_SKIP, NULL },
		{ PMU_CGF_MEMORY_STAT, "file", PMU_CGK_SKIP, NULL },
		{ PMU_CGF_MEMORY_STAT, "anon_thp", PMU_CGK_SKIP, NULL },
		{ PMU_CGF_MEMORY_STAT, "pagetables", PMU_CGK_SKIP, NULL },
		{ PMU_CGF_MEMORY_STAT, "zswapped", PMU_CGK_SKIP, NULL },
		{ PMU_CGF_MEMORY_STAT, "swapcached", PMU_CGK_SKIP, NULL },
		{ PMU_CGF_MEMORY_STAT, "some_future_amount", PMU_CGK_SKIP, NULL },
		{ PMU_CGF_MEMORY_PEAK, "peak", PMU_CGK_GAUGE, "bytes" },
		{ PMU_CGF_PIDS_PEAK, "peak", PMU_CGK_GAUGE, "count" },
		{ PMU_CGF_MEMORY_PRESSURE, "full_total_usec", PMU_CGK_COUNTER, "ns" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *unit = "x";
		enum pmu_cgkind k = pmu_cgstat_classify(cases[i].f, cases[i].key, &unit);

		ok(k == cases[i].kind && (unit == cases[i].unit || (unit && cases[i].unit && !strcmp(unit, cases[i].unit))),
		   "%s %s is a %s in %s", pmu_cgfiles[cases[i].f].name, cases[i].key, pmu_cgkind_name(cases[i].kind),
		   cases[i].unit ? cases[i].unit : "(left out)");
	}
}

static void snap(struct pmu_cgsnap *s, enum pmu_cgfile f, const char *text)
{
	if (pmu_cgstat_parse(f, text, strlen(text), &s->f[f]))
		ok(0, "fixture '%s' parses: %s", text, pmu_error_detail());
}

static void test_delta(void)
{
	struct pmu_cgsnap a, b;
	struct pmu_cgdelta d;
	const struct pmu_cgrow *r;

	pmu_cgsnap_init(&a);
	pmu_cgsnap_init(&b);
	pmu_cgdelta_init(&d);
	snap(&a, PMU_CGF_CPU_STAT, "usage_usec 100\nuser_usec 50\nsystem_usec 900\nnr_periods 3\n");
	snap(&b, PMU_CGF_CPU_STAT, "usage_usec 350\nuser_usec 50\nsystem_usec 10\nnice_usec 5\n");
	snap(&a, PMU_CGF_IO_STAT, "");
	snap(&b, PMU_CGF_IO_STAT, "8:0 rbytes=4096 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n");
	snap(&a, PMU_CGF_MEMORY_STAT, "anon 8192\npgfault 10\npgmajfault 1\n");
	snap(&b, PMU_CGF_MEMORY_STAT, "anon 0\npgfault 25\npgmajfault 1\n");
	snap(&a, PMU_CGF_MEMORY_PEAK, "100\n");
	snap(&b, PMU_CGF_MEMORY_PEAK, "65536\n");
	pmu_cgstat_set(&a.f[PMU_CGF_PIDS_PEAK], PMU_CGS_UNAVAILABLE, "a remedy", "the pids controller is not enabled");
	pmu_cgstat_set(&b.f[PMU_CGF_PIDS_PEAK], PMU_CGS_UNAVAILABLE, "a remedy", "the pids controller is not enabled");
	snap(&a, PMU_CGF_CPU_PRESSURE, "some avg10=0.00 avg60=0.00 avg300=0.00 total=9223372036854775\n");
	snap(&b, PMU_CGF_CPU_PRESSURE, "some avg10=0.00 avg60=0.00 avg300=0.00 total=18446744073709551615\n");
	snap(&b, PMU_CGF_IO_PRESSURE, "some avg10=0.00 avg60=0.00 avg300=0.00 total=1\n");
	/* memory.pressure: read at neither */

	is_int(pmu_cgstat_delta(&a, &b, &d), 0, "delta");
	ok(d.files[PMU_CGF_CPU_STAT].status == PMU_CGS_OK, "cpu.stat ok");
	r = row(&d, PMU_CGF_CPU_STAT, "usage_ns");
	ok(r && r->ok && r->value == 250000 && !strcmp(r->unit, "ns") && r->kind == PMU_CGK_COUNTER &&
	   !strcmp(r->src, "usage_usec"), "usage_usec 100 -> 350 is usage_ns 250000");
	r = row(&d, PMU_CGF_CPU_STAT, "user_ns");
	ok(r && r->ok && r->value == 0, "an unchanged counter is a measured 0");
	r = row(&d, PMU_CGF_CPU_STAT, "system_ns");
	ok(r && !r->ok && strstr(r->reason, "backwards from 900 to 10"), "a counter that went backwards fails: %s",
	   r ? r->reason : "no row");
	r = row(&d, PMU_CGF_CPU_STAT, "nice_ns");
	ok(r && !r->ok && strstr(r->reason, "missing at start"), "a key missing at start fails");
	r = row(&d, PMU_CGF_CPU_STAT, "nr_periods");
	ok(r && !r->ok && strstr(r->reason, "missing at end"), "a key missing at end fails");
	r = row(&d, PMU_CGF_IO_STAT, "rbytes");
	ok(r && r->ok && r->value == 4096 && !strcmp(r->unit, "bytes"), "io.stat absent at start counts from 0");
	r = row(&d, PMU_CGF_IO_STAT, "rios");
	ok(r && r->ok && r->value == 1 && !strcmp(r->unit, "count"), "rios is a count");
	ok(!row(&d, PMU_CGF_MEMORY_STAT, "anon"), "memory.stat amounts are left out");
	r = row(&d, PMU_CGF_MEMORY_STAT, "pgfault");
	ok(r && r->ok && r->value == 15 && !strcmp(r->unit, "count"), "pgfault 10 -> 25 is 15");
	r = row(&d, PMU_CGF_MEMORY_PEAK, "peak");
	ok(r && r->ok && r->value == 65536 && r->kind == PMU_CGK_GAUGE, "memory.peak is the end value, a gauge");
	ok(d.files[PMU_CGF_PIDS_PEAK].status == PMU_CGS_UNAVAILABLE &&
	   !strcmp(d.files[PMU_CGF_PIDS_PEAK].reason, "the pids controller is not enabled") &&
	   d.files[PMU_CGF_PIDS_PEAK].remedy && !row(&d, PMU_CGF_PIDS_PEAK, "peak"),
	   "an unavailable file keeps its reason and remedy and has no rows");
	r = row(&d, PMU_CGF_CPU_PRESSURE, "some_total_ns");
	ok(r && !r->ok && strstr(r->reason, "does not fit"), "a delta beyond 2^63-1 ns fails: %s",
	   r ? r->reason : "no row");
	ok(d.files[PMU_CGF_IO_PRESSURE].status == PMU_CGS_FAILED && strstr(d.files[PMU_CGF_IO_PRESSURE].reason, "start"),
	   "a file read only at the end fails");
	ok(d.files[PMU_CGF_MEMORY_PRESSURE].status == PMU_CGS_NOT_READ, "a file read at neither is not reported");
	for (size_t i = 0; i < d.n; i++)
		if (d.rows[i].ok && d.rows[i].value > (uint64_t)INT64_MAX)
			ok(0, "row %s exceeds 2^63-1", d.rows[i].key);

	/* the largest that fits, and one more */
	pmu_cgsnap_release(&a);
	pmu_cgsnap_release(&b);
	snap(&a, PMU_CGF_CPU_STAT, "nr_bursts 0\nburst_usec 0\n");
	snap(&b, PMU_CGF_CPU_STAT, "nr_bursts 9223372036854775808\nburst_usec 9223372036854775\n");
	is_int(pmu_cgstat_delta(&a, &b, &d), 0, "delta again (d is reused)");
	r = row(&d, PMU_CGF_CPU_STAT, "nr_bursts");
	ok(r && !r->ok, "a count of 2^63 does not fit a bundle integer");
	r = row(&d, PMU_CGF_CPU_STAT, "burst_ns");
	ok(r && r->ok && r->value == 9223372036854775000ull, "the largest whole us that fits in ns");
	ok(d.files[PMU_CGF_IO_STAT].status == PMU_CGS_NOT_READ, "the reused delta was cleared");

	/* a file that failed at start stays failed */
	pmu_cgsnap_release(&a);
	pmu_cgsnap_release(&b);
	corrupt_case(PMU_CGF_CPU_STAT, "x\n", 2, "a line without value");
	pmu_cgstat_parse(PMU_CGF_CPU_STAT, "x\n", 2, &a.f[PMU_CGF_CPU_STAT]);
	snap(&b, PMU_CGF_CPU_STAT, "usage_usec 1\n");
	is_int(pmu_cgstat_delta(&a, &b, &d), 0, "delta with a failed start");
	ok(d.files[PMU_CGF_CPU_STAT].status == PMU_CGS_FAILED && strstr(d.files[PMU_CGF_CPU_STAT].reason, "malformed") &&
	   d.n == 0, "the file is failed with the parser's reason: %s", d.files[PMU_CGF_CPU_STAT].reason);

	pmu_cgsnap_release(&a);
	pmu_cgsnap_release(&b);
	pmu_cgdelta_release(&d);
}

static void test_where(void)
{
	char out[64], mount[256], dir[512];
	const char *hybrid = "9:name=systemd:/\n4:memory:/process_api/a0\n1:cpu:/\n0::/\n";
	const char *mi =
		"22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
		"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw\n"
		"42 31 0:39 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n";
	const char *ns = "50 1 0:38 /.. /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
	const char *bind =
		"60 1 0:38 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n"
		"61 1 0:38 /user.slice /mnt/my\\040cg rw - cgroup2 cgroup2 rw\n";

	is_int(pmu_cgstat_v2_path(hybrid, strlen(hybrid), out, sizeof(out)), 0, "the 0:: line of a hybrid host");
	is_str(out, "/", "is the root");
	is_int(pmu_cgstat_v2_path("0::/user.slice/user-0.slice/session-2.scope\n", 44, out, sizeof(out)), 0,
	       "a systemd session");
	is_str(out, "/user.slice/user-0.slice/session-2.scope", "path");
	is_int(pmu_cgstat_v2_path("1:cpu:/\n", 8, out, sizeof(out)), PMU_ERR_NOTFOUND, "no 0:: line");
	is_int(pmu_cgstat_v2_path("0::x\n", 5, out, sizeof(out)), PMU_ERR_CORRUPT, "a relative path");
	is_int(pmu_cgstat_v2_path("0::/aaaaaaaa\n", 13, out, 5), PMU_ERR_LIMIT, "a path too long for out");

	is_int(pmu_cgstat_v2_dir(mi, strlen(mi), "/", mount, sizeof(mount), dir, sizeof(dir)), 0, "hybrid mount");
	is_str(mount, "/sys/fs/cgroup/unified", "mount point");
	is_str(dir, "/sys/fs/cgroup/unified", "the root cgroup is the mount point");
	is_int(pmu_cgstat_v2_dir(mi, strlen(mi), "/a/b", mount, sizeof(mount), dir, sizeof(dir)), 0, "a nested cgroup");
	is_str(dir, "/sys/fs/cgroup/unified/a/b", "below the mount point");
	is_int(pmu_cgstat_v2_dir(ns, strlen(ns), "/", mount, sizeof(mount), dir, sizeof(dir)), PMU_ERR_NOTFOUND,
	       "a mount of another cgroup namespace does not reach it");
	is_int(pmu_cgstat_v2_dir(bind, strlen(bind), "/user.slice/x", mount, sizeof(mount), dir, sizeof(dir)), 0,
	       "two mounts");
	is_str(dir, "/mnt/my cg/x", "the longest root wins, escapes decoded");
	is_int(pmu_cgstat_v2_dir(bind, strlen(bind), "/user.slicex", mount, sizeof(mount), dir, sizeof(dir)), 0,
	       "a name that only starts like a root");
	is_str(dir, "/sys/fs/cgroup/user.slicex", "is not below it");
	is_int(pmu_cgstat_v2_dir("41 31 0:38 / /x\n", 16, "/", mount, sizeof(mount), dir, sizeof(dir)),
	       PMU_ERR_CORRUPT, "a truncated mountinfo line");
	is_int(pmu_cgstat_v2_dir(mi, strlen(mi), "/", mount, 4, dir, sizeof(dir)), PMU_ERR_LIMIT, "a mount point too long");

	ok(pmu_cgstat_has_word("cpu io memory\n", 14, "memory"), "has_word finds the last word");
	ok(!pmu_cgstat_has_word("cpuset io\n", 10, "cpu"), "and not a prefix");
	ok(!pmu_cgstat_has_word("", 0, "io"), "nor anything in nothing");
}

/* Random and mutated bytes: every parser answers, none crashes. */
static void test_noise(void)
{
	static const char *seeds[] = {
		"usage_usec 1234\nuser_usec 1000\n",
		"8:0 rbytes=100 wbytes=200 rios=1 wios=2 dbytes=0 dios=0\n",
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		"12345\n",
	};
	unsigned long long x = 88172645463325252ull;
	char buf[256], out[64], m[64], dir[64];
	int bad = 0;

	for (int i = 0; i < 20000; i++) {
		const char *seed = seeds[i % 4];
		size_t n = strlen(seed);
		struct pmu_cgstat st;
		int err;

		memcpy(buf, seed, n);
		for (int k = 0; k < 3; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			buf[x % n] = (char)(x >> 32);
		}
		if (i % 7 == 0)
			n = x % n;
		pmu_cgstat_init(&st);
		for (int f = 0; f < PMU_CGF_COUNT_; f++) {
			err = pmu_cgstat_parse((enum pmu_cgfile)f, buf, n, &st);
			bad += err && err != PMU_ERR_CORRUPT;
			bad += !err && st.status != PMU_CGS_OK;
			bad += err && (st.status != PMU_CGS_FAILED || st.n);
		}
		pmu_cgstat_release(&st);
		pmu_cgstat_v2_path(buf, n, out, sizeof(out));
		pmu_cgstat_v2_dir(buf, n, "/a", m, sizeof(m), dir, sizeof(dir));
	}
	is_int(bad, 0, "20000 mutated inputs: only OK or CORRUPT, never a half-filled result");
}

int main(void)
{
	test_flat();
	test_nested();
	test_pressure();
	test_single();
	test_classify();
	test_delta();
	test_where();
	test_noise();
	return done_testing();
}
