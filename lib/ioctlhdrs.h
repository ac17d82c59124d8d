#ifndef PMU_IOCTLHDRS_H
#define PMU_IOCTLHDRS_H

/*
 * The uapi headers whose ioctl request macros name the numbers
 * pmu_ioctl_name() knows (ioctlname.h).  scripts/gen-ioctlnames reads this
 * file through the compiler in use and keeps every object-like macro whose
 * body is _IO/_IOR/_IOW/_IOWR/_IOC(...), plus the four-hex-digit constants
 * from 0x1000 of the headers that define requests as bare numbers
 * (ioctls.h, sockios.h, vt.h, kd.h), except names ending in _BASE or _MASK
 * (kd.h's UNI_DIRECT_BASE).  ioctlname.c includes this same file, so the
 * compiler evaluates each macro with the target's own _IOC layout and types.
 *
 * ORDER MATTERS: when two names have one number (drivers chose the same
 * type letter, or a header defines a legacy name beside the current one),
 * the name defined first wins: this file's order, then each header's own
 * order of definition (FICLONE, not BTRFS_IOC_CLONE, for 0x40049409).
 * Terminal and file requests come first because a system-call trace meets
 * them most.  A bare alias (#define TIOCINQ FIONREAD) is never a candidate:
 * its target already names the number.
 *
 * Headers that need another for a type come after it (asm/termbits.h for
 * TCGETS2's struct termios2).  A macro that still does not compile here (a
 * struct of a header not listed, a compat type) is dropped by the generator.
 */
#ifdef __linux__
#include <asm/termbits.h>
#include <asm/ioctls.h>
#include <linux/fs.h>
#include <linux/fiemap.h>
#include <linux/fsmap.h>
#include <linux/fscrypt.h>
#include <linux/sockios.h>
#include <asm/sockios.h>
#include <linux/if_tun.h>
#include <linux/random.h>
#include <linux/vt.h>
#include <linux/kd.h>
#include <linux/tty.h>
#include <linux/serial.h>
#include <linux/loop.h>
#include <linux/nbd.h>
#include <linux/blkzoned.h>
#include <linux/cdrom.h>
#include <linux/fd.h>
#include <linux/hdreg.h>
#include <linux/perf_event.h>
#include <linux/userfaultfd.h>
#include <linux/seccomp.h>
#include <linux/nsfs.h>
#include <linux/pidfd.h>
#include <linux/sync_file.h>
#include <linux/dma-buf.h>
#include <linux/btrfs.h>
#include <linux/watchdog.h>
#include <linux/rtc.h>
#include <linux/input.h>
#include <linux/uinput.h>
#include <linux/hidraw.h>
#include <linux/gpio.h>
#include <linux/i2c-dev.h>
#include <linux/spi/spidev.h>
#include <linux/ptp_clock.h>
#include <linux/pps.h>
#include <linux/auto_fs.h>
#include <linux/kvm.h>
#include <linux/vfio.h>
#include <linux/vhost.h>
#endif

#endif
