/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cohort filter shared by the OS-event collectors' eBPF objects
 * (syscalls.bpf.c, sched.bpf.c): include it once, after vmlinux.h and the
 * libbpf headers.  Each object has its own copy of the map and programs.
 *
 * Two filters, as the loader chooses (the config's "filter"):
 *  - cgroup: cohort_cgid is the cohort's cgroup v2 id; a task is in the
 *    cohort when its cgroup is that one.  Nothing else is kept.
 *  - members: pmu_members maps a tgid to its group leader's start_boottime
 *    (ns), or 0 for "any" (the loader's entries: the root, held behind the
 *    launch barrier and not yet reaped, so its pid cannot be reused, and
 *    the processes of an attached tree).  A fork whose parent is a member
 *    adds the child before it first runs (kernel_clone() fires
 *    sched_process_fork before wake_up_new_task()).  The leader's start is
 *    checked at every lookup, so an entry left behind by a process whose
 *    pid was reused never matches the new process.  An entry is removed at
 *    the exit of the group's last thread (signal->live at 0: when two
 *    threads exit at once both may see it; an entry kept too long is
 *    harmless, see above).
 *
 * A full map is counted per CPU in pmu_cohort_fail (the process is then
 * not in the cohort for this object, and its calls are lost: the loader
 * reports the count as loss).
 */
#ifndef PMU_BPF_COHORT_H
#define PMU_BPF_COHORT_H

const volatile __u64 cohort_cgid = 0; /* cgroup v2 id; 0: the members filter */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384); /* the loader may resize it */
	__type(key, __u32);         /* tgid */
	__type(value, __u64);       /* the leader's start_boottime, 0: any */
} pmu_members SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} pmu_cohort_fail SEC(".maps");

static __always_inline bool pmu_member_is(__u32 tgid, __u64 leader_start)
{
	__u64 *v = bpf_map_lookup_elem(&pmu_members, &tgid);

	return v && (*v == 0 || *v == leader_start);
}

/* whether task t (any task, e.g. sched_switch's prev or next) is in the cohort */
static __always_inline bool pmu_task_in_cohort(struct task_struct *t)
{
	if (cohort_cgid)
		return BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id) == cohort_cgid;
	return pmu_member_is(BPF_CORE_READ(t, tgid), BPF_CORE_READ(t, group_leader, start_boottime));
}

/* whether the current task is (the cheap path for sys_enter/sys_exit) */
static __always_inline bool pmu_current_in_cohort(void)
{
	if (cohort_cgid)
		return bpf_get_current_cgroup_id() == cohort_cgid;
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 *v = bpf_map_lookup_elem(&pmu_members, &tgid);
	if (!v)
		return false;
	if (*v == 0)
		return true;
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	return *v == BPF_CORE_READ(t, group_leader, start_boottime);
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(pmu_cohort_fork, struct task_struct *parent, struct task_struct *child)
{
	if (cohort_cgid)
		return 0;
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

SEC("raw_tp/sched_process_exit")
int BPF_PROG(pmu_cohort_exit, struct task_struct *p)
{
	if (cohort_cgid)
		return 0;
	__u32 tgid = BPF_CORE_READ(p, tgid);
	if (BPF_CORE_READ(p, signal, live.counter) == 0 &&
	    pmu_member_is(tgid, BPF_CORE_READ(p, group_leader, start_boottime)))
		bpf_map_delete_elem(&pmu_members, &tgid);
	return 0;
}

#endif
