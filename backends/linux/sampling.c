/*
 * The sampling collector (bundle-spec section 22): one sampling event and
 * one mmap ring PER CPU (pid = the root with inherit, or the cohort's
 * cgroup), never a ring shared across CPUs (docs/light-follower.md says
 * what that loses).  Rings are consumed on the loop's timer (drain) with an
 * acquire load of data_head and a release store of data_tail; the records
 * of all rings are merged by time (a heap), and only those older than what
 * every ring has been read up to are written, so the samples stream is in
 * time order.  Each sample is attributed to a cohort incarnation (pid, tid,
 * time) before it is written; with a follower that reports tasks after the
 * fact (eBPF) a sample of a task not yet known is held for a bounded time.
 *
 * Streams: collectors/sampling/samples.jsonl (config, then samples, loss
 * and throttle records as they come, then ksym and summary at emit) and
 * collectors/sampling/maps.jsonl (kmap when opened, then maps from
 * /proc/PID/maps and MMAP2 records as they are learned, not held: their
 * t_ns is when the mapping took effect, not the order of the stream; the
 * retained and unretained records at emit).  What stays in memory for
 * retain and perf.data is the table of distinct objects (path, build-id)
 * and, for --retain-binaries=sampled, the maps of the incarnations that
 * samples may still come from.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <elf.h>
#include <link.h>
#include <gelf.h>
#include <libelf.h>

#include "cgroup.h"
#include "collector.h"
#include "corepmu.h"
#include "error.h"
#include "heap.h"
#include "lifecycle.h"
#include "perfdata.h"
#include "perfev.h"
#include "perfrec.h"
#include "retain.h"
#include "sampling.h"
#include "spec_json.h"
#include "util.h"

#ifndef PERF_RECORD_MISC_MMAP_BUILD_ID
#define PERF_RECORD_MISC_MMAP_BUILD_ID (1 << 14)
#endif

#define HOLD_NS (3ull * 1000000000ull)  /* how long a sample of an unknown task waits */
#define HOLD_MAX 200000                  /* and how many may wait */
#define KADDR_MAX (1u << 22)             /* distinct kernel addresses kept for ksym */
#define XMAP_MIN 1024                    /* maps held before ended incarnations' are dropped */
#define XOBJ_BUCKETS 1024                /* the distinct objects' hash */

#if defined(__x86_64__)
/* PERF_REG_X86_AX..R15 without the segment registers, as perf(1) asks */
#define REGS_MASK 0xff0fffull
#define ARCH_REGS_OK 1
#elif defined(__aarch64__)
#define REGS_MASK 0x1ffffffffull       /* x0..x30, sp, pc */
#define ARCH_REGS_OK 1
#else
#define REGS_MASK 0ull
#define ARCH_REGS_OK 0
#endif

struct ring {
	int fd, cpu;
	unsigned char *base;   /* the header page, then the data */
	uint64_t size;         /* data bytes, a power of two */
	uint64_t id;
	uint64_t last_t;
};

/* A record waiting in the merge: a copy of a ring's record, or a map read
 * from /proc (map set). */
struct item {
	uint64_t t, seq;
	int cpu;
	uint32_t len;
	unsigned char *raw;
	json_t *map;            /* a map record, or (comm) the comm as a JSON string */
	char *path;             /* a map's path as read (need not be UTF-8) */
	bool comm;
	pid_t pid;
	uint32_t prot, mflags;  /* a map's, for its synthesized MMAP2 */
	int inc;                /* a map's incarnation */
};

struct bid {
	struct bid *next;
	char *path;
	dev_t dev;
	ino_t ino;
	char hex[129];
	char why[200];
};

/* A distinct object the cohort mapped (path and build-id, "" for none):
 * for retain and perf.data's build-ids.  pid: the first process that
 * mapped it; spid: the first with a sample in it. */
struct xobj {
	char *path;
	char bid[129];
	pid_t pid, spid;
	bool sampled;
	int next;               /* the hash chain: index + 1, 0 ends it */
};

/* A map of an incarnation that samples may still come from: which object
 * a sampled address is in (--retain-binaries=sampled). */
struct xmap {
	pid_t pid;
	int inc;
	uint64_t start, end;
	uint32_t obj;
};

struct samp {
	struct pmu_collector_env *env;
	struct pmu_sampling_opts o;
	int mode;
	bool unusable;
	char why[600], remedy[300];
	/* the event */
	struct perf_event_attr attr;
	char event[64], event_reason[400], kernel_reason[300], scope_reason[400], ring_reason[300];
	bool kernel_excluded, cgroup_scope;
	bool lowered;           /* the default frequency lowered to the kernel's bound */
	long long max_rate_start;
	long long max_stack;
	struct pmu_perfrec_fmt fmt;
	/* the rings */
	struct ring *r;
	int nr;
	uint64_t ring_bytes;
	unsigned char *rec;    /* one record, copied out of a ring */
	/* the merge */
	struct pmu_heap heap;     /* of struct item, by (t, seq) */
	uint64_t seq, prev_drain, last_written;
	bool stopped;
	/* output */
	struct pmu_stream *ss, *ms;
	size_t nmaps;           /* map records written */
	struct xobj *xo;
	size_t nxo, xocap;
	int xoh[XOBJ_BUCKETS];
	struct xmap *xm;
	size_t nxm, xmcap, xm_prune_at;
	uint64_t frontier;      /* every record up to it has been processed */
	int err;
	/* counts */
	uint64_t samples, unattributed, lost_records, lost_samples, throttles, unthrottles, malformed, late,
		unattributed_maps;
	char malformed_first[200];
	bool failed;
	char failed_why[300];
	/* the kernel */
	uint64_t ktext, ketext;
	char kbid[129], kbid_why[200], kallsyms_why[200];
	bool kallsyms_ok;
	uint64_t *kaddr;
	size_t nk, kcap;
	bool ksampled;
	/* perf.data: the cohort's kernel records, and what was there before */
	struct pmu_perfdata_w *pd;
	char pd_why[300];
	/* build-ids by file */
	struct bid *bids;
	char vdso_bid[129];
};

static long perf_open(struct perf_event_attr *a, pid_t pid, int cpu, int group, unsigned long flags)
{
	return syscall(SYS_perf_event_open, a, pid, cpu, group, flags);
}

static long long read_ll(const char *path, long long dflt)
{
	char *s = NULL;
	long long v = dflt;

	if (!pmu_read_file(AT_FDCWD, path, 64, &s, NULL)) {
		char *end;
		long long x = strtoll(s, &end, 10);

		if (end != s)
			v = x;
	}
	free(s);
	return v;
}

static void hex_of(char *out, const unsigned char *b, size_t n)
{
	static const char d[] = "0123456789abcdef";

	for (size_t i = 0; i < n && i < 64; i++) {
		out[2 * i] = d[b[i] >> 4];
		out[2 * i + 1] = d[b[i] & 15];
	}
	out[2 * (n < 64 ? n : 64)] = 0;
}

static size_t unhex(const char *h, unsigned char *b, size_t n)
{
	size_t k = 0;

	for (; k < n && isxdigit((unsigned char)h[2 * k]) && isxdigit((unsigned char)h[2 * k + 1]); k++) {
		char two[3] = { h[2 * k], h[2 * k + 1], 0 };

		b[k] = (unsigned char)strtoul(two, NULL, 16);
	}
	return k;
}

/* The GNU build-id in a block of ELF notes. */
static bool notes_bid(const unsigned char *p, size_t n, char *hex)
{
	size_t at = 0;

	while (n - at >= 12) {
		uint32_t nsz, dsz, type;

		memcpy(&nsz, p + at, 4);
		memcpy(&dsz, p + at + 4, 4);
		memcpy(&type, p + at + 8, 4);
		at += 12;
		if (nsz > n - at)
			return false;
		{
			size_t na = (nsz + 3u) & ~3u, da = (dsz + 3u) & ~3u;
			bool gnu = nsz == 4 && !memcmp(p + at, "GNU", 4);

			if (na > n - at)
				return false;
			at += na;
			if (dsz > n - at)
				return false;
			if (gnu && type == NT_GNU_BUILD_ID && dsz > 0 && dsz <= 64) {
				hex_of(hex, p + at, dsz);
				return true;
			}
			if (da > n - at)
				return false;
			at += da;
		}
	}
	return false;
}

/* The build-id of the ELF file at path (its PT_NOTE segments). */
static int file_bid(const char *path, char *hex, char *why, size_t wn)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;
	size_t nph = 0;
	int rc = -1;

	if (fd < 0) {
		snprintf(why, wn, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getphdrnum(e, &nph)) {
		snprintf(why, wn, "%s is not an ELF file", path);
		goto out;
	}
	for (size_t i = 0; i < nph && rc; i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_NOTE || ph.p_filesz > (1u << 20))
			continue;
		d = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_BYTE);
		if (d && d->d_buf && notes_bid(d->d_buf, d->d_size, hex))
			rc = 0;
	}
	if (rc)
		snprintf(why, wn, "%s has no GNU build-id note (linked without --build-id)", path);
out:
	if (e)
		elf_end(e);
	close(fd);
	return rc;
}

