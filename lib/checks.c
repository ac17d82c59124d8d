#include <string.h>

#include "checks.h"

#define ERROR PMU_SEV_ERROR
#define WARNING PMU_SEV_WARNING
const struct pmu_check_info pmu_checks[PMU_CHECK_COUNT_] = {
#define PMU_CHECK(sym, id, sev, desc) [PMU_CHECK_##sym] = { id, sev, desc },
#include "checks.def"
#undef PMU_CHECK
};
#undef ERROR
#undef WARNING

int pmu_check_lookup(const char *id)
{
	for (int i = 0; i < PMU_CHECK_COUNT_; i++)
		if (!strcmp(pmu_checks[i].id, id))
			return i;
	return -1;
}

const char *pmu_severity_name(enum pmu_severity s)
{
	switch (s) {
	case PMU_SEV_ERROR:
		return "error";
	case PMU_SEV_WARNING:
		return "warning";
	}
	return "error";
}
