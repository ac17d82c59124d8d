/* The core PMUs (backends/linux/corepmu.c) by perf(1)'s rule over a
 * synthetic sysfs directory: the one named cpu (x86), any with a cpus file
 * (x86 hybrid, arm64's armv8_pmuv3), never an uncore PMU (a cpumask file)
 * or a software one; sorted, cut at a name when the buffer is short; and
 * on this host, every name returned is a directory of the real sysfs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../tap.h"
#include "linux/corepmu.h"

static char root[64];

static void mk(const char *pmu, const char *file)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", root, pmu);
	mkdir(p, 0755);
	if (file) {
		FILE *f;

		snprintf(p, sizeof(p), "%s/%s/%s", root, pmu, file);
		if ((f = fopen(p, "w"))) {
			fputs("0-1\n", f);
			fclose(f);
		}
	}
}

int main(void)
{
	char buf[256], small[16];
	int n;

	snprintf(root, sizeof(root), "/tmp/pmu-t-corepmu.XXXXXX");
	if (!mkdtemp(root))
		return perror("mkdtemp"), 1;

	n = pmu_core_pmus(root, buf, sizeof(buf));
	ok(n == 0 && !strcmp(buf, ""), "an empty sysfs: no core PMU");

	mk("software", "type");
	mk("tracepoint", "type");
	mk("arm_cmn_0", "cpumask");
	n = pmu_core_pmus(root, buf, sizeof(buf));
	ok(n == 0 && !strcmp(buf, ""), "software, tracepoint and an uncore PMU (cpumask) are not core PMUs");

	mk("armv8_pmuv3", "cpus");
	n = pmu_core_pmus(root, buf, sizeof(buf));
	ok(n == 1 && !strcmp(buf, "armv8_pmuv3"), "arm64: armv8_pmuv3 with its cpus file (got %d '%s')", n, buf);

	mk("cpu", NULL);
	mk("cpu_core", "cpus");
	mk("cpu_atom", "cpus");
	n = pmu_core_pmus(root, buf, sizeof(buf));
	ok(n == 4 && !strcmp(buf, "armv8_pmuv3 cpu cpu_atom cpu_core"),
	   "x86: cpu by name, hybrid cpu_core and cpu_atom by their cpus files, sorted (got %d '%s')", n, buf);

	n = pmu_core_pmus(root, small, sizeof(small));
	ok(n == 4 && !strcmp(small, "armv8_pmuv3 cpu"), "a short buffer is cut at a name, the count is whole (got '%s')",
	   small);

	n = pmu_core_pmus("/nonexistent/pmu-t-corepmu", buf, sizeof(buf));
	ok(n == 0 && !buf[0], "an absent directory: none");

	/* the host's own: whatever it has is a real directory */
	n = pmu_core_pmus(NULL, buf, sizeof(buf));
	{
		int real = 1;
		char *save = NULL, path[512];

		for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
			snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s", t);
			real &= access(path, F_OK) == 0;
		}
		ok(real, "this host: %d core PMU(s), each under /sys/bus/event_source/devices", n);
	}

	snprintf(buf, sizeof(buf), "rm -rf '%s'", root);
	if (system(buf) != 0)
		printf("# could not remove %s\n", root);
	return done_testing();
}
