#ifndef PMU_BPF_FOLLOW_H
#define PMU_BPF_FOLLOW_H

/*
 * The wire format of the eBPF follower: what follow.bpf.c writes into the
 * BPF ring buffer and follow_bpf.c decodes.  Shared by the BPF program
 * (types from vmlinux.h) and user space (<linux/types.h>); nothing else.
 *
 * Every record starts with struct pmu_bpf_hdr; size is the record's whole
 * size in bytes and kind says which body follows.  User space never trusts
 * either: follow_bpf.c checks the ring's sample length against size and
 * against the kind's struct before it reads a body (a malformed record is
 * counted, never decoded).  Bump PMU_BPF_WIRE_VERSION on any change.
 */
#define PMU_BPF_WIRE_VERSION 4

#define PMU_BPF_REC_FORK 1
#define PMU_BPF_REC_EXEC 2
#define PMU_BPF_REC_EXIT 3
#define PMU_BPF_REC_COUNTS 4 /* a thread's hardware counts, just before its exit record */

#define PMU_BPF_NEV 4 /* counting events at most (cycles, instructions and two more) */

#define PMU_BPF_FILENAME_MAX 256 /* bytes kept of bprm->filename, NUL included */
#define PMU_BPF_COMM_LEN 16      /* TASK_COMM_LEN */
#define PMU_BPF_ARGV_MAX 4096    /* bytes kept of the new image's argv (PMU_ARGV_MAX_BYTES) */

/* fork flags */
#define PMU_BPF_FORK_THREAD   0x1 /* CLONE_THREAD: child joins the parent's tgid */
#define PMU_BPF_FORK_NOTRACK  0x2 /* the members map was full: child and its
                                   * descendants are not followed (counted in
                                   * map_fail too) */
#define PMU_BPF_FORK_BY_CGROUP 0x4 /* parent matched by the cohort cgroup, not the map */
/* exec flags */
#define PMU_BPF_EXEC_TRUNCATED 0x1 /* filename longer than PMU_BPF_FILENAME_MAX-1 */
#define PMU_BPF_EXEC_ARGV_TRUNCATED 0x2 /* argv longer than PMU_BPF_ARGV_MAX: argv_total > argv_len */
#define PMU_BPF_EXEC_ARGV_FAULT 0x4     /* the argv could not be read: argv_len 0 */
/* exit flags */
#define PMU_BPF_EXIT_GROUP_DEAD 0x1 /* last live thread of its group: group_status, maxrss valid */
#define PMU_BPF_EXIT_LEADER     0x2 /* tid == tgid */
#define PMU_BPF_EXIT_GROUP_EXIT 0x4 /* SIGNAL_GROUP_EXIT was set (exit_group or fatal signal) */
#define PMU_BPF_EXIT_EARLY      0x8 /* the dying map was full: accounting read at
                                     * sched_process_exit, not at the task's last
                                     * switch (the tail of do_exit is missing) */

/* counts flags */
#define PMU_BPF_COUNTS_NOENTRY 0x1 /* the per-thread map had no room: slices not
                                    * charged (each counted in read_fail too) */

struct pmu_bpf_hdr {
	__u64 seq;     /* global, from 1, one per record the program tried to send */
	__u64 time_ns; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u16 kind;    /* PMU_BPF_REC_* */
	__u16 size;    /* whole record, bytes */
	__u32 cpu;     /* bpf_get_smp_processor_id() */
};

/* sched_process_fork, for every clone of a member (threads too), or of a
 * task in the cohort cgroup.  Times: start_boottime (ns since boot,
 * suspend included) and the same in clock ticks, /proc/PID/stat field 22's
 * unit (start_boottime / (NSEC_PER_SEC / USER_HZ)). */
struct pmu_bpf_fork {
	struct pmu_bpf_hdr h;
	__u32 parent_tgid, parent_tid;
	__u32 child_tgid, child_tid;
	__u32 flags;                 /* PMU_BPF_FORK_* */
	__u32 pad;
	__u64 parent_start_ns;       /* parent's group leader: its incarnation */
	__u64 parent_start_ticks;
	__u64 child_start_ns;        /* the child task (for a process: its leader) */
	__u64 child_start_ticks;
};

