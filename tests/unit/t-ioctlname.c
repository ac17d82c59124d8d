/*
 * lib/ioctlname.c: the target's ioctl request names against the numbers
 * its C library's and kernel's headers give, the alias and collision rules
 * (ioctlhdrs.h), and unknown numbers.
 */
#include <linux/btrfs.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>

#include "ioctlname.h"
#include "tap.h"

static bool named(unsigned long req, const char *want)
{
	const char *got = pmu_ioctl_name(req);
	bool r = got && !strcmp(got, want);

	if (!r)
		printf("#   0x%lx: got %s, want %s\n", req, got ? got : "NULL", want);
	return r;
}

int main(void)
{
	/* the numbers from glibc's <sys/ioctl.h>, not from ioctlhdrs.h */
	ok(named(TCGETS, "TCGETS"), "TCGETS");
	ok(named(TCSETSW, "TCSETSW"), "TCSETSW");
	ok(named(TIOCGWINSZ, "TIOCGWINSZ"), "TIOCGWINSZ");
	ok(named(TIOCGPTN, "TIOCGPTN"), "TIOCGPTN (an _IOR request of the terminal header)");
	ok(named(FIONREAD, "FIONREAD"), "FIONREAD");
	ok(named(FIOCLEX, "FIOCLEX"), "FIOCLEX");
	ok(named(SIOCGIFINDEX, "SIOCGIFINDEX"), "SIOCGIFINDEX (linux/sockios.h)");
	ok(named(FICLONE, "FICLONE"), "FICLONE (linux/fs.h, _IOW)");
	ok(named(FS_IOC_GETFLAGS, "FS_IOC_GETFLAGS"), "FS_IOC_GETFLAGS (sized by long)");
	ok(named(BLKGETSIZE64, "BLKGETSIZE64"), "BLKGETSIZE64");
#if defined(__x86_64__) || defined(__aarch64__)
	/* the asm-generic numbering, written out: a table of the wrong target fails */
	ok(named(0x5401, "TCGETS") && named(0x5413, "TIOCGWINSZ") && named(0x541B, "FIONREAD"),
	   "asm-generic terminal numbers 0x5401, 0x5413, 0x541B");
	ok(named(0x40049409, "FICLONE"), "FICLONE is 0x40049409 (_IOW(0x94, 9, int))");
#endif
	/* an alias (#define TIOCINQ FIONREAD) never replaces its target's name */
	ok(TIOCINQ == FIONREAD && named(TIOCINQ, "FIONREAD"), "TIOCINQ's number is named FIONREAD");
	/* one number, two names: the header listed first in ioctlhdrs.h wins */
	ok(BTRFS_IOC_CLONE == FICLONE && named(BTRFS_IOC_CLONE, "FICLONE"), "BTRFS_IOC_CLONE's number is named FICLONE");
	ok(pmu_ioctl_name(0) == NULL, "0 has no name");
	ok(pmu_ioctl_name(0xdeadbeefUL) == NULL, "an unknown number has no name");
	ok(pmu_ioctl_name(TCGETS + 0x1000) == NULL, "TCGETS + 0x1000 has no name");
	ok(pmu_ioctl_name(~0UL) == NULL, "~0 has no name");
	ok(pmu_ioctl_count() > 500, "the table holds %lu names", pmu_ioctl_count());
	/* the same answer every call (the index is built once) */
	ok(pmu_ioctl_name(TCGETS) == pmu_ioctl_name(TCGETS), "stable");
	return done_testing();
}
