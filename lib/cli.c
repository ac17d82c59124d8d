#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

int pmu_cli_finish(const char *prog, int code)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "%s: cannot write standard output: %s\n", prog, strerror(errno));
		return PMU_EXIT_USAGE;
	}
	return code;
}
