#ifndef PMU_COREPMU_H
#define PMU_COREPMU_H

#include <stddef.h>

/*
 * The core PMUs of this host: the perf event sources that count the CPUs'
 * own events, by the rule perf(1) uses (tools/perf/util/pmu.c,
 * is_pmu_core): the one named "cpu" (x86 without hybrid cores), or any
 * under /sys/bus/event_source/devices with a "cpus" file (x86 hybrid
 * cpu_core/cpu_atom, arm64 armv8_pmuv3, armv8_cortex_a53, ...).  Uncore
 * PMUs have a "cpumask" instead and are not core PMUs.  So "no PMU named
 * cpu" is never read as "no hardware PMU" on a machine that is not x86.
 *
 * pmu_core_pmus() writes their names, space-separated and sorted, into
 * buf (n bytes, NUL-terminated, cut at a name when full) and returns how
 * many there are (0: none; the directory may be absent).  sysfs is the
 * directory to read, NULL for /sys/bus/event_source/devices.
 */
int pmu_core_pmus(const char *sysfs, char *buf, size_t n);

/* The online CPUs (/sys/devices/system/cpu/online, e.g. "0-3,6") into a
 * malloc'd array *out (the caller frees it): their number, or -1 when the
 * file cannot be read or memory runs out.  One event and one ring per CPU
 * (counting, sampling) are opened on these. */
int pmu_online_cpus(int **out);

#endif
