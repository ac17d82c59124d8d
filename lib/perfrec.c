/*
 * perf_event ring-buffer records: see perfrec.h.  Layouts from
 * include/uapi/linux/perf_event.h (enum perf_event_type).
 */
#include <linux/perf_event.h>
#include <string.h>

#include "perfrec.h"

static uint32_t u32_at(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t u64_at(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* The NUL-terminated string at p[0..n): NULL when there is no NUL. */
static const char *str_in(const unsigned char *p, size_t n)
{
	return n && memchr(p, '\0', n) ? (const char *)p : NULL;
}

int pmu_perf_decode(const void *rec, size_t n, uint64_t read_format, struct pmu_perf_rec *r, const char **why)
{
	const unsigned char *p = rec, *b, *tr;
	struct perf_event_header h;
	size_t body;

	memset(r, 0, sizeof(*r));
	if (n < sizeof(h)) {
		*why = "record shorter than its header";
		return -1;
	}
	memcpy(&h, p, sizeof(h));
	r->type = h.type;
	r->misc = h.misc;
	if (h.size != n || n % 8) {
		*why = "record size is not its header's, or not a multiple of 8";
		return -1;
	}
	if (h.type == PERF_RECORD_LOST) {
		/* no trailer rule of ours can fail it: it is the kernel's word
		 * that records were lost, read whatever else is wrong */
		if (n < sizeof(h) + 16) {
			*why = "LOST record too short";
			return -1;
		}
		r->kind = PMU_PR_LOST;
		r->lost = u64_at(p + sizeof(h) + 8);
		if (n >= sizeof(h) + 16 + PMU_PERF_TRAILER) {
			tr = p + n - PMU_PERF_TRAILER;
			r->time = u64_at(tr + 8);
			r->id = u64_at(tr + 16);
		}
		return 0;
	}
	if (n < sizeof(h) + PMU_PERF_TRAILER) {
		*why = "record too short for its sample_id trailer";
		return -1;
	}
	b = p + sizeof(h);
	body = n - sizeof(h) - PMU_PERF_TRAILER;
	tr = p + n - PMU_PERF_TRAILER;
	r->time = u64_at(tr + 8);
	r->id = u64_at(tr + 16);
	switch (h.type) {
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		/* pid, ppid, tid, ptid, time */
		if (body != 24) {
			*why = "FORK/EXIT record of the wrong size";
			return -1;
		}
		r->kind = h.type == PERF_RECORD_FORK ? PMU_PR_FORK : PMU_PR_EXIT;
		r->pid = u32_at(b);
		r->ppid = u32_at(b + 4);
		r->tid = u32_at(b + 8);
		r->ptid = u32_at(b + 12);
		break;
	case PERF_RECORD_COMM:
		/* pid, tid, comm[] padded to 8 */
		if (body < 16 || !(r->str = str_in(b + 8, body - 8))) {
			*why = "COMM record without a terminated name";
			return -1;
		}
		r->kind = PMU_PR_COMM;
		r->pid = u32_at(b);
		r->tid = u32_at(b + 4);
		break;
	case PERF_RECORD_MMAP2:
		/* pid, tid, addr, len, pgoff, (maj, min, ino, ino_generation |
		 * build id), prot, flags, filename[] */
		if (body < 72 || !(r->str = str_in(b + 64, body - 64))) {
			*why = "MMAP2 record without a terminated file name";
			return -1;
		}
		r->kind = PMU_PR_MMAP2;
		r->pid = u32_at(b);
		r->tid = u32_at(b + 4);
		r->prot = u32_at(b + 56);
		break;
	case PERF_RECORD_READ: {
		size_t need = 16, at = 16;

		if (read_format & PERF_FORMAT_GROUP) {
			*why = "READ record of a group format, which pmu does not ask for";
			return -1;
		}
		need += 8 * !!(read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			8 * !!(read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) + 8 * !!(read_format & PERF_FORMAT_ID) +
			8 * !!(read_format & PERF_FORMAT_LOST);
		if (body != need) {
			*why = "READ record of the wrong size for its read_format";
			return -1;
		}
		r->kind = PMU_PR_READ;
		r->pid = u32_at(b);
		r->tid = u32_at(b + 4);
		r->value = u64_at(b + 8);
		if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED)
			r->enabled = u64_at(b + at), at += 8;
		if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING)
			r->running = u64_at(b + at), at += 8;
		if (read_format & PERF_FORMAT_ID)
			r->read_id = u64_at(b + at), at += 8;
		if (read_format & PERF_FORMAT_LOST)
			r->lost_count = u64_at(b + at);
		break;
	}
	default:
		r->kind = PMU_PR_OTHER;
		break;
	}
	return 0;
}

void pmu_perf_ring_begin(struct pmu_perf_ring *g)
{
	struct perf_event_mmap_page *mp = g->base;

	g->head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	g->tail = mp->data_tail;
}

const void *pmu_perf_ring_next(struct pmu_perf_ring *g, size_t *n)
{
	struct perf_event_mmap_page *mp = g->base;
	const unsigned char *data = (const unsigned char *)g->base + mp->data_offset;
	struct perf_event_header h;
	size_t off, first;

	if (g->broken || g->tail >= g->head)
		return NULL;
	/* the writer never gets more than the buffer ahead of the reader */
	if (g->head - g->tail > g->data_size || g->head - g->tail < sizeof(h)) {
		g->broken = 1;
		return NULL;
	}
	off = (size_t)(g->tail % g->data_size);
	first = g->data_size - off;
	if (first >= sizeof(h)) {
		memcpy(&h, data + off, sizeof(h));
	} else {
		memcpy(&h, data + off, first);
		memcpy((unsigned char *)&h + first, data, sizeof(h) - first);
	}
	if (h.size < sizeof(h) || h.size > g->head - g->tail) {
		g->broken = 1;
		return NULL;
	}
	*n = h.size;
	if (h.size <= first) {
		g->tail += h.size;
		return data + off;
	}
	memcpy(g->scratch, data + off, first);
	memcpy(g->scratch + first, data, h.size - first);
	g->tail += h.size;
	return g->scratch;
}

void pmu_perf_ring_done(struct pmu_perf_ring *g)
{
	struct perf_event_mmap_page *mp = g->base;

	__atomic_store_n(&mp->data_tail, g->tail, __ATOMIC_RELEASE);
}
