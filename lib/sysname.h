#ifndef PMU_SYSNAME_H
#define PMU_SYSNAME_H

/*
 * System call names of the architecture pmu is built for, from its C
 * library's <sys/syscall.h> (every __NR_ name, gathered at build time by the
 * compiler itself, so a cross build gets the target's numbers).
 */
#include <stdbool.h>

/* The name ("read", "openat") of number nr, or NULL when none has it. */
const char *pmu_syscall_name(long nr);
/* The number of name, or -1. */
long pmu_syscall_nr(const char *name);
/* The largest number with a name (tables sized by it). */
long pmu_syscall_max(void);

#endif
