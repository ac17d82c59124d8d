#ifndef PMU_BPF_SYSCALLS_H
#define PMU_BPF_SYSCALLS_H

/*
 * The wire format of the syscalls collector: what syscalls.bpf.c writes
 * into its BPF ring buffer and into its statistics map, and what
 * syscalls.c reads.  Shared by the BPF program (types from vmlinux.h) and
 * user space (<linux/types.h>); nothing else.  User space trusts none of
 * it: the ring's records go through pmu_sysrec_decode() (sysrec.h), which
 * checks sizes, kinds, flags and strings.  Bump PMU_SYS_WIRE_VERSION on
 * any change.
 */
#define PMU_SYS_WIRE_VERSION 2

#define PMU_SYS_REC_CALL 1      /* a raw-family call without a path */
#define PMU_SYS_REC_CALL_PATH 2 /* one with its path (and second path) */

#define PMU_SYS_PATH_MAX 256    /* bytes kept of a path, NUL included */
#define PMU_SYS_NR_MAX 1024     /* syscall numbers below this are classified */
#define PMU_SYS_HIST 312        /* log-linear buckets (bundle-spec section 23.4) */

/* what the loader tells the programs about each syscall number (calls map) */
#define PMU_SYS_C_RAW      0x01 /* a raw call record for it */
#define PMU_SYS_C_FD_ENTER 0x02 /* args[fd_arg] is an fd: its file at sys_enter */
#define PMU_SYS_C_FD_RET   0x04 /* it returns an fd: its file at sys_exit */
#define PMU_SYS_C_FD_PAIR  0x08 /* it fills int[2] at args[fd_arg] (pipe, socketpair) */
#define PMU_SYS_C_PATH     0x10 /* args[path_arg] is a path */
#define PMU_SYS_C_PATH2    0x20 /* args[path2_arg] is a second path */
#define PMU_SYS_C_BYTES    0x40 /* a successful return is bytes transferred */
#define PMU_SYS_C_DENTRY   0x80 /* the returned fd's path from its dentry */

/* flags2: a child returns from it (ret_from_fork passes sys_exit) without
 * having entered it: clone, clone3, fork, vfork */
#define PMU_SYS_C2_FORK 0x01

struct pmu_sys_class {
	__u8 flags;
	__u8 fd_arg, path_arg, path2_arg;
	__u8 flags2;
};

/*
 * call flags.  Each path has a source and may be cut.  path: ARG (the
 * caller's absolute string), DENTRY (the opened file's dentry chain), CWD
 * or DIRFD (a relative argument joined to the working directory's or the
 * dirfd's path, from its dentry chain), REL (a relative argument whose
 * directory could not be read), FAULT (unreadable); path2 (PATH2 set):
 * the absolute argument, or P2_CWD, P2_DIRFD, P2_REL likewise.  TRUNC: the
 * end is missing (longer than kept); HEAD: the leading components are
 * missing (the walk kept those nearest the file).
 */
#define PMU_SYS_F_FILE       0x0001 /* dev, ino, mode are the file's */
#define PMU_SYS_F_FD2        0x0002 /* fd2 valid (pipe, socketpair) */
#define PMU_SYS_F_PATH_ARG   0x0004
#define PMU_SYS_F_PATH_DENTRY 0x0008
#define PMU_SYS_F_PATH_TRUNC 0x0010
#define PMU_SYS_F_PATH2      0x0020
#define PMU_SYS_F_PATH_FAULT 0x0040
#define PMU_SYS_F_PATH_CWD   0x0080
#define PMU_SYS_F_PATH_DIRFD 0x0100
#define PMU_SYS_F_PATH_REL   0x0200
#define PMU_SYS_F_PATH_HEAD  0x0400
#define PMU_SYS_F_P2_CWD     0x0800
#define PMU_SYS_F_P2_DIRFD   0x1000
#define PMU_SYS_F_P2_REL     0x2000
#define PMU_SYS_F_P2_TRUNC   0x4000
#define PMU_SYS_F_P2_HEAD    0x8000
#define PMU_SYS_F_ALL        0xffff

struct pmu_sys_hdr {
	__u64 seq;     /* global, from 1, one per record the program tried to send */
	__u64 time_ns; /* bpf_ktime_get_ns() at sys_exit: CLOCK_MONOTONIC */
	__u16 kind;    /* PMU_SYS_REC_* */
	__u16 size;    /* whole record, bytes */
	__u32 cpu;     /* bpf_get_smp_processor_id() */
};

struct pmu_sys_call {
	struct pmu_sys_hdr h;
	__u64 dur_ns;       /* sys_enter to sys_exit */
	__u64 leader_start; /* the group leader's start_boottime, ns */
	__u32 tgid, tid;
	__s64 ret;
	__u64 args[6];
	__u32 nr;
	__u32 flags;        /* PMU_SYS_F_* */
	__u32 dev;          /* the kernel's dev_t: MAJOR << 20 | MINOR */
	__u32 mode;         /* i_mode */
	__u64 ino;
	__s32 fd1, fd2;     /* PMU_SYS_F_FD2: the two fds pipe or socketpair filled */
};

struct pmu_sys_call_path {
	struct pmu_sys_call c;
	char path[PMU_SYS_PATH_MAX];  /* NUL-terminated */
	char path2[PMU_SYS_PATH_MAX]; /* NUL-terminated; "" without PMU_SYS_F_PATH2 */
};

/* the in-kernel statistics: one entry per incarnation, call, errno and file */
struct pmu_sys_stat_key {
	__u64 leader_start;
	__u64 ino;
	__u32 tgid;
	__u32 nr;
	__u32 err;   /* errno, 0: succeeded */
	__u32 dev;
	__u32 mode;
	__u32 unentered; /* 1: calls seen at sys_exit only (no duration, no file) */
};

struct pmu_sys_stat {
	__u64 count, total_ns, min_ns, max_ns, bytes;
	__u64 last_ns;  /* the latest call's exit, CLOCK_MONOTONIC */
	__u32 hist[PMU_SYS_HIST];
};

/* per-CPU loss counters */
struct pmu_sys_counters {
	__u64 reserve_fail;  /* a record found the ring full */
	__u64 inflight_fail; /* no task storage for a call in flight */
	__u64 stats_fail;    /* the statistics map had no room */
	__u64 submitted;
};

#endif
