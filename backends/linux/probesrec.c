/*
 * Decoding of the probes collector's ring records (probesrec.h).  An exec
 * record is its struct exactly, with a seq, a tgid and a tid.  A hit is
 * the bare struct followed by exactly nstr string slots, nstr <= 4, its
 * size in the header the sample's length; a zero seq, a zero tgid or tid,
 * a probe index outside the loader's table, more arguments than 12, flags
 * outside PMU_PRB_F_ALL or naming arguments and strings the hit does not
 * have, and a string without its NUL at its length are PMU_ERR_CORRUPT.
 */
#include <string.h>

#include "error.h"
#include "linux/probesrec.h"

static int bad(const char *what, uint64_t seq)
{
	return pmu_error(PMU_ERR_CORRUPT, "probe record seq %llu: %s", (unsigned long long)seq, what);
}

int pmu_prb_decode(const void *data, size_t len, uint32_t nprobes, union pmu_prb_rec *out)
{
	struct pmu_prb_hit h;

	if (!data || len < sizeof(struct pmu_prb_hdr))
		return pmu_error(PMU_ERR_CORRUPT, "probe record of %zu bytes is shorter than its header", len);
	if (len < sizeof(h)) {
		struct pmu_prb_hdr hd;
		struct pmu_prb_exec x;

		memcpy(&hd, data, sizeof(hd));
		if (hd.kind != PMU_PRB_REC_EXEC)
			return bad(hd.kind == PMU_PRB_REC_HIT ? "shorter than a hit" : "unknown kind", hd.seq);
		if (len != sizeof(x) || hd.size != len)
			return bad("size does not match its kind", hd.seq);
		memcpy(&x, data, sizeof(x));
		if (hd.seq == 0)
			return bad("seq 0", hd.seq);
		if (!x.tgid || !x.tid)
			return bad("no process or thread", hd.seq);
		memset(out, 0, sizeof(*out));
		memcpy(out, data, len);
		return 0;
	}
	memcpy(&h, data, sizeof(h));
	if (h.h.kind != PMU_PRB_REC_HIT)
		return bad("unknown kind", h.h.seq);
	if (h.nstr > PMU_PRB_NSTR)
		return bad("more strings than a hit holds", h.h.seq);
	if (h.h.size != len || len != sizeof(h) + (size_t)h.nstr * PMU_PRB_STR)
		return bad("size does not match its strings", h.h.seq);
	if (h.h.seq == 0)
		return bad("seq 0", h.h.seq);
	if (!h.tgid || !h.tid)
		return bad("no process or thread", h.h.seq);
	if (h.probe >= nprobes || h.probe >= PMU_PRB_MAX)
		return bad("a probe index outside the table", h.h.seq);
	if (h.nargs > PMU_PRB_NARGS)
		return bad("more arguments than 12", h.h.seq);
	if (h.flags & ~PMU_PRB_F_ALL)
		return bad("unknown flags", h.h.seq);
	for (unsigned i = h.nargs; i < PMU_PRB_NARGS; i++)
		if (h.flags & PMU_PRB_F_ARG_BAD(i) || h.args[i])
			return bad("an argument past its count", h.h.seq);
	memset(out, 0, sizeof(*out));
	memcpy(out, data, len);
	for (unsigned j = 0; j < PMU_PRB_NSTR; j++) {
		if (j >= h.nstr) {
			if (h.slen[j] || h.flags & (PMU_PRB_F_STR_BAD(j) | PMU_PRB_F_STR_CUT(j)) || h.sfile[j].ino)
				return bad("a string past its count", h.h.seq);
			continue;
		}
		if (h.sfile[j].ino && !(h.flags & PMU_PRB_F_STR_BAD(j)))
			return bad("the file of a string that was read", h.h.seq);
		if (h.slen[j] >= PMU_PRB_STR || out->full.str[j][h.slen[j]])
			return bad("a string without its NUL at its length", h.h.seq);
	}
	return 0;
}
