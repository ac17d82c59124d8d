#ifndef PMU_LINUX_FOLLOW_BPF_H
#define PMU_LINUX_FOLLOW_BPF_H

/*
 * The eBPF follower's loader (private to backends/linux): loads
 * bpf/follow.bpf.c, attaches it to sched_process_fork/exec/exit, and
 * decodes its ring buffer.  It never stops a task.
 *
 * Typical use, behind the launch barrier:
 *   pmu_bpf_follow_open(&opts, &f, &why)   unavailable: why says so, with a remedy
 *   fork the root; it waits on a pipe
 *   pmu_bpf_follow_add_root(f, root)       before the root may exec
 *   release the root
 *   poll pmu_bpf_follow_fd(f) with a timeout (records are sent without a
 *   wakeup unless the ring is half full), pmu_bpf_follow_drain(f, cb, arg)
 *   until pmu_bpf_follow_members(f) is 0, drain once more
 *   pmu_bpf_follow_stats(f, &st), pmu_bpf_follow_close(f)
 *
 * Records: union pmu_bpf_rec, one of the wire structs of bpf/follow.h
 * (units and sources documented there and in bpf/follow.bpf.c):
 *   fork: parent/child tgid and tid, thread or process, both start times
 *         as ns since boot (start_boottime) and as /proc/PID/stat field 22
 *         clock ticks;
 *   exec: tgid, tid, old tid (!= tid for a non-leader exec), filename (at
 *         most PMU_BPF_FILENAME_MAX-1 bytes, truncated flag), start time;
 *   exit: per thread: sum_exec_runtime ns, utime/stime ns, minor/major
 *         faults, voluntary/involuntary switches, migrations, rchar/wchar,
 *         syscr/syscw, storage read/write/cancelled bytes; for the group's
 *         last thread (PMU_BPF_EXIT_GROUP_DEAD) the wait(2) status and
 *         max RSS (pages: multiply by sysconf(_SC_PAGESIZE)).
 * Every header's time_ns is CLOCK_MONOTONIC (bpf_ktime_get_ns).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>
#include <linux/types.h>

#include "bpf/follow.h"

/* why the follower is not there; PMU_BPF_OK when it is */
enum pmu_bpf_avail {
	PMU_BPF_OK = 0,
	PMU_BPF_NOT_BUILT,     /* no clang/bpftool/libbpf/BTF on the build host */
	PMU_BPF_NO_PRIVILEGE,  /* neither CAP_BPF+CAP_PERFMON nor CAP_SYS_ADMIN, or the kernel said EPERM */
	PMU_BPF_NO_BTF,        /* the running kernel has no /sys/kernel/btf/vmlinux */
	PMU_BPF_VERIFIER,      /* the verifier rejected a program */
	PMU_BPF_ATTACH,        /* a tracepoint could not be attached */
	PMU_BPF_KERNEL,        /* anything else the kernel refused (map creation, memory) */
};

struct pmu_bpf_why {
	enum pmu_bpf_avail avail;
	char reason[512];      /* lowercase, what failed first */
	const char *remedy;    /* static */
};

enum pmu_bpf_btf_mode {
	PMU_BPF_BTF_AUTO = 0,  /* the minimal BTF made at build time when the running
	                        * kernel is the build host's (same GNU build-id in
	                        * /sys/kernel/notes), else the full vmlinux BTF */
	PMU_BPF_BTF_FULL,      /* always parse /sys/kernel/btf/vmlinux */
	PMU_BPF_BTF_MIN,       /* the minimal BTF or fail: for measuring */
};

struct pmu_bpf_follow_opts {
	size_t ring_bytes;     /* power of two, >= the page size; 0: 1 MiB */
	uint64_t cgroup_id;    /* cohort cgroup v2 id (name_to_handle_at of its
	                        * directory), 0: none; a fork in it joins */
	uint32_t max_members;  /* live processes followed at once; 0: 8192 (the map's
	                        * buckets are allocated and zeroed at open: 16 B each) */
	enum pmu_bpf_btf_mode btf;
	/* per-thread hardware counts by the per-CPU, charged-at-context-switch
	 * method (bpf/follow.h struct pmu_bpf_counts): up to PMU_BPF_NEV
	 * counting events, opened by the follower on every CPU; 0: none */
	unsigned nev;
	struct perf_event_attr *ev_attr[PMU_BPF_NEV];
	bool exit_kprobe;      /* use the pre-6.16 exit hook (kprobe taskstats_exit)
	                        * even where the tracepoint has group_dead: for tests */
};

