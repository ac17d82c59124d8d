/*
 * CPUID (perfev-cpu.def) and MIDR_EL1 (perfev-midr.def) to libpfm4's
 * core-PMU table, for hosts where libpfm4's own detection finds no core PMU.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
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

struct midrtab {
	unsigned implementer, part;
	const char *table, *what;
};

static const struct midrtab midrtable[] = {
#define PMU_MIDRTAB(implementer, part, table, what) { implementer, part, table, what },
#include "perfev-midr.def"
#undef PMU_MIDRTAB
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

void pmu_midr_decode(uint64_t midr, unsigned *implementer, unsigned *variant, unsigned *part, unsigned *revision)
{
	*implementer = (unsigned)(midr >> 24) & 0xff;
	*variant = (unsigned)(midr >> 20) & 0xf;
	*part = (unsigned)(midr >> 4) & 0xfff;
	*revision = (unsigned)midr & 0xf;
}

const char *pmu_midr_pfm_table(unsigned implementer, unsigned part)
{
	for (size_t i = 0; i < PMU_ARRAY_SIZE(midrtable); i++)
		if (midrtable[i].implementer == implementer && midrtable[i].part == part)
			return midrtable[i].table;
	return NULL;
}

/* "CPU implementer\t: 0x41" and its siblings; the first of each (CPU 0). */
static int cpuinfo_field(const char *text, const char *key, unsigned *v)
{
	size_t k = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *p = l + k;
		char *end;

		if (strncmp(l, key, k) || (*p != ' ' && *p != '\t' && *p != ':'))
			continue;
		p += strspn(p, " \t");
		if (*p++ != ':')
			continue;
		*v = (unsigned)strtoul(p, &end, 0);
		return end == p ? -1 : 0;
	}
	return -1;
}

int pmu_midr_host(uint64_t *midr)
{
	unsigned impl, var, part, rev;
	char *text = NULL, *end;
	int err;

	*midr = 0;
	err = pmu_read_file(AT_FDCWD, "/sys/devices/system/cpu/cpu0/regs/identification/midr_el1", 64, &text, NULL);
	if (!err) {
		*midr = strtoull(text, &end, 16);
		err = end == text ? -1 : 0;
		free(text);
		if (!err)
			return 0;
	}
	text = NULL;
	if (pmu_read_file(AT_FDCWD, "/proc/cpuinfo", 1 << 20, &text, NULL) == 0 &&
	    !cpuinfo_field(text, "CPU implementer", &impl) && !cpuinfo_field(text, "CPU part", &part)) {
		if (cpuinfo_field(text, "CPU variant", &var))
			var = 0;
		if (cpuinfo_field(text, "CPU revision", &rev))
			rev = 0;
		free(text);
		*midr = (uint64_t)(impl & 0xff) << 24 | (uint64_t)(var & 0xf) << 20 | 0xfu << 16 |
			(uint64_t)(part & 0xfff) << 4 | (rev & 0xf);
		return 0;
	}
	free(text);
	return pmu_error(PMU_ERR_UNSUPPORTED, "no MIDR_EL1 in sysfs or /proc/cpuinfo (not an Arm host)");
}

int pmu_cpu_pfm_table(char *ident, size_t n, const char **table, const char **example)
{
	char vendor[13];
	unsigned a, b, c, d;
	uint64_t midr;

	ident[0] = '\0';
	*table = NULL;
	*example = NULL;
	if (pmu_cpuid_host(vendor, &a, &b, &c) == 0) {
		pmu_setf(ident, n, a < 10 ? "CPUID %s family %u model 0x%x stepping %u"
				       : "CPUID %s family 0x%x model 0x%x stepping %u", vendor, a, b, c);
		*table = pmu_cpuid_pfm_table(vendor, a, b, c);
		*example = strcmp(vendor, "GenuineIntel") ? "amd64_fam19h_zen3" : "skx";
		return 0;
	}
	if (pmu_midr_host(&midr) == 0) {
		pmu_midr_decode(midr, &a, &b, &c, &d);
		pmu_setf(ident, n, "MIDR 0x%08llx (implementer 0x%02x part 0x%03x)", (unsigned long long)midr, a, c);
		*table = pmu_midr_pfm_table(a, c);
		/* The Armv8 common events have the same numbers in every table. */
		*example = "arm_ac57";
		return 0;
	}
	return pmu_error(PMU_ERR_UNSUPPORTED, "this CPU can be identified neither by CPUID nor by MIDR_EL1");
}
