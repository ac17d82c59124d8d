#ifndef PMU_IOCTLNAME_H
#define PMU_IOCTLNAME_H

/*
 * ioctl(2) request names of the target pmu is built for ("TCGETS",
 * "FICLONE", "SIOCGIFINDEX"), from its uapi headers: the build lists the
 * request macros of the headers lib/ioctlhdrs.h includes and the compiler
 * evaluates them (_IOC's layout and the argument types' sizes are the
 * target's own, so a cross build gets the target's numbers).
 */

/*
 * The name of request number req, or NULL when no listed header defines it.
 * When two names share a number the one defined first wins (the order of
 * lib/ioctlhdrs.h, then each header's own order), so the answer is the same
 * on every call and every build from the same headers.  The string is
 * static.  Safe from any thread.
 */
const char *pmu_ioctl_name(unsigned long req);

/* How many names the table holds (0 where the target has no uapi headers). */
unsigned long pmu_ioctl_count(void);

#endif