/* The vDSO's build-id, from the recorder's own (the same kernel's). */
static void vdso_bid(struct samp *s)
{
	const unsigned char *b = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	const ElfW(Ehdr) *eh = (const void *)b;

	s->vdso_bid[0] = 0;
	if (!b || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return;
	for (int i = 0; i < eh->e_phnum; i++) {
		const ElfW(Phdr) *ph = (const void *)(b + eh->e_phoff + (size_t)i * eh->e_phentsize);

		if (ph->p_type == PT_NOTE && notes_bid(b + ph->p_offset, ph->p_filesz, s->vdso_bid))
			return;
	}
}

/* The build-id of a mapped file (cached by path, device and inode), into
 * rec: build_id + build_id_source file, or build_id_reason. */
static void put_bid(struct samp *s, json_t *rec, const char *path, char *hexout)
{
	struct stat st;
	struct bid *b;

	hexout[0] = 0;
	if (!strcmp(path, "[vdso]")) {
		if (s->vdso_bid[0]) {
			json_object_set_new(rec, "build_id", json_string(s->vdso_bid));
			json_object_set_new(rec, "build_id_source", json_string("memory"));
			strcpy(hexout, s->vdso_bid);
		} else
			json_object_set_new(rec, "build_id_reason", json_string("the vDSO has no build-id note"));
		return;
	}
	if (path[0] != '/') {
		json_object_set_new(rec, "build_id_reason", json_string("not a file: anonymous or special memory"));
		return;
	}
	if (stat(path, &st)) {
		char w[300];

		snprintf(w, sizeof(w), "cannot read %s: %s", path, strerror(errno));
		json_object_set_new(rec, "build_id_reason", pmu_json_text(w));
		return;
	}
	for (b = s->bids; b; b = b->next)
		if (b->dev == st.st_dev && b->ino == st.st_ino && !strcmp(b->path, path))
			break;
	if (!b && (b = calloc(1, sizeof(*b))) && (b->path = strdup(path))) {
		b->dev = st.st_dev;
		b->ino = st.st_ino;
		if (file_bid(path, b->hex, b->why, sizeof(b->why)))
			b->hex[0] = 0;
		b->next = s->bids;
		s->bids = b;
	} else if (!b || !b->path) {
		free(b);
		json_object_set_new(rec, "build_id_reason", json_string("out of memory"));
		return;
	}
	if (b->hex[0]) {
		json_object_set_new(rec, "build_id", json_string(b->hex));
		json_object_set_new(rec, "build_id_source", json_string("file"));
		strcpy(hexout, b->hex);
	} else
		json_object_set_new(rec, "build_id_reason", pmu_json_text(b->why));
}

static json_t *hexs(uint64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "0x%" PRIx64, v);
	return json_string(b);
}

static void incname(char *b, size_t n, int id)
{
	snprintf(b, n, "i%d", id);
}

/* ---- the merge: a min-heap by (t, seq) ----------------------------------- */

static bool before(const struct item *a, const struct item *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static bool item_less(const void *a, const void *b)
{
	return before(a, b);
}

static int heap_push(struct samp *s, struct item it)
{
	it.seq = s->seq++;
	return pmu_heap_push(&s->heap, &it) ? -1 : 0;
}

static struct item heap_pop(struct samp *s)
{
	struct item top;

	pmu_heap_pop(&s->heap, &top);
	return top;
}

/* ---- output --------------------------------------------------------------- */

static void put_to(struct samp *s, struct pmu_stream *st, json_t *rec)
{
	struct pmu_out *o = s->env->out;

	if (!rec) {
		s->err = s->err ? s->err : pmu_error(PMU_ERR_NOMEM, "out of memory");
		return;
	}
	if (s->err || !st) {
		json_decref(rec);
		return;
	}
	s->err = o->put(st, rec);
}

static void put(struct samp *s, json_t *rec)
{
	put_to(s, s->ss, rec);
}

static int cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

static void add_kaddr(struct samp *s, uint64_t a)
{
	if (s->mode < 2)
		return;
	if (s->nk == s->kcap) {
		/* sort and unique in place before growing */
		if (s->nk) {
			size_t w = 0;

			qsort(s->kaddr, s->nk, sizeof(*s->kaddr), cmp);
			for (size_t i = 0; i < s->nk; i++)
				if (!w || s->kaddr[w - 1] != s->kaddr[i])
					s->kaddr[w++] = s->kaddr[i];
			s->nk = w;
		}
		if ((!s->kcap || s->nk * 2 > s->kcap) && s->kcap < KADDR_MAX) {
			if (pmu_grow(&s->kaddr, &s->kcap, s->kcap + 1, sizeof(*s->kaddr), 4096))
				return;
		}
		if (s->nk == s->kcap)
			return;
	}
	s->kaddr[s->nk++] = a;
}


static void base64(struct pmu_buf *b, const unsigned char *p, size_t n)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
		char q[4] = { t[v >> 18 & 63], t[v >> 12 & 63], i + 1 < n ? t[v >> 6 & 63] : '=', i + 2 < n ? t[v & 63] : '=' };

		pmu_buf_add(b, q, 4);
	}
}

/* Mark the object of the held map of pid containing a as sampled. */
static void mark_sampled(struct samp *s, pid_t pid, uint64_t a)
{
	for (size_t i = s->nxm; i-- > 0;)
		if (s->xm[i].pid == pid && a >= s->xm[i].start && a < s->xm[i].end) {
			struct xobj *o = &s->xo[s->xm[i].obj];

			if (!o->sampled)
				o->spid = pid;
			o->sampled = true;
			return;
		}
}

