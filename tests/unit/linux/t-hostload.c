/* The host's CPU time from /proc/stat (backends/linux/hostload.c): the
 * aggregate line turned into ns, the CPUs counted, and untrusted text cut
 * anywhere or malformed refused as PMU_ERR_CORRUPT, never read past. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "error.h"
#include "linux/hostload.h"

static const char stat2[] = "cpu  100 20 30 400 5 6 7 8 9 10\n"
			    "cpu0 50 10 15 200 2 3 3 4 4 5\n"
			    "cpu1 50 10 15 200 3 3 4 4 5 5\n"
			    "intr 12345 0 1 2\n"
			    "ctxt 999\n";

static int parse(const char *text, size_t len, long hz, struct pmu_host_cpu *s)
{
	/* an exact-size copy, so that a read past len is ASan's to see */
	char *copy = malloc(len ? len : 1);
	int err;

	memcpy(copy, text, len);
	memset(s, 0, sizeof(*s));
	err = pmu_procstat_parse(copy, len, hz, s);
	free(copy);
	return err;
}

int main(void)
{
	struct pmu_host_cpu s;
	size_t n = strlen(stat2);
	int bad = 0;

	is_int(parse(stat2, n, 100, &s), 0, "a /proc/stat of two CPUs parses");
	is_int((long long)s.busy_ns, (100 + 20 + 30 + 6 + 7) * 10000000ll, "busy is user+nice+system+irq+softirq (guest inside user)");
	is_int((long long)s.idle_ns, 400 * 10000000ll, "idle in ns at 100 ticks/s");
	is_int((long long)s.iowait_ns, 5 * 10000000ll, "iowait in ns");
	is_int((long long)s.steal_ns, 8 * 10000000ll, "steal in ns");
	is_int((long long)s.resolution_ns, 10000000, "the resolution is one tick");
	is_int(s.cpus, 2, "the cpuN lines are counted");
	is_int(parse(stat2, n, 1000, &s), 0, "at 1000 ticks/s");
	is_int((long long)s.resolution_ns, 1000000, "the resolution follows the tick rate");
	is_int(parse("cpu  1 2 3 4 5 6 7\ncpu0 1 2 3 4 5 6 7\n", 38, 100, &s), PMU_ERR_CORRUPT,
	       "a cpu line without steal (before 2.6.11) is refused, not read as no steal");
	is_int(parse("cpu  1 2 3 4 5 6 7 8 x\ncpu0 1\n", 30, 100, &s), PMU_ERR_CORRUPT, "a stray word is refused");
	is_int(parse("cpu  99999999999999999999 2 3 4 5 6 7 8\ncpu0 1\n", 47, 100, &s), PMU_ERR_CORRUPT,
	       "a count past 2^64 is refused");
	is_int(parse("cpu  1 2 3 4 5 6 7 8\nintr 1\n", 29, 100, &s), PMU_ERR_CORRUPT, "no cpuN line is refused");
	is_int(parse("cpu0 1 2 3 4 5 6 7 8\n", 21, 100, &s), PMU_ERR_CORRUPT, "no aggregate line is refused");
	is_int(parse(stat2, n, 0, &s), PMU_ERR_CORRUPT, "a tick rate of 0 is refused");
	ok(strstr(s.reason, "tick rate") != NULL, "the refusal says why in reason: %s", s.reason);
	pmu_error(PMU_ERR_IO, "the recorder's own error");
	parse("cpu0 1\n", 7, 100, &s);
	is_str(pmu_error_detail(), "the recorder's own error", "a refusal leaves pmu_error_detail() alone");
	is_int(pmu_host_cpu_read(&s), 0, "this host's /proc/stat is read");
	ok(s.ok && s.cpus > 0 && s.resolution_ns > 0 && s.t_ns > 0 && !strcmp(s.source, "/proc/stat"),
	   "it is ok, with %u CPUs, a resolution of %llu ns, and the time it was read", s.cpus,
	   (unsigned long long)s.resolution_ns);
	/* every prefix: parsed when cut at the start of a line after a cpuN
	 * line or inside the first line past them, refused anywhere else
	 * (inside a cpu line, or before any cpuN line); never a read past
	 * the end */
	for (size_t k = 0; k < n; k++) {
		size_t l1 = (size_t)(strchr(stat2, '\n') - stat2) + 1;
		size_t l2 = l1 + (size_t)(strchr(stat2 + l1, '\n') - (stat2 + l1)) + 1;
		size_t l3 = (size_t)(strstr(stat2, "intr") - stat2);
		bool whole = k == l2 || k >= l3;
		int err = parse(stat2, k, 100, &s);

		if (whole ? err != 0 || s.cpus != (k == l2 ? 1u : 2u) : err != PMU_ERR_CORRUPT) {
			printf("# prefix of %zu bytes: %d\n", k, err);
			bad++;
		}
	}
	is_int(bad, 0, "every prefix of the file is refused inside a cpu line and parsed at a line's start after it");
	printf("1..%d\n", tap_n);
	return tap_failed != 0;
}
