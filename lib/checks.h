#ifndef PMU_CHECKS_H
#define PMU_CHECKS_H

enum pmu_severity { PMU_SEV_ERROR, PMU_SEV_WARNING };

enum pmu_check {
#define PMU_CHECK(sym, id, sev, desc) PMU_CHECK_##sym,
#include "checks.def"
#undef PMU_CHECK
	PMU_CHECK_COUNT_
};

struct pmu_check_info {
	const char *id;
	enum pmu_severity severity;
	const char *description;
};

extern const struct pmu_check_info pmu_checks[PMU_CHECK_COUNT_];

/* Index of the check with this ID, or -1. */
int pmu_check_lookup(const char *id);
const char *pmu_severity_name(enum pmu_severity s);

#endif
