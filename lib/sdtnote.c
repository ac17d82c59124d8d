/* Placeholder until the probes collector lands (issue 18): see sdtnote.h. */
#include "sdtnote.h"

int pmu_sdt_list_main(const char *binary, bool json, FILE *out, FILE *err)
{
	(void)json, (void)out;
	fprintf(err, "pmurec: --list-probes %s: not built yet\n", binary);
	return 125;
}
