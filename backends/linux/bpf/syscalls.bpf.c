// SPDX-License-Identifier: GPL-2.0
/*
 * The syscalls collector: every system call of the cohort, from the
 * raw_syscalls tracepoints (raw_tp sys_enter / sys_exit).
 *
 * sys_enter keeps the call in flight in task-local storage (its entry
 * time, number and arguments; for the I/O family the identity of the file
 * behind its fd, read before a close can free it, and its path argument).
 * sys_exit:
 *  - adds the call to the in-kernel statistics (stats: incarnation x call
 *    x errno x file -> count, total, min, max, bytes, histogram), for every
 *    call;
 *  - for the raw family (the loader's calls map, by number), sends one
 *    record through the ring: exact entry-to-exit ns, return value,
 *    arguments, the file's identity (dev, ino, mode) and its path.
 *
 * Nothing is done with strings for calls outside the raw family: their
 * cost is the cohort check, one storage lookup at each end and the
 * statistics update.
 *
 * Loss discipline as in follow.bpf.c: every record takes a sequence number
 * from one global counter before it reserves ring space; every failed
 * reserve, every missing in-flight entry and every full statistics map is
 * counted per CPU (counters), and the loader reports them.  The ring is
 * drained on the recorder's timer: no wakeup per record unless the ring is
 * over half full.
 *
 * Paths of opened files are resolved here from the file's dentry chain
 * (d_parent, crossing mounts through mnt_mountpoint), at most
 * PMU_SYS_DEPTH components; a longer chain or a longer path is marked
 * truncated.  Failed opens and the other path calls keep the caller's
 * argument as given.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "syscalls.h"
#include "cohort.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define AT_FDCWD -100
#define PMU_SYS_DEPTH 16 /* dentry components walked at most (a power of two) */

/* the sixth syscall argument (libbpf 1.1 has no PT_REGS_PARM6_CORE_SYSCALL):
 * arch/x86/entry/entry_64.S r9; arm64 x5 */
#if defined(__TARGET_ARCH_x86)
#define ARG6(r) BPF_CORE_READ((r), r9)
#elif defined(__TARGET_ARCH_arm64)
#define ARG6(r) BPF_CORE_READ((const struct user_pt_regs *)(r), regs[5])
#else
#define ARG6(r) 0
#endif

#define OPAQUE(v) asm volatile("" : "+r"(v))

#ifndef container_of
#define container_of(ptr, type, member) ((type *)((void *)(ptr) - bpf_core_field_offset(type, member)))
#endif

__u64 seq_next = 0; /* .bss: the last seq handed out, read by user space */
const volatile __u64 ring_size = 0; /* set by the loader: the ring's bytes (0: ask the ring) */
/* set by the loader: this arch's execve and execveat (~0: none), the calls
 * the root may have in flight before its exec (cohort.bpf.h) */
const volatile __u32 nr_execve = ~0u, nr_execveat = ~0u;

/* the statistics' initial value: min_ns starts at its maximum */
struct pmu_sys_stat stat_init = { .min_ns = ~0ull };

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22); /* replaced by the loader */
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PMU_SYS_NR_MAX);
	__type(key, __u32);
	__type(value, struct pmu_sys_class);
} calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384); /* replaced by the loader */
	__type(key, struct pmu_sys_stat_key);
	__type(value, struct pmu_sys_stat);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmu_sys_counters);
} counters SEC(".maps");

/* the call in flight of one task */
struct inflight {
	__u64 leader_start; /* the group leader's start_boottime */
	__u64 enter_ns;
	__u64 args[6];
	__u32 nr;
	__u32 active; /* 1: a call in flight; 2: the root's execve before its exec */
	__u32 flags; /* PMU_SYS_F_FILE, PATH_ARG, PATH2, PATH_FAULT, PATH_TRUNC */
	__u32 dev, mode;
	__u64 ino;
	char path[PMU_SYS_PATH_MAX];
	char path2[PMU_SYS_PATH_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct inflight);
} inflight SEC(".maps");

/* the dentry walk's scratch: names from the leaf up, then the path */
struct walk {
	const unsigned char *name[PMU_SYS_DEPTH];
	char buf[2 * PMU_SYS_PATH_MAX];
	char tail[PMU_SYS_PATH_MAX]; /* the relative argument to join */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct walk);
} walk_scratch SEC(".maps");

static __always_inline struct pmu_sys_counters *ctr(void)
{
	__u32 k = 0;
	return bpf_map_lookup_elem(&counters, &k);
}

