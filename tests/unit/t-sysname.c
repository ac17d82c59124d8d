/*
 * lib/sysname.c: the target's system call names against the numbers its
 * own <sys/syscall.h> gives, and the round trip for every name.
 */
#include <string.h>
#include <sys/syscall.h>

#include "sysname.h"
#include "tap.h"

int main(void)
{
	ok(pmu_syscall_name(SYS_read) && !strcmp(pmu_syscall_name(SYS_read), "read"), "SYS_read is read");
	ok(pmu_syscall_name(SYS_openat) && !strcmp(pmu_syscall_name(SYS_openat), "openat"), "SYS_openat is openat");
	ok(pmu_syscall_name(SYS_fdatasync) && !strcmp(pmu_syscall_name(SYS_fdatasync), "fdatasync"),
	   "SYS_fdatasync is fdatasync");
	ok(pmu_syscall_nr("close") == SYS_close, "close is SYS_close");
	ok(pmu_syscall_nr("no_such_call") == -1, "an unknown name is -1");
	ok(pmu_syscall_name(-1) == NULL && pmu_syscall_name(100000) == NULL, "numbers without a name are NULL");
	long max = pmu_syscall_max(), named = 0, bad = 0;
	for (long nr = 0; nr <= max; nr++) {
		const char *n = pmu_syscall_name(nr);

		if (!n)
			continue;
		named++;
		if (pmu_syscall_nr(n) != nr)
			bad++;
	}
	ok(named > 250 && bad == 0, "every named number round-trips (%ld names up to %ld, %ld wrong)", named, max, bad);
	return done_testing();
}
