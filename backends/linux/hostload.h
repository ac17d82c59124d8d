#ifndef PMU_LINUX_HOSTLOAD_H
#define PMU_LINUX_HOSTLOAD_H

#include <stddef.h>

#include "backend.h"

/*
 * The parser behind pmu_host_cpu_read(), apart so that tests can feed it
 * text (tests/unit/linux/t-hostload.c).  text[0..len) is /proc/stat as read,
 * possibly cut short: the bytes are untrusted and every read is
 * bounds-checked.  It takes the aggregate "cpu" line (proc(5): user nice
 * system idle iowait irq softirq steal [guest guest_nice], in USER_HZ
 * ticks) and counts the "cpuN" lines after it.  ticks_per_s is
 * sysconf(_SC_CLK_TCK).  Fills s's times, resolution_ns and cpus (not
 * t_ns, ok or source); returns 0, or PMU_ERR_CORRUPT with the detail in
 * s->reason (pmu_error_detail() is left alone).
 */
int pmu_procstat_parse(const char *text, size_t len, long ticks_per_s, struct pmu_host_cpu *s);

#endif