/* the struct file behind fd in the current task, or NULL */
static __always_inline struct file *fd_file(long fd)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	struct file **arr;
	struct file *f = NULL;

	if (fd < 0 || !fdt || (__u64)fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	arr = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&f, sizeof(f), &arr[fd]))
		return NULL;
	return f;
}

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

/*
 * The identity of the current task's fd, the fast way (the hot path: every
 * read, write and close): the task from bpf_get_current_task_btf() and the
 * file cast to its BTF type are read with plain loads (the verifier makes
 * them fault-safe), not a helper call per field; one probe read takes the
 * fd table's slot.
 */
static __always_inline bool fd_id(long fd, __u32 *dev, __u32 *mode, __u64 *ino)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct fdtable *fdt = t->files->fdt;
	struct file *f = NULL;
	struct inode *i;

	if (fd < 0 || !fdt || (__u64)fd >= fdt->max_fds)
		return false;
	if (bpf_probe_read_kernel(&f, sizeof(f), (void *)((__u64)fdt->fd + fd * sizeof(f))) || !f)
		return false;
	f = bpf_rdonly_cast(f, bpf_core_type_id_kernel(struct file));
	i = f->f_inode;
	if (!i)
		return false;
	*dev = i->i_sb->s_dev;
	*mode = i->i_mode;
	*ino = i->i_ino;
	return true;
}

/*
 * The path of (d, vm) from its dentry chain into the walk scratch's buf
 * (PMU_SYS_PATH_MAX bytes kept), then "/" and the scratch's tail when join
 * (a relative argument joined to the working directory).  Returns
 * PMU_SYS_F_PATH_DENTRY (join: PMU_SYS_F_PATH_CWD), with
 * PMU_SYS_F_PATH_TRUNC when the chain was deeper than PMU_SYS_DEPTH or the
 * path longer than kept; 0 when nothing could be read.
 *
 * Both loops are bpf_loop() callbacks and the function is global, so that
 * the verifier checks each body once (unrolled, they cost seconds of
 * verification at every load).  The names are read leaf first into the
 * scratch, then written root first; every offset is masked so that the
 * verifier sees it inside the 2 x PMU_SYS_PATH_MAX buffer.
 */
struct walkctx {
	struct walk *w;
	struct dentry *d;
	struct mount *m;
	__u64 off;
	int n;
	__u32 flags;
	int bad;
};

static long walk_up(__u32 i, struct walkctx *c)
{
	/* locals: BPF_CORE_READ must not relocate the accesses to c itself */
	struct dentry *d = c->d, *p = BPF_CORE_READ(d, d_parent);
	struct mount *m = c->m;
	struct dentry *mroot = BPF_CORE_READ(m, mnt.mnt_root);

	if (d == mroot || d == p) {
		struct mount *mp = BPF_CORE_READ(m, mnt_parent);

		if (mp == m || (d == p && d != mroot))
			return 1; /* the root of everything (or of a detached tree) */
		c->d = BPF_CORE_READ(m, mnt_mountpoint);
		c->m = mp;
		return 0;
	}
	if (c->n >= PMU_SYS_DEPTH) {
		c->flags |= PMU_SYS_F_PATH_TRUNC;
		return 1;
	}
	c->w->name[c->n & (PMU_SYS_DEPTH - 1)] = BPF_CORE_READ(d, d_name.name);
	c->n++;
	c->d = p;
	return 0;
}

/* append "/" and the string at src (kernel memory) */
static __always_inline int append(struct walkctx *c, const void *src)
{
	__u64 off = c->off;
	long r;

	if (off >= PMU_SYS_PATH_MAX - 1) {
		c->flags |= PMU_SYS_F_PATH_TRUNC;
		return 1;
	}
	c->w->buf[off & (PMU_SYS_PATH_MAX - 1)] = '/';
	off++;
	OPAQUE(off); /* keep the mask: clang would drop it, the verifier needs it */
	r = bpf_probe_read_kernel_str(&c->w->buf[off & (PMU_SYS_PATH_MAX - 1)], PMU_SYS_PATH_MAX, src);
	if (r <= 0) {
		c->bad = 1;
		return 1;
	}
	c->off = off + r - 1;
	return 0;
}

static long walk_down(__u32 i, struct walkctx *c)
{
	int j = c->n - 1 - (int)i;

	if (j < 0)
		return 1;
	return append(c, c->w->name[j & (PMU_SYS_DEPTH - 1)]);
}