/* sched_process_exec (fs/exec.c exec_binprm, after de_thread: a non-leader
 * exec has already taken over the leader's pid and start time).  The one
 * record of variable size: it ends after argv_len bytes of argv, so h.size
 * is offsetof(struct pmu_bpf_exec, argv) + argv_len. */
struct pmu_bpf_exec {
	struct pmu_bpf_hdr h;
	__u32 tgid, tid;
	__u32 old_tid;               /* the tid before exec: != tid for a non-leader exec */
	__u32 flags;                 /* PMU_BPF_EXEC_* */
	__u64 start_ns, start_ticks; /* the process (leader) start: unchanged by exec */
	__u32 filename_len;          /* bytes in filename before its NUL */
	__u32 pad;
	char filename[PMU_BPF_FILENAME_MAX]; /* bprm->filename, NUL-terminated */
	__u32 argv_total;            /* mm->arg_end - mm->arg_start of the new image */
	__u32 argv_len;              /* bytes of argv below: min(argv_total, PMU_BPF_ARGV_MAX) */
	char argv[PMU_BPF_ARGV_MAX]; /* the strings, each NUL-ended (the last cut when truncated) */
};

/* One per member thread, sent at its last context switch (h.time_ns);
 * exit_ns is when it entered sched_process_exit.  Where each field comes
 * from and when it is final: see follow.bpf.c above on_exit(). */
struct pmu_bpf_exit {
	struct pmu_bpf_hdr h;
	__u64 exit_ns;               /* bpf_ktime_get_ns() at sched_process_exit */
	__u32 tgid, tid;
	__u32 flags;                 /* PMU_BPF_EXIT_* */
	__s32 exit_code;             /* task->exit_code: wait(2) status word of this thread */
	__s32 group_status;          /* with GROUP_DEAD: what wait(2) of the process returns */
	__u32 pad;
	__u64 start_ns, start_ticks; /* group leader's start: the incarnation */
	__u64 thread_start_ns;
	__u64 sum_exec_runtime_ns;   /* se.sum_exec_runtime */
	__u64 utime_ns, stime_ns;    /* utime, stime (tick-sampled, unscaled) */
	__u64 min_flt, maj_flt;
	__u64 nvcsw, nivcsw;
	__u64 nr_migrations;         /* se.nr_migrations */
	__u64 rchar, wchar, syscr, syscw;              /* ioac (TASK_XACCT) */
	__u64 read_bytes, write_bytes, cancelled_write_bytes; /* ioac (TASK_IO_ACCOUNTING) */
	__u64 maxrss_pages;          /* with GROUP_DEAD: signal->maxrss, pages */
	char comm[PMU_BPF_COMM_LEN];
};

/* PERCPU_ARRAY "counters", key 0 */
struct pmu_bpf_counters {
	__u64 reserve_fail;          /* bpf_ringbuf_reserve failed: the record's seq is lost */
	__u64 map_fail;              /* members map update failed (full, or -ENOMEM) */
	__u64 submitted;
	__u64 count_fail;            /* member slices not charged: a failed counter read
	                              * or no room in the per-thread map (loss) */
};

/*
 * The per-CPU, charged-at-context-switch counts of one thread: one counting
 * perf event per CPU per event (the loader's, in a PERF_EVENT_ARRAY by
 * CPU), read with bpf_perf_event_read_value() at every sched_switch on that
 * CPU; the delta since the CPU's previous switch is charged to the task
 * leaving it (prev) when prev's group is a member.  Sent at the thread's
 * last switch, after its last slice is charged, just before its exit
 * record (same tgid, tid).  value, enabled_ns and running_ns are sums over
 * the charged slices; running_ns < enabled_ns means some slice was
 * multiplexed (an estimate, not exact).  read_fail: slices whose read
 * failed (or could not be charged), whose counts are lost: the total is
 * then a lower bound.
 */
struct pmu_bpf_counts {
	struct pmu_bpf_hdr h;
	__u32 tgid, tid;
	__u32 nev;                   /* events, <= PMU_BPF_NEV, in the loader's order */
	__u32 flags;                 /* PMU_BPF_COUNTS_* */
	__u32 slices;                /* slices charged */
	__u32 read_fail;             /* slices lost (see above) */
	__u64 value[PMU_BPF_NEV];
	__u64 enabled_ns[PMU_BPF_NEV];
	__u64 running_ns[PMU_BPF_NEV];
};

#endif