/* the decoded record: h.kind says which member is valid */
union pmu_bpf_rec {
	struct pmu_bpf_hdr h;
	struct pmu_bpf_fork fork;
	struct pmu_bpf_exec exec;
	struct pmu_bpf_exit exit;
	struct pmu_bpf_counts counts;
};

struct pmu_bpf_follow_stats {
	uint64_t assigned;     /* seqs handed out by the programs (last seq) */
	uint64_t delivered;    /* records decoded and passed to the callback */
	uint64_t dropped;      /* failed ring reserves, all CPUs */
	uint64_t map_fail;     /* failed member map updates, all CPUs */
	uint64_t malformed;    /* records refused by the decoder, duplicate or stale seqs */
	char first_malformed[200]; /* the first of them: its seq and what was wrong; "" if none */
	uint64_t gaps;         /* seqs up to assigned never delivered: == dropped when
	                        * nothing was malformed */
	unsigned ncpu;         /* possible CPUs: the per-CPU arrays below */
	const uint64_t *dropped_cpu, *map_fail_cpu; /* owned by the follower, valid until close */
	double open_ms, load_ms, attach_ms; /* the fixed cost, by phase */
	char btf_source[200];  /* which BTF the CO-RE relocations used, and why */
	uint64_t count_fail;   /* member slices not charged (loss), all CPUs */
	const uint64_t *count_fail_cpu; /* per CPU, owned by the follower */
	unsigned ev_cpus;      /* CPUs on which every counting event opened */
	const char *exit_hook; /* static: the hook that decides group_dead (the 6.16
	                        * tracepoint, or the kprobe before 6.16); "" if none */
};

struct pmu_bpf_follow;

/* Called once per valid record, in ring order (not seq order across CPUs);
 * rec is valid during the call.  A nonzero return stops the drain. */
typedef int (*pmu_bpf_record_fn)(const union pmu_bpf_rec *rec, void *arg);

/*
 * Load and attach.  0 and *out (free with pmu_bpf_follow_close), or a
 * negative pmu_err with why filled (PMU_ERR_UNSUPPORTED when the follower
 * is unavailable here, PMU_ERR_INVAL for bad opts).  libbpf's messages
 * during the open are captured into why->reason, never printed.
 */
int pmu_bpf_follow_open(const struct pmu_bpf_follow_opts *opts, struct pmu_bpf_follow **out,
                        struct pmu_bpf_why *why);
/* Make pid (a tgid) a member: before it may exec or fork. */
int pmu_bpf_follow_add_root(struct pmu_bpf_follow *f, pid_t pid);
/* The ring's epoll fd (readable when the ring is half full); -1 if none. */
int pmu_bpf_follow_fd(const struct pmu_bpf_follow *f);
/* Drain what the ring holds now; returns records consumed (>= 0) or a
 * negative pmu_err. */
int pmu_bpf_follow_drain(struct pmu_bpf_follow *f, pmu_bpf_record_fn cb, void *arg);
/* Live members now (walks the maps: O(members) syscalls): processes of the
 * cohort, and exited threads whose exit record is not yet sent.  0 after
 * the root is reaped: every record is in the ring; drain once more. */
int pmu_bpf_follow_members(struct pmu_bpf_follow *f, size_t *n);
/* Of those, the exited threads whose exit record is not yet sent: 0 when
 * no exit record of a member is still to come. */
int pmu_bpf_follow_dying(struct pmu_bpf_follow *f, size_t *n);
void pmu_bpf_follow_stats(struct pmu_bpf_follow *f, struct pmu_bpf_follow_stats *st);
void pmu_bpf_follow_close(struct pmu_bpf_follow *f);

/*
 * Decode one ring sample (untrusted bytes: every size, kind, flag and
 * string is checked) into *out.  0, or PMU_ERR_CORRUPT with a detail.
 * Platform-free apart from the wire header: bpf/decode.c.
 */
int pmu_bpf_decode(const void *data, size_t len, union pmu_bpf_rec *out);

#endif
