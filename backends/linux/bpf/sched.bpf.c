// SPDX-License-Identifier: GPL-2.0
/*
 * The sched collector: where a cohort thread's time goes, from the
 * scheduler's tracepoints (section 23 of the bundle spec).
 *
 * A thread's state is one value of the threads map (by its task), made at its
 * first sight (sched_wakeup_new for a thread born in the run; its first
 * switch for one that was there) and removed at its exit
 * (sched_process_exit), when its totals go to the ring as one thread
 * record (a thread that execs from another than the leader ends its
 * former tid there and starts again under the leader's pid).  Between the two, every transition at time now charges
 * now - last_ns to the bucket of the state it leaves and sets last_ns, so
 * the buckets always sum to last_ns - first_ns exactly:
 *
 *   ON   --sched_switch out, preempted or running--> RUNQ  (involuntary)
 *   ON   --sched_switch out, S / D / other--------> WAIT  (voluntary)
 *   WAIT --sched_wakeup---------------------------> RUNQ
 *   RUNQ, WAIT --sched_switch in------------------> ON    (one off record)
 *
 * One ring record per off interval of a cohort thread, written at its
 * switch back in (the interval is then whole); nothing for any other
 * task.  Intervals shorter than min_off_ns get no record (counted per CPU
 * in short_offs; their time is in the totals).
 *
 * The programs are tp_btf: prev, next and p are trusted task pointers, so
 * bpf_task_pt_regs() gives the saved user registers, where the system call
 * in progress is (orig_ax on x86 while ax holds the entry's -ENOSYS,
 * syscallno on arm64) and, at voluntary switches with chains on, the frame
 * pointer the user call chain starts from.  The cohort filter's fork and
 * exit programs are raw_tp (cohort.bpf.h).
 *
 * Measured cost (kernel.bpf_stats_enabled, 2-vCPU VM, Linux 6.18): about
 * 0.3 us per switch of other tasks, 0.45 (no chains) to 0.65 us (chains)
 * per switch of a cohort thread, 0.2 us per wakeup.
 *
 * Loss: every record takes a sequence number from one global counter
 * before it reserves ring space; a failed reserve and a full threads map
 * are counted per CPU.  The ring wakes its reader only when more than half
 * full: the recorder drains it on its loop's timer.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "sched.h"

static __always_inline void root_exec(struct task_struct *p);
#define PMU_COHORT_ON_EXEC(p) root_exec(p)
#include "cohort.bpf.h"
#include "regs.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u64 min_off_ns = 0; /* set by the loader */
const volatile __u32 chains = 0;     /* 1: keep the user stack at each switch out */

__u64 seq_next = 0; /* .bss: the last seq handed out, read by user space */
__u64 parked = 0;   /* .bss: exits whose totals wait in the map (PMU_SCHED_EXITED) */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22); /* replaced by the loader */
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 32768); /* replaced by the loader */
	__type(key, __u64);         /* the task_struct's address: a thread that execs from
				     * another than the leader keeps its task while the
				     * kernel swaps its tid (exchange_tids()), so the switches
				     * between that swap and the exec tracepoint stay in the
				     * life they belong to; parked lives of such a task: | 1 */
	__type(value, struct pmu_sched_task);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmu_sched_counters);
} counters SEC(".maps");

/* an off record with its chain is built here (too large for the stack) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmu_sched_off_chain);
} off_scratch SEC(".maps");

/*
 * Which task came on each CPU, and when (written at every switch).  A
 * cohort thread seen first while on a CPU is tracked at its switch out (or
 * its exit) from the moment it came on, not at its switch in: then one
 * sched_switch allocates at most one map entry.  The threads map is not
 * preallocated, and the kernel's BPF allocator keeps a single spare entry
 * of this size per CPU until its refill (an irq_work) runs after the
 * switch, so a second allocation in the same switch failed with -ENOMEM:
 * two untracked cohort threads switching on one CPU at an attach (--pid)
 * lost one entry every time.
 */
