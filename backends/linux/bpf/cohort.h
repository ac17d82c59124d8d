#ifndef PMU_BPF_COHORT_SHARED_H
#define PMU_BPF_COHORT_SHARED_H

/*
 * What the loaders and cohort.bpf.h agree on about pmu_members' values
 * (tgid -> the group leader's start_boottime, ns).  Shared by the BPF
 * objects and user space; nothing else.
 *
 * PMU_COHORT_ANY: any process of that tgid (the root once it has exec'd,
 * the processes of an attached tree).  PMU_COHORT_PRE_EXEC: the root while
 * pmurec's launcher still runs in it (the barrier, execvp's walk of PATH):
 * not in the cohort until its exec succeeds (cohort.bpf.h's exec program
 * turns it into PMU_COHORT_ANY).  No start_boottime is ~0.
 */
#define PMU_COHORT_ANY 0ULL
#define PMU_COHORT_PRE_EXEC (~0ULL)

#endif
