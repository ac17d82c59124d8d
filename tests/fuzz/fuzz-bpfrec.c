/*
 * fuzz-bpfrec: pmu_bpf_decode() (backends/linux/bpf/decode.c) on arbitrary
 * ring samples.  The eBPF follower's records reach user space through a
 * ring that any holder of the map fd can write, so the decoder must never
 * read past the sample, never accept a record whose sizes disagree, and
 * hand out only records whose strings are terminated where they say.
 *
 * Rules checked (abort() on a violation):
 *   1. accepted  =>  len == h.size == sizeof the kind's struct, seq != 0,
 *      known kind; exec: strlen(filename) == filename_len, truncated only
 *      at the bound; exit: comm terminated; fork: the thread flag agrees
 *      with the tgids; counts: 1..PMU_BPF_NEV events, running <= enabled,
 *      nothing counted past nev.
 *   2. accepted  =>  decoding the decoded bytes again accepts and gives
 *      the same bytes (the decoder is a filter, not a transformer).
 *   3. refused   =>  PMU_ERR_CORRUPT with a detail that starts "bpf record".
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "linux/follow_bpf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	union pmu_bpf_rec r, again;
	/* an exact-size heap copy: ASan sees any read past the sample */
	uint8_t *buf = malloc(len ? len : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, len);
	int rc = pmu_bpf_decode(buf, len, &r);
	if (rc) {
		if (rc != PMU_ERR_CORRUPT || strncmp(pmu_error_detail(), "bpf record", 10))
			abort();
		free(buf);
		return 0;
	}
	if (r.h.size != len || r.h.seq == 0)
		abort();
	switch (r.h.kind) {
	case PMU_BPF_REC_FORK:
		if (len != sizeof(r.fork) ||
		    !!(r.fork.flags & PMU_BPF_FORK_THREAD) != (r.fork.child_tgid == r.fork.parent_tgid))
			abort();
		break;
	case PMU_BPF_REC_EXEC:
		if (len != offsetof(struct pmu_bpf_exec, argv) + r.exec.argv_len ||
		    r.exec.argv_len > PMU_BPF_ARGV_MAX || r.exec.argv_total < r.exec.argv_len ||
		    strlen(r.exec.filename) != r.exec.filename_len ||
		    r.exec.filename_len >= PMU_BPF_FILENAME_MAX)
			abort();
		if ((r.exec.flags & PMU_BPF_EXEC_TRUNCATED) && r.exec.filename_len != PMU_BPF_FILENAME_MAX - 1)
			abort();
		break;
	case PMU_BPF_REC_EXIT:
		if (len != sizeof(r.exit) || strnlen(r.exit.comm, sizeof(r.exit.comm)) >= sizeof(r.exit.comm))
			abort();
		break;
	case PMU_BPF_REC_COUNTS:
		if (len != sizeof(r.counts) || !r.counts.nev || r.counts.nev > PMU_BPF_NEV)
			abort();
		for (unsigned i = 0; i < PMU_BPF_NEV; i++)
			if (r.counts.running_ns[i] > r.counts.enabled_ns[i] ||
			    (i >= r.counts.nev && (r.counts.value[i] || r.counts.enabled_ns[i])))
				abort();
		break;
	default:
		abort();
	}
	if (pmu_bpf_decode(&r, len, &again) || memcmp(&r, &again, len))
		abort();
	free(buf);
	return 0;
}
