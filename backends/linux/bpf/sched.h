#ifndef PMU_BPF_SCHED_H
#define PMU_BPF_SCHED_H

/*
 * The wire format of the sched collector: what sched.bpf.c writes into its
 * BPF ring buffer and backends/linux/sched_rec.c decodes.  Shared by the
 * BPF program (types from vmlinux.h) and user space (<linux/types.h>).
 *
 * Every record starts with struct pmu_sched_hdr; size is the record's whole
 * size and kind says which body follows.  User space trusts neither: the
 * decoder checks the ring's sample length against size and the kind's
 * struct, and the body's fields against each other (a record that fails is
 * counted as malformed, never used).  Bump PMU_SCHED_WIRE_VERSION on any
 * change.
 */
#define PMU_SCHED_WIRE_VERSION 1

#define PMU_SCHED_REC_OFF 1    /* an off-CPU interval of a cohort thread, at its switch back in */
#define PMU_SCHED_REC_THREAD 2 /* a thread's totals, at its exit */

#define PMU_SCHED_CHAIN_MAX 32 /* user frames kept per off interval (chains fp) */

/* the state a thread left the CPU in (struct pmu_sched_off.state) */
#define PMU_SCHED_S 1     /* TASK_INTERRUPTIBLE */
#define PMU_SCHED_D 2     /* TASK_UNINTERRUPTIBLE (killable, idle too) */
#define PMU_SCHED_R 3     /* preempted, still runnable */
#define PMU_SCHED_OTHER 4 /* stopped, traced, any other */

/* thread flags */
#define PMU_SCHED_BORN 0x1 /* first_ns is its start: seen at its sched_wakeup_new, or
                            * it took the leader's pid at an exec */
#define PMU_SCHED_EXITED 0x2 /* threads map only: it exited when the ring was full; its totals
                              * end at last_ns and wait in the map for the stop */

struct pmu_sched_hdr {
	__u64 seq;     /* global, from 1, one per record the program tried to send */
	__u64 time_ns; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u16 kind;    /* PMU_SCHED_REC_* */
	__u16 size;    /* whole record, bytes */
	__u32 cpu;     /* bpf_get_smp_processor_id() */
};

/*
 * One off-CPU interval: out_ns (switch out) .. h.time_ns (switch back in).
 * wake_ns is the wakeup (sched_wakeup) for S, D and other, or out_ns for R
 * (a preempted thread waits on a runqueue from its switch out).
 * out_ns <= wake_ns <= h.time_ns.  nr: the system call in progress at the
 * switch out, from the task's saved user registers (x86 orig_ax, arm64
 * syscallno), -1 none.  The chain, when nchain > 0, is the user stack at
 * the switch out, innermost first; the record is then followed by its
 * nchain frames (h.size = sizeof(struct pmu_sched_off) + 8 * nchain).
 */
struct pmu_sched_off {
	struct pmu_sched_hdr h;
	__u32 tgid, tid;
	__u64 leader_start_ns; /* the group leader's start_boottime: the incarnation */
	__u64 out_ns, wake_ns;
	__s32 nr;
	__u32 waker_tid;       /* 0: none seen (R, or no wakeup) */
	__u16 state;           /* PMU_SCHED_S ... */
	__u16 nchain;
	__u32 cpu_out;
};

struct pmu_sched_off_chain {
	struct pmu_sched_off o;
	__u64 chain[PMU_SCHED_CHAIN_MAX];
};

/*
 * A thread's totals at its exit (sched_process_exit: h.time_ns), from its
 * first sight (first_ns) on: on + runq + sleep + blocked + other ==
 * h.time_ns - first_ns exactly.
 */
struct pmu_sched_thread {
	struct pmu_sched_hdr h;
	__u32 tgid, tid;
	__u64 leader_start_ns;
	__u64 first_ns;
	__u64 first_on_ns;     /* its first time on a CPU seen (a born thread is runnable before) */
	__u64 on_ns, runq_ns, sleep_ns, blocked_ns, other_ns;
	__u32 voluntary, involuntary, migrations;
	__u32 flags;           /* PMU_SCHED_BORN */
};

/* the thread map's value (the state of one cohort thread, by tid); user
 * space reads the live ones at the stop */
#define PMU_SCHED_ST_ON 1
#define PMU_SCHED_ST_RUNQ 2
#define PMU_SCHED_ST_WAIT 3 /* off, not yet woken: off_state says which bucket */

struct pmu_sched_task {
	__u32 tgid, flags;
	__u32 tid, pad0;          /* the thread's tid in this life (the map is keyed by its task) */
	__u64 leader_start_ns;
	__u64 first_ns, last_ns;  /* first sight; the last transition */
	__u64 first_on_ns;        /* first time on a CPU (0: not yet) */
	__u64 on_ns, runq_ns, sleep_ns, blocked_ns, other_ns;
	__u32 voluntary, involuntary, migrations;
	__u16 st;                 /* PMU_SCHED_ST_* */
	__u16 off_state;          /* PMU_SCHED_S ...: the current off interval's */
	__u64 out_ns, wake_ns;    /* the current off interval (out_ns 0: none to report) */
	__s32 nr;
	__u32 waker_tid;
	__u32 cpu_out;
	__u16 nchain, pad;
	__u64 chain[PMU_SCHED_CHAIN_MAX];
};

/* per-CPU counters (a PERCPU_ARRAY of one) */
struct pmu_sched_counters {
	__u64 reserve_fail; /* a record found the ring full */
	__u64 map_fail;     /* a thread's state could not be kept (thread map full) */
	__u64 short_offs;   /* intervals under min_off_ns: in the totals only */
	__u64 submitted;
};

#endif
