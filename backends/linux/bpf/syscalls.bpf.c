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
#include "regs.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define AT_FDCWD -100
#define PMU_SYS_DEPTH 16 /* dentry components walked at most (a power of two) */

/* the sixth syscall argument (libbpf 1.1 has no PT_REGS_PARM6_CORE_SYSCALL):
 * arch/x86/entry/entry_64.S r9; arm64 x5 */
#if defined(__TARGET_ARCH_x86)
#define ARG6(r) BPF_CORE_READ((r), r9)
#elif defined(__TARGET_ARCH_arm64)
#define ARG6(r) BPF_CORE_READ(PMU_ARM64_REGS(r), regs[5])
#else
#define ARG6(r) 0
#endif

/* the call's number at sys_exit (syscall_get_nr()): x86 orig_ax, arm64 syscallno */
#if defined(__TARGET_ARCH_x86)
#define SYSNR(r) BPF_CORE_READ((r), orig_ax)
#elif defined(__TARGET_ARCH_arm64)
#define SYSNR(r) BPF_CORE_READ(PMU_ARM64_REGS(r), syscallno)
#else
#define SYSNR(r) -1
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
	__u32 len[PMU_SYS_DEPTH];
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

/*
 * The identity of the current task's fd, the fast way (the hot path: every
 * read, write and close): the task from bpf_get_current_task_btf() is
 * read with plain loads (the verifier makes them fault-safe), one probe
 * read takes the fd table's slot, and the file's fields are CO-RE reads.
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
	/* the file and its inode through CO-RE reads: the bpf_rdonly_cast()
	 * kfunc that would make them plain loads is Linux 6.2 and later, and
	 * Debian 12's kernel is 6.1 */
	i = BPF_CORE_READ(f, f_inode);
	if (!i)
		return false;
	*dev = BPF_CORE_READ(i, i_sb, s_dev);
	*mode = BPF_CORE_READ(i, i_mode);
	*ino = BPF_CORE_READ(i, i_ino);
	return true;
}

/* what dentry_path() says */
#define W_OK   1 /* buf holds an absolute path */
#define W_HEAD 2 /* its leading components are left out (too deep, or too long) */
#define W_TAIL 4 /* its end is cut (the last name or the joined argument too long) */

/*
 * The path of (d, vm) from its dentry chain into the walk scratch's buf
 * (PMU_SYS_PATH_MAX bytes kept), then "/" and the scratch's tail when
 * tail_need (strlen + 1 of the tail: a relative argument joined to its
 * directory).  Returns 0 when nothing could be read, else W_OK with
 * W_HEAD and W_TAIL for what was cut.  A path longer than kept keeps the
 * components nearest the file (the file's name is what tells most), so it
 * loses its head, not its end: the chain is walked leaf first (at most
 * PMU_SYS_DEPTH components) with each name's length, and the components
 * nearest the root are left out until the rest fits.
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
	__u64 need; /* bytes the rest of the path takes */
	int n;
	int join;
	__u32 flags;
	int bad;
};

static long walk_up(__u32 i, struct walkctx *c)
{
	/* locals: BPF_CORE_READ must not relocate the accesses to c itself */
	struct dentry *d = c->d, *p = BPF_CORE_READ(d, d_parent);
	struct mount *m = c->m;
	struct dentry *mroot = BPF_CORE_READ(m, mnt.mnt_root);
	__u32 len;

	if (d == mroot || d == p) {
		struct mount *mp = BPF_CORE_READ(m, mnt_parent);

		if (mp == m || (d == p && d != mroot))
			return 1; /* the root of everything (or of a detached tree) */
		c->d = BPF_CORE_READ(m, mnt_mountpoint);
		c->m = mp;
		return 0;
	}
	if (c->n >= PMU_SYS_DEPTH) {
		c->flags |= W_HEAD;
		return 1;
	}
	len = BPF_CORE_READ(d, d_name.len);
	c->w->name[c->n & (PMU_SYS_DEPTH - 1)] = BPF_CORE_READ(d, d_name.name);
	c->w->len[c->n & (PMU_SYS_DEPTH - 1)] = len;
	c->need += 1 + (__u64)len;
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
		c->flags |= W_TAIL;
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
	__u64 l;

	if (j < 0)
		return 1;
	l = 1 + (__u64)c->w->len[j & (PMU_SYS_DEPTH - 1)];
	/* too long: leave out this component, nearer the root than the
	 * rest (the file's own name stays; a joined argument may push out
	 * its directory's) */
	if (c->need > PMU_SYS_PATH_MAX - 1 && (j > 0 || c->join)) {
		c->need -= l < c->need ? l : c->need;
		c->flags |= W_HEAD;
		return 0;
	}
	c->need -= l < c->need ? l : c->need;
	return append(c, c->w->name[j & (PMU_SYS_DEPTH - 1)]);
}

