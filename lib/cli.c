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

void pmu_xml_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			fputc((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t' ? '?' : *s, f);
			break;
		}
	}
}