struct on_cpu {
	__u64 task; /* the task_struct's address */
	__u64 since;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct on_cpu);
} on_cpu SEC(".maps");

/* when t came on this CPU, if the last switch here brought it; else now */
static __always_inline __u64 on_since(struct task_struct *t, __u64 now)
{
	__u32 k = 0;
	struct on_cpu *o = bpf_map_lookup_elem(&on_cpu, &k);
	return o && o->task == (__u64)t && o->since <= now ? o->since : now;
}

/* include/linux/sched.h: #defines, so not in BTF */
#define TASK_RUNNING 0x0000
#define TASK_INTERRUPTIBLE 0x0001
#define TASK_UNINTERRUPTIBLE 0x0002
#define TASK_DEAD 0x0080
#define PF_EXITING 0x00000004

static __always_inline struct pmu_sched_counters *ctr(void)
{
	__u32 k = 0;
	return bpf_map_lookup_elem(&counters, &k);
}

static __always_inline void *reserve(__u32 size, __u16 kind, __u64 t)
{
	__u64 seq = __sync_fetch_and_add(&seq_next, 1) + 1;
	struct pmu_sched_hdr *h = bpf_ringbuf_reserve(&rb, size, 0);
	if (!h) {
		struct pmu_sched_counters *c = ctr();
		if (c)
			__sync_fetch_and_add(&c->reserve_fail, 1);
		return NULL;
	}
	h->seq = seq;
	h->time_ns = t;
	h->kind = kind;
	h->size = size;
	h->cpu = bpf_get_smp_processor_id();
	return h;
}

static __always_inline void submit(void *rec)
{
	__u64 avail = bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA);
	__u64 size = bpf_ringbuf_query(&rb, BPF_RB_RING_SIZE);
	struct pmu_sched_counters *c = ctr();
	if (c)
		c->submitted++; /* per CPU: no other writer */
	bpf_ringbuf_submit(rec, avail > size / 2 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

/* Charge now - last_ns to the state being left.  A now behind last_ns (two
 * CPUs racing on one thread) charges nothing and keeps last_ns, so the sum
 * stays last_ns - first_ns. */
static __always_inline void account(struct pmu_sched_task *e, __u64 now)
{
	if (now <= e->last_ns)
		return;
	__u64 d = now - e->last_ns;
	e->last_ns = now;
	if (e->st == PMU_SCHED_ST_ON)
		e->on_ns += d;
	else if (e->st == PMU_SCHED_ST_RUNQ)
		e->runq_ns += d;
	else if (e->off_state == PMU_SCHED_S)
		e->sleep_ns += d;
	else if (e->off_state == PMU_SCHED_D)
		e->blocked_ns += d;
	else
		e->other_ns += d;
}

/* A new entry for a cohort thread seen first now, in state st. */
static __always_inline struct pmu_sched_task *track(struct task_struct *t, __u32 tid, __u64 now, __u16 st,
						    __u32 flags)
{
	struct pmu_sched_task v = {};
	__u64 key = (__u64)t;
	v.tgid = BPF_CORE_READ(t, tgid);
	v.tid = tid;
	v.flags = flags;
	v.leader_start_ns = BPF_CORE_READ(t, group_leader, start_boottime);
	v.first_ns = now;
	v.last_ns = now;
	v.first_on_ns = st == PMU_SCHED_ST_ON ? now : 0;
	v.st = st;
	v.nr = -1;
	long err = bpf_map_update_elem(&threads, &key, &v, BPF_NOEXIST);
	/* -EEXIST: another CPU tracked it at the same moment (a thread that
	 * existed before the attach, switched out on one CPU while woken on
	 * another): its entry stands, nothing is lost */
	if (err && err != -17 /* EEXIST */) {
		struct pmu_sched_counters *c = ctr();
		if (c)
			__sync_fetch_and_add(&c->map_fail, 1);
		return NULL;
	}
	return bpf_map_lookup_elem(&threads, &key);
}

/*
 * The root's exec (cohort.bpf.h's exec program, once the root is in the
 * cohort): its thread is tracked from now, on a CPU (it is running the
 * exec).  Before, pmurec's launcher ran in it (the barrier, execvp's walk
 * of PATH), which is not the command's time: the thread record counts it
 * as unobserved.
 */
static __always_inline void root_exec(struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid);
	__u64 key = (__u64)p;
	if (!bpf_map_lookup_elem(&threads, &key))
		track(p, tid, bpf_ktime_get_ns(), PMU_SCHED_ST_ON, 0);
}