__noinline int dentry_path(__u64 dentry, __u64 vfsmount, __u32 tail_need)
{
	__u32 k = 0;
	struct walkctx c = {};

	c.w = bpf_map_lookup_elem(&walk_scratch, &k);
	c.d = (struct dentry *)dentry;
	if (!c.w || !c.d || !vfsmount)
		return 0;
	c.m = container_of((struct vfsmount *)vfsmount, struct mount, mnt);
	c.flags = W_OK;
	c.join = tail_need > 0;
	c.need = tail_need;
	if (bpf_loop(PMU_SYS_DEPTH + 8, walk_up, &c, 0) == PMU_SYS_DEPTH + 8)
		c.flags |= W_HEAD; /* mounts upon mounts: cut */
	bpf_loop(PMU_SYS_DEPTH, walk_down, &c, 0);
	if (c.bad)
		return 0;
	if (c.join) {
		append(&c, c.w->tail);
		if (c.bad)
			return 0;
	}
	if (c.off == 0) {
		c.w->buf[0] = '/';
		c.off = 1;
	}
	if (c.off >= PMU_SYS_PATH_MAX) {
		c.flags |= W_TAIL;
		c.off = PMU_SYS_PATH_MAX - 1;
	}
	c.w->buf[c.off & (2 * PMU_SYS_PATH_MAX - 1)] = 0;
	return c.flags;
}

/*
 * A path argument as a path (bpf/syscalls.h's flags, for the first path;
 * the caller moves them for the second): an absolute one as given (ARG);
 * a relative one joined to its directory, the working directory for
 * AT_FDCWD (CWD) or the dirfd's file (DIRFD), from its dentry chain; REL
 * when that directory could not be read.  arg_cut: the argument itself
 * was longer than kept.  The result is copied to out.
 */