__noinline int dentry_path(__u64 dentry, __u64 vfsmount, int join)
{
	__u32 k = 0;
	struct walkctx c = {};

	c.w = bpf_map_lookup_elem(&walk_scratch, &k);
	c.d = (struct dentry *)dentry;
	if (!c.w || !c.d || !vfsmount)
		return 0;
	c.m = container_of((struct vfsmount *)vfsmount, struct mount, mnt);
	c.flags = join ? PMU_SYS_F_PATH_CWD : PMU_SYS_F_PATH_DENTRY;
	if (bpf_loop(PMU_SYS_DEPTH + 8, walk_up, &c, 0) == PMU_SYS_DEPTH + 8)
		c.flags |= PMU_SYS_F_PATH_TRUNC; /* mounts upon mounts: cut */
	bpf_loop(PMU_SYS_DEPTH, walk_down, &c, 0);
	if (c.bad)
		return 0;
	if (join && (append(&c, c.w->tail) || c.bad))
		return c.bad ? 0 : c.flags;
	if (c.off == 0) {
		c.w->buf[0] = '/';
		c.off = 1;
	}
	if (c.off >= PMU_SYS_PATH_MAX) {
		c.flags |= PMU_SYS_F_PATH_TRUNC;
		c.off = PMU_SYS_PATH_MAX - 1;
	}
	c.w->buf[c.off & (2 * PMU_SYS_PATH_MAX - 1)] = 0;
	return c.flags;
}

static __always_inline __u32 bucket(__u64 d)
{
	__u32 e = 0;
	__u64 v = d;

	if (d < 16)
		return d;
	if (d >> 41)
		return PMU_SYS_HIST - 1;
	if (v >> 32) { e += 32; v >>= 32; }
	if (v >> 16) { e += 16; v >>= 16; }
	if (v >> 8) { e += 8; v >>= 8; }
	if (v >> 4) { e += 4; v >>= 4; }
	if (v >> 2) { e += 2; v >>= 2; }
	if (v >> 1) { e += 1; }
	return 16 + (e - 4) * 8 + ((d >> (e - 3)) & 7);
}

static __always_inline void stat_add(struct pmu_sys_stat_key *k, __u64 dur, __u64 bytes, __u64 now)
{
	struct pmu_sys_stat *v = bpf_map_lookup_elem(&stats, k);
	__u32 b = bucket(dur);

	if (!v) {
		bpf_map_update_elem(&stats, k, &stat_init, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&stats, k);
		if (!v) {
			struct pmu_sys_counters *c = ctr();
			if (c)
				c->stats_fail++; /* per CPU: no other writer */
			return;
		}
	}
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->total_ns, dur);
	if (bytes)
		__sync_fetch_and_add(&v->bytes, bytes);
	if (b >= PMU_SYS_HIST)
		b = PMU_SYS_HIST - 1;
	__sync_fetch_and_add(&v->hist[b], 1);
	/* min and max: a compare-and-swap, a few tries against other threads */
	for (int i = 0; i < 4; i++) {
		__u64 o = v->min_ns;
		if (dur >= o || __sync_val_compare_and_swap(&v->min_ns, o, dur) == o)
			break;
	}
	for (int i = 0; i < 4; i++) {
		__u64 o = v->max_ns;
		if (dur <= o || __sync_val_compare_and_swap(&v->max_ns, o, dur) == o)
			break;
	}
	if (now > v->last_ns)
		v->last_ns = now;
}