static void write_sample(struct samp *s, const struct pmu_perfrec *r, const struct pmu_incarnation *in)
{
	json_t *o = json_object();
	char inc[24];
	bool kip = (r->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;

	incname(inc, sizeof(inc), in->id);
	json_object_set_new(o, "type", json_string("sample"));
	json_object_set_new(o, "t_ns", json_integer((json_int_t)r->t));
	json_object_set_new(o, "inc", json_string(inc));
	json_object_set_new(o, "pid", json_integer(r->pid));
	json_object_set_new(o, "tid", json_integer(r->tid));
	json_object_set_new(o, "cpu", json_integer(r->cpu));
	json_object_set_new(o, "ip", hexs(r->ip));
	json_object_set_new(o, "kernel_ip", json_boolean(kip));
	if (s->attr.freq)
		json_object_set_new(o, "period", json_integer((json_int_t)r->period));
	if (kip) {
		s->ksampled = true;
		add_kaddr(s, r->ip);
	} else if (s->o.retain == PMU_RETAIN_SAMPLED)
		mark_sampled(s, (pid_t)r->pid, r->ip);
	if (r->chain) {
		struct pmu_buf b;
		uint64_t ctx = 0, nk = 0, nu = 0, n = 0;
		bool first = true;

		pmu_buf_init(&b);
		for (uint64_t i = 0; i < r->nchain; i++) {
			uint64_t a = pmu_perfrec_u64(r->chain, i);

			if (a >= PMU_PERFREC_CONTEXT_MAX) {
				ctx = a;
				continue;
			}
			if (first && a != r->ip) {
				/* chain[0] is the ip */
				pmu_buf_addf(&b, "0x%" PRIx64, r->ip);
				if (kip)
					nk++;
				else
					nu++;
				n++;
				first = false;
			}
			pmu_buf_addf(&b, first ? "0x%" PRIx64 : " 0x%" PRIx64, a);
			first = false;
			n++;
			if (ctx == PMU_PERFREC_CONTEXT_KERNEL) {
				nk++;
				add_kaddr(s, a);
			} else {
				nu++;
				if (s->o.retain == PMU_RETAIN_SAMPLED && i > 0)
					mark_sampled(s, (pid_t)r->pid, a - 1);
			}
		}
		if (first) {
			pmu_buf_addf(&b, "0x%" PRIx64, r->ip);
			nk += kip;
			nu += !kip;
			n++;
		}
		json_object_set_new(o, "chain", json_stringn(b.p ? b.p : "", b.len));
		json_object_set_new(o, "kframes", json_integer((json_int_t)nk));
		json_object_set_new(o, "chain_cut",
				    json_boolean(s->max_stack > 0 && (nk >= (uint64_t)s->max_stack ||
								      nu >= (uint64_t)s->max_stack)));
		pmu_buf_release(&b);
		(void)n;
	}
	if (r->abi && r->regs) {
		struct pmu_buf b;

		pmu_buf_init(&b);
		for (uint32_t i = 0; i < r->nregs; i++)
			pmu_buf_addf(&b, i ? " 0x%" PRIx64 : "0x%" PRIx64, pmu_perfrec_u64(r->regs, i));
		json_object_set_new(o, "regs", json_stringn(b.p ? b.p : "", b.len));
		pmu_buf_release(&b);
	}
	if (r->stack && r->stack_dyn) {
		struct pmu_buf b;

		pmu_buf_init(&b);
		base64(&b, r->stack, (size_t)r->stack_dyn);
		json_object_set_new(o, "stack", json_stringn(b.p ? b.p : "", b.len));
		pmu_buf_release(&b);
	}
	if (r->abi && r->regs)
		json_object_set_new(o, "user_abi", json_string(r->abi == PERF_SAMPLE_REGS_ABI_32 ? "32" : "64"));
	s->samples++;
	put(s, o);
}

/* The index of the distinct object (path, bid), added with pid as its
 * first mapper when new; -1 out of memory. */
static int xobj_get(struct samp *s, const char *path, const char *bid, pid_t pid)
{
	uint32_t h = 2166136261u;
	int i;

	for (const char *c = path; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	for (const char *c = bid; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	h %= XOBJ_BUCKETS;
	for (i = s->xoh[h]; i; i = s->xo[i - 1].next)
		if (!strcmp(s->xo[i - 1].path, path) && !strcmp(s->xo[i - 1].bid, bid))
			return i - 1;
	if (s->nxo >= INT32_MAX || pmu_grow(&s->xo, &s->xocap, s->nxo + 1, sizeof(*s->xo), 64))
		return -1;
	s->xo[s->nxo] = (struct xobj){ .path = strdup(path), .pid = pid, .next = s->xoh[h] };
	if (!s->xo[s->nxo].path)
		return -1;
	snprintf(s->xo[s->nxo].bid, sizeof(s->xo[s->nxo].bid), "%s", bid);
	s->xoh[h] = (int)++s->nxo;
	return (int)s->nxo - 1;
}

/*
 * Drop the held maps of the incarnations that no sample can come from any
 * more: those that ended more than HOLD_NS before what the merge has
 * processed (a sample waits in the merge at most HOLD_NS for its task; the
 * rings are read up to the merge's watermark before it moves).  Then the
 * held maps are those of the incarnations alive in the last seconds, not
 * of the whole run.
 */
static void prune_maps(struct samp *s)
{
	const struct pmu_cohort *c = s->env->cohort;
	size_t w = 0;

	for (size_t i = 0; i < s->nxm; i++) {
		int inc = s->xm[i].inc;
		const struct pmu_incarnation *in = inc > 0 && (size_t)inc <= c->n ? &c->incs[inc - 1] : NULL;

		if (in && in->ended && in->end_ns + HOLD_NS < s->frontier)
			continue;
		s->xm[w++] = s->xm[i];
	}
	s->nxm = w;
	s->xm_prune_at = 2 * w > XMAP_MIN ? 2 * w : XMAP_MIN;
}

/* A map record of incarnation inc: written to the maps stream now; its
 * object kept, and (--retain-binaries=sampled) the map while samples of
 * inc may come. */
static void hold_map(struct samp *s, json_t *m, int inc, pid_t pid, uint64_t start, uint64_t end,
		     const char *path, const char *bid)
{
	int obj = xobj_get(s, path, bid, pid);

	if (obj < 0) {
		json_decref(m);
		s->err = s->err ? s->err : pmu_error(PMU_ERR_NOMEM, "out of memory");
		return;
	}
	if (s->o.retain == PMU_RETAIN_SAMPLED) {
		if (s->nxm >= s->xm_prune_at)
			prune_maps(s);
		if (pmu_grow(&s->xm, &s->xmcap, s->nxm + 1, sizeof(*s->xm), 64) == 0)
			s->xm[s->nxm++] = (struct xmap){ pid, inc, start, end, (uint32_t)obj };
	}
	s->nmaps++;
	put_to(s, s->ms, m);
}

static json_t *map_rec(uint64_t t, const char *inc, pid_t pid, pid_t tid, uint64_t start, uint64_t end, uint64_t pgoff,
		       const char *path)
{
	json_t *m = json_object();

	json_object_set_new(m, "type", json_string("map"));
	json_object_set_new(m, "t_ns", json_integer((json_int_t)t));
	json_object_set_new(m, "inc", json_string(inc));
	json_object_set_new(m, "pid", json_integer(pid));
	json_object_set_new(m, "tid", json_integer(tid));
	json_object_set_new(m, "start", hexs(start));
	json_object_set_new(m, "end", hexs(end));
	json_object_set_new(m, "pgoff", hexs(pgoff));
	json_object_set_new(m, "path", pmu_json_text(path));
	return m;
}

static void pd_raw(struct samp *s, const struct item *it)
{
	if (s->pd && pmu_perfdata_record(s->pd, it->raw, it->len) && !s->pd_why[0])
		snprintf(s->pd_why, sizeof(s->pd_why), "writing perf.data's data: %s", pmu_error_detail());
}

/* One merged record, in time order.  Returns 1 when it must wait (its task
 * is not known yet), else 0. */
static int process(struct samp *s, struct item *it, uint64_t now, bool final)
{
	struct pmu_perfrec r;
	char why[200];
	const struct pmu_incarnation *in;

	if (it->comm) {
		if (s->pd)
			pmu_perfdata_comm(s->pd, it->pid, it->pid, json_string_value(it->map), it->t, false);
		return 0;
	}
	if (it->map) {
		/* a map read from /proc: attributed when read */
		uint64_t st = 0, en = 0;
		const char *path = it->path;
		char bid[129];

		sscanf(json_string_value(json_object_get(it->map, "start")), "%" SCNx64, &st);
		sscanf(json_string_value(json_object_get(it->map, "end")), "%" SCNx64, &en);
		put_bid(s, it->map, path, bid);
		json_object_set_new(it->map, "origin", json_string("proc-maps"));
		if (s->pd) {
			unsigned char bb[64];
			size_t bl = unhex(bid, bb, sizeof(bb));

			pmu_perfdata_mmap2(s->pd, it->pid, it->pid, st, en - st,
					   (uint64_t)json_integer_value(json_object_get(it->map, "pgoff_n")), it->prot,
					   it->mflags, path, bl ? bb : NULL, bl, it->t);
		}
		json_object_del(it->map, "pgoff_n");
		hold_map(s, it->map, it->inc, (pid_t)json_integer_value(json_object_get(it->map, "pid")), st, en, path,
			 bid);
		it->map = NULL;
		return 0;
	}
	if (pmu_perfrec_decode(&s->fmt, it->raw, it->len, &r, why, sizeof(why))) {
		if (!s->malformed++)
			snprintf(s->malformed_first, sizeof(s->malformed_first), "%s", why);
		return 0;
	}
	switch (r.type) {
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		/* perf.data only: the cohort's own */
		if (pmu_cohort_find(s->env->cohort, (pid_t)r.pid, (pid_t)r.tid, r.t, r.t) ||
		    (r.type == PERF_RECORD_FORK && pmu_cohort_find(s->env->cohort, (pid_t)r.ppid, (pid_t)r.ptid, r.t, r.t)) ||
		    (r.type == PERF_RECORD_EXIT && pmu_cohort_find(s->env->cohort, (pid_t)r.pid, (pid_t)r.tid, 0, 0)))
			pd_raw(s, it);
		return 0;
	case PERF_RECORD_SAMPLE:
	case PERF_RECORD_MMAP2:
		in = pmu_cohort_find(s->env->cohort, (pid_t)r.pid, (pid_t)r.tid, r.t, r.t);
		if (!in && !final && s->env->stops != PMU_STOPS_BEFORE_RUN && now < r.t + HOLD_NS && s->heap.n < HOLD_MAX)
			return 1;
		if (r.type == PERF_RECORD_SAMPLE && it->t < s->last_written) {
			s->late++;
			return 0;
		}
		if (!in) {
			if (r.type == PERF_RECORD_SAMPLE)
				s->unattributed++;
			else
				s->unattributed_maps++;
			return 0;
		}
		pd_raw(s, it);
		if (r.type == PERF_RECORD_SAMPLE) {
			s->last_written = it->t;
			write_sample(s, &r, in);
		} else if (r.filename && (r.prot & PROT_EXEC)) {
			char inc[24], bid[129] = "";
			json_t *m;

			incname(inc, sizeof(inc), in->id);
			m = map_rec(r.t, inc, (pid_t)r.pid, (pid_t)r.tid, r.start, r.start + r.len, r.pgoff,
				    r.filename);
			if (r.misc & PERF_RECORD_MISC_MMAP_BUILD_ID && r.build_id_size) {
				hex_of(bid, r.build_id, r.build_id_size);
				json_object_set_new(m, "build_id", json_string(bid));
				json_object_set_new(m, "build_id_source", json_string("mmap2"));
			} else
				put_bid(s, m, r.filename, bid);
			json_object_set_new(m, "origin", json_string("mmap2"));
			hold_map(s, m, in->id, (pid_t)r.pid, r.start, r.start + r.len, r.filename, bid);
		}
		return 0;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES: {
		json_t *o = json_object();
		uint64_t t = r.has_t ? r.t : it->t;

		if (t < s->last_written)
			t = s->last_written; /* reported late: the loss is known from here on */
		json_object_set_new(o, "type", json_string("loss"));
		json_object_set_new(o, "t_ns", json_integer((json_int_t)t));
		json_object_set_new(o, "cpu", json_integer(r.has_cpu ? (json_int_t)r.cpu : it->cpu));
		json_object_set_new(o, "lost", json_integer((json_int_t)r.lost));
		json_object_set_new(o, "what", json_string(r.type == PERF_RECORD_LOST ? "records" : "samples"));
		pd_raw(s, it);
		if (r.type == PERF_RECORD_LOST)
			s->lost_records += r.lost;
		else
			s->lost_samples += r.lost;
		s->last_written = t;
		put(s, o);
		return 0;
	}
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE: {
		json_t *o = json_object();
		uint64_t t = r.t < s->last_written ? s->last_written : r.t;

		json_object_set_new(o, "type", json_string("throttle"));
		json_object_set_new(o, "t_ns", json_integer((json_int_t)t));
		json_object_set_new(o, "cpu", json_integer(r.has_cpu ? (json_int_t)r.cpu : it->cpu));
		json_object_set_new(o, "what", json_string(r.type == PERF_RECORD_THROTTLE ? "throttle" : "unthrottle"));
		pd_raw(s, it);
		if (r.type == PERF_RECORD_THROTTLE)
			s->throttles++;
		else
			s->unthrottles++;
		s->last_written = t;
		put(s, o);
		return 0;
	}
	default:
		return 0;
	}
}

/* Write what is older than wm, in time order. */
static void flush(struct samp *s, uint64_t wm, uint64_t now, bool final)
{
	while (s->heap.n && ((const struct item *)pmu_heap_top(&s->heap))->t <= wm) {
		struct item it = heap_pop(s);

		if (process(s, &it, now, final)) {
			heap_push(s, it); /* waits for its task: so does all behind it */
			break;
		}
		free(it.raw);
		free(it.path);
		json_decref(it.map);
	}
	if (!s->heap.n || ((const struct item *)pmu_heap_top(&s->heap))->t > wm)
		s->frontier = wm;
}

/* Read what ring r holds into the merge. */
static void read_ring(struct samp *s, struct ring *g)
{
	struct perf_event_mmap_page *mp = (void *)g->base;
	unsigned char *data = g->base + sysconf(_SC_PAGESIZE);
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE), tail = mp->data_tail, mask = g->size - 1;

	while (tail < head) {
		struct perf_event_header hd;
		uint64_t off = tail & mask, first;
		struct item it = { 0 };
		struct pmu_perfrec r;
		char why[200];

		if (head - tail < sizeof(hd))
			goto corrupt;
		first = g->size - off;
		if (first >= sizeof(hd))
			memcpy(&hd, data + off, sizeof(hd));
		else {
			memcpy(&hd, data + off, first);
			memcpy((char *)&hd + first, data, sizeof(hd) - first);
		}
		if (hd.size < sizeof(hd) || hd.size > head - tail)
			goto corrupt;
		if (first >= hd.size)
			memcpy(s->rec, data + off, hd.size);
		else {
			memcpy(s->rec, data + off, first);
			memcpy(s->rec + first, data, hd.size - first);
		}
		tail += hd.size;
		if (pmu_perfrec_decode(&s->fmt, s->rec, hd.size, &r, why, sizeof(why))) {
			if (!s->malformed++)
				snprintf(s->malformed_first, sizeof(s->malformed_first), "%s", why);
			continue;
		}
		if (r.type != PERF_RECORD_SAMPLE && r.type != PERF_RECORD_MMAP2 && r.type != PERF_RECORD_LOST &&
		    r.type != PERF_RECORD_LOST_SAMPLES && r.type != PERF_RECORD_THROTTLE &&
		    r.type != PERF_RECORD_UNTHROTTLE && (!s->pd || (r.type != PERF_RECORD_COMM &&
		    r.type != PERF_RECORD_FORK && r.type != PERF_RECORD_EXIT)))
			continue; /* the follower has the tasks; perf.data keeps them */
		it.t = r.has_t ? r.t : g->last_t;
		g->last_t = it.t;
		it.cpu = g->cpu;
		it.len = hd.size;
		if (!(it.raw = malloc(hd.size)) || (memcpy(it.raw, s->rec, hd.size), heap_push(s, it))) {
			free(it.raw);
			s->err = s->err ? s->err : pmu_error(PMU_ERR_NOMEM, "out of memory");
		}
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
	return;
corrupt:
	if (!s->failed)
		snprintf(s->failed_why, sizeof(s->failed_why),
			 "CPU %d's ring buffer holds a record that does not fit (head %" PRIu64 ", tail %" PRIu64
			 "): the ring cannot be read on",
			 g->cpu, head, tail);
	s->failed = true;
	__atomic_store_n(&mp->data_tail, head, __ATOMIC_RELEASE);
}

static int samp_drain(void *state, uint64_t now)
{
	struct samp *s = state;

	if (!s->nr || s->stopped)
		return 0;
	for (int i = 0; i < s->nr; i++)
		read_ring(s, &s->r[i]);
	/* every ring has been read up to the previous drain's start at least */
	if (s->prev_drain)
		flush(s, s->prev_drain, now, false);
	s->prev_drain = now;
	return 0;
}

static int samp_fds(void *state, int *fds, int max)
{
	struct samp *s = state;
	int n = 0;

	for (int i = 0; i < s->nr && n < max; i++)
		fds[n++] = s->r[i].fd;
	return n;
}

/* ---- /proc/PID/maps ------------------------------------------------------- */

/* perf.data: a COMM for a process that was there before its records */
static void synth_comm(struct samp *s, pid_t pid, pid_t from, uint64_t t)
{
	char cp[64], *comm = NULL;
	struct item it = { .t = t, .cpu = -1, .comm = true, .pid = pid };

	if (!s->pd)
		return;
	snprintf(cp, sizeof(cp), "/proc/%d/comm", (int)from);
	if (!pmu_read_file(AT_FDCWD, cp, 64, &comm, NULL)) {
		comm[strcspn(comm, "\n")] = 0;
		if ((it.map = pmu_json_text(comm)) && heap_push(s, it))
			json_decref(it.map);
	}
	free(comm);
}

/* The executable maps of process from, read now, as pid's (of incarnation
 * inc) at t. */
static void proc_maps(struct samp *s, int inc, pid_t pid, pid_t from, uint64_t t)
{
	char path[64], line[4200], incs[24];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)from);
	if (!(f = fopen(path, "re")))
		return;
	incname(incs, sizeof(incs), inc);
	synth_comm(s, pid, from, t);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b, off;
		char perms[8];
		int pos = 0;
		char *name;
		size_t n;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &a, &b, perms, &off, &pos) < 4 || !pos)
			continue;
		if (strlen(perms) < 3 || perms[2] != 'x')
			continue;
		name = line + pos;
		n = strcspn(name, "\n");
		name[n] = 0;
		if (name[0] != '/' && strcmp(name, "[vdso]"))
			continue;
		{
			struct item it = { .t = t, .cpu = -1, .pid = pid, .inc = inc };

			it.prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) | PROT_EXEC;
			it.mflags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
			it.map = map_rec(t, incs, pid, pid, a, b, off, name);
			json_object_set_new(it.map, "pgoff_n", json_integer((json_int_t)off));
			if (!(it.path = strdup(name)) || heap_push(s, it)) {
				free(it.path);
				json_decref(it.map);
			}
		}
	}
	fclose(f);
}