static __always_inline __u32 resolve_arg(struct task_struct *t, const char *arg, bool arg_cut, long dirfd, char *out)
{
	__u32 z = 0, fl = 0;
	struct walk *w = bpf_map_lookup_elem(&walk_scratch, &z);
	long r;

	if (!w)
		return 0;
	if (arg[0] && arg[0] != '/') {
		r = bpf_probe_read_kernel_str(w->tail, sizeof(w->tail), arg);
		if (r > 0) {
			__u64 d = 0, m = 0;

			if (dirfd == AT_FDCWD) {
				d = (__u64)BPF_CORE_READ(t, fs, pwd.dentry);
				m = (__u64)BPF_CORE_READ(t, fs, pwd.mnt);
			} else {
				struct file *f = fd_file((int)dirfd);

				if (f) {
					d = (__u64)BPF_CORE_READ(f, f_path.dentry);
					m = (__u64)BPF_CORE_READ(f, f_path.mnt);
				}
			}
			int wf = d ? dentry_path(d, m, (__u32)r) : 0;
			if (wf) {
				bpf_probe_read_kernel(out, PMU_SYS_PATH_MAX, w->buf);
				fl = dirfd == AT_FDCWD ? PMU_SYS_F_PATH_CWD : PMU_SYS_F_PATH_DIRFD;
				if (wf & W_HEAD)
					fl |= PMU_SYS_F_PATH_HEAD;
				if (wf & W_TAIL || arg_cut)
					fl |= PMU_SYS_F_PATH_TRUNC;
				return fl;
			}
		}
		fl = PMU_SYS_F_PATH_REL;
	} else
		fl = PMU_SYS_F_PATH_ARG;
	bpf_probe_read_kernel(out, PMU_SYS_PATH_MAX, arg);
	if (arg_cut)
		fl |= PMU_SYS_F_PATH_TRUNC;
	return fl;
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
	/* the bound checked on the very register that indexes (a 64-bit
	 * copy): Linux 6.1's verifier does not carry a check made on a
	 * zero-extended copy of a 32-bit value over to the value itself */
	__u64 bi = b;
	barrier_var(bi);
	if (bi >= PMU_SYS_HIST)
		bi = PMU_SYS_HIST - 1;
	barrier_var(bi);
	if (bi < PMU_SYS_HIST)
		__sync_fetch_and_add(&v->hist[bi], 1);
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
#elif defined(__TARGET_ARCH_arm64)
		in->args[0] = BPF_CORE_READ(PMU_ARM64_REGS(regs), orig_x0);
		in->args[1] = BPF_CORE_READ(PMU_ARM64_REGS(regs), regs[1]);
		in->args[2] = BPF_CORE_READ(PMU_ARM64_REGS(regs), regs[2]);
		in->args[3] = BPF_CORE_READ(PMU_ARM64_REGS(regs), regs[3]);
		in->args[4] = BPF_CORE_READ(PMU_ARM64_REGS(regs), regs[4]);
		in->args[5] = ARG6(regs);
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
		if (cl->flags & PMU_SYS_C_PATH2 && cl->path2_arg < 6) {
			long r = bpf_probe_read_user_str(in->path2, sizeof(in->path2),
							 (const char *)in->args[cl->path2_arg & 7]);
			if (r >= 0)
				in->flags |= r == sizeof(in->path2) ? PMU_SYS_F_PATH2 | PMU_SYS_F_P2_TRUNC : PMU_SYS_F_PATH2;
		}
	}
	in->enter_ns = bpf_ktime_get_ns(); /* last: the call's own time, not ours */
	return 0;
}

/*
 * A call that leaves the kernel with none in flight: seccomp refused it
 * before the sys_enter tracepoint (kernel/entry/common.c:
 * syscall_trace_enter() runs __secure_computing() first, and a refused
 * call returns through sys_exit), or it was in flight when the programs
 * were attached (attach mode, or the launcher's wait on the barrier).  It
 * is counted per incarnation, call and errno in an entry marked
 * unentered: no duration, no file.  A child's return from fork (clone,
 * clone3, fork, vfork with ret 0: ret_from_fork passes sys_exit too) is
 * no call of its own and is left out, as strace counts it once.
 */
