// SPDX-License-Identifier: GPL-2.0
/*
 * The alloc collector's uprobe path: allocation sampling by bytes in the
 * cohort, from uprobes and uretprobes on the C library's malloc, calloc and
 * realloc and a uprobe on free, attached for every process that maps the
 * library (pid -1) and filtered here by the cohort filter (cohort.bpf.h).
 *
 * The host-wide cost is the trap: every call of those functions by any
 * process on the host takes a uprobe (and the allocating ones a uretprobe)
 * while attached; outside the cohort the program returns after one hash
 * lookup (pmu_members by tgid); the trap itself is the cost (alloc.c).
 *
 * Sampling, per thread (task storage): a byte countdown from a threshold
 * drawn from an exponential distribution of mean sample_bytes (the
 * loader's table of PMU_ALLOC_TABLE thresholds, indexed by
 * bpf_get_prandom_u32()); the call whose bytes cross it is sampled: at
 * its return its address, size and the user call chain (frame pointers,
 * from the caller the uretprobe returns to) go through the ring, and the
 * address is kept in the live map (tgid, addr) so that its free (or a
 * realloc that moves it) sends a free record.  Nested calls (realloc(NULL)
 * calling malloc inside the library) are counted once: only the outermost
 * call of a thread counts.
 *
 * Loss discipline as in syscalls.bpf.c: a global seq before each reserve;
 * every failed reserve, missing task storage and full live map counted per
 * CPU (counters); a sample that found the ring full also per process
 * (dropped), for the incarnation's record.  No wakeup per record unless
 * the ring is over half full: the loader drains it on its timer.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "regs.bpf.h" /* before the PT_REGS_* macros are used: a cross build needs it */

#include "alloc.h"
#include "cohort.bpf.h"

char LICENSE[] SEC("license") = "GPL";

__u64 seq_next = 0; /* .bss: the last seq handed out */
const volatile __u64 ring_size = 0;
const volatile __u32 chains = 0; /* 1: walk the user call chain of each sample */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20); /* replaced by the loader */
} rb SEC(".maps");

/* exponential thresholds in bytes, mean sample_bytes (filled by the loader) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PMU_ALLOC_TABLE);
	__type(key, __u32);
	__type(value, __u64);
} thresholds SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmu_alloc_counters);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536); /* replaced by the loader */
	__type(key, struct pmu_alloc_live_key);
	__type(value, __u64); /* the sample's seq */
} live SEC(".maps");

/* samples that found the ring full, per process (key tgid) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} dropped SEC(".maps");

/* a thread's sampling state and its call in flight */
struct athread {
	__s64 left;     /* bytes until the next sample */
	__u64 size;     /* the call in flight: bytes asked */
	__u64 old;      /* realloc's pointer */
	__u32 func;
	__u32 depth;    /* calls in flight (nested inside the library) */
	__u32 sample;   /* the outermost call crossed the threshold */
	__u32 init;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct athread);
} threads SEC(".maps");

static __always_inline struct pmu_alloc_counters *ctr(void)
{
	__u32 k = 0;
	return bpf_map_lookup_elem(&counters, &k);
}

static __always_inline __u64 draw(void)
{
	__u32 i = bpf_get_prandom_u32() & (PMU_ALLOC_TABLE - 1);
	__u64 *v = bpf_map_lookup_elem(&thresholds, &i);
	return v && *v ? *v : 1;
}

/* the entry of an allocating call: count its bytes */
static __always_inline int enter(__u64 size, __u64 old, __u32 func)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct athread *a = bpf_task_storage_get(&threads, task, 0, 0);

	if (!a) {
		if (!pmu_current_in_cohort())
			return 0;
		a = bpf_task_storage_get(&threads, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!a) {
			struct pmu_alloc_counters *c = ctr();
			if (c)
				c->pending_fail++;
			return 0;
		}
	}
	if (!a->init) {
		a->init = 1;
		a->left = (__s64)draw();
	}
	if (a->depth++)
		return 0; /* inside the library: the outer call counts */
	a->size = size;
	a->old = old;
	a->func = func;
	a->sample = 0;
	a->left -= (__s64)size;
	if (a->left <= 0) {
		a->sample = 1;
		a->left = (__s64)draw();
	}
	return 0;
}

static __always_inline void send_free(__u32 tgid, __u64 addr, __u64 sseq)
{
	__u64 seq = __sync_fetch_and_add(&seq_next, 1) + 1;
	struct pmu_alloc_free *r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);

	if (!r) {
		struct pmu_alloc_counters *c = ctr();
		if (c)
			__sync_fetch_and_add(&c->reserve_fail, 1);
		return;
	}
	r->h.seq = seq;
	r->h.time_ns = bpf_ktime_get_ns();
	r->h.kind = PMU_ALLOC_REC_FREE;
	r->h.size = sizeof(*r);
	r->h.cpu = bpf_get_smp_processor_id();
	r->h.tgid = tgid;
	r->h.tid = (__u32)bpf_get_current_pid_tgid();
	r->addr = addr;
	r->sample_seq = sseq;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/* a sampled address that goes away (free, realloc moving it) */