/* Whether processes a and b run the same executable now. */
static bool same_exe(pid_t a, pid_t b)
{
	char pa[64], pb[64], ea[4096], eb[4096];
	ssize_t na, nb;

	snprintf(pa, sizeof(pa), "/proc/%d/exe", (int)a);
	snprintf(pb, sizeof(pb), "/proc/%d/exe", (int)b);
	na = readlink(pa, ea, sizeof(ea));
	nb = readlink(pb, eb, sizeof(eb));
	return na > 0 && na == nb && !memcmp(ea, eb, (size_t)na);
}

static void samp_task(void *state, const struct pmu_task_event *ev)
{
	struct samp *s = state;

	if (!s->nr || s->stopped)
		return;
	if (ev->what == PMU_TASK_JOINED && ev->pid == ev->tid && (ev->flags & PMU_TASK_ROOT_PREEXEC))
		synth_comm(s, ev->pid, ev->pid, ev->t); /* the recorder's image until its exec */
	else if (ev->what == PMU_TASK_JOINED && ev->pid == ev->tid) {
		/* its maps are its parent's, from its start (a follower that
		 * reports after the fact reports it later).  Such a follower
		 * may report it after it exec'd: /proc/CHILD/maps would then
		 * show the new image, dated at the fork; the parent's maps are
		 * what it forked with (the new image comes in MMAP2 records).
		 * While both still run the same executable, the child's own
		 * maps are the closer account. */
		const struct pmu_incarnation *in = pmu_cohort_of_pid(s->env->cohort, ev->pid), *p = NULL;
		pid_t from = ev->pid;

		if (s->env->stops != PMU_STOPS_BEFORE_RUN && in && in->parent > 0 &&
		    (size_t)in->parent <= s->env->cohort->n) {
			p = &s->env->cohort->incs[in->parent - 1];
			if (!p->ended && !same_exe(ev->pid, p->pid))
				from = p->pid;
		}
		proc_maps(s, ev->inc, ev->pid, from, in && in->start_ns && in->start_ns < ev->t ? in->start_ns : ev->t);
	}
	else if (ev->what == PMU_TASK_EXEC)
		proc_maps(s, ev->inc, ev->pid, ev->pid, ev->t);
}

/* ---- the kernel ------------------------------------------------------------ */

