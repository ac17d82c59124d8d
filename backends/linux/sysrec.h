#ifndef PMU_LINUX_SYSREC_H
#define PMU_LINUX_SYSREC_H

/*
 * The decoder of the syscalls collector's ring records (bpf/syscalls.h).
 * The bytes come from a BPF program through a ring that any holder of the
 * map fd can also write: trust nothing.  The sample's length, the header's
 * size and the kind's struct must agree exactly; a zero seq, a zero
 * tgid or tid, unknown flag bits, path flags on a record without paths,
 * strings without their NUL, a duration longer than the time since boot
 * and a number outside the classified range are all PMU_ERR_CORRUPT, with
 * a detail that starts "syscall record".  Header-only, so that the fuzz
 * harness (tests/fuzz/fuzz-sysrec.c) links it without the backend.
 */
#include <linux/types.h>
#include <stddef.h>
#include <string.h>

#include "error.h"
#include "bpf/syscalls.h"

union pmu_sysrec {
	struct pmu_sys_hdr h;
	struct pmu_sys_call c;
	struct pmu_sys_call_path p;
};

#define PMU_SYS_PATH_FLAGS (PMU_SYS_F_ALL & ~(__u32)(PMU_SYS_F_FILE | PMU_SYS_F_FD2))
#define PMU_SYS_P1_SRC \
	(PMU_SYS_F_PATH_ARG | PMU_SYS_F_PATH_DENTRY | PMU_SYS_F_PATH_CWD | PMU_SYS_F_PATH_DIRFD | PMU_SYS_F_PATH_REL | \
	 PMU_SYS_F_PATH_FAULT)
#define PMU_SYS_P2_BITS \
	(PMU_SYS_F_P2_CWD | PMU_SYS_F_P2_DIRFD | PMU_SYS_F_P2_REL | PMU_SYS_F_P2_TRUNC | PMU_SYS_F_P2_HEAD)

static inline int pmu_sysrec_bad(const char *what, unsigned long long seq)
{
	return pmu_error(PMU_ERR_CORRUPT, "syscall record seq %llu: %s", seq, what);
}

/* Decode the ring sample data[0..len) into *out: 0 or PMU_ERR_CORRUPT. */
static inline int pmu_sysrec_decode(const void *data, size_t len, union pmu_sysrec *out)
{
	struct pmu_sys_hdr h;
	size_t want;
	__u32 fl, src;

	if (!data || len < sizeof(h))
		return pmu_error(PMU_ERR_CORRUPT, "syscall record of %zu bytes is shorter than its header", len);
	memcpy(&h, data, sizeof(h));
	switch (h.kind) {
	case PMU_SYS_REC_CALL: want = sizeof(struct pmu_sys_call); break;
	case PMU_SYS_REC_CALL_PATH: want = sizeof(struct pmu_sys_call_path); break;
	default: return pmu_sysrec_bad("unknown kind", h.seq);
	}
	if (h.size != len || len != want)
		return pmu_sysrec_bad("size does not match its kind", h.seq);
	if (h.seq == 0)
		return pmu_sysrec_bad("seq 0", h.seq);
	memcpy(out, data, len);
	fl = out->c.flags;
	if (fl & ~(__u32)PMU_SYS_F_ALL)
		return pmu_sysrec_bad("unknown flags", h.seq);
	if (!out->c.tgid || !out->c.tid)
		return pmu_sysrec_bad("pid 0", h.seq);
	if (out->c.nr >= PMU_SYS_NR_MAX)
		return pmu_sysrec_bad("syscall number outside the classified range", h.seq);
	if (out->c.dur_ns > h.time_ns)
		return pmu_sysrec_bad("began before boot", h.seq);
	if (h.kind == PMU_SYS_REC_CALL) {
		if (fl & PMU_SYS_PATH_FLAGS)
			return pmu_sysrec_bad("path flags without paths", h.seq);
		return 0;
	}
	src = fl & PMU_SYS_P1_SRC;
	if (src & (src - 1))
		return pmu_sysrec_bad("more than one path source", h.seq);
	if (!memchr(out->p.path, 0, sizeof(out->p.path)) || !memchr(out->p.path2, 0, sizeof(out->p.path2)))
		return pmu_sysrec_bad("path without its NUL", h.seq);
	if (!(fl & PMU_SYS_F_PATH2) && (out->p.path2[0] || fl & PMU_SYS_P2_BITS))
		return pmu_sysrec_bad("a second path without its flag", h.seq);
	if ((src & (PMU_SYS_F_PATH_DENTRY | PMU_SYS_F_PATH_CWD | PMU_SYS_F_PATH_DIRFD)) && out->p.path[0] != '/')
		return pmu_sysrec_bad("a resolved path that is not absolute", h.seq);
	if (!(src & ~(__u32)PMU_SYS_F_PATH_FAULT) && (out->p.path[0] || fl & (PMU_SYS_F_PATH_TRUNC | PMU_SYS_F_PATH_HEAD)))
		return pmu_sysrec_bad("a path without its source", h.seq);
	if (fl & PMU_SYS_F_PATH_HEAD && !(src & (PMU_SYS_F_PATH_DENTRY | PMU_SYS_F_PATH_CWD | PMU_SYS_F_PATH_DIRFD)))
		return pmu_sysrec_bad("a path without its head that was not resolved", h.seq);
	src = fl & (PMU_SYS_F_P2_CWD | PMU_SYS_F_P2_DIRFD | PMU_SYS_F_P2_REL);
	if (src & (src - 1))
		return pmu_sysrec_bad("more than one second path source", h.seq);
	if ((src & (PMU_SYS_F_P2_CWD | PMU_SYS_F_P2_DIRFD)) && out->p.path2[0] != '/')
		return pmu_sysrec_bad("a resolved second path that is not absolute", h.seq);
	if (fl & PMU_SYS_F_P2_HEAD && !(src & (PMU_SYS_F_P2_CWD | PMU_SYS_F_P2_DIRFD)))
		return pmu_sysrec_bad("a second path without its head that was not resolved", h.seq);
	return 0;
}

#endif
