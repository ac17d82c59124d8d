#ifndef PMU_LINUX_CAPS_H
#define PMU_LINUX_CAPS_H

#include <stdbool.h>
#include <stdint.h>

/* This process's effective capabilities, bit N for capability N
 * (capget(2)); when capget fails, all of them for euid 0, none otherwise. */
uint64_t pmu_caps_effective(void);

/* CAP_SYS_ADMIN (21), CAP_PERFMON (38), CAP_BPF (39) */
#define PMU_CAP_SYS_ADMIN (1ull << 21)
#define PMU_CAP_PERFMON (1ull << 38)
#define PMU_CAP_BPF (1ull << 39)

/* Whether this process may load eBPF tracing programs and open the perf
 * events they attach to, as the kernel's bpf_capable() and
 * perfmon_capable() say: CAP_SYS_ADMIN, or both CAP_BPF and CAP_PERFMON. */
bool pmu_caps_bpf(void);

#endif