static void kernel_probe(struct samp *s)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512];

	s->kallsyms_ok = false;
	if (!f) {
		snprintf(s->kallsyms_why, sizeof(s->kallsyms_why), "cannot open /proc/kallsyms: %s", strerror(errno));
	} else {
		/* _text is the core kernel's first text symbol: near the top
		 * since 6.15 on x86-64, after the per-CPU variables (hundreds
		 * of type A lines) before; the modules ('[') come after it */
		while (fgets(line, sizeof(line), f) && !strchr(line, '[')) {
			unsigned long long a;
			char ty, name[256];

			if (sscanf(line, "%llx %c %255s", &a, &ty, name) == 3 && !strcmp(name, "_text")) {
				if (a) {
					s->ktext = a;
					s->kallsyms_ok = true;
				} else
					snprintf(s->kallsyms_why, sizeof(s->kallsyms_why),
						 "/proc/kallsyms shows zero addresses (kernel.kptr_restrict %lld, "
						 "and pmurec lacks CAP_SYSLOG)",
						 read_ll("/proc/sys/kernel/kptr_restrict", -1));
				break;
			}
		}
		if (!s->kallsyms_ok && !s->kallsyms_why[0])
			snprintf(s->kallsyms_why, sizeof(s->kallsyms_why), "/proc/kallsyms has no _text before its modules");
		fclose(f);
	}
	{
		char *n = NULL;
		size_t len = 0;

		if (pmu_read_file(AT_FDCWD, "/sys/kernel/notes", 65536, &n, &len))
			snprintf(s->kbid_why, sizeof(s->kbid_why), "cannot read /sys/kernel/notes");
		else if (!notes_bid((const unsigned char *)n, len, s->kbid))
			snprintf(s->kbid_why, sizeof(s->kbid_why), "/sys/kernel/notes has no GNU build-id");
		free(n);
	}
}

/* "ADDR T NAME" of /proc/kallsyms (sscanf costs more than the kernel's
 * own formatting of the file). */
static int ksym_line(const char *l, unsigned long long *a, char *ty, char *name, size_t n)
{
	char *end;
	size_t k;

	*a = strtoull(l, &end, 16);
	if (end == l || *end != ' ' || !end[1] || end[2] != ' ')
		return -1;
	*ty = end[1];
	l = end + 3;
	k = strcspn(l, " \t\n");
	if (!k || k >= n)
		return -1;
	memcpy(name, l, k);
	name[k] = 0;
	return 0;
}

/* One pass of /proc/kallsyms up to its first module: _etext, and (full
 * mode) the ksym records of the functions holding sampled addresses. */
static void kallsyms_pass(struct samp *s, bool ksyms, size_t *nrec)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512], prev[256] = "";
	uint64_t prev_a = 0;
	size_t i = 0;
	bool prev_marked = false, have_prev = false;

	*nrec = 0;
	if (!f)
		return;
	if (ksyms && s->nk) {
		size_t w = 0;

		qsort(s->kaddr, s->nk, sizeof(*s->kaddr), cmp);
		for (size_t k = 0; k < s->nk; k++)
			if (!w || s->kaddr[w - 1] != s->kaddr[k])
				s->kaddr[w++] = s->kaddr[k];
		s->nk = w;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char ty, name[256];

		if (strchr(line, '['))
			break; /* the modules follow */
		if (ksym_line(line, &a, &ty, name, sizeof(name)))
			continue;
		if (!strcmp(name, "_etext")) {
			s->ketext = a;
			if (!ksyms)
				break;
		}
		if (!ksyms || (ty != 't' && ty != 'T' && ty != 'w' && ty != 'W' && strcmp(name, "_etext")))
			continue;
		if (have_prev && a > prev_a) {
			while (i < s->nk && s->kaddr[i] < a) {
				if (s->kaddr[i] >= prev_a && !prev_marked) {
					json_t *o = json_object();

					json_object_set_new(o, "type", json_string("ksym"));
					json_object_set_new(o, "addr", hexs(prev_a));
					json_object_set_new(o, "name", json_string(prev));
					put(s, o);
					(*nrec)++;
					prev_marked = true;
				}
				i++;
			}
		}
		if (!have_prev || a > prev_a) {
			prev_a = a;
			snprintf(prev, sizeof(prev), "%s", name);
			prev_marked = false;
			have_prev = true;
		}
		if (!strcmp(name, "_etext"))
			break;
	}
	fclose(f);
}

/* ---- probe ----------------------------------------------------------------- */

static bool hw_counted(const struct pmu_run_config *cfg, char *which, size_t n)
{
	for (size_t i = 0; i < cfg->nev; i++)
		if (cfg->ev[i].on_pmu && cfg->ev[i].available) {
			snprintf(which, n, "%s", cfg->ev[i].name);
			return true;
		}
	return false;
}

static void base_attr(struct samp *s, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	if (s->o.period) {
		a->sample_period = s->o.period;
	} else {
		a->freq = 1;
		a->sample_freq = s->o.freq_hz;
	}
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
	if (a->freq)
		a->sample_type |= PERF_SAMPLE_PERIOD;
	if (s->o.call_graph == PMU_CG_FP)
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (s->o.call_graph == PMU_CG_DWARF) {
		/* the kernel's part of the chain as with fp (perf record does
		 * the same); the user part is unwound from the copies */
		a->sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->exclude_callchain_user = 1;
		a->sample_regs_user = REGS_MASK;
		a->sample_stack_user = s->o.stack_bytes;
	}
	a->sample_id_all = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->build_id = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->exclude_hv = 1;
	a->exclude_guest = 1;
	a->exclude_kernel = s->kernel_excluded;
	a->disabled = 1;
	a->watermark = 1;
}

static int set_event(struct samp *s, struct perf_event_attr *a, const char *name)
{
	if (!strcmp(name, "cycles") || !strcmp(name, "cpu-cycles")) {
		a->type = PERF_TYPE_HARDWARE;
		a->config = PERF_COUNT_HW_CPU_CYCLES;
	} else if (!strcmp(name, "instructions")) {
		a->type = PERF_TYPE_HARDWARE;
		a->config = PERF_COUNT_HW_INSTRUCTIONS;
	} else if (!strcmp(name, "cpu-clock")) {
		a->type = PERF_TYPE_SOFTWARE;
		a->config = PERF_COUNT_SW_CPU_CLOCK;
	} else if (!strcmp(name, "task-clock")) {
		a->type = PERF_TYPE_SOFTWARE;
		a->config = PERF_COUNT_SW_TASK_CLOCK;
	} else
		return -1;
	snprintf(s->event, sizeof(s->event), "%s", name);
	(void)s;
	return 0;
}

