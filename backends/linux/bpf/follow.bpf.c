// SPDX-License-Identifier: GPL-2.0
/*
 * The eBPF follower: fork, exec and exit of a cohort, seen from the
 * scheduler's tracepoints without stopping any task.
 *
 * Programs are raw_tp, not tp_btf, on purpose: a tp_btf program is attached
 * by BTF id, so libbpf must parse the whole vmlinux BTF (5.5 MB) to find it
 * even when the CO-RE relocations are resolved against a minimal BTF
 * (btf_custom_path).  raw_tp attaches by tracepoint name, and every field
 * is read with BPF_CORE_READ, so a minimal BTF made by
 * `bpftool gen min_core_btf` is all the load needs.
 *
 * Membership: members is keyed by tgid.  The loader puts the root in
 * before the root may exec; a fork whose parent's tgid is a member adds the
 * child's tgid.  kernel/fork.c kernel_clone() fires sched_process_fork
 * after copy_process() and before wake_up_new_task(), so the child is a
 * member before it first runs.  The group's last thread, at its last
 * switch (after its exit record is committed), removes it.
 *
 * Ordering proof for user space: every record takes a sequence number from
 * one global counter before it reserves ring space; a failed reserve is
 * counted per CPU.  So seq_next == delivered + sum(reserve_fail), and the
 * seqs missing from the stream are exactly the dropped ones.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "follow.h"

char LICENSE[] SEC("license") = "GPL";

/* set by the loader before load */
const volatile __u64 cohort_cgid = 0;     /* cgroup v2 id; 0: none */
const volatile __u64 ns_per_tick = 10000000; /* NSEC_PER_SEC / USER_HZ */
const volatile __u32 nev = 0;             /* counting events (pmu_ev0 .. pmu_ev3); 0: none */

__u64 seq_next = 0; /* .bss: the last seq handed out, read by user space */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20); /* replaced by the loader */
} rb SEC(".maps");

/*
 * The hash maps are not preallocated: preallocating 32768 members costs
 * about 1 ms at map creation, on every run, against a rare allocation
 * failure at fork (bpf_mem_alloc works in any context since 6.1), which is
 * counted in map_fail like a full map.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384); /* replaced by the loader */
	__type(key, __u32);
	__type(value, __u8);
} members SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmu_bpf_counters);
} counters SEC(".maps");

/* include/linux/sched/signal.h; a #define, so not in BTF */
#define SIGNAL_GROUP_EXIT 0x00000004

static __always_inline struct pmu_bpf_counters *ctr(void)
{
	__u32 k = 0;
	return bpf_map_lookup_elem(&counters, &k);
}

static __always_inline bool is_member(__u32 tgid)
{
	return bpf_map_lookup_elem(&members, &tgid) != NULL;
}

/*
 * Take a seq, then ring space.  The consumer drains on a timer, so no
 * wakeup per record (BPF_RB_NO_WAKEUP) unless the ring is more than half
 * full: then a wakeup lets a consumer that polls the ring's fd drain
 * before it overflows.
 */
static __always_inline void *reserve(__u32 size, __u16 kind)
{
	__u64 seq = __sync_fetch_and_add(&seq_next, 1) + 1;
	struct pmu_bpf_hdr *h = bpf_ringbuf_reserve(&rb, size, 0);
	if (!h) {
		struct pmu_bpf_counters *c = ctr();
		if (c)
			__sync_fetch_and_add(&c->reserve_fail, 1);
		return NULL;
	}
	h->seq = seq;
	h->time_ns = bpf_ktime_get_ns();
	h->kind = kind;
	h->size = size;
	h->cpu = bpf_get_smp_processor_id();
	return h;
}

/* exec records are built here (their argv makes them too large for the
 * BPF stack) and sent with bpf_ringbuf_output(), whose size may vary */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmu_bpf_exec);
} exec_scratch SEC(".maps");

