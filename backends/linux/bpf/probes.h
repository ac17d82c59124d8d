#ifndef PMU_BPF_PROBES_H
#define PMU_BPF_PROBES_H

/*
 * The wire format of the probes collector: what probes.bpf.c writes into
 * its BPF ring buffer and its maps, and what probes.c reads.  Shared by
 * the BPF program (types from vmlinux.h) and user space (<linux/types.h>);
 * nothing else.  User space trusts none of it: the ring's records go
 * through pmu_prb_decode() (probesrec.h), which checks sizes, counts and
 * strings.  Bump PMU_PRB_WIRE_VERSION on any change.
 *
 * Every USDT probe the collector attaches runs the one program with a
 * cookie: the probe's index in the loader's table (PMU_PRB_MAX at most).
 * The conf map, by that index, says what to read: which arguments are
 * strings and where each string's length is (hotspot's strings are not
 * NUL-terminated), or that the probe is pmu:alloc, summed in the kernel.
 */
#define PMU_PRB_WIRE_VERSION 2

#define PMU_PRB_REC_HIT 1   /* one probe hit, its arguments and strings */
#define PMU_PRB_REC_EXEC 2  /* a cohort process exec'd: user space reads its new image's probes */

#define PMU_PRB_MAX 256     /* probes (cookies) one run attaches at most */
#define PMU_PRB_NARGS 12    /* USDT arguments read at most (libbpf's BPF_USDT_MAX_ARG_CNT) */
#define PMU_PRB_NSTR 4      /* string arguments read at most (hotspot's method__compile__*) */
#define PMU_PRB_STR 128     /* bytes kept of a string, its NUL included */

/* what the program does at a probe (conf.what) */
#define PMU_PRB_W_RECORD 1  /* a hit record through the ring */
#define PMU_PRB_W_ALLOC 2   /* pmu:alloc: summed in the kernel per process (allocs map) */

struct pmu_prb_conf {
	__u8 what;                    /* PMU_PRB_W_*, 0: not attached */
	__u8 nstr;                    /* string arguments (<= PMU_PRB_NSTR) */
	__s8 str_arg[PMU_PRB_NSTR];   /* the argument that points at each */
	__s8 len_arg[PMU_PRB_NSTR];   /* the argument that holds its length, -1: NUL-terminated */
	__u8 pad[2];
};

/* hit flags: bit i (i < 12) the argument i could not be read; bit 16 + j
 * the string j could not be read, bit 20 + j the string j was cut */
#define PMU_PRB_F_ARG_BAD(i) (1u << (i))
#define PMU_PRB_F_STR_BAD(j) (1u << (16 + (j)))
#define PMU_PRB_F_STR_CUT(j) (1u << (20 + (j)))
#define PMU_PRB_F_ALL 0x00ff0fffu

struct pmu_prb_hdr {
	__u64 seq;     /* global, from 1, one per record the program tried to send */
	__u64 time_ns; /* bpf_ktime_get_ns() at the probe: CLOCK_MONOTONIC */
	__u16 kind;    /* PMU_PRB_REC_* */
	__u16 size;    /* whole record, bytes */
	__u32 cpu;     /* bpf_get_smp_processor_id() */
};

struct pmu_prb_hit {
	struct pmu_prb_hdr h;
	__u64 leader_start; /* the group leader's start_boottime, ns */
	__u32 tgid, tid;
	__u32 probe;        /* the cookie: the loader's probe index (< PMU_PRB_MAX) */
	__u32 flags;        /* PMU_PRB_F_* */
	__u16 nargs;        /* the probe's argument count (bpf_usdt_arg_cnt, <= PMU_PRB_NARGS) */
	__u16 nstr;         /* string slots that follow (<= PMU_PRB_NSTR) */
	__u16 slen[PMU_PRB_NSTR]; /* each string's length, its NUL not counted (< PMU_PRB_STR) */
	__u32 pad;
	__u64 args[PMU_PRB_NARGS]; /* as libbpf's arg spec reads them (sign-extended to 64 bits) */
	/* where a string the program could not read lies, when that is a
	 * file mapping that is not writable (its bytes are the file's):
	 * user space reads it there once the process is gone; zero else */
	struct pmu_prb_sfile {
		__u64 off;  /* the string's offset in the file */
		__u64 ino;  /* the file's inode, 0: none */
		__u32 dev;  /* its device, the kernel's encoding (major << 20 | minor) */
		__u32 pad;
	} sfile[PMU_PRB_NSTR];
	/* then nstr x PMU_PRB_STR bytes: NUL-terminated strings */
};

struct pmu_prb_exec {
	struct pmu_prb_hdr h;
	__u64 leader_start;
	__u32 tgid, tid;
};

/* the largest record: a hit with every string slot */
struct pmu_prb_hit_full {
	struct pmu_prb_hit hit;
	char str[PMU_PRB_NSTR][PMU_PRB_STR];
};

/* pmu:alloc summed per process image: tgid and its exec (self_exec_id) */
struct pmu_prb_alloc_key {
	__u32 tgid;
	__u32 pad;
	__u64 exec_id;
};

struct pmu_prb_alloc {
	__u64 count, bytes;
	__u64 first_ns, last_ns;
};

/* per-CPU loss counters */
struct pmu_prb_counters {
	__u64 reserve_fail; /* a hit found the ring full */
	__u64 alloc_fail;   /* the allocs map had no room */
	__u64 submitted;
};

#endif
