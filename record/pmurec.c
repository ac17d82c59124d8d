/*
 * pmurec: the recorder.  This version carries the bundle writer (lib/bag.c)
 * but not yet the launch barrier, cohort registry and collectors; until
 * they exist it says so and records nothing, rather than writing a bundle
 * that would claim evidence it does not hold.
 */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "spec.h"

static const char usage[] =
	"usage: pmurec -o BUNDLE -- COMMAND [ARG...]\n"
	"\n"
	"Run COMMAND and record what its processes do into BUNDLE (bundle spec " PMU_SPEC_VERSION ").\n"
	"\n"
	"This version (" PMU_VERSION ") cannot record yet: the launch barrier, cohort registry\n"
	"and collectors are not built. It exits with status 2 and writes nothing.\n"
	"pmuvalidate(1) and pmuanalyze(1) work on existing bundles.\n"
	"\n"
	"  -h, --help      show this help\n"
	"  -V, --version   show the version\n"
	"\n"
	"Exit status: 2 (recording not available in this version) or usage error.\n";

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "+hVo:", lo, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage, stdout);
			return pmu_cli_finish("pmurec", PMU_EXIT_OK);
		case 'V':
			printf("pmurec %s (spec %s, revision %s)\n", PMU_VERSION, PMU_SPEC_VERSION, PMU_REVISION);
			return pmu_cli_finish("pmurec", PMU_EXIT_OK);
		case 'o':
			break;
		default:
			fputs(usage, stderr);
			return PMU_EXIT_USAGE;
		}
	}
	fprintf(stderr, "pmurec: recording is not available in version %s; nothing was written\n",
		PMU_VERSION);
	return PMU_EXIT_USAGE;
}