/*
 * The tid of an exited thread whose totals wait in the map (PMU_SCHED_EXITED)
 * was reused: a cohort thread that cannot be tracked, counted as a full map.
 * (The check runs once per switch of such a task; pid reuse within a run
 * with a full ring is rare.)
 */
static __always_inline void stale(struct task_struct *t)
{
	if (!(BPF_CORE_READ(t, flags) & PF_EXITING) && pmu_task_in_cohort(t)) {
		struct pmu_sched_counters *c = ctr();
		if (c)
			__sync_fetch_and_add(&c->map_fail, 1);
	}
}

/* the system call in progress, from the task's saved user registers */
static __always_inline __s32 syscall_nr(struct task_struct *t)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	if (!regs)
		return -1;
#if defined(__TARGET_ARCH_x86)
	/*
	 * orig_ax holds the number on a syscall entry, but an interrupt's
	 * vector or an exception's error code on other entries from user
	 * mode.  entry_SYSCALL_64 pushes -ENOSYS as pt_regs->ax and
	 * do_syscall_64() stores the return value there only when the call
	 * returns: in a call, ax is still -ENOSYS.
	 */
	if ((long)BPF_CORE_READ(regs, ax) != -38 /* -ENOSYS */)
		return -1;
	return (__s32)BPF_CORE_READ(regs, orig_ax);
#elif defined(__TARGET_ARCH_arm64)
	return BPF_CORE_READ(PMU_ARM64_REGS(regs), syscallno);
#else
	return -1;
#endif
}

/*
 * The user call chain by frame pointers, as perf's fp unwinder walks it
 * (arch/x86/events/core.c perf_callchain_user()): the saved user pc, then
 * from the saved frame pointer each frame's [next frame, return address],
 * while the frames go up the stack.  Only for voluntary switches (the
 * blocking that an off-CPU profile is about; a preempted thread's place is
 * the sampling collector's).  Walked here with bpf_probe_read_user() rather
 * than bpf_get_stack(BPF_F_USER_STACK), which measured about 5 us per call
 * on the development VM whatever the depth, this about 0.1 us per frame.
 */
static __always_inline __u16 user_chain(struct task_struct *t, __u64 *chain)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	__u64 pc, fp;
	__u16 n = 0;

	if (!regs)
		return 0;
#if defined(__TARGET_ARCH_x86)
	pc = BPF_CORE_READ(regs, ip);
	fp = BPF_CORE_READ(regs, bp);
#elif defined(__TARGET_ARCH_arm64)
	pc = BPF_CORE_READ(PMU_ARM64_REGS(regs), pc);
	fp = BPF_CORE_READ(PMU_ARM64_REGS(regs), regs[29]);
#else
	return 0;
#endif
	if (!pc)
		return 0;
	chain[0] = pc;
	n = 1;
	for (int i = 1; i < PMU_SCHED_CHAIN_MAX; i++) {
		__u64 fr[2];

		if (!fp || (fp & 7) || bpf_probe_read_user(fr, sizeof(fr), (const void *)fp) || !fr[1])
			break;
		chain[i] = fr[1];
		n = i + 1;
		if (fr[0] <= fp)
			break;
		fp = fr[0];
	}
	return n;
}

