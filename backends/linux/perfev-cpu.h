#ifndef PMU_PERFEV_CPU_H
#define PMU_PERFEV_CPU_H

#include <stddef.h>
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

/*
 * MIDR_EL1, the same for Arm CPUs (perfev-midr.def).  pmu_midr_decode()
 * splits the register (Arm ARM D19.2: implementer [31:24], variant
 * [23:20], part [15:4], revision [3:0]).  pmu_midr_pfm_table() maps
 * implementer and part to libpfm4's table name, static, or NULL when
 * unknown.  pmu_midr_host() reads CPU 0's from sysfs
 * (cpu0/regs/identification/midr_el1), or failing that from /proc/cpuinfo's
 * "CPU implementer", "CPU variant", "CPU part" and "CPU revision";
 * PMU_ERR_UNSUPPORTED where there is neither (not an Arm host).
 */
void pmu_midr_decode(uint64_t midr, unsigned *implementer, unsigned *variant, unsigned *part, unsigned *revision);
const char *pmu_midr_pfm_table(unsigned implementer, unsigned part);
int pmu_midr_host(uint64_t *midr);

/*
 * This host's CPU as libpfm4's fallback needs it, whatever the
 * architecture: ident gets how the CPU was identified ("CPUID GenuineIntel
 * family 6 model 0x55 stepping 4", "MIDR 0x410fd0c0 (implementer 0x41 part
 * 0xd0c)") and *table its libpfm4 table or NULL.  *example is a table name
 * of the same architecture to suggest in a remedy (static).  Returns 0, or
 * PMU_ERR_UNSUPPORTED with ident "" when the CPU cannot be identified.
 */
int pmu_cpu_pfm_table(char *ident, size_t n, const char **table, const char **example);

#endif
