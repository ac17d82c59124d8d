#ifndef PMU_LINUX_CGROUP_H
#define PMU_LINUX_CGROUP_H

/*
 * A cgroup v2 leaf for the cohort: the recorder's --cohort cgroup scoping.
 *
 * Where the leaf goes: under the recorder's own cgroup v2 cgroup (the
 * "0::" line of /proc/self/cgroup, reached through a cgroup2 mount found
 * in /proc/self/mountinfo), named "pmurec.<recorder pid>.<8 hex>".  Moving
 * a process between two cgroups needs write access to cgroup.procs of
 * their common ancestor (cgroup-v2.rst, "Delegation Containment"); with
 * the leaf below the recorder's cgroup that ancestor is the recorder's own
 * cgroup, which is exactly what root owns or a delegation hands out.
 *
 * Controllers: cpu.stat's usage/user/system and the PSI pressure files
 * exist in every cgroup without any controller.  io, memory and pids add
 * io.stat, memory.stat/memory.peak and pids.peak; they are enabled in the
 * parent's cgroup.subtree_control when they are available there.  cpu is
 * never enabled: it adds only throttling counts, and it would make the
 * cohort one scheduling entity weighted against its siblings, perturbing
 * what is measured.  The no-internal-process rule forbids enabling a
 * domain controller in a non-root cgroup that has member processes; when
 * the recorder is the only one there (e.g. under
 * "systemd-run --scope -p Delegate=yes pmurec ..."), it moves itself into
 * a sibling leaf "pmurec.<pid>.<hex>.rec" first, and moves back at
 * pmu_cg_destroy().  Other processes are never moved.  What could not be
 * enabled, and why, is in notes.
 *
 * Typical use: pmu_cg_init, pmu_cg_create, fork the command behind a
 * barrier, pmu_cg_enter(child), open perf events with cg->dirfd,
 * pmu_cg_snapshot(start), release the child, wait, pmu_cg_snapshot(end),
 * pmu_cgstat_delta, pmu_cg_destroy.  A leaf left by a recorder that died
 * (pid gone, leaf empty) is removed by the next pmu_cg_create in the same
 * parent.
 */
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cgstat.h"

/* Embedded: pmu_cg_init() before anything, pmu_cg_destroy() to end; both
 * may be called on a struct whose create failed. */
struct pmu_cg {
	char mount[256];        /* the cgroup2 mount point */
	char parent[512];       /* the recorder's cgroup directory (absolute) */
	char path[640];         /* the leaf (absolute) */
	char name[64];          /* the leaf's name in parent */
	int dirfd;              /* O_RDONLY|O_DIRECTORY of the leaf, for PERF_FLAG_PID_CGROUP; -1 */
	char controllers[128];  /* the leaf's cgroup.controllers, e.g. "io memory pids", or "" */
	char notes[1024];       /* "; "-separated: stale leaves removed, controllers enabled or not and why */
	const char *want;       /* set before create: controllers to enable, space-separated; NULL: "io memory pids" */
	/* private to cgroup.c */
	int parentfd;
	bool created;
	bool moved_self;        /* the recorder sits in <parent>/<name>.rec */
	char enabled[64];       /* controllers this recorder enabled in parent */
	struct {
		char name[16];
		char why[200];
		const char *remedy;
	} off[8];               /* wanted controllers the leaf lacks */
	int noff;
};

void pmu_cg_init(struct pmu_cg *cg);

/*
 * Create the leaf (see above).  Returns 0, PMU_ERR_UNSUPPORTED when this
 * host or this user cannot have one (no cgroup2 mount, not permitted, a
 * threaded cgroup), with why filled with the true reason (errno text
 * included) and *remedy set to a static hint, or another negative pmu_err
 * (why filled too).  Nothing is left behind on failure.
 */
int pmu_cg_create(struct pmu_cg *cg, char *why, size_t whylen, const char **remedy);

/* Move pid (all its threads) into the leaf by writing cgroup.procs; meant
 * for the forked command before it may exec.  A pid already in the leaf
 * (created there: clone3 CLONE_INTO_CGROUP with dirfd) is left as it is.
 * PMU_ERR_UNSUPPORTED when not permitted, PMU_ERR_NOTFOUND when pid is
 * gone. */
int pmu_cg_enter(const struct pmu_cg *cg, pid_t pid);

/*
 * Read every file of the pmu_cgfiles table in the leaf into s (released
 * first; pmu_cgsnap_release() frees it).  A file that does not exist is
 * UNAVAILABLE with reason and remedy (controller not enabled and why, PSI
 * off); one that cannot be read or parsed is FAILED.  Returns 0, or
 * PMU_ERR_NOMEM / PMU_ERR_INVAL (no leaf).
 */
int pmu_cg_snapshot(const struct pmu_cg *cg, struct pmu_cgsnap *s);

/*
 * The system-wide pressure of /proc/pressure/{cpu,io,memory} into the
 * pressure files of s (the others stay NOT_READ).  A diagnostic of the
 * whole host, never the cohort's: the caller labels it scope "system".
 */
int pmu_sys_pressure(struct pmu_cgsnap *s);

/*
 * End the leaf: kill what is left in it (cgroup.kill, or SIGKILL to every
 * pid of cgroup.procs, repeated), wait up to 2 s for cgroup.events
 * "populated 0", remove it and any cgroups the cohort made below it, close
 * dirfd; then undo the recorder's own move (disable what it enabled, move
 * back, remove the .rec leaf) when no other leaf shares the parent.
 * Idempotent.  Returns 0, or PMU_ERR_IO with the detail when the leaf is
 * still there; a failed undo of the recorder's move is only a note.
 */
int pmu_cg_destroy(struct pmu_cg *cg);

/* The cohort's cgroup of backend.h (pmu_cohort_cgroup_*): one leaf, made
 * by the recorder, read by the collectors that scope by it. */
struct pmu_cohort_cgroup {
	struct pmu_cg cg;
};

#endif