static __always_inline void switch_out(void *ctx, struct task_struct *prev, bool preempt, unsigned int prev_state,
				       __u64 now, __u32 cpu)
{
	__u32 tid = BPF_CORE_READ(prev, pid);
	__u64 key = (__u64)prev;
	if (!tid || (prev_state & TASK_DEAD))
		return;
	struct pmu_sched_task *e = bpf_map_lookup_elem(&threads, &key);
	if (e && (e->flags & PMU_SCHED_EXITED)) {
		stale(prev);
		return;
	}
	if (!e) {
		/* after its exit record a thread is not tracked again */
		if ((BPF_CORE_READ(prev, flags) & PF_EXITING) || !pmu_task_in_cohort(prev))
			return;
		e = track(prev, tid, on_since(prev, now), PMU_SCHED_ST_ON, 0);
		if (!e)
			return;
	}
	account(e, now);
	e->out_ns = now;
	e->cpu_out = cpu;
	e->waker_tid = 0;
	e->nr = syscall_nr(prev);
	if (preempt || prev_state == TASK_RUNNING) {
		e->st = PMU_SCHED_ST_RUNQ;
		e->off_state = PMU_SCHED_R;
		e->wake_ns = now;
		e->involuntary++;
	} else {
		e->st = PMU_SCHED_ST_WAIT;
		e->off_state = (prev_state & TASK_INTERRUPTIBLE)     ? PMU_SCHED_S
		               : (prev_state & TASK_UNINTERRUPTIBLE) ? PMU_SCHED_D
		                                                      : PMU_SCHED_OTHER;
		e->wake_ns = 0;
		e->voluntary++;
	}
	e->nchain = 0;
	if (chains && e->st == PMU_SCHED_ST_WAIT)
		e->nchain = user_chain(prev, e->chain);
}

static __always_inline void fill_off(struct pmu_sched_off *r, const struct pmu_sched_task *e, __u32 tid, __u64 out,
					__u64 now, __u16 n)
{
	r->tgid = e->tgid;
	r->tid = tid;
	r->leader_start_ns = e->leader_start_ns;
	r->out_ns = out;
	r->wake_ns = e->wake_ns < out ? out : e->wake_ns > now ? now : e->wake_ns;
	r->nr = e->nr;
	r->waker_tid = e->waker_tid;
	r->state = e->off_state;
	r->nchain = n;
	r->cpu_out = e->cpu_out;
}

