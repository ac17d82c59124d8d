/*
 * The decoder of perf_event ring records (perfrec.h): untrusted input,
 * every read bounded by the record's size.
 */
#include <stdio.h>
#include <string.h>

#include "perfrec.h"

/* include/uapi/linux/perf_event.h, kept here so that lib/ builds anywhere */
enum {
	REC_MMAP = 1, REC_LOST = 2, REC_COMM = 3, REC_EXIT = 4, REC_THROTTLE = 5, REC_UNTHROTTLE = 6,
	REC_FORK = 7, REC_SAMPLE = 9, REC_MMAP2 = 10, REC_LOST_SAMPLES = 13,
};
#define ST_IP (1u << 0)
#define ST_TID (1u << 1)
#define ST_TIME (1u << 2)
#define ST_ADDR (1u << 3)
#define ST_READ (1u << 4)
#define ST_CALLCHAIN (1u << 5)
#define ST_ID (1u << 6)
#define ST_CPU (1u << 7)
#define ST_PERIOD (1u << 8)
#define ST_STREAM_ID (1u << 9)
#define ST_RAW (1u << 10)
#define ST_REGS_USER (1u << 12)
#define ST_STACK_USER (1u << 13)
#define ST_IDENTIFIER (1u << 16)
#define ST_KNOWN (ST_IP | ST_TID | ST_TIME | ST_ADDR | ST_CALLCHAIN | ST_ID | ST_CPU | ST_PERIOD | ST_STREAM_ID | \
		  ST_REGS_USER | ST_STACK_USER | ST_IDENTIFIER)
#define MISC_MMAP_BUILD_ID (1u << 14)

struct rd {
	const unsigned char *p;
	size_t at, end;
	bool bad;
};

static uint64_t u64(struct rd *r)
{
	uint64_t v = 0;

	if (r->bad || r->end - r->at < 8) {
		r->bad = true;
		return 0;
	}
	memcpy(&v, r->p + r->at, 8);
	r->at += 8;
	return v;
}

static uint32_t u32(struct rd *r)
{
	uint32_t v = 0;

	if (r->bad || r->end - r->at < 4) {
		r->bad = true;
		return 0;
	}
	memcpy(&v, r->p + r->at, 4);
	r->at += 4;
	return v;
}

static const unsigned char *take(struct rd *r, uint64_t n)
{
	const unsigned char *q;

	if (r->bad || n > r->end - r->at) {
		r->bad = true;
		return NULL;
	}
	q = r->p + r->at;
	r->at += (size_t)n;
	return q;
}

/* A NUL-terminated string from r's position within its end. */
static const char *str(struct rd *r)
{
	const unsigned char *q;

	if (r->bad || r->at >= r->end || !(q = memchr(r->p + r->at, 0, r->end - r->at))) {
		r->bad = true;
		return NULL;
	}
	return (const char *)(r->p + r->at);
}

static size_t trailer_size(uint64_t st)
{
	return 8 * (!!(st & ST_TID) + !!(st & ST_TIME) + !!(st & ST_ID) + !!(st & ST_STREAM_ID) + !!(st & ST_CPU) +
		    !!(st & ST_IDENTIFIER));
}

/* The sample_id trailer at the end of a record other than a sample. */
static int trailer(const struct pmu_perfrec_fmt *f, struct rd *r, struct pmu_perfrec *o)
{
	size_t ts = trailer_size(f->sample_type);
	struct rd t;

	if (!f->sample_id_all || !ts)
		return 0;
	if (r->end - 8 < ts || r->end < 8 + ts)
		return -1;
	t = (struct rd){ r->p, r->end - ts, r->end, false };
	if (f->sample_type & ST_TID) {
		o->pid = u32(&t);
		o->tid = u32(&t);
		o->has_tid = true;
	}
	if (f->sample_type & ST_TIME) {
		o->t = u64(&t);
		o->has_t = true;
	}
	if (f->sample_type & ST_ID)
		o->id = u64(&t);
	if (f->sample_type & ST_STREAM_ID)
		(void)u64(&t);
	if (f->sample_type & ST_CPU) {
		o->cpu = u32(&t);
		(void)u32(&t);
		o->has_cpu = true;
	}
	if (f->sample_type & ST_IDENTIFIER)
		o->id = u64(&t);
	o->has_id = true;
	r->end -= ts; /* the body ends where the trailer begins */
	return t.bad ? -1 : 0;
}