static __always_inline void submit(void *rec)
{
	__u64 avail = bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA);
	__u64 size = bpf_ringbuf_query(&rb, BPF_RB_RING_SIZE);
	struct pmu_bpf_counters *c = ctr();
	if (c)
		c->submitted++; /* per CPU: no other writer */
	bpf_ringbuf_submit(rec, avail > size / 2 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

/* start_boottime: the clock /proc/PID/stat field 22 is made from
 * (fs/proc/array.c: nsec_to_clock_t(timens_add_boottime_ns(...))); the
 * recorder runs in the initial time namespace. */
static __always_inline __u64 leader_start_ns(struct task_struct *t)
{
	return BPF_CORE_READ(t, group_leader, start_boottime);
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	__u32 flags = 0;

	if (!is_member(ptgid)) {
		/* current is the parent: its cgroup is the child's (save
		 * CLONE_INTO_CGROUP, which moves the child elsewhere) */
		if (!cohort_cgid || bpf_get_current_cgroup_id() != cohort_cgid)
			return 0;
		flags |= PMU_BPF_FORK_BY_CGROUP;
	}
	if (ctgid == ptgid) {
		flags |= PMU_BPF_FORK_THREAD;
	} else {
		__u8 one = 1;
		if (bpf_map_update_elem(&members, &ctgid, &one, BPF_ANY)) {
			struct pmu_bpf_counters *c = ctr();
			if (c)
				__sync_fetch_and_add(&c->map_fail, 1);
			flags |= PMU_BPF_FORK_NOTRACK;
		}
	}

	struct pmu_bpf_fork *r = reserve(sizeof(*r), PMU_BPF_REC_FORK);
	if (!r)
		return 0;
	r->parent_tgid = ptgid;
	r->parent_tid = BPF_CORE_READ(parent, pid);
	r->child_tgid = ctgid;
	r->child_tid = BPF_CORE_READ(child, pid);
	r->flags = flags;
	r->pad = 0;
	r->parent_start_ns = leader_start_ns(parent);
	r->parent_start_ticks = r->parent_start_ns / ns_per_tick;
	r->child_start_ns = BPF_CORE_READ(child, start_boottime);
	r->child_start_ticks = r->child_start_ns / ns_per_tick;
	submit(r);
	return 0;
}

/*
 * The exec record: the argv is read here, in the kernel, at the exec, from
 * the new image's mm->arg_start .. arg_end (what /proc/PID/cmdline shows):
 * current is the task that exec'd, and fs/exec.c copy_strings() has just
 * written the strings to its new stack, so a non-faulting read finds them.
 * Up to PMU_BPF_ARGV_MAX bytes are kept; the record is sent with its used
 * length only.  The seq is taken before the ring is asked for space, as in
 * reserve(), and a failed output is counted the same way.
 */
SEC("raw_tp/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	__u32 k = 0;
	if (!is_member(tgid))
		return 0;
	__u64 seq = __sync_fetch_and_add(&seq_next, 1) + 1;
	struct pmu_bpf_exec *r = bpf_map_lookup_elem(&exec_scratch, &k);
	if (!r) {
		struct pmu_bpf_counters *c = ctr();
		if (c)
			__sync_fetch_and_add(&c->reserve_fail, 1);
		return 0;
	}
	r->h.seq = seq;
	r->h.time_ns = bpf_ktime_get_ns();
	r->h.kind = PMU_BPF_REC_EXEC;
	r->h.cpu = bpf_get_smp_processor_id();
	r->tgid = tgid;
	r->tid = BPF_CORE_READ(p, pid);
	r->old_tid = old_pid;
	r->flags = 0;
	/* de_thread() gave a non-leader the leader's start times */
	r->start_ns = leader_start_ns(p);
	r->start_ticks = r->start_ns / ns_per_tick;
	r->pad = 0;

	const char *fn = BPF_CORE_READ(bprm, filename);
	long n = bpf_probe_read_kernel_str(r->filename, sizeof(r->filename), fn);
	if (n <= 0) {
		r->filename[0] = 0;
		n = 1;
	}
	r->filename_len = n - 1;
	/* a full buffer is truncation when the source goes on past it */
	if (n == sizeof(r->filename)) {
		char next = 0;
		bpf_probe_read_kernel(&next, 1, fn + sizeof(r->filename) - 1);
		if (next)
			r->flags |= PMU_BPF_EXEC_TRUNCATED;
	}

	struct mm_struct *mm = BPF_CORE_READ(p, mm);
	__u64 as = BPF_CORE_READ(mm, arg_start), ae = BPF_CORE_READ(mm, arg_end);
	__u64 total = ae > as ? ae - as : 0;
	__u32 len = total > PMU_BPF_ARGV_MAX ? PMU_BPF_ARGV_MAX : (__u32)total;
	/* the verifier must see the bound on the register it checks */
	barrier_var(len);
	if (len > PMU_BPF_ARGV_MAX)
		len = PMU_BPF_ARGV_MAX;
	r->argv_total = total > 0xffffffffull ? 0xffffffffu : (__u32)total;
	if (len && bpf_probe_read_user(r->argv, len, (const void *)as)) {
		r->flags |= PMU_BPF_EXEC_ARGV_FAULT;
		r->argv_total = 0;
		len = 0;
	}
	if (total > PMU_BPF_ARGV_MAX && len)
		r->flags |= PMU_BPF_EXEC_ARGV_TRUNCATED;
	r->argv_len = len;

	barrier_var(len);
	if (len > PMU_BPF_ARGV_MAX)
		len = PMU_BPF_ARGV_MAX;
	__u32 size = (__u32)__builtin_offsetof(struct pmu_bpf_exec, argv) + len;
	r->h.size = size;
	__u64 avail = bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA);
	__u64 rsize = bpf_ringbuf_query(&rb, BPF_RB_RING_SIZE);
	if (bpf_ringbuf_output(&rb, r, size, avail > rsize / 2 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP)) {
		struct pmu_bpf_counters *c = ctr();
		if (c)
			__sync_fetch_and_add(&c->reserve_fail, 1);
		return 0;
	}
	struct pmu_bpf_counters *c = ctr();
	if (c)
		c->submitted++; /* per CPU: no other writer */
	return 0;
}

