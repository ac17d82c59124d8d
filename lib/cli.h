#ifndef PMU_CLI_H
#define PMU_CLI_H

#include <stdio.h>

/*
 * Exit codes shared by the tools (documented in each man page).
 * pmuanalyze adds 3 (regression) and 4 (incomparable) when those exist.
 */
enum pmu_exit {
	PMU_EXIT_OK = 0,
	PMU_EXIT_INVALID = 1,  /* a bundle is invalid */
	PMU_EXIT_USAGE = 2,    /* usage or I/O error */
};

/* Flush and check stdout, so that writing to a full disk or a closed pipe
 * fails loudly; returns the exit code to use. */
int pmu_cli_finish(const char *prog, int code);

/* Text for XML or HTML (JUnit reports, the HTML report): the five markup
 * characters as entities, control characters other than tab and newline
 * (not allowed in XML; a terminal escape must not survive) as '?'. */
void pmu_xml_text(FILE *f, const char *s);

#endif
