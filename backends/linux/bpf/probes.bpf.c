// SPDX-License-Identifier: GPL-2.0
/*
 * The probes collector: USDT probes of the cohort (the pmu provider's,
 * include/pmu/probe.h; the runtimes' own, python's and hotspot's; any a
 * user names with --probe).  One program, attached by user space to every
 * probe it selected (libbpf's bpf_program__attach_usdt(), pid -1: every
 * process that maps the file, with the in-kernel cohort filter), its
 * cookie the probe's index in the loader's table.
 *
 * At a hit of a cohort thread:
 *  - the probe's hit count goes up (hits, per CPU: the probe records' hits);
 *  - pmu:alloc (conf what ALLOC) is summed in the allocs map per process
 *    image (tgid, self_exec_id): count and bytes, no record;
 *  - any other probe sends one record through the ring: its arguments
 *    (bpf_usdt_arg(), at most 12, as the note's sizes and signs give them)
 *    and the strings the conf map names, read here while the program still
 *    holds them (NUL-terminated, or by the length argument hotspot passes
 *    with each), at most PMU_PRB_STR - 1 bytes each.
 *
 * An exec of a cohort process (sched_process_exec) sends an exec record:
 * user space reads the new image and the objects it loads, and attaches
 * the probes it has not seen yet.
 *
 * Loss discipline as in syscalls.bpf.c: every record takes a sequence
 * number from one global counter before it is written to the ring; every
 * failed write and every full allocs map is counted per CPU (counters),
 * and the loader reports them.  The ring is drained on the recorder's
 * timer: no wakeup per record unless the ring is over half full.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "regs.bpf.h" /* before the PT_REGS_* macros are used: a cross build needs it */
#include <bpf/usdt.bpf.h>

#include "probes.h"
#include "cohort.bpf.h"

char LICENSE[] SEC("license") = "GPL";

__u64 seq_next = 0; /* .bss: the last seq handed out, read by user space */
const volatile __u64 ring_size = 0; /* set by the loader: the ring's bytes (0: ask the ring) */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22); /* replaced by the loader */
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PMU_PRB_MAX);
	__type(key, __u32);
	__type(value, struct pmu_prb_conf);
} conf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PMU_PRB_MAX);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384); /* replaced by the loader */
	__type(key, struct pmu_prb_alloc_key);
	__type(value, struct pmu_prb_alloc);
} allocs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmu_prb_counters);
} counters SEC(".maps");

/* the record being built (too large for the stack) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmu_prb_hit_full);
} scratch SEC(".maps");

static __always_inline struct pmu_prb_counters *ctr(void)
{
	__u32 k = 0;
	return bpf_map_lookup_elem(&counters, &k);
}

static __always_inline void alloc_add(__u64 bytes, __u64 now)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	struct pmu_prb_alloc_key k = {};
	struct pmu_prb_alloc *v;

	k.tgid = bpf_get_current_pid_tgid() >> 32;
	/* one key per image: an exec starts a new incarnation of the tgid */
	k.exec_id = BPF_CORE_READ(t, self_exec_id);
	v = bpf_map_lookup_elem(&allocs, &k);
	if (!v) {
		struct pmu_prb_alloc z = { .first_ns = now };

		bpf_map_update_elem(&allocs, &k, &z, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&allocs, &k);
		if (!v) {
			struct pmu_prb_counters *c = ctr();
			if (c)
				c->alloc_fail++; /* per CPU: no other writer */
			return;
		}
	}
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->bytes, bytes);
	if (now > v->last_ns)
		v->last_ns = now;
}

struct vma_ctx {
	__u64 addr;
	struct pmu_prb_sfile f;
};

#define PRB_VM_WRITE 0x2ull /* include/linux/mm.h VM_WRITE */

/* bpf_find_vma(): the file and offset of a read-only file mapping */
static long vma_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_ctx *c = data;
	struct file *f = BPF_CORE_READ(vma, vm_file);

	if (!f || (BPF_CORE_READ(vma, vm_flags) & PRB_VM_WRITE))
		return 0;
	c->f.ino = BPF_CORE_READ(f, f_inode, i_ino);
	c->f.dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	c->f.off = c->addr - BPF_CORE_READ(vma, vm_start) + ((__u64)BPF_CORE_READ(vma, vm_pgoff) << 12);
	return 0;
}

/* where the unread string j at p lies, for user space (sfile) */
static __always_inline void str_where(struct pmu_prb_hit_full *r, int j, const void *p)
{
	struct vma_ctx c = { .addr = (__u64)p };

	bpf_find_vma(bpf_get_current_task_btf(), (__u64)p, vma_cb, &c, 0);
	r->hit.sfile[j & (PMU_PRB_NSTR - 1)] = c.f;
}