/*
 * Exit accounting takes two hooks, because no single point of do_exit()
 * has both what decides the group and the final counts.
 *
 * 1. raw_tp/sched_process_exit, trace_sched_process_exit(tsk, group_dead):
 *    kernel/exit.c do_exit() (6.16+) fires it after exit_signals()
 *    (PF_EXITING), the signal->live decrement that decides group_dead, the
 *    group's setmax_mm_hiwater_rss(&signal->maxrss, mm), tsk->exit_code =
 *    code and taskstats_exit(); before perf_event_exit_task(), exit_mm(),
 *    exit_files(), exit_notify() and the last __schedule().  Read here,
 *    final:
 *     - exit_code (task->exit_code), set just before;
 *     - group_status: signal->group_exit_code when SIGNAL_GROUP_EXIT is set
 *       (exit_group(2) or a fatal signal), else the leader's exit_code:
 *       the rule of wait_task_zombie();
 *     - maxrss_pages (signal->maxrss) with group_dead: exec_mmap() folded
 *       every earlier mm in, do_exit() the last one just above;
 *     - group_dead itself (only this tracepoint knows it: two threads
 *       exiting at once may both see signal->live at 0 later).
 *     - the thread's tid, tgid and its group's start, as it exits.
 *    These wait in the dying map, keyed by the task's address.
 *
 *    Why not by tid: when a thread that is not the leader execs,
 *    fs/exec.c de_thread() waits only until the old leader is a zombie
 *    (exit_state, set in exit_notify()), then exchange_tids() swaps the two
 *    tasks' pids.  The old leader's last switch can come after that swap:
 *    there its task->pid is the exec'ing thread's former tid.  Keyed by
 *    that tid, the lookup missed and the leader's exit was never sent; read
 *    there, the record named the wrong thread with the leader's flags.
 *    The identity is taken here, where tid == tgid decides LEADER, and the
 *    address cannot be reused before the task's last switch (the
 *    task_struct is freed after it, finish_task_switch()).
 *
 * 2. raw_tp/sched_switch with prev_state TASK_DEAD: the task's last switch
 *    (do_task_dead()).  __schedule() has already charged prev's last slice
 *    (put_prev_task() -> update_curr()) and counted the switch, and the
 *    task never runs again, so everything it accumulates is final here:
 *    se.sum_exec_runtime (ns), utime/stime (ns, tick samples under
 *    TICK_CPU_ACCOUNTING, unscaled: /proc scales them to sum_exec_runtime
 *    with cputime_adjust()), min_flt, maj_flt, nvcsw (this last switch
 *    included), nivcsw, se.nr_migrations, and ioac: rchar, wchar, syscr,
 *    syscw (TASK_XACCT), read_bytes, write_bytes, cancelled_write_bytes
 *    (TASK_IO_ACCOUNTING).  Reading these at hook 1 instead misses the
 *    tail of do_exit and, for a short task, its whole last slice: a
 *    process that lives less than a tick shows 0 ns there.
 *    The cost: one argument compare on every context switch of the host.
 *
 * When the dying map is full (map_fail counted), hook 1 sends the record
 * itself with PMU_BPF_EXIT_EARLY and the counts as of then.
 */
