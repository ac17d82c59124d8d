#ifndef PMU_BPF_ALLOC_H
#define PMU_BPF_ALLOC_H

/*
 * The wire format of the alloc collector: what bpf/alloc.bpf.c writes into
 * its BPF ring buffer and what the LD_PRELOAD interposer (alloc-preload.c)
 * sends through its SOCK_SEQPACKET channel, one record per message; what
 * alloc.c reads.  Shared by the BPF program (types from vmlinux.h), the
 * interposer and user space (<linux/types.h>); nothing else.  User space
 * trusts none of it: every record goes through pmu_allocrec_decode()
 * (allocrec.h).  Bump PMU_ALLOC_WIRE_VERSION on any change.
 */
#define PMU_ALLOC_WIRE_VERSION 1

#define PMU_ALLOC_REC_SAMPLE 1  /* a sampled allocation (with its chain) */
#define PMU_ALLOC_REC_FREE 2    /* a sampled address freed (free, or realloc moving it) */
#define PMU_ALLOC_REC_LOST 3    /* preload: what the process could not send, at its exit */

#define PMU_ALLOC_CHAIN_MAX 32  /* user frames kept at most */
#define PMU_ALLOC_TABLE 4096    /* the exponential thresholds' table (uprobe path) */

/* the sampled functions (spec 1.8: sample.func) */
#define PMU_ALLOC_F_MALLOC 0
#define PMU_ALLOC_F_CALLOC 1
#define PMU_ALLOC_F_REALLOC 2
#define PMU_ALLOC_F_ALIGNED_ALLOC 3
#define PMU_ALLOC_F_POSIX_MEMALIGN 4
#define PMU_ALLOC_F_MEMALIGN 5
#define PMU_ALLOC_F_VALLOC 6
#define PMU_ALLOC_F_PVALLOC 7
#define PMU_ALLOC_F_N 8

struct pmu_alloc_hdr {
	__u64 seq;     /* from 1: global (uprobe) or per process (preload), one per record tried */
	__u64 time_ns; /* CLOCK_MONOTONIC */
	__u16 kind;    /* PMU_ALLOC_REC_* */
	__u16 size;    /* whole record, bytes */
	__u32 cpu;     /* the CPU that sent it (uprobe); 0 (preload) */
	__u32 tgid, tid;
};

struct pmu_alloc_sample {
	struct pmu_alloc_hdr h;
	__u64 leader_start; /* the group leader's start_boottime, ns (uprobe); 0 (preload) */
	__u64 size;         /* the bytes asked for */
	__u64 addr;         /* returned; 0: the allocation failed */
	__u32 func;         /* PMU_ALLOC_F_* */
	__u32 nchain;       /* chain[0..nchain) valid, innermost first */
	__u64 chain[PMU_ALLOC_CHAIN_MAX];
};

struct pmu_alloc_free {
	struct pmu_alloc_hdr h;
	__u64 addr;         /* the sampled address freed */
	__u64 sample_seq;   /* the wire seq of its sample */
};

struct pmu_alloc_lost {
	struct pmu_alloc_hdr h;
	__u64 channel;      /* records the interposer could not send (all kinds) */
	__u64 samples;      /* of them samples (dropped: in no estimate) */
	__u64 live_full;    /* sampled addresses its live table could not keep */
};

/* per-CPU loss counters (uprobe) */
struct pmu_alloc_counters {
	__u64 reserve_fail; /* a record found the ring full */
	__u64 pending_fail; /* no task storage for a call in flight */
	__u64 live_fail;    /* the live map had no room for a sampled address */
	__u64 submitted;
};

/* the live map's key (uprobe): a sampled address of a process */
struct pmu_alloc_live_key {
	__u64 addr;
	__u32 tgid, pad;
};

#endif