SEC("raw_tp/sys_enter")
int BPF_PROG(pmu_sys_enter, struct pt_regs *regs, long id)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct inflight *in;
	struct pmu_sys_class *cl;
	__u32 nr = id;

	/*
	 * A task with an in-flight entry passed the cohort filter at its
	 * first call: membership is for the process's life (kept from fork
	 * to exit), so the filter runs once per task, not per call.  (The
	 * root's entry made for its exec while pre-exec is removed at
	 * sys_exit if the exec failed.)
	 */
	in = bpf_task_storage_get(&inflight, task, 0, 0);
	__u32 active = 1;
	if (!in) {
		int m = pmu_current_membership();
		/* the root before its exec: only the exec itself, kept in
		 * flight (active 2) until sys_exit says whether it succeeded */
		if (m < 0 && (nr == nr_execve || nr == nr_execveat))
			active = 2;
		else if (m <= 0)
			return 0;
		in = bpf_task_storage_get(&inflight, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!in) {
			struct pmu_sys_counters *c = ctr();
			if (c)
				c->inflight_fail++;
			return 0;
		}
		/* constant for the process: de_thread() hands the old
		 * leader's start_boottime to a thread that execs */
		in->leader_start = BPF_CORE_READ(task, group_leader, start_boottime);
	}
	in->nr = nr;
	in->flags = 0;
	in->active = active;
	cl = nr < PMU_SYS_NR_MAX ? bpf_map_lookup_elem(&calls, &nr) : NULL;
	if (cl && cl->flags) {
#if defined(__TARGET_ARCH_x86)
		/* one read of the saved registers, not six */
		struct pt_regs rg;

		if (bpf_probe_read_kernel(&rg, sizeof(rg), regs))
			__builtin_memset(&rg, 0, sizeof(rg));
		in->args[0] = rg.di;
		in->args[1] = rg.si;
		in->args[2] = rg.dx;
		in->args[3] = rg.r10;
		in->args[4] = rg.r8;
		in->args[5] = rg.r9;
#else
		in->args[0] = PT_REGS_PARM1_CORE_SYSCALL(regs);
		in->args[1] = PT_REGS_PARM2_CORE_SYSCALL(regs);
		in->args[2] = PT_REGS_PARM3_CORE_SYSCALL(regs);
		in->args[3] = PT_REGS_PARM4_CORE_SYSCALL(regs);
		in->args[4] = PT_REGS_PARM5_CORE_SYSCALL(regs);
		in->args[5] = ARG6(regs);
#endif
		if (cl->flags & PMU_SYS_C_FD_ENTER && cl->fd_arg < 6 &&
		    fd_id((int)in->args[cl->fd_arg & 7], &in->dev, &in->mode, &in->ino))
			in->flags |= PMU_SYS_F_FILE;
		if (cl->flags & PMU_SYS_C_PATH && cl->path_arg < 6) {
			long r = bpf_probe_read_user_str(in->path, sizeof(in->path),
							 (const char *)in->args[cl->path_arg & 7]);
			if (r < 0)
				in->flags |= PMU_SYS_F_PATH_FAULT;
			else {
				in->flags |= PMU_SYS_F_PATH_ARG;
				if (r == sizeof(in->path))
					in->flags |= PMU_SYS_F_PATH_TRUNC;
			}
		}
		if (cl->flags & PMU_SYS_C_PATH2 && cl->path2_arg < 6 &&
		    bpf_probe_read_user_str(in->path2, sizeof(in->path2), (const char *)in->args[cl->path2_arg & 7]) >= 0)
			in->flags |= PMU_SYS_F_PATH2;
	}
	in->enter_ns = bpf_ktime_get_ns(); /* last: the call's own time, not ours */
	return 0;
}