static int sample(const struct pmu_perfrec_fmt *f, struct rd *r, struct pmu_perfrec *o, char *why, size_t n)
{
	uint64_t st = f->sample_type;

	if (st & ST_IDENTIFIER)
		o->id = u64(r);
	if (st & ST_IP)
		o->ip = u64(r);
	if (st & ST_TID) {
		o->pid = u32(r);
		o->tid = u32(r);
		o->has_tid = true;
	}
	if (st & ST_TIME) {
		o->t = u64(r);
		o->has_t = true;
	}
	if (st & ST_ADDR)
		o->addr = u64(r);
	if (st & ST_ID)
		o->id = u64(r);
	if (st & ST_STREAM_ID)
		(void)u64(r);
	if (st & ST_CPU) {
		o->cpu = u32(r);
		(void)u32(r);
		o->has_cpu = true;
	}
	if (st & ST_PERIOD)
		o->period = u64(r);
	if (st & ST_CALLCHAIN) {
		o->nchain = u64(r);
		if (!r->bad && o->nchain > (r->end - r->at) / 8) {
			snprintf(why, n, "a sample's call chain of %llu entries overruns its record",
				 (unsigned long long)o->nchain);
			return -1;
		}
		o->chain = take(r, 8 * o->nchain);
	}
	if (st & ST_REGS_USER) {
		o->abi = u64(r);
		if (o->abi) {
			o->nregs = (uint32_t)__builtin_popcountll(f->regs_mask);
			o->regs = take(r, 8ull * o->nregs);
		}
	}
	if (st & ST_STACK_USER) {
		o->stack_size = u64(r);
		if (o->stack_size) {
			if (!r->bad && o->stack_size > r->end - r->at) {
				snprintf(why, n, "a sample's user stack of %llu bytes overruns its record",
					 (unsigned long long)o->stack_size);
				return -1;
			}
			o->stack = take(r, o->stack_size);
			o->stack_dyn = u64(r);
			if (!r->bad && o->stack_dyn > o->stack_size) {
				snprintf(why, n, "a sample's user stack says %llu bytes used of %llu",
					 (unsigned long long)o->stack_dyn, (unsigned long long)o->stack_size);
				return -1;
			}
		}
	}
	if (r->bad) {
		snprintf(why, n, "a sample of %u bytes is shorter than its sample_type 0x%llx needs", o->size,
			 (unsigned long long)st);
		return -1;
	}
	return 0;
}

int pmu_perfrec_decode(const struct pmu_perfrec_fmt *f, const void *buf, size_t len, struct pmu_perfrec *o, char *why,
		       size_t n)
{
	struct rd r;
	uint16_t sz;

	memset(o, 0, sizeof(*o));
	if (len < 8) {
		snprintf(why, n, "a record of %zu bytes, shorter than its header", len);
		return -1;
	}
	memcpy(&o->type, buf, 4);
	memcpy(&o->misc, (const char *)buf + 4, 2);
	memcpy(&sz, (const char *)buf + 6, 2);
	o->size = sz;
	if (sz < 8 || sz > len) {
		snprintf(why, n, "a record whose header says %u bytes, of %zu", sz, len);
		return -1;
	}
	if (f->sample_type & ~(uint64_t)ST_KNOWN) {
		snprintf(why, n, "sample_type 0x%llx has fields this decoder does not read",
			 (unsigned long long)f->sample_type);
		return -1;
	}
	r = (struct rd){ buf, 8, sz, false };
	if (o->type == REC_SAMPLE)
		return sample(f, &r, o, why, n);
	if (trailer(f, &r, o)) {
		snprintf(why, n, "a record of type %u and %u bytes is shorter than its sample_id", o->type, sz);
		return -1;
	}
	switch (o->type) {
	case REC_MMAP:
	case REC_MMAP2:
		o->pid = u32(&r);
		o->tid = u32(&r);
		o->has_tid = true;
		o->start = u64(&r);
		o->len = u64(&r);
		o->pgoff = u64(&r);
		if (o->type == REC_MMAP2) {
			if (o->misc & MISC_MMAP_BUILD_ID) {
				const unsigned char *b;

				o->build_id_size = (uint8_t)(take(&r, 1) ? r.p[r.at - 1] : 0);
				(void)take(&r, 3);
				b = take(&r, 20);
				if (b)
					memcpy(o->build_id, b, 20);
				if (o->build_id_size > 20) {
					snprintf(why, n, "an MMAP2 record with a build-id of %u bytes", o->build_id_size);
					return -1;
				}
			} else {
				o->maj = u32(&r);
				o->min = u32(&r);
				o->ino = u64(&r);
				(void)u64(&r);
			}
			o->prot = u32(&r);
			o->flags = u32(&r);
		}
		o->filename = str(&r);
		break;
	case REC_COMM:
		o->pid = u32(&r);
		o->tid = u32(&r);
		o->has_tid = true;
		o->comm = str(&r);
		break;
	case REC_FORK:
	case REC_EXIT:
		o->pid = u32(&r);
		o->ppid = u32(&r);
		o->tid = u32(&r);
		o->ptid = u32(&r);
		o->has_tid = true;
		o->t = u64(&r);
		o->has_t = true;
		break;
	case REC_LOST:
		o->id = u64(&r);
		o->lost = u64(&r);
		break;
	case REC_LOST_SAMPLES:
		o->lost = u64(&r);
		break;
	case REC_THROTTLE:
	case REC_UNTHROTTLE:
		o->t = u64(&r);
		o->has_t = true;
		o->id = u64(&r);
		(void)u64(&r);
		break;
	default:
		break; /* a type not read here: its header and trailer only */
	}
	if (r.bad) {
		snprintf(why, n, "a record of type %u and %u bytes is shorter than its fields", o->type, sz);
		return -1;
	}
	return 0;
}
