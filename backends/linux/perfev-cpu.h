#ifndef PMU_PERFEV_CPU_H
#define PMU_PERFEV_CPU_H

#include <stdint.h>

/*
 * CPUID, for choosing libpfm4's core-PMU table when libpfm4 detects none.
 * pmu_cpuid_decode() turns leaf 1's EAX into the display family and model
 * (extended family added when the base family is 0xf, extended model
 * prepended when it is 6 or 0xf) and the stepping.
 * pmu_cpuid_pfm_table() maps vendor/family/model/stepping through
 * perfev-cpu.def to libpfm4's table name, static, or NULL when unknown; the
 * stepping is needed because Skylake-SP and Cascade Lake share model 0x55.
 * pmu_cpuid_host() reads this CPU's; PMU_ERR_UNSUPPORTED off x86.
 */
void pmu_cpuid_decode(uint32_t eax, unsigned *family, unsigned *model, unsigned *stepping);
const char *pmu_cpuid_pfm_table(const char *vendor, unsigned family, unsigned model, unsigned stepping);
int pmu_cpuid_host(char vendor[13], unsigned *family, unsigned *model, unsigned *stepping);

#endif
