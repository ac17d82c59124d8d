/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cohort filter shared by the OS-event collectors' eBPF objects
 * (syscalls.bpf.c, sched.bpf.c): include it once, after vmlinux.h and the
 * libbpf headers.  Each object has its own copy of the map and programs.
 *
 * The filter follows the process tree, as the follower does (config's
 * "filter": members): pmu_members maps a tgid to its group leader's
 * start_boottime (ns), PMU_COHORT_ANY, or PMU_COHORT_PRE_EXEC (cohort.h).
 * The cohort's cgroup is not used: a cohort process that moves itself to
 * another cgroup (systemd-run --scope, cgexec, a container runtime) stays
 * in the cohort, as it stays in cohort.jsonl.
 *
 *  - The loader's entries: the root, PMU_COHORT_PRE_EXEC, put there while
 *    it is held behind the launch barrier (and not yet reaped, so its pid
 *    cannot be reused); the processes of an attached tree, PMU_COHORT_ANY.
 *  - The root is not in the cohort while pmurec's launcher runs in it (its
 *    close of the barrier, execvp's failed attempts along PATH): the
 *    command begins at its exec.  sched_process_exec turns its entry into
 *    PMU_COHORT_ANY (and calls the object's PMU_COHORT_ON_EXEC(p), which
 *    the object may define before including this file).  The syscalls
 *    object lets an execve the root enters while pre-exec be in flight, and
 *    drops it at sys_exit if the root is still pre-exec (a failed attempt).
 *  - A fork whose parent is a member adds the child before it first runs
 *    (kernel_clone() fires sched_process_fork before wake_up_new_task()).
 *    The leader's start is checked at every lookup, so an entry left behind
 *    by a process whose pid was reused never matches the new process.
 *  - An entry is removed at the exit of the group's last thread
 *    (signal->live at 0: when two threads exit at once both may see it; an
 *    entry kept too long is harmless, see above).
 *
 * A full map is counted per CPU in pmu_cohort_fail (the process is then
 * not in the cohort for this object, and its calls are lost: the loader
 * reports the count as loss).
 */
#ifndef PMU_BPF_COHORT_H
#define PMU_BPF_COHORT_H

#include "cohort.h"

#ifndef PMU_COHORT_ON_EXEC
#define PMU_COHORT_ON_EXEC(p) ((void)(p))
#endif

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384); /* the loader may resize it */
	__type(key, __u32);         /* tgid */
	__type(value, __u64);       /* the leader's start_boottime, PMU_COHORT_ANY or PMU_COHORT_PRE_EXEC */
} pmu_members SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} pmu_cohort_fail SEC(".maps");

/* (PMU_COHORT_PRE_EXEC matches no start_boottime: the root before its exec is out) */
static __always_inline bool pmu_member_is(__u32 tgid, __u64 leader_start)
{
	__u64 *v = bpf_map_lookup_elem(&pmu_members, &tgid);

	return v && (*v == PMU_COHORT_ANY || *v == leader_start);
}

/* whether task t (any task, e.g. sched_switch's prev or next) is in the cohort */
static __always_inline bool pmu_task_in_cohort(struct task_struct *t)
{
	return pmu_member_is(BPF_CORE_READ(t, tgid), BPF_CORE_READ(t, group_leader, start_boottime));
}

/* the current task's entry (the cheap path for sys_enter/sys_exit):
 * 1 in the cohort, 0 not, -1 the root before its exec */
static __always_inline int pmu_current_membership(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 *v = bpf_map_lookup_elem(&pmu_members, &tgid);
	if (!v)
		return 0;
	if (*v == PMU_COHORT_ANY)
		return 1;
	if (*v == PMU_COHORT_PRE_EXEC)
		return -1;
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	return *v == BPF_CORE_READ(t, group_leader, start_boottime);
}

static __always_inline bool pmu_current_in_cohort(void)
{
	return pmu_current_membership() > 0;
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(pmu_cohort_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	if (ptgid == ctgid)
		return 0; /* a thread: its group is already there */
	if (!pmu_member_is(ptgid, BPF_CORE_READ(parent, group_leader, start_boottime)))
		return 0;
	__u64 start = BPF_CORE_READ(child, start_boottime); /* the child leads its group */
	if (bpf_map_update_elem(&pmu_members, &ctgid, &start, BPF_ANY)) {
		__u32 k = 0;
		__u64 *c = bpf_map_lookup_elem(&pmu_cohort_fail, &k);
		if (c)
			*c += 1; /* per CPU: no other writer */
	}
	return 0;
}

/* The root's exec (fs/exec.c exec_binprm(): after the new image is in,
 * before the execve returns): from here on it is the command. */
SEC("raw_tp/sched_process_exec")
int BPF_PROG(pmu_cohort_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	__u64 *v = bpf_map_lookup_elem(&pmu_members, &tgid);
	if (!v || *v != PMU_COHORT_PRE_EXEC)
		return 0;
	*v = PMU_COHORT_ANY; /* one aligned store: readers see one or the other */
	PMU_COHORT_ON_EXEC(p);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(pmu_cohort_exit, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	if (BPF_CORE_READ(p, signal, live.counter) == 0 &&
	    pmu_member_is(tgid, BPF_CORE_READ(p, group_leader, start_boottime)))
		bpf_map_delete_elem(&pmu_members, &tgid);
	return 0;
}

#endif