static __always_inline void gone(__u32 tgid, __u64 addr)
{
	struct pmu_alloc_live_key k = { .addr = addr, .tgid = tgid };
	__u64 *v;

	if (!addr)
		return;
	v = bpf_map_lookup_elem(&live, &k);
	if (!v)
		return;
	__u64 sseq = *v;
	bpf_map_delete_elem(&live, &k);
	send_free(tgid, addr, sseq);
}

/* the user call chain by frame pointers from the uretprobe's registers:
 * the return address in the caller, then [next frame, return address] up
 * the stack (as sched.bpf.c walks it) */
static __always_inline __u32 user_chain(struct pt_regs *regs, __u64 *chain)
{
	__u64 pc = PT_REGS_IP(regs), fp = PT_REGS_FP(regs);
	__u32 n;

	if (!pc)
		return 0;
	chain[0] = pc;
	n = 1;
	for (int i = 1; i < PMU_ALLOC_CHAIN_MAX; i++) {
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

/* the return of an allocating call */
static __always_inline int leave(struct pt_regs *regs)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct athread *a = bpf_task_storage_get(&threads, task, 0, 0);
	__u64 ret = PT_REGS_RC(regs);
	__u64 pt = bpf_get_current_pid_tgid();
	__u32 tgid = pt >> 32;

	if (!a || !a->depth)
		return 0;
	if (--a->depth)
		return 0;
	/* realloc: the old block is gone when it moved, or when
	 * realloc(old, 0) freed it (a failed realloc leaves it); sampled
	 * again in place, its former sample ends here */
	if (a->func == PMU_ALLOC_F_REALLOC && a->old &&
	    ((ret != a->old && (ret || !a->size)) || (a->sample && ret == a->old)))
		gone(tgid, a->old);
	if (!a->sample)
		return 0;
	a->sample = 0;

	__u64 seq = __sync_fetch_and_add(&seq_next, 1) + 1;
	struct pmu_alloc_sample *r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		struct pmu_alloc_counters *c = ctr();
		__u64 one = 1, *d;

		if (c)
			__sync_fetch_and_add(&c->reserve_fail, 1);
		d = bpf_map_lookup_elem(&dropped, &tgid);
		if (d)
			__sync_fetch_and_add(d, 1);
		else
			bpf_map_update_elem(&dropped, &tgid, &one, BPF_NOEXIST);
		return 0;
	}
	r->h.seq = seq;
	r->h.time_ns = bpf_ktime_get_ns();
	r->h.kind = PMU_ALLOC_REC_SAMPLE;
	r->h.size = sizeof(*r);
	r->h.cpu = bpf_get_smp_processor_id();
	r->h.tgid = tgid;
	r->h.tid = (__u32)pt;
	r->leader_start = BPF_CORE_READ(task, group_leader, start_boottime);
	r->size = a->size;
	r->addr = ret;
	r->func = a->func;
	r->nchain = chains ? user_chain(regs, r->chain) : 0;
	if (ret) {
		struct pmu_alloc_live_key k = { .addr = ret, .tgid = tgid };

		if (bpf_map_update_elem(&live, &k, &seq, BPF_ANY)) {
			struct pmu_alloc_counters *c = ctr();
			if (c)
				c->live_fail++;
		}
	}
	__u64 avail = bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA);
	__u64 rsize = ring_size ? ring_size : bpf_ringbuf_query(&rb, BPF_RB_RING_SIZE);
	struct pmu_alloc_counters *c = ctr();
	if (c)
		c->submitted++;
	bpf_ringbuf_submit(r, avail > rsize / 2 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(pmu_malloc, __u64 size)
{
	return enter(size, 0, PMU_ALLOC_F_MALLOC);
}

SEC("uprobe")
int BPF_KPROBE(pmu_calloc, __u64 n, __u64 m)
{
	/* n * m as calloc computes it; an overflowing product fails there */
	__u64 lim = m ? ~0ull / m : ~0ull, size;

	barrier_var(lim); /* clang would turn the check into a 128-bit multiply */
	size = n > lim ? 0 : n * m;
	return enter(size, 0, PMU_ALLOC_F_CALLOC);
}

SEC("uprobe")
int BPF_KPROBE(pmu_realloc, __u64 old, __u64 size)
{
	return enter(size, old, PMU_ALLOC_F_REALLOC);
}

SEC("uretprobe")
int BPF_KRETPROBE(pmu_alloc_ret)
{
	return leave(ctx);
}

SEC("uprobe")
int BPF_KPROBE(pmu_free, __u64 addr)
{
	struct athread *a;

	if (!addr)
		return 0;
	/* threads that allocated in the cohort have storage; the others
	 * (the whole host) return after the cohort filter's lookup */
	a = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), 0, 0);
	if (a && a->depth)
		return 0; /* realloc's own free inside the library: seen at its return */
	if (!a && !pmu_current_in_cohort())
		return 0;
	gone(bpf_get_current_pid_tgid() >> 32, addr);
	return 0;
}