static __noinline int unentered(__u64 regs_p, long ret, __u64 leader_start, __u64 now)
{
	struct pt_regs *regs = (struct pt_regs *)regs_p;
	struct pmu_sys_stat_key k = {};
	struct pmu_sys_class *cl;
	struct pmu_sys_stat *v;
	long nr;

	/* the filter first: every exit of every task outside the cohort
	 * comes here */
	if (!leader_start) {
		struct task_struct *task = bpf_get_current_task_btf();

		if (!pmu_current_in_cohort())
			return 0;
		leader_start = BPF_CORE_READ(task, group_leader, start_boottime);
	}
	nr = SYSNR(regs);
	if (nr < 0 || nr >= PMU_SYS_NR_MAX)
		return 0;
	k.nr = nr;
	cl = bpf_map_lookup_elem(&calls, &k.nr);
	if (ret == 0 && cl && cl->flags2 & PMU_SYS_C2_FORK)
		return 0;
	k.tgid = bpf_get_current_pid_tgid() >> 32;
	k.leader_start = leader_start;
	k.err = ret < 0 && ret >= -4095 ? -ret : 0;
	k.unentered = 1;
	v = bpf_map_lookup_elem(&stats, &k);
	if (!v) {
		bpf_map_update_elem(&stats, &k, &stat_init, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&stats, &k);
		if (!v) {
			struct pmu_sys_counters *c = ctr();
			if (c)
				c->stats_fail++;
			return 0;
		}
	}
	__sync_fetch_and_add(&v->count, 1);
	if (now > v->last_ns)
		v->last_ns = now;
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

	if (!in || !in->active) {
		unentered((__u64)regs, ret, in ? in->leader_start : 0, now);
		return 0;
	}
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

		/* the opened file's path from its dentry chain; when that walk
		 * was cut, the argument if it makes a whole path */
		if (!k.err && cl->flags & PMU_SYS_C_DENTRY) {
			struct file *f = fd_file(ret);
			int wf = f ? dentry_path((__u64)BPF_CORE_READ(f, f_path.dentry),
						 (__u64)BPF_CORE_READ(f, f_path.mnt), 0) : 0;
			if (wf) {
				__u32 z = 0;
				struct walk *w = bpf_map_lookup_elem(&walk_scratch, &z);
				if (w) {
					bpf_probe_read_kernel(rp->path, sizeof(rp->path), w->buf);
					pf = PMU_SYS_F_PATH_DENTRY | (wf & W_HEAD ? PMU_SYS_F_PATH_HEAD : 0) |
					     (wf & W_TAIL ? PMU_SYS_F_PATH_TRUNC : 0);
				}
			}
		}
		if ((!pf || pf & (PMU_SYS_F_PATH_HEAD | PMU_SYS_F_PATH_TRUNC)) && in->flags & PMU_SYS_F_PATH_ARG &&
		    !(in->flags & PMU_SYS_F_PATH_TRUNC && pf)) {
			/* relative paths: to the dirfd argument before it (the *at
			 * calls), else to the working directory */
			long dirfd = cl->path_arg == 0 ? AT_FDCWD : (int)in->args[(cl->path_arg - 1) & 7];
			char *keep = pf ? rp->path2 : rp->path; /* path2: no open has one */
			__u32 af = resolve_arg(t, in->path, in->flags & PMU_SYS_F_PATH_TRUNC, dirfd, keep);

			if (!pf)
				pf = af;
			else if (af && !(af & (PMU_SYS_F_PATH_HEAD | PMU_SYS_F_PATH_TRUNC | PMU_SYS_F_PATH_REL))) {
				/* whole: it replaces the cut walk */
				bpf_probe_read_kernel(rp->path, sizeof(rp->path), keep);
				pf = af;
			}
		}
		if (!pf) {
			pf = in->flags & PMU_SYS_F_PATH_FAULT;
			rp->path[0] = 0;
		}
		rp->path[PMU_SYS_PATH_MAX - 1] = 0;
		if (in->flags & PMU_SYS_F_PATH2) {
			/* rename's new name: the dirfd before it where the first
			 * path has one (renameat, renameat2), else the cwd */
			long dirfd = cl->path_arg == 0 || cl->path2_arg == 0 ? AT_FDCWD
									      : (int)in->args[(cl->path2_arg - 1) & 7];
			__u32 f2 = resolve_arg(t, in->path2, in->flags & PMU_SYS_F_P2_TRUNC, dirfd, rp->path2);

			pf |= PMU_SYS_F_PATH2;
			if (f2 & PMU_SYS_F_PATH_CWD)
				pf |= PMU_SYS_F_P2_CWD;
			if (f2 & PMU_SYS_F_PATH_DIRFD)
				pf |= PMU_SYS_F_P2_DIRFD;
			if (f2 & PMU_SYS_F_PATH_REL)
				pf |= PMU_SYS_F_P2_REL;
			if (f2 & PMU_SYS_F_PATH_TRUNC)
				pf |= PMU_SYS_F_P2_TRUNC;
			if (f2 & PMU_SYS_F_PATH_HEAD)
				pf |= PMU_SYS_F_P2_HEAD;
			if (!f2)
				rp->path2[0] = 0;
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
