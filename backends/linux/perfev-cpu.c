/*
 * CPUID to libpfm4's core-PMU table (perfev-cpu.def), for hosts where
 * libpfm4's own detection finds no core PMU.
 */
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "error.h"
#include "perfev-cpu.h"
#include "util.h"

struct cputab {
	const char *vendor;
	unsigned family, model_lo, model_hi, stepping_lo, stepping_hi;
	const char *table, *what;
};

static const struct cputab cputable[] = {
#define PMU_CPUTAB(vendor, family, mlo, mhi, slo, shi, table, what) \
	{ vendor, family, mlo, mhi, slo, shi, table, what },
#include "perfev-cpu.def"
#undef PMU_CPUTAB
};

void pmu_cpuid_decode(uint32_t eax, unsigned *family, unsigned *model, unsigned *stepping)
{
	unsigned base_family = (eax >> 8) & 0xf, ext_family = (eax >> 20) & 0xff;
	unsigned base_model = (eax >> 4) & 0xf, ext_model = (eax >> 16) & 0xf;

	*stepping = eax & 0xf;
	*family = base_family == 0xf ? base_family + ext_family : base_family;
	*model = base_family == 6 || base_family == 0xf ? (ext_model << 4) + base_model : base_model;
}

const char *pmu_cpuid_pfm_table(const char *vendor, unsigned family, unsigned model, unsigned stepping)
{
	for (size_t i = 0; i < PMU_ARRAY_SIZE(cputable); i++) {
		const struct cputab *r = &cputable[i];

		if (!strcmp(r->vendor, vendor) && r->family == family && model >= r->model_lo &&
		    model <= r->model_hi && stepping >= r->stepping_lo && stepping <= r->stepping_hi)
			return r->table;
	}
	return NULL;
}

int pmu_cpuid_host(char vendor[13], unsigned *family, unsigned *model, unsigned *stepping)
{
	vendor[0] = '\0';
	*family = *model = *stepping = 0;
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;

	if (!__get_cpuid(0, &a, &b, &c, &d) || a < 1)
		return pmu_error(PMU_ERR_UNSUPPORTED, "CPUID leaf 1 is not available");
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	vendor[12] = '\0';
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return pmu_error(PMU_ERR_UNSUPPORTED, "CPUID leaf 1 is not available");
	pmu_cpuid_decode(a, family, model, stepping);
	return 0;
#else
	return pmu_error(PMU_ERR_UNSUPPORTED, "CPUID is x86 only");
#endif
}