/* Open a on the recorder itself, the way the run will (a test). */
static int try_open(struct perf_event_attr *a)
{
	struct perf_event_attr t = *a;
	long fd;

	t.inherit = 0;
	t.enable_on_exec = 0;
	fd = perf_open(&t, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && errno == EINVAL && t.build_id) {
		/* a kernel before 5.12: no build-id in MMAP2 records */
		t.build_id = 0;
		a->build_id = 0;
		fd = perf_open(&t, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	close((int)fd);
	return 0;
}

static void unusable(struct samp *s, const char *remedy, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void unusable(struct samp *s, const char *remedy, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->why, sizeof(s->why), fmt, ap);
	va_end(ap);
	snprintf(s->remedy, sizeof(s->remedy), "%s", remedy);
	s->unusable = true;
	pmu_lc_unavailable_at(s->env->lc, pmu_now_mono_ns(), s->why, s->remedy);
}

static int samp_probe(struct pmu_collector_env *env, json_t *caps, void **state)
{
	struct samp *s = calloc(1, sizeof(*s));
	const struct pmu_run_config *cfg = env->cfg;
	long long paranoid = read_ll("/proc/sys/kernel/perf_event_paranoid", 2);
	char pmus[256] = "", hw[256] = "";
	int e;

	(void)caps;
	if (!s)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	*state = s;
	s->env = env;
	s->heap = (struct pmu_heap)PMU_HEAP_INIT(struct item, item_less);
	s->mode = cfg->mode;
	if (cfg->sampling)
		s->o = *cfg->sampling;
	else
		s->o = (struct pmu_sampling_opts){ .call_graph = PMU_CG_DEFAULT };
	s->max_rate_start = read_ll("/proc/sys/kernel/perf_event_max_sample_rate", -1);
	if (!s->o.period && !s->o.freq_hz) {
		s->o.freq_hz = s->mode >= 2 ? 999 : 99;
		/* the mode's default, not the user's -F: within what the kernel
		 * allows now (it lowers the bound when sampling takes too long) */
		if (s->max_rate_start > 0 && s->o.freq_hz > s->max_rate_start) {
			s->o.freq_hz = (unsigned)s->max_rate_start;
			s->lowered = true;
		}
	}
	if (s->o.call_graph == PMU_CG_DEFAULT)
		s->o.call_graph = s->mode >= 2 ? PMU_CG_FP : PMU_CG_NONE;
	if (s->o.call_graph == PMU_CG_DWARF && !s->o.stack_bytes)
		s->o.stack_bytes = 8192;
	s->max_stack = read_ll("/proc/sys/kernel/perf_event_max_stack", 127);
	vdso_bid(s);
	s->xm_prune_at = XMAP_MIN;
	if (cfg->attach) {
		unusable(s, "record by launching the command under pmurec (pmurec -- COMMAND)",
			 "sampling a running tree (--pid) is not supported in pmu " PMU_VERSION
			 ": its threads would need one event each");
		return 0;
	}
	if (s->o.call_graph == PMU_CG_DWARF && !ARCH_REGS_OK) {
		unusable(s, "use --call-graph fp or none",
			 "--call-graph dwarf: this architecture's user registers are not known to pmu " PMU_VERSION
			 " (x86_64 and aarch64 are)");
		return 0;
	}
	if (s->o.freq_hz && s->max_rate_start > 0 && s->o.freq_hz > s->max_rate_start) {
		unusable(s, "lower -F, or raise kernel.perf_event_max_sample_rate (sysctl)",
			 "-F %u is above kernel.perf_event_max_sample_rate %lld: the kernel refuses it", s->o.freq_hz,
			 s->max_rate_start);
		return 0;
	}
	/* the event */
	base_attr(s, &s->attr);
	if (s->o.event) {
		if (set_event(s, &s->attr, s->o.event)) {
			unusable(s, "use --sample-event cycles, instructions, cpu-clock or task-clock",
				 "--sample-event %s: not an event pmu samples on", s->o.event);
			return 0;
		}
		snprintf(s->event_reason, sizeof(s->event_reason), "--sample-event %s", s->o.event);
	} else if (pmu_core_pmus(NULL, pmus, sizeof(pmus)) > 0 && !hw_counted(cfg, hw, sizeof(hw))) {
		set_event(s, &s->attr, "cycles");
		if ((e = try_open(&s->attr)) == -EACCES || e == -EPERM) {
			s->kernel_excluded = true;
			s->attr.exclude_kernel = 1;
			e = try_open(&s->attr);
		}
		if (e) {
			s->kernel_excluded = false;
			base_attr(s, &s->attr);
			set_event(s, &s->attr, "cpu-clock");
			snprintf(s->event_reason, sizeof(s->event_reason),
				 "the core PMU (%s) could not sample cycles (%s): cpu-clock, a timer, instead", pmus,
				 strerror(-e));
		} else
			snprintf(s->event_reason, sizeof(s->event_reason),
				 "the core PMU (%s) samples cycles, and -e counts no hardware event", pmus);
	} else {
		set_event(s, &s->attr, "cpu-clock");
		if (hw[0])
			snprintf(s->event_reason, sizeof(s->event_reason),
				 "-e counts hardware events (%s): the PMU's counters are left to them, and cpu-clock "
				 "(a timer) samples instead",
				 hw);
		else
			snprintf(s->event_reason, sizeof(s->event_reason),
				 "this host has no core PMU (no event source named cpu, nor one with a cpus file, under "
				 "/sys/bus/event_source/devices): cycles cannot be sampled, cpu-clock (a timer) samples "
				 "instead");
	}
	/* kernel code: sampled unless perf_event_paranoid forbids it */
	e = try_open(&s->attr);
	if ((e == -EACCES || e == -EPERM) && !s->attr.exclude_kernel) {
		s->attr.exclude_kernel = 1;
		if (!(e = try_open(&s->attr))) {
			s->kernel_excluded = true;
			snprintf(s->kernel_reason, sizeof(s->kernel_reason),
				 "kernel.perf_event_paranoid is %lld and pmurec has no CAP_PERFMON: kernel code may not "
				 "be sampled, only user code is",
				 paranoid);
		}
	} else if (s->attr.exclude_kernel) {
		s->kernel_excluded = true;
		snprintf(s->kernel_reason, sizeof(s->kernel_reason),
			 "kernel.perf_event_paranoid is %lld and pmurec has no CAP_PERFMON: kernel code may not be "
			 "sampled, only user code is",
			 paranoid);
	}
	if (!e && !s->kernel_excluded && s->mode < 2) {
		/* light mode stays cheap: no kernel map nor symbols to read */
		s->kernel_excluded = true;
		s->attr.exclude_kernel = 1;
		snprintf(s->kernel_reason, sizeof(s->kernel_reason),
			 "light mode samples user code only (kernel code, its map and its symbols come with --mode full)");
	}
	if (e) {
		unusable(s,
			 "lower kernel.perf_event_paranoid (sysctl kernel.perf_event_paranoid=2), grant pmurec "
			 "CAP_PERFMON, or allow perf_event_open in the seccomp policy",
			 "perf_event_open of a sampling %s event failed: %s (kernel.perf_event_paranoid %lld)", s->event,
			 strerror(-e), paranoid);
		return 0;
	}
	s->fmt = (struct pmu_perfrec_fmt){ s->attr.sample_type, s->attr.sample_regs_user, true };
	if (!s->kernel_excluded) {
		kernel_probe(s);
		if (!s->kallsyms_ok) {
			/* kernel samples that no kmap could place */
			s->kernel_excluded = true;
			s->attr.exclude_kernel = 1;
			snprintf(s->kernel_reason, sizeof(s->kernel_reason),
				 "the kernel's text cannot be located (%.200s): kernel code is not sampled", s->kallsyms_why);
		}
	}
	pmu_lc_probed_ok(env->lc, pmu_now_mono_ns());
	return 0;
}

static bool samp_usable(void *state)
{
	return !((struct samp *)state)->unusable;
}

/* ---- open ------------------------------------------------------------------- */

static void ring_size(struct samp *s, int ncpu)
{
	long pg = sysconf(_SC_PAGESIZE);
	long long mlock_kb = read_ll("/proc/sys/kernel/perf_event_mlock_kb", 516);
	uint64_t want, pages = 1;

	if (s->o.ring_kb) {
		want = (uint64_t)s->o.ring_kb * 1024;
		while (pages * 2 * (uint64_t)pg <= want)
			pages *= 2;
		snprintf(s->ring_reason, sizeof(s->ring_reason),
			 "--sample-ring-kb %u: %llu pages of %ld bytes per CPU (a power of two, at least one)", s->o.ring_kb,
			 (unsigned long long)pages, pg);
	} else {
		/* the kernel lets a user lock perf_event_mlock_kb per CPU: each
		 * CPU's ring is the largest power of two of pages that fits with
		 * its header page */
		want = (uint64_t)(mlock_kb > 8 ? mlock_kb : 8) * 1024 - (uint64_t)pg;
		while (pages * 2 * (uint64_t)pg <= want)
			pages *= 2;
		snprintf(s->ring_reason, sizeof(s->ring_reason),
			 "kernel.perf_event_mlock_kb %lld per CPU x %d CPUs: %llu pages of %ld bytes per CPU, the "
			 "largest power of two that fits with its header page",
			 mlock_kb, ncpu, (unsigned long long)pages, pg);
	}
	s->ring_bytes = pages * (uint64_t)pg;
}

static void close_rings(struct samp *s)
{
	long pg = sysconf(_SC_PAGESIZE);

	for (int i = 0; i < s->nr; i++) {
		if (s->r[i].base)
			munmap(s->r[i].base, s->ring_bytes + (uint64_t)pg);
		if (s->r[i].fd >= 0)
			close(s->r[i].fd);
	}
	free(s->r);
	s->r = NULL;
	s->nr = 0;
}

static int open_rings(struct samp *s, pid_t pid, const int *cpus, int ncpu, unsigned long flags, char *why, size_t wn)
{
	long pg = sysconf(_SC_PAGESIZE);

	if (!(s->r = calloc((size_t)ncpu, sizeof(*s->r))))
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	for (int i = 0; i < ncpu; i++) {
		struct ring *g = &s->r[s->nr];
		long fd = perf_open(&s->attr, pid, cpus[i], -1, flags | PERF_FLAG_FD_CLOEXEC);

		if (fd < 0) {
			snprintf(why, wn, "perf_event_open on CPU %d: %s", cpus[i], strerror(errno));
			return -1;
		}
		*g = (struct ring){ .fd = (int)fd, .cpu = cpus[i] };
		s->nr++;
		g->size = s->ring_bytes;
		g->base = mmap(NULL, s->ring_bytes + (uint64_t)pg, PROT_READ | PROT_WRITE, MAP_SHARED, g->fd, 0);
		if (g->base == MAP_FAILED) {
			g->base = NULL;
			snprintf(why, wn, "mmap of CPU %d's ring (%llu bytes): %s", cpus[i],
				 (unsigned long long)s->ring_bytes, strerror(errno));
			return -1;
		}
		if (ioctl(g->fd, PERF_EVENT_IOC_ID, &g->id))
			g->id = 0;
	}
	return 0;
}

static void write_config(struct samp *s)
{
	json_t *c = json_object();
	struct utsname u;
	char mask[24];

	uname(&u);
	json_object_set_new(c, "type", json_string("config"));
	json_object_set_new(c, "event", json_string(s->event));
	json_object_set_new(c, "event_reason", json_string(s->event_reason));
	if (s->attr.freq)
		json_object_set_new(c, "freq_hz", json_integer((json_int_t)s->attr.sample_freq));
	else
		json_object_set_new(c, "period", json_integer((json_int_t)s->attr.sample_period));
	json_object_set_new(c, "call_graph",
			    json_string(s->o.call_graph == PMU_CG_FP ? "fp" : s->o.call_graph == PMU_CG_DWARF ? "dwarf" : "none"));
	if (s->o.call_graph == PMU_CG_DWARF) {
		json_object_set_new(c, "stack_bytes", json_integer(s->o.stack_bytes));
		snprintf(mask, sizeof(mask), "0x%llx", (unsigned long long)s->attr.sample_regs_user);
		json_object_set_new(c, "regs_mask", json_string(mask));
	}
	json_object_set_new(c, "arch", json_string(u.machine));
	json_object_set_new(c, "max_stack", json_integer(s->max_stack));
	json_object_set_new(c, "ring_bytes", json_integer((json_int_t)s->ring_bytes));
	json_object_set_new(c, "ring_reason", json_string(s->ring_reason));
	json_object_set_new(c, "ncpus", json_integer(s->nr));
	json_object_set_new(c, "scope", json_string(s->cgroup_scope ? "cgroup" : "inherit"));
	json_object_set_new(c, "scope_reason", json_string(s->scope_reason));
	json_object_set_new(c, "kernel", json_string(s->kernel_excluded ? "excluded" : "sampled"));
	if (s->kernel_excluded)
		json_object_set_new(c, "kernel_reason", json_string(s->kernel_reason));
	json_object_set_new(c, "max_sample_rate_hz", json_integer(s->max_rate_start));
	json_object_set_new(c, "clock", json_string("monotonic"));
	put(s, c);
}

/* The maps stream's kmap, its first record: the kernel's text. */
static void write_kmap(struct samp *s)
{
	json_t *k;

	if (s->kernel_excluded || !s->kallsyms_ok)
		return;
	k = json_object();
	json_object_set_new(k, "type", json_string("kmap"));
	json_object_set_new(k, "start", hexs(s->ktext));
	if (!s->ketext) {
		size_t n;

		kallsyms_pass(s, false, &n);
	}
	json_object_set_new(k, "end", hexs(s->ketext ? s->ketext : s->ktext));
	if (s->kbid[0])
		json_object_set_new(k, "build_id", json_string(s->kbid));
	else
		json_object_set_new(k, "build_id_reason", json_string(s->kbid_why));
	put_to(s, s->ms, k);
}

/* perf.data: the kernel's map as perf record synthesizes it (pid -1,
 * [kernel.kallsyms]_text at _text), so that perf names kernel frames. */
static void kernel_mmap(struct samp *s, uint64_t t)
{
	static const char name[] = "[kernel.kallsyms]_text";
	unsigned char rec[256];
	size_t n = 0, fl = (sizeof(name) + 7) / 8 * 8;
	uint32_t pt[2] = { (uint32_t)-1, 0 }, cpu[2] = { 0, 0 };
	uint64_t v[3] = { s->ktext, ~0ull - s->ktext, s->ktext };
	struct perf_event_header h = { PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, 0 };

	n = sizeof(h);
	memcpy(rec + n, pt, 8);
	n += 8;
	memcpy(rec + n, v, 24);
	n += 24;
	memset(rec + n, 0, fl);
	memcpy(rec + n, name, sizeof(name));
	n += fl;
	/* the sample_id trailer: TID, TIME, CPU, IDENTIFIER */
	memcpy(rec + n, pt, 8);
	n += 8;
	memcpy(rec + n, &t, 8);
	n += 8;
	memcpy(rec + n, cpu, 8);
	n += 8;
	memcpy(rec + n, &s->r[0].id, 8);
	n += 8;
	h.size = (uint16_t)n;
	memcpy(rec, &h, sizeof(h));
	pmu_perfdata_record(s->pd, rec, n);
}

static int samp_open(void *state, pid_t root, uint64_t t)
{
	struct samp *s = state;
	struct pmu_collector_env *env = s->env;
	int *cpus = NULL, ncpu;
	char why[300] = "", ev[400];

	if (!env->followed)
		return 0;
	pmu_lc_step(env->lc, "opened", t);
	if ((ncpu = pmu_online_cpus(&cpus)) <= 0)
		return pmu_error(PMU_ERR_IO, "cannot read /sys/devices/system/cpu/online");
	ring_size(s, ncpu);
	s->attr.wakeup_watermark = (uint32_t)(s->ring_bytes / 2);
	if (!(s->rec = malloc(65536))) {
		free(cpus);
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	}
	/* the cohort's cgroup when there is one, each CPU's event counting
	 * only its tasks; else the root's event, inherited */
	if (env->cohort_cgroup && env->cohort_cgroup->cg.dirfd >= 0 && env->cfg->scope != PMU_SCOPE_INHERIT) {
		struct perf_event_attr a = s->attr;

		s->attr.inherit = 0;
		s->attr.enable_on_exec = 0;
		s->attr.disabled = 0;
		if (!open_rings(s, env->cohort_cgroup->cg.dirfd, cpus, ncpu, PERF_FLAG_PID_CGROUP, why, sizeof(why))) {
			s->cgroup_scope = true;
			snprintf(s->scope_reason, sizeof(s->scope_reason),
				 "the cohort has its own cgroup (%.300s): each CPU's event samples its tasks",
				 env->cohort_cgroup->cg.path);
		} else {
			close_rings(s);
			s->attr = a;
			snprintf(s->scope_reason, sizeof(s->scope_reason),
				 "the cohort's cgroup could not be sampled (%.250s): the root's event, inherited by its "
				 "descendants, instead",
				 why);
		}
	} else if (env->cohort_cgroup || env->cfg->scope == PMU_SCOPE_INHERIT)
		snprintf(s->scope_reason, sizeof(s->scope_reason),
			 "--cohort inherit: the root's event on each CPU, inherited by its descendants");
	else
		snprintf(s->scope_reason, sizeof(s->scope_reason),
			 "the cohort has no cgroup of its own (%.250s): the root's event on each CPU, inherited by its "
			 "descendants",
			 env->cgroup_why && env->cgroup_why[0] ? env->cgroup_why : "none was made");
	if (!s->cgroup_scope) {
		s->attr.inherit = 1;
		s->attr.enable_on_exec = 1;
		s->attr.disabled = 1;
		if (open_rings(s, root, cpus, ncpu, 0, why, sizeof(why))) {
			close_rings(s);
			free(cpus);
			return pmu_error(PMU_ERR_IO, "sampling: %s", why);
		}
	}
	free(cpus);
	{
		uint64_t *ids = calloc((size_t)s->nr, sizeof(*ids));

		for (int i = 0; ids && i < s->nr; i++)
			ids[i] = s->r[i].id;
		if (!ids || pmu_perfdata_new(&s->pd, &s->attr, ids, (size_t)s->nr, s->event, NULL)) {
			snprintf(s->pd_why, sizeof(s->pd_why), "perf.data could not be started: %s", pmu_error_detail());
			s->pd = NULL;
		} else if (!s->kernel_excluded && s->kallsyms_ok && s->nr)
			kernel_mmap(s, t);
		free(ids);
	}
	{
		struct pmu_out *o = env->out;

		if ((s->err = o->open(o, "collectors/sampling/samples.jsonl", "samples", &s->ss)))
			return s->err;
		/* the maps as they are learned (memory stays flat), the
		 * kernel's first */
		if ((s->err = o->open(o, "collectors/sampling/maps.jsonl", "maps", &s->ms)))
			return s->err;
	}
	write_config(s);
	write_kmap(s);
	snprintf(ev, sizeof(ev), "%d per-CPU %s events with their rings opened (%s) before the command's exec",
		 s->nr, s->event, s->cgroup_scope ? "cohort cgroup" : "inherited from the root, enabled at its exec");
	pmu_lc_attached(env->lc, pmu_now_mono_ns(), ev);
	return s->err;
}

static void samp_stop(void *state, uint64_t t)
{
	struct samp *s = state;

	if (!s->nr || s->stopped)
		return;
	for (int i = 0; i < s->nr; i++)
		ioctl(s->r[i].fd, PERF_EVENT_IOC_DISABLE, 0);
	for (int i = 0; i < s->nr; i++)
		read_ring(s, &s->r[i]);
	s->stopped = true;
	pmu_lc_step(s->env->lc, "stopped", t);
}

/* ---- emit ------------------------------------------------------------------- */

static int cmp_pid(const void *x, const void *y)
{
	pid_t a = *(const pid_t *)x, b = *(const pid_t *)y;

	return a < b ? -1 : a > b;
}

/* --retain-binaries: the objects with samples (=all: every one mapped),
 * each once, and the cohort's JIT maps; their records end the maps stream. */
static int retain(struct samp *s, struct pmu_out *o, struct pmu_stream *ms)
{
	struct pmu_retain *r = pmu_retain_new(o);
	int err = 0;

	if (!r)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	for (size_t i = 0; !err && i < s->nxo; i++) {
		const struct xobj *x = &s->xo[i];

		if (s->o.retain == PMU_RETAIN_SAMPLED && !x->sampled)
			continue;
		err = pmu_retain_object(r, ms, s->o.retain == PMU_RETAIN_SAMPLED ? x->spid : x->pid, x->path,
					x->bid[0] ? x->bid : NULL);
	}
	/* the JIT maps of the cohort's processes, each pid once (the maps of
	 * ended incarnations are no longer held: the cohort has the pids) */
	if (!err) {
		const struct pmu_cohort *c = s->env->cohort;
		pid_t *pids = c->n ? malloc(c->n * sizeof(*pids)) : NULL;
		size_t n = 0;

		if (c->n && !pids)
			err = pmu_error(PMU_ERR_NOMEM, "out of memory");
		for (size_t i = 0; pids && i < c->n; i++)
			pids[n++] = c->incs[i].pid;
		if (n)
			qsort(pids, n, sizeof(*pids), cmp_pid);
		for (size_t i = 0; !err && i < n; i++)
			if (!i || pids[i] != pids[i - 1])
				err = pmu_retain_jit_map(r, ms, "sampling", pids[i]);
		free(pids);
	}
	pmu_retain_free(r);
	return err;
}

/* perf.data: the build-ids of the maps and the kernel, the host, the file. */
static int finish_perfdata(struct samp *s, struct pmu_collector_env *env)
{
	struct utsname u;
	char host[256] = "";
	struct pmu_perfdata_host h = { 0 };
	long ncpu = sysconf(_SC_NPROCESSORS_CONF), nonl = sysconf(_SC_NPROCESSORS_ONLN);
	int err;

	if (!s->pd) {
		if (!s->pd_why[0])
			snprintf(s->pd_why, sizeof(s->pd_why), "perf.data was not started");
		goto failed;
	}
	for (size_t i = 0; i < s->nxo; i++) {
		unsigned char bb[64];
		size_t bl;

		if (!s->xo[i].bid[0] || !(bl = unhex(s->xo[i].bid, bb, sizeof(bb))))
			continue;
		pmu_perfdata_build_id(s->pd, s->xo[i].pid, false, s->xo[i].path, bb, bl);
	}
	if (!s->kernel_excluded && s->kbid[0]) {
		unsigned char bb[64];
		size_t bl = unhex(s->kbid, bb, sizeof(bb));

		if (bl)
			pmu_perfdata_build_id(s->pd, -1, true, "[kernel.kallsyms]", bb, bl);
	}
	uname(&u);
	gethostname(host, sizeof(host) - 1);
	h = (struct pmu_perfdata_host){ host, u.release, u.version, u.machine, (unsigned)(ncpu > 0 ? ncpu : 0),
					(unsigned)(nonl > 0 ? nonl : 0), NULL, 0, CLOCK_MONOTONIC };
	err = pmu_perfdata_finish(s->pd, &h, env->out, "collectors/sampling/perf.data");
	pmu_perfdata_free(s->pd);
	s->pd = NULL;
	if (!err)
		return 0;
	snprintf(s->pd_why, sizeof(s->pd_why), "perf.data could not be written: %s", pmu_error_detail());
	if (err == -PMU_ERR_NOMEM)
		return err;
failed:
	/* the bundle lacks what the samples stream promises: failed */
	if (!s->failed)
		snprintf(s->failed_why, sizeof(s->failed_why), "%s", s->pd_why);
	s->failed = true;
	return 0;
}

static int samp_emit(void *state, struct pmu_collector_env *env, const struct pmu_run_window *win)
{
	struct samp *s = state;
	struct pmu_out *o = env->out;
	struct pmu_stream *ms;
	size_t nks = 0;
	json_t *sum;
	int err;

	if (!s || s->unusable)
		return 0;
	if (!env->followed) {
		pmu_lc_unavailable_at(env->lc, win->start_ns, env->follow_reason, env->follow_remedy);
		return 0;
	}
	if (!s->ss)
		return s->err;
	/* the rest, in time order, with the whole cohort known */
	flush(s, UINT64_MAX, UINT64_MAX, true);
	if (s->mode >= 2 && !s->kernel_excluded && s->kallsyms_ok && s->nk)
		kallsyms_pass(s, true, &nks);
	else if (!s->kernel_excluded && s->kallsyms_ok && s->ksampled)
		kallsyms_pass(s, false, &nks);
	sum = json_object();
	json_object_set_new(sum, "type", json_string("summary"));
	json_object_set_new(sum, "samples", json_integer((json_int_t)s->samples));
	json_object_set_new(sum, "unattributed", json_integer((json_int_t)s->unattributed));
	json_object_set_new(sum, "lost_records", json_integer((json_int_t)s->lost_records));
	json_object_set_new(sum, "lost_samples", json_integer((json_int_t)s->lost_samples));
	json_object_set_new(sum, "throttles", json_integer((json_int_t)s->throttles));
	json_object_set_new(sum, "max_sample_rate_end_hz",
			    json_integer(read_ll("/proc/sys/kernel/perf_event_max_sample_rate", -1)));
	if (s->mode < 2)
		json_object_set_new(sum, "kallsyms", json_string("not-requested"));
	else if (s->kernel_excluded || !s->nk)
		json_object_set_new(sum, "kallsyms", json_string("not-needed"));
	else if (!s->kallsyms_ok) {
		json_object_set_new(sum, "kallsyms", json_string("unreadable"));
		json_object_set_new(sum, "kallsyms_reason", json_string(s->kallsyms_why));
	} else
		json_object_set_new(sum, "kallsyms", json_string("recorded"));
	put(s, sum);
	err = o->close(s->ss);
	s->ss = NULL;
	if ((err = s->err ? s->err : err))
		return err;
	/* the maps stream: its retained and unretained records end it */
	ms = s->ms;
	s->ms = NULL;
	if (s->o.retain)
		err = retain(s, o, ms);
	{
		int e2 = o->close(ms);

		err = err ? err : e2;
	}
	if (err)
		return err;
	if ((err = finish_perfdata(s, env)))
		return err;
	{
		char ev[600];

		snprintf(ev, sizeof(ev),
			 "%d per-CPU %s events (%s%s); %" PRIu64 " samples written, %" PRIu64 " of no cohort incarnation; "
			 "%zu maps (%" PRIu64 " MMAP2 records of no cohort incarnation left out); %zu kernel functions named",
			 s->nr, s->event, s->cgroup_scope ? "cohort cgroup" : "inherited from the root",
			 s->lowered ? "; the mode's default frequency lowered to kernel.perf_event_max_sample_rate" : "",
			 s->samples, s->unattributed, s->nmaps, s->unattributed_maps, nks);
		pmu_lc_set_evidence(env->lc, ev);
	}
	if (s->lost_records + s->lost_samples) {
		char why[200];

		snprintf(why, sizeof(why), "the rings were full (%" PRIu64 " records) or the kernel dropped samples (%" PRIu64 ")",
			 s->lost_records, s->lost_samples);
		pmu_lc_lost(env->lc, "drop", win->end_ns, s->lost_records + s->lost_samples, why);
	}
	if (s->late)
		pmu_lc_lost(env->lc, "drop", win->end_ns, s->late,
			    "samples that reached the merge after later ones were written (left out to keep the stream in "
			    "time order)");
	if (s->malformed)
		pmu_lc_lost(env->lc, "malformed", win->end_ns, s->malformed, s->malformed_first);
	pmu_lc_step(env->lc, "detached", win->end_ns);
	if (s->failed)
		pmu_lc_final(env->lc, win->end_ns, "failed", s->failed_why);
	else
		pmu_lc_final(env->lc, win->end_ns, s->samples ? "ok" : "no-events", NULL);
	return 0;
}

static bool samp_failed(void *state, char *why, size_t n)
{
	struct samp *s = state;

	if (s->unusable)
		return false;
	if (s->failed) {
		snprintf(why, n, "%s", s->failed_why);
		return true;
	}
	if ((s->lost_records || s->lost_samples || s->throttles) && !s->o.allow_loss) {
		snprintf(why, n,
			 "%" PRIu64 " records and %" PRIu64 " samples lost, %" PRIu64
			 " throttles (--allow-loss accepts a bundle with loss)",
			 s->lost_records, s->lost_samples, s->throttles);
		return true;
	}
	return false;
}

static void samp_release(void *state)
{
	struct samp *s = state;

	if (!s)
		return;
	if (s->ss)
		s->env->out->close(s->ss);
	if (s->ms)
		s->env->out->close(s->ms);
	close_rings(s);
	while (s->heap.n) {
		struct item it = heap_pop(s);

		free(it.raw);
		free(it.path);
		json_decref(it.map);
	}
	pmu_heap_free(&s->heap);
	for (size_t i = 0; i < s->nxo; i++)
		free(s->xo[i].path);
	free(s->xo);
	free(s->xm);
	while (s->bids) {
		struct bid *b = s->bids;

		s->bids = b->next;
		free(b->path);
		free(b);
	}
	free(s->kaddr);
	free(s->rec);
	pmu_perfdata_free(s->pd);
	free(s);
}

const struct pmu_collector_ops pmu_sampling_collector = {
	.name = "sampling",
	.modes = 2 | 4,
	.probe = samp_probe,
	.usable = samp_usable,
	.open = samp_open,
	.task = samp_task,
	.fds = samp_fds,
	.drain = samp_drain,
	.stop = samp_stop,
	.emit = samp_emit,
	.failed = samp_failed,
	.release = samp_release,
};