#define TASK_DEAD 0x00000080 /* include/linux/sched.h */

struct dying {
	__u64 exit_ns;
	__u64 start_ns;       /* the group leader's start: the incarnation */
	__u32 tgid, tid;      /* as it exited (see above: not read at the switch) */
	__u32 flags;
	__s32 exit_code, group_status;
	__u32 pad;
	__u64 maxrss_pages;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 2048); /* threads between the two hooks at once */
	__type(key, __u64);        /* the task_struct's address */
	__type(value, struct dying);
} dying SEC(".maps");

static __always_inline void send_exit(struct task_struct *p, const struct dying *d)
{
	struct pmu_bpf_exit *r = reserve(sizeof(*r), PMU_BPF_REC_EXIT);
	if (!r)
		return;
	r->exit_ns = d->exit_ns;
	r->tgid = d->tgid;
	r->tid = d->tid;
	r->flags = d->flags;
	r->exit_code = d->exit_code;
	r->group_status = d->group_status;
	r->maxrss_pages = d->maxrss_pages;
	r->pad = 0;
	r->start_ns = d->start_ns;
	r->start_ticks = r->start_ns / ns_per_tick;
	r->thread_start_ns = BPF_CORE_READ(p, start_boottime);
	r->sum_exec_runtime_ns = BPF_CORE_READ(p, se.sum_exec_runtime);
	r->utime_ns = BPF_CORE_READ(p, utime);
	r->stime_ns = BPF_CORE_READ(p, stime);
	r->min_flt = BPF_CORE_READ(p, min_flt);
	r->maj_flt = BPF_CORE_READ(p, maj_flt);
	r->nvcsw = BPF_CORE_READ(p, nvcsw);
	r->nivcsw = BPF_CORE_READ(p, nivcsw);
	r->nr_migrations = BPF_CORE_READ(p, se.nr_migrations);
	r->rchar = BPF_CORE_READ(p, ioac.rchar);
	r->wchar = BPF_CORE_READ(p, ioac.wchar);
	r->syscr = BPF_CORE_READ(p, ioac.syscr);
	r->syscw = BPF_CORE_READ(p, ioac.syscw);
	r->read_bytes = BPF_CORE_READ(p, ioac.read_bytes);
	r->write_bytes = BPF_CORE_READ(p, ioac.write_bytes);
	r->cancelled_write_bytes = BPF_CORE_READ(p, ioac.cancelled_write_bytes);
	bpf_probe_read_kernel_str(r->comm, sizeof(r->comm), &p->comm);
	submit(r);
}

/* Hook 1's body; group_dead as the kernel decided it (see the two entries below) */
static __always_inline int exit_begin(struct task_struct *p, bool group_dead)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	if (!is_member(tgid))
		return 0;

	struct dying d = {0};
	__u64 task = (__u64)p;
	__u32 tid = BPF_CORE_READ(p, pid);
	unsigned int sflags = BPF_CORE_READ(p, signal, flags);
	d.exit_ns = bpf_ktime_get_ns();
	d.start_ns = leader_start_ns(p);
	d.tgid = tgid;
	d.tid = tid;
	if (group_dead)
		d.flags |= PMU_BPF_EXIT_GROUP_DEAD;
	if (tid == tgid)
		d.flags |= PMU_BPF_EXIT_LEADER;
	if (sflags & SIGNAL_GROUP_EXIT)
		d.flags |= PMU_BPF_EXIT_GROUP_EXIT;
	d.exit_code = BPF_CORE_READ(p, exit_code);
	if (group_dead) {
		d.group_status = (sflags & SIGNAL_GROUP_EXIT) ? BPF_CORE_READ(p, signal, group_exit_code)
		                                              : BPF_CORE_READ(p, group_leader, exit_code);
		d.maxrss_pages = BPF_CORE_READ(p, signal, maxrss);
	}
	if (bpf_map_update_elem(&dying, &task, &d, BPF_ANY)) {
		struct pmu_bpf_counters *c = ctr();
		if (c)
			__sync_fetch_and_add(&c->map_fail, 1);
		d.flags |= PMU_BPF_EXIT_EARLY;
		send_exit(p, &d);
		if (group_dead)
			bpf_map_delete_elem(&members, &tgid);
	}
	return 0;
}

