/*
 * Decoding of the eBPF follower's ring records (bpf/follow.h).  The bytes
 * come from a BPF program, through a ring user space can also write to:
 * trust nothing.  The sample length, the header's size and the kind's
 * struct size must agree exactly (an exec record's size is its fixed part
 * and argv_len bytes of argv, within PMU_BPF_ARGV_MAX); unknown flag bits, a zero seq, strings
 * without their NUL, a filename_len that is not the string's length and
 * group-only fields set on a non-last thread are all PMU_ERR_CORRUPT.
 */
#include <stddef.h>
#include <string.h>

#include "error.h"
#include "linux/follow_bpf.h"

#define FORK_FLAGS (PMU_BPF_FORK_THREAD | PMU_BPF_FORK_NOTRACK | PMU_BPF_FORK_BY_CGROUP)
#define EXEC_FLAGS (PMU_BPF_EXEC_TRUNCATED | PMU_BPF_EXEC_ARGV_TRUNCATED | PMU_BPF_EXEC_ARGV_FAULT)
#define EXEC_MIN offsetof(struct pmu_bpf_exec, argv)
#define EXIT_FLAGS (PMU_BPF_EXIT_GROUP_DEAD | PMU_BPF_EXIT_LEADER | PMU_BPF_EXIT_GROUP_EXIT | PMU_BPF_EXIT_EARLY)

static int bad(const char *what, uint64_t seq)
{
	return pmu_error(PMU_ERR_CORRUPT, "bpf record seq %llu: %s", (unsigned long long)seq, what);
}

int pmu_bpf_decode(const void *data, size_t len, union pmu_bpf_rec *out)
{
	struct pmu_bpf_hdr h;
	size_t want;

	if (!data || len < sizeof(h))
		return pmu_error(PMU_ERR_CORRUPT, "bpf record of %zu bytes is shorter than its header", len);
	memcpy(&h, data, sizeof(h));
	switch (h.kind) {
	case PMU_BPF_REC_FORK: want = sizeof(struct pmu_bpf_fork); break;
	case PMU_BPF_REC_EXEC:
		/* variable: the fixed part, then argv_len bytes */
		want = len >= EXEC_MIN && len <= sizeof(struct pmu_bpf_exec) ? len : EXEC_MIN;
		break;
	case PMU_BPF_REC_EXIT: want = sizeof(struct pmu_bpf_exit); break;
	case PMU_BPF_REC_COUNTS: want = sizeof(struct pmu_bpf_counts); break;
	default: return bad("unknown kind", h.seq);
	}
	if (h.size != len || len != want)
		return bad("size does not match its kind", h.seq);
	if (h.seq == 0)
		return bad("seq 0", h.seq);
	memcpy(out, data, len);

	switch (h.kind) {
	case PMU_BPF_REC_FORK: {
		const struct pmu_bpf_fork *r = &out->fork;
		if (r->flags & ~FORK_FLAGS)
			return bad("unknown fork flags", h.seq);
		if (!!(r->flags & PMU_BPF_FORK_THREAD) != (r->child_tgid == r->parent_tgid))
			return bad("fork thread flag disagrees with the tgids", h.seq);
		if (!r->parent_tgid || !r->child_tgid || !r->child_tid || !r->parent_tid)
			return bad("fork with pid 0", h.seq);
		break;
	}
	case PMU_BPF_REC_EXEC: {
		const struct pmu_bpf_exec *r = &out->exec;
		const void *nul = memchr(r->filename, 0, sizeof(r->filename));
		if (r->flags & ~EXEC_FLAGS)
			return bad("unknown exec flags", h.seq);
		if (r->argv_len != len - EXEC_MIN)
			return bad("exec argv_len disagrees with the record's size", h.seq);
		if (r->argv_total < r->argv_len)
			return bad("exec argv longer than the process's", h.seq);
		if (!!(r->flags & PMU_BPF_EXEC_ARGV_TRUNCATED) !=
		    (r->argv_total > r->argv_len && r->argv_len == PMU_BPF_ARGV_MAX))
			return bad("exec argv truncation flag disagrees with its lengths", h.seq);
		if ((r->flags & PMU_BPF_EXEC_ARGV_FAULT) && (r->argv_len || r->argv_total))
			return bad("exec argv both unread and present", h.seq);
		if (r->argv_total > r->argv_len && !(r->flags & PMU_BPF_EXEC_ARGV_TRUNCATED))
			return bad("exec argv short of its length and of the bound", h.seq);
		if (!nul || (size_t)((const char *)nul - r->filename) != r->filename_len)
			return bad("exec filename not terminated at its length", h.seq);
		if ((r->flags & PMU_BPF_EXEC_TRUNCATED) && r->filename_len != sizeof(r->filename) - 1)
			return bad("exec filename truncated short of its bound", h.seq);
		if (!r->tgid || !r->tid || !r->old_tid)
			return bad("exec with pid 0", h.seq);
		break;
	}
	case PMU_BPF_REC_COUNTS: {
		const struct pmu_bpf_counts *r = &out->counts;
		if (r->flags & ~PMU_BPF_COUNTS_NOENTRY)
			return bad("unknown counts flags", h.seq);
		if (!r->nev || r->nev > PMU_BPF_NEV)
			return bad("counts with no event or too many", h.seq);
		if (!r->tgid || !r->tid)
			return bad("counts with pid 0", h.seq);
		for (unsigned i = 0; i < PMU_BPF_NEV; i++)
			if (r->running_ns[i] > r->enabled_ns[i] ||
			    (i >= r->nev && (r->value[i] || r->enabled_ns[i] || r->running_ns[i])))
				return bad("counts times disagree or an unused event counted", h.seq);
		break;
	}
	case PMU_BPF_REC_EXIT: {
		const struct pmu_bpf_exit *r = &out->exit;
		if (r->flags & ~EXIT_FLAGS)
			return bad("unknown exit flags", h.seq);
		if (!!(r->flags & PMU_BPF_EXIT_LEADER) != (r->tid == r->tgid))
			return bad("exit leader flag disagrees with the tids", h.seq);
		if (!(r->flags & PMU_BPF_EXIT_GROUP_DEAD) && (r->group_status || r->maxrss_pages))
			return bad("group fields on a thread that is not the last", h.seq);
		if (!memchr(r->comm, 0, sizeof(r->comm)))
			return bad("exit comm not terminated", h.seq);
		if (!r->tgid || !r->tid)
			return bad("exit with pid 0", h.seq);
		break;
	}
	}
	return 0;
}