static __always_inline void switch_in(struct task_struct *next, __u64 now, __u32 cpu)
{
	__u32 tid = BPF_CORE_READ(next, pid), slot = 0;
	__u64 key = (__u64)next;
	struct on_cpu *o = bpf_map_lookup_elem(&on_cpu, &slot);
	if (o) {
		o->task = key;
		o->since = now;
	}
	if (!tid)
		return;
	struct pmu_sched_task *e = bpf_map_lookup_elem(&threads, &key);
	if (e && (e->flags & PMU_SCHED_EXITED)) {
		stale(next);
		return;
	}
	if (!e)
		return; /* tracked at its switch out or exit, from now (on_cpu) */
	if (e->st == PMU_SCHED_ST_ON)
		return; /* not off: nothing to close */
	if (e->st == PMU_SCHED_ST_WAIT)
		e->wake_ns = now; /* no wakeup was seen: all of it was waiting */
	account(e, now);
	e->st = PMU_SCHED_ST_ON;
	if (!e->first_on_ns)
		e->first_on_ns = now;
	__u64 out = e->out_ns;
	e->out_ns = 0;
	if (!out)
		return; /* born in the run: its first run is not an off interval */
	if (now - out < min_off_ns) {
		struct pmu_sched_counters *c = ctr();
		if (c)
			c->short_offs++;
		return;
	}
	__u16 n = e->nchain;
	if (n > PMU_SCHED_CHAIN_MAX)
		n = PMU_SCHED_CHAIN_MAX;
	if (!n) {
		struct pmu_sched_off *r = reserve(sizeof(*r), PMU_SCHED_REC_OFF, now);
		if (!r)
			return;
		fill_off(r, e, e->tid, out, now, 0);
		submit(r);
		return;
	}
	/* with a chain: built in a per-CPU scratch and sent with its used
	 * length (bpf_ringbuf_reserve() takes a constant size only); the seq
	 * is taken first, as in reserve() */
	__u32 k = 0;
	__u64 seq = __sync_fetch_and_add(&seq_next, 1) + 1;
	struct pmu_sched_off_chain *rc = bpf_map_lookup_elem(&off_scratch, &k);
	struct pmu_sched_counters *c = ctr();
	if (!rc) {
		if (c)
			__sync_fetch_and_add(&c->reserve_fail, 1);
		return;
	}
	__builtin_memcpy(rc->chain, e->chain, sizeof(rc->chain));
	rc->o.h.seq = seq;
	rc->o.h.time_ns = now;
	rc->o.h.kind = PMU_SCHED_REC_OFF;
	rc->o.h.cpu = cpu;
	fill_off(&rc->o, e, e->tid, out, now, n);
	__u32 size = (__u32)sizeof(struct pmu_sched_off) + n * 8;
	barrier_var(size);
	if (size > sizeof(struct pmu_sched_off_chain))
		size = sizeof(struct pmu_sched_off_chain);
	rc->o.h.size = size;
	__u64 avail = bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA);
	__u64 rsize = bpf_ringbuf_query(&rb, BPF_RB_RING_SIZE);
	if (bpf_ringbuf_output(&rb, rc, size, avail > rsize / 2 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP)) {
		if (c)
			__sync_fetch_and_add(&c->reserve_fail, 1);
		return;
	}
	if (c)
		c->submitted++;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(pmu_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 cpu = bpf_get_smp_processor_id();

	switch_out(ctx, prev, preempt, prev_state, now, cpu);
	switch_in(next, now, cpu);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(pmu_sched_wakeup, struct task_struct *p)
{
	__u64 key = (__u64)p;
	struct pmu_sched_task *e = bpf_map_lookup_elem(&threads, &key);
	if (!e || e->st != PMU_SCHED_ST_WAIT || (e->flags & PMU_SCHED_EXITED))
		return 0;
	__u64 now = bpf_ktime_get_ns();
	account(e, now);
	e->st = PMU_SCHED_ST_RUNQ;
	e->wake_ns = now;
	e->waker_tid = (__u32)bpf_get_current_pid_tgid();
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(pmu_sched_wakeup_new, struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid);
	if (!pmu_task_in_cohort(p))
		return 0;
	track(p, tid, bpf_ktime_get_ns(), PMU_SCHED_ST_RUNQ, PMU_SCHED_BORN);
	return 0;
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(pmu_sched_migrate, struct task_struct *p, int dest_cpu)
{
	__u64 key = (__u64)p;
	struct pmu_sched_task *e = bpf_map_lookup_elem(&threads, &key);
	if (e && !(e->flags & PMU_SCHED_EXITED))
		__sync_fetch_and_add(&e->migrations, 1);
	return 0;
}

/*
 * Send thread tid's totals (its exit, or the end of its tid at an exec), up
 * to e->last_ns.  A full ring does not lose them: they stay in the map,
 * marked PMU_SCHED_EXITED, and user space collects them at its next drain
 * (parked says when); the seq taken here is then never seen, and the
 * reserve is not counted as lost, since nothing is.  true: sent (the caller
 * removes the entry).
 */
static __always_inline bool send_thread(struct pmu_sched_task *e, __u32 tid)
{
	__u64 seq = __sync_fetch_and_add(&seq_next, 1) + 1;
	struct pmu_sched_thread *r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		e->flags |= PMU_SCHED_EXITED;
		__sync_fetch_and_add(&parked, 1);
		return false;
	}
	r->h.seq = seq;
	r->h.time_ns = e->last_ns;
	r->h.kind = PMU_SCHED_REC_THREAD;
	r->h.size = sizeof(*r);
	r->h.cpu = bpf_get_smp_processor_id();
	r->tgid = e->tgid;
	r->tid = tid;
	r->leader_start_ns = e->leader_start_ns;
	r->first_ns = e->first_ns;
	r->first_on_ns = e->first_on_ns;
	r->on_ns = e->on_ns;
	r->runq_ns = e->runq_ns;
	r->sleep_ns = e->sleep_ns;
	r->blocked_ns = e->blocked_ns;
	r->other_ns = e->other_ns;
	r->voluntary = e->voluntary;
	r->involuntary = e->involuntary;
	r->migrations = e->migrations;
	r->flags = e->flags & PMU_SCHED_BORN;
	submit(r);
	return true;
}

/* the new entry of a thread that took another tid at an exec */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmu_sched_task);
} task_scratch SEC(".maps");