/* Linux 6.16 and later: the tracepoint passes group_dead */
SEC("raw_tp/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p, bool group_dead)
{
	return exit_begin(p, group_dead);
}

/*
 * Before 6.16 (Debian 12's 6.1): trace_sched_process_exit(tsk) has no
 * group_dead, and reading signal->live there races (two threads exiting at
 * once may both see 0).  do_exit() hands the group_dead it decided with
 * atomic_dec_and_test(&signal->live) to taskstats_exit() (6.1
 * kernel/exit.c; CONFIG_TASKSTATS, which Debian's kernels have):
 *     tsk->exit_code = code;
 *     taskstats_exit(tsk, group_dead);
 *     exit_mm();
 *     ...
 *     trace_sched_process_exit(tsk);
 * tsk is current, exit_code is set and the group's maxrss folded in: the
 * same state the 6.16 tracepoint sees.  The loader attaches this kprobe
 * only when the tracepoint refuses the two-argument program (EINVAL: the
 * program reads an argument the tracepoint lacks).
 *
 * The argument is read from the registers the kprobe saved, not through
 * vmlinux.h's pt_regs, which is the build host's architecture in a cross
 * build.
 */
#if defined(__TARGET_ARCH_arm64)
/* arch/arm64/include/asm/ptrace.h: pt_regs begins with user_pt_regs, regs[0..30] */
#define KPROBE_ARG2(ctx) (((const __u64 *)(ctx))[1])
#elif defined(__TARGET_ARCH_x86)
#define KPROBE_ARG2(ctx) ((ctx)->si)
#else
#error "the exit kprobe's second argument: add this architecture's register"
#endif

SEC("kprobe/taskstats_exit")
int on_exit_kprobe(struct pt_regs *ctx)
{
	struct task_struct *p = (struct task_struct *)bpf_get_current_task();
	return exit_begin(p, (int)KPROBE_ARG2(ctx) != 0);
}

/*
 * Per-incarnation hardware counts by the per-CPU, charged-at-context-switch
 * method (see struct pmu_bpf_counts).  The loader opens one counting event
 * per CPU per event (pid -1, that CPU) and puts its fd at the CPU's index of
 * pmu_ev0 .. pmu_ev3.  At every switch on a CPU the events are read there
 * (bpf_perf_event_read_value, BPF_F_CURRENT_CPU) and the delta since the
 * previous switch on that CPU is the slice of the task leaving it: charged
 * to prev when its group is a member.  The first switch seen on a CPU only
 * sets its baseline: no member runs before it (the root waits behind the
 * launch barrier while the programs are attached, and every member slice
 * begins at a switch).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, 1); /* replaced by the loader: possible CPUs */
} pmu_ev0 SEC(".maps"), pmu_ev1 SEC(".maps"), pmu_ev2 SEC(".maps"), pmu_ev3 SEC(".maps");

struct cpu_last {
	__u64 value[PMU_BPF_NEV], enabled[PMU_BPF_NEV], running[PMU_BPF_NEV];
	__u32 valid;   /* bit per event: a baseline is there */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_last);
} pmu_last SEC(".maps");

struct thread_counts {
	__u64 value[PMU_BPF_NEV], enabled_ns[PMU_BPF_NEV], running_ns[PMU_BPF_NEV];
	__u32 slices, read_fail;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u64); /* the task_struct's address, as dying */
	__type(value, struct thread_counts);
} pmu_thr SEC(".maps");

/* read event i on this CPU; the delta since the last read there into
 * dv, de, dr; false when the read failed or there was no baseline */