SEC("usdt")
int pmu_probe_hit(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 idx, z = 0;
	struct pmu_prb_conf *cf;
	struct pmu_prb_hit_full *r;
	__u64 *hc, pt;
	long n;

	if (!pmu_current_in_cohort())
		return 0;
	idx = (__u32)bpf_usdt_cookie(ctx);
	if (idx >= PMU_PRB_MAX || !(cf = bpf_map_lookup_elem(&conf, &idx)) || !cf->what)
		return 0;
	if ((hc = bpf_map_lookup_elem(&hits, &idx)))
		*hc += 1; /* per CPU: no other writer */
	if (cf->what == PMU_PRB_W_ALLOC) {
		long v = 0;

		bpf_usdt_arg(ctx, 0, &v);
		alloc_add((__u64)v, now);
		return 0;
	}
	if (!(r = bpf_map_lookup_elem(&scratch, &z)))
		return 0;
	pt = bpf_get_current_pid_tgid();
	r->hit.tgid = pt >> 32;
	r->hit.tid = (__u32)pt;
	r->hit.probe = idx;
	r->hit.flags = 0;
	r->hit.pad = 0;
	{
		struct task_struct *t = (struct task_struct *)bpf_get_current_task();

		r->hit.leader_start = BPF_CORE_READ(t, group_leader, start_boottime);
	}
	n = bpf_usdt_arg_cnt(ctx);
	if (n < 0)
		n = 0;
	if (n > PMU_PRB_NARGS)
		n = PMU_PRB_NARGS;
	r->hit.nargs = n;
	for (int i = 0; i < PMU_PRB_NARGS; i++) {
		long v = 0;

		if (i < n && bpf_usdt_arg(ctx, i, &v))
			r->hit.flags |= PMU_PRB_F_ARG_BAD(i);
		r->hit.args[i] = (__u64)v;
	}
	__u32 ns = cf->nstr;
	if (ns > PMU_PRB_NSTR)
		ns = PMU_PRB_NSTR;
	r->hit.nstr = ns;
	for (int j = 0; j < PMU_PRB_NSTR; j++) {
		r->hit.slen[j] = 0;
		r->str[j][0] = 0;
		r->hit.sfile[j] = (struct pmu_prb_sfile){};
		if (j >= ns)
			continue;
		__s8 sa = cf->str_arg[j], la = cf->len_arg[j];
		if (sa < 0 || sa >= PMU_PRB_NARGS || sa >= n) {
			r->hit.flags |= PMU_PRB_F_STR_BAD(j);
			continue;
		}
		const void *p = (const void *)r->hit.args[sa & 15];
		if (la < 0) {
			long got = bpf_probe_read_user_str(r->str[j], PMU_PRB_STR, p);
			if (got <= 0) {
				r->hit.flags |= PMU_PRB_F_STR_BAD(j);
				r->str[j][0] = 0;
				str_where(r, j, p);
				continue;
			}
			if (got == PMU_PRB_STR)
				r->hit.flags |= PMU_PRB_F_STR_CUT(j);
			r->hit.slen[j] = got - 1;
		} else {
			if (la >= PMU_PRB_NARGS || la >= n) {
				r->hit.flags |= PMU_PRB_F_STR_BAD(j);
				continue;
			}
			__u64 len = r->hit.args[la & 15];
			if (len > PMU_PRB_STR - 1) {
				len = PMU_PRB_STR - 1;
				r->hit.flags |= PMU_PRB_F_STR_CUT(j);
			}
			barrier_var(len);
			len &= PMU_PRB_STR - 1;
			if (len && bpf_probe_read_user(r->str[j], len, p)) {
				r->hit.flags |= PMU_PRB_F_STR_BAD(j);
				str_where(r, j, p);
				len = 0;
			}
			r->str[j][len & (PMU_PRB_STR - 1)] = 0;
			/* a NUL inside: the string ends there */
			r->hit.slen[j] = len;
		}
	}
	__u64 size = sizeof(struct pmu_prb_hit) + (__u64)ns * PMU_PRB_STR;
	if (size > sizeof(struct pmu_prb_hit_full))
		size = sizeof(struct pmu_prb_hit_full);
	r->hit.h.seq = __sync_fetch_and_add(&seq_next, 1) + 1;
	r->hit.h.time_ns = now;
	r->hit.h.kind = PMU_PRB_REC_HIT;
	r->hit.h.size = size;
	r->hit.h.cpu = bpf_get_smp_processor_id();
	__u64 avail = bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA);
	__u64 rsize = ring_size ? ring_size : bpf_ringbuf_query(&rb, BPF_RB_RING_SIZE);
	struct pmu_prb_counters *c = ctr();
	/* a string not read here is read by user space from the process
	 * (process_vm_readv): woken now, while the process likely lives */
	bool wake = avail > rsize / 2 || (r->hit.flags & 0x000f0000u);
	if (bpf_ringbuf_output(&rb, r, size, wake ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP)) {
		if (c)
			c->reserve_fail++;
		return 0;
	}
	if (c)
		c->submitted++;
	return 0;
}

/* fs/exec.c exec_binprm(): the new image is in, the program not yet run */
SEC("raw_tp/sched_process_exec")
int BPF_PROG(pmu_probes_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct pmu_prb_exec *r;
	struct pmu_prb_counters *c;
	__u64 seq;

	if (!pmu_task_in_cohort(p))
		return 0;
	seq = __sync_fetch_and_add(&seq_next, 1) + 1;
	c = ctr();
	if (!(r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0))) {
		if (c)
			c->reserve_fail++;
		return 0;
	}
	r->h.seq = seq;
	r->h.time_ns = bpf_ktime_get_ns();
	r->h.kind = PMU_PRB_REC_EXEC;
	r->h.size = sizeof(*r);
	r->h.cpu = bpf_get_smp_processor_id();
	r->leader_start = BPF_CORE_READ(p, group_leader, start_boottime);
	r->tgid = BPF_CORE_READ(p, tgid);
	r->tid = BPF_CORE_READ(p, pid);
	if (c)
		c->submitted++;
	/* woken now: the new image's probes are attached the sooner */
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
	return 0;
}