/*
 * A thread that is not the leader exec'd: fs/exec.c de_thread() ended the
 * other threads (the old leader's exit has been sent) and gave this one the
 * leader's pid (exchange_tids()).  Its former tid ends here, with its
 * totals; the leader's pid starts again with it, from now, on a CPU (it is
 * running the exec), as a thread whose first sight is its start.
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(pmu_sched_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tid = BPF_CORE_READ(p, pid), old = old_pid, k = 0;
	__u64 key = (__u64)p;
	if (tid == old)
		return 0;
	struct pmu_sched_task *e = bpf_map_lookup_elem(&threads, &key);
	if (!e || (e->flags & PMU_SCHED_EXITED))
		return 0;
	__u64 now = bpf_ktime_get_ns();
	account(e, now);
	struct pmu_sched_task *n = bpf_map_lookup_elem(&task_scratch, &k);
	if (n) {
		__builtin_memcpy(n, e, sizeof(*n));
		n->tid = tid;
		n->flags = PMU_SCHED_BORN;
		n->first_ns = n->last_ns = n->first_on_ns = now;
		n->on_ns = n->runq_ns = n->sleep_ns = n->blocked_ns = n->other_ns = 0;
		n->voluntary = n->involuntary = n->migrations = 0;
		n->st = PMU_SCHED_ST_ON;
		n->out_ns = 0;
		n->nchain = 0;
	}
	if (!send_thread(e, old)) {
		/* parked for user space (PMU_SCHED_EXITED), apart from the
		 * new life, which takes the task's key */
		__u64 pk = bpf_get_current_task() | 1; /* p is current (a scalar: no arithmetic on p itself) */
		if (bpf_map_update_elem(&threads, &pk, e, BPF_ANY)) {
			struct pmu_sched_counters *c = ctr();
			if (c)
				__sync_fetch_and_add(&c->map_fail, 1);
		}
	}
	if (!n || bpf_map_update_elem(&threads, &key, n, BPF_ANY)) {
		struct pmu_sched_counters *c = ctr();
		if (c)
			__sync_fetch_and_add(&c->map_fail, 1);
	}
	return 0;
}

/* The thread's exit (kernel/exit.c do_exit()): its totals, once. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(pmu_sched_exit, struct task_struct *p)
{
	__u64 key = (__u64)p, now = bpf_ktime_get_ns();
	struct pmu_sched_task *e = bpf_map_lookup_elem(&threads, &key);
	if (e && (e->flags & PMU_SCHED_EXITED))
		return 0;
	if (!e) {
		/* not seen switching out since it came on (on_cpu) */
		if (!pmu_task_in_cohort(p))
			return 0;
		e = track(p, BPF_CORE_READ(p, pid), on_since(p, now), PMU_SCHED_ST_ON, 0);
		if (!e)
			return 0;
	}
	account(e, now);
	if (send_thread(e, e->tid))
		bpf_map_delete_elem(&threads, &key);
	return 0;
}