static __always_inline bool read_delta(void *map, struct cpu_last *l, int i, __u64 *dv, __u64 *de, __u64 *dr)
{
	struct bpf_perf_event_value v;
	bool had = l->valid & (1u << i);

	if (bpf_perf_event_read_value(map, BPF_F_CURRENT_CPU, &v, sizeof(v))) {
		l->valid &= ~(1u << i);
		return false;
	}
	*dv = v.counter - l->value[i];
	*de = v.enabled - l->enabled[i];
	*dr = v.running - l->running[i];
	l->value[i] = v.counter;
	l->enabled[i] = v.enabled;
	l->running[i] = v.running;
	l->valid |= 1u << i;
	return had;
}

static __always_inline void charge(struct task_struct *prev)
{
	__u32 k = 0;
	struct cpu_last *l = bpf_map_lookup_elem(&pmu_last, &k);
	__u64 dv[PMU_BPF_NEV] = {0}, de[PMU_BPF_NEV] = {0}, dr[PMU_BPF_NEV] = {0};
	bool ok = true, was_valid;

	if (!l)
		return;
	was_valid = l->valid != 0;
	ok = read_delta(&pmu_ev0, l, 0, &dv[0], &de[0], &dr[0]);
	if (nev > 1 && !read_delta(&pmu_ev1, l, 1, &dv[1], &de[1], &dr[1]))
		ok = false;
	if (nev > 2 && !read_delta(&pmu_ev2, l, 2, &dv[2], &de[2], &dr[2]))
		ok = false;
	if (nev > 3 && !read_delta(&pmu_ev3, l, 3, &dv[3], &de[3], &dr[3]))
		ok = false;

	__u32 tgid = BPF_CORE_READ(prev, tgid);
	if (!is_member(tgid))
		return;
	if (!was_valid && ok)
		ok = false; /* cannot happen for a member: see above */
	__u64 task = (__u64)prev;
	struct thread_counts *t = bpf_map_lookup_elem(&pmu_thr, &task);
	if (!t) {
		struct thread_counts z = {0};
		bpf_map_update_elem(&pmu_thr, &task, &z, BPF_NOEXIST);
		t = bpf_map_lookup_elem(&pmu_thr, &task);
		if (!t) {
			struct pmu_bpf_counters *c = ctr();
			if (c)
				__sync_fetch_and_add(&c->count_fail, 1);
			return;
		}
	}
	if (!ok) {
		struct pmu_bpf_counters *c = ctr();
		if (c)
			__sync_fetch_and_add(&c->count_fail, 1);
		t->read_fail++;
		return;
	}
	t->slices++;
	for (int i = 0; i < PMU_BPF_NEV; i++) {
		t->value[i] += dv[i];
		t->enabled_ns[i] += de[i];
		t->running_ns[i] += dr[i];
	}
}

/* the thread's counts record, at its last switch, before its exit record */
static __always_inline void send_counts(struct task_struct *p, const struct dying *d)
{
	__u64 task = (__u64)p;
	struct thread_counts *t = bpf_map_lookup_elem(&pmu_thr, &task);
	struct pmu_bpf_counts *r = reserve(sizeof(*r), PMU_BPF_REC_COUNTS);

	if (r) {
		r->tgid = d->tgid;
		r->tid = d->tid;
		r->nev = nev;
		r->flags = t ? 0 : PMU_BPF_COUNTS_NOENTRY;
		r->slices = t ? t->slices : 0;
		r->read_fail = t ? t->read_fail : 0;
		for (int i = 0; i < PMU_BPF_NEV; i++) {
			bool used = t && i < nev;
			r->value[i] = used ? t->value[i] : 0;
			r->enabled_ns[i] = used ? t->enabled_ns[i] : 0;
			r->running_ns[i] = used ? t->running_ns[i] : 0;
		}
		submit(r);
	}
	if (t)
		bpf_map_delete_elem(&pmu_thr, &task);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next, unsigned int prev_state)
{
	if (nev)
		charge(prev);
	if (prev_state != TASK_DEAD)
		return 0;
	__u64 task = (__u64)prev;
	struct dying *d = bpf_map_lookup_elem(&dying, &task);
	if (!d)
		return 0;
	struct dying copy = *d;
	if (nev)
		send_counts(prev, &copy);
	send_exit(prev, &copy);
	/* after the record is committed: a consumer that sees both maps
	 * empty has every exit in the ring */
	bpf_map_delete_elem(&dying, &task);
	if (copy.flags & PMU_BPF_EXIT_GROUP_DEAD)
		bpf_map_delete_elem(&members, &copy.tgid);
	return 0;
}