SEC("raw_tp/sys_exit")
int BPF_PROG(pmu_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 now = bpf_ktime_get_ns();
	struct inflight *in = bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), 0, 0);
	struct pmu_sys_stat_key k = {};
	struct pmu_sys_class *cl;
	struct task_struct *t;
	__u64 dur, bytes = 0;
	__u32 nr;

	if (!in || !in->active)
		return 0;
	if (in->active == 2 && !pmu_current_in_cohort()) {
		/* an exec of the root that failed (execvp's walk of PATH):
		 * pmurec's launcher, not the command; the task is out again */
		bpf_task_storage_delete(&inflight, bpf_get_current_task_btf());
		return 0;
	}
	in->active = 0;
	nr = in->nr;
	dur = now - in->enter_ns;
	t = (struct task_struct *)bpf_get_current_task();
	cl = nr < PMU_SYS_NR_MAX ? bpf_map_lookup_elem(&calls, &nr) : NULL;
	__u64 pt = bpf_get_current_pid_tgid();
	k.tgid = pt >> 32;
	k.nr = nr;
	k.leader_start = in->leader_start;
	k.err = ret < 0 && ret >= -4095 ? -ret : 0;
	if (!cl || !cl->flags) {
		stat_add(&k, dur, 0, now);
		return 0;
	}
	__s32 fd1 = -1, fd2 = -1;
	if (!k.err && cl->flags & PMU_SYS_C_FD_RET && fd_id(ret, &in->dev, &in->mode, &in->ino))
		in->flags |= PMU_SYS_F_FILE;
	if (!k.err && cl->flags & PMU_SYS_C_FD_PAIR && cl->fd_arg < 6) {
		int fds[2] = { -1, -1 };
		if (!bpf_probe_read_user(fds, sizeof(fds), (void *)in->args[cl->fd_arg & 7])) {
			if (fd_id(fds[0], &in->dev, &in->mode, &in->ino))
				in->flags |= PMU_SYS_F_FILE;
			fd1 = fds[0];
			fd2 = fds[1];
			in->flags |= PMU_SYS_F_FD2;
		}
	}
	if (in->flags & PMU_SYS_F_FILE) {
		k.dev = in->dev;
		k.ino = in->ino;
		k.mode = in->mode;
	}
	if (!k.err && ret > 0 && cl->flags & PMU_SYS_C_BYTES)
		bytes = ret;
	stat_add(&k, dur, bytes, now);
	if (!(cl->flags & PMU_SYS_C_RAW))
		return 0;

	bool withpath = in->flags & (PMU_SYS_F_PATH_ARG | PMU_SYS_F_PATH_FAULT) ||
			(!k.err && cl->flags & PMU_SYS_C_DENTRY);
	__u32 size = withpath ? sizeof(struct pmu_sys_call_path) : sizeof(struct pmu_sys_call);
	__u64 seq = __sync_fetch_and_add(&seq_next, 1) + 1;
	struct pmu_sys_call *r = withpath ? bpf_ringbuf_reserve(&rb, sizeof(struct pmu_sys_call_path), 0)
					  : bpf_ringbuf_reserve(&rb, sizeof(struct pmu_sys_call), 0);
	if (!r) {
		struct pmu_sys_counters *c = ctr();
		if (c)
			__sync_fetch_and_add(&c->reserve_fail, 1);
		return 0;
	}
	r->h.seq = seq;
	r->h.time_ns = now;
	r->h.kind = withpath ? PMU_SYS_REC_CALL_PATH : PMU_SYS_REC_CALL;
	r->h.size = size;
	r->h.cpu = bpf_get_smp_processor_id();
	r->dur_ns = dur;
	r->leader_start = k.leader_start;
	r->tgid = k.tgid;
	r->tid = (__u32)pt;
	r->ret = ret;
	for (int i = 0; i < 6; i++)
		r->args[i] = in->args[i];
	r->nr = nr;
	r->flags = in->flags & (PMU_SYS_F_FILE | PMU_SYS_F_FD2);
	r->dev = in->dev;
	r->mode = in->mode;
	r->ino = in->ino;
	r->fd2 = fd2;
	r->fd1 = fd1;
	if (withpath) {
		struct pmu_sys_call_path *rp = (void *)r;
		__u32 pf = 0;

		if (!k.err && cl->flags & PMU_SYS_C_DENTRY) {
			struct file *f = fd_file(ret);
			if (f)
				pf = dentry_path((__u64)BPF_CORE_READ(f, f_path.dentry), (__u64)BPF_CORE_READ(f, f_path.mnt), 0);
		} else if (in->flags & PMU_SYS_F_PATH_ARG && in->path[0] != '/' &&
			   (cl->path_arg == 0 || (int)in->args[(cl->path_arg - 1) & 7] == AT_FDCWD)) {
			/* relative to the working directory: join it here */
			__u32 z = 0;
			struct walk *w = bpf_map_lookup_elem(&walk_scratch, &z);
			if (w && !bpf_probe_read_kernel(w->tail, sizeof(w->tail), in->path))
				pf = dentry_path((__u64)BPF_CORE_READ(t, fs, pwd.dentry),
						 (__u64)BPF_CORE_READ(t, fs, pwd.mnt), 1);
		}
		if (pf) {
			__u32 z = 0;
			struct walk *w = bpf_map_lookup_elem(&walk_scratch, &z);
			if (w)
				bpf_probe_read_kernel(rp->path, sizeof(rp->path), w->buf);
			else
				pf = 0;
		}
		if (!pf) {
			pf = in->flags & (PMU_SYS_F_PATH_ARG | PMU_SYS_F_PATH_FAULT | PMU_SYS_F_PATH_TRUNC);
			if (pf & PMU_SYS_F_PATH_ARG)
				bpf_probe_read_kernel(rp->path, sizeof(rp->path), in->path);
			else
				rp->path[0] = 0;
		}
		rp->path[PMU_SYS_PATH_MAX - 1] = 0;
		if (in->flags & PMU_SYS_F_PATH2) {
			bpf_probe_read_kernel(rp->path2, sizeof(rp->path2), in->path2);
			pf |= PMU_SYS_F_PATH2;
		} else
			rp->path2[0] = 0;
		rp->path2[PMU_SYS_PATH_MAX - 1] = 0;
		r->flags |= pf;
	}
	__u64 avail = bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA);
	__u64 rsize = ring_size ? ring_size : bpf_ringbuf_query(&rb, BPF_RB_RING_SIZE);
	struct pmu_sys_counters *c = ctr();
	if (c)
		c->submitted++;
	bpf_ringbuf_submit(r, avail > rsize / 2 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	return 0;
}
