/*
 * The rules of the sampling collector's files (spec 1.6, bundle-spec
 * section 22): the samples stream (SAMPLES-SHAPE, SAMPLES-SUMMARY, and
 * TIME-ORDER, TIME-WINDOW, ATTRIBUTION, LOSS of its records), the maps
 * stream (MAPS-SHAPE, BUILD-ID, and TIME-WINDOW, ATTRIBUTION of its map
 * records, which are not in time order), the retained files (RETAINED:
 * named by a retained record, in the manifest, the ELF build-id note equal
 * to the record's) and perf.data beside the samples (PERF-DATA).
 *
 * Record by record, as every stream: what is held is a stream's counters,
 * the (path, build-id) pairs of its maps (a few per object, not per sample)
 * and the names of the retained files of the bundle.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfnote.h"
#include "error.h"
#include "jsonl.h"
#include "perfdata.h"
#include "util.h"
#include "validate_int.h"


/* Samples stream phases: config, then sample/loss/throttle, ksym, summary. */
enum { PH_START, PH_BODY, PH_KSYM, PH_END };

struct samples_state {
	int phase;
	uint64_t configs, summaries;
	bool have_config, kernel_sampled, dwarf, chains, hibit; /* hibit: kernel addresses have bit 63 set */
	bool kaddr_seen;                                        /* a kernel address was sampled */
	int nregs;                                              /* registers in regs_mask (dwarf) */
	uint64_t ksyms;
	uint64_t samples, lost_records, lost_samples, throttles;
	bool have_summary;
	uint64_t sum_line, sum_samples, sum_lost_records, sum_lost_samples, sum_throttles;
};

static int ss_nregs(const struct stream_state *s)
{
	return s->ss->nregs;
}

/* Open addressing of 64-bit hashes (never 0). */
struct hset {
	uint64_t *v;
	size_t n, cap;
};

#define HSET_MAX (1u << 22)       /* distinct (path, build-id) pairs of one maps stream */

struct maps_state {
	int phase;                 /* 0 nothing, 1 kmap, 2 maps, 3 retained/unretained */
	uint64_t kmaps;
	struct hset pairs, bids;   /* hash(path, build-id), hash(build-id) of the maps */
	bool full;
};

/* ---- helpers -------------------------------------------------------------- */

static bool fis(const struct pmu_jfield *f, const char *s)
{
	size_t n = strlen(s);

	return f && f->type == PMU_JV_STR && f->slen == n && !memcmp(f->s, s, n);
}

static bool is_hexdig(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* An address as section 22 writes it: "0x", then 1..16 lowercase hex
 * digits without leading zeros ("0x0" for zero).  s[0..n). */
static bool parse_addr(const char *s, size_t n, uint64_t *out)
{
	uint64_t a = 0;

	if (n < 3 || n > 18 || s[0] != '0' || s[1] != 'x' || (s[2] == '0' && n > 3))
		return false;
	for (size_t i = 2; i < n; i++) {
		if (!is_hexdig(s[i]))
			return false;
		a = a << 4 | (uint64_t)(s[i] <= '9' ? s[i] - '0' : s[i] - 'a' + 10);
	}
	*out = a;
	return true;
}

static bool faddr(const struct pmu_jfield *f, uint64_t *out)
{
	return f && f->type == PMU_JV_STR && parse_addr(f->s, f->slen, out);
}

/* A GNU build-id as the spec writes it: 2 to 64 bytes as lowercase hex
 * (an even count of 4 to 128 digits: ld's md5 and uuid styles give 16
 * bytes, sha1 20, --build-id=0xHEX any length; 2 bytes at least so that
 * the build-id/xx/yyyy layout has a file name). */
static bool bid_ok(const struct pmu_jfield *f)
{
	if (!f || f->type != PMU_JV_STR || f->slen < 4 || f->slen > 128 || f->slen % 2)
		return false;
	for (size_t i = 0; i < f->slen; i++)
		if (!is_hexdig(f->s[i]))
			return false;
	return true;
}

static bool hset_add(struct hset *h, uint64_t x)
{
	if (2 * (h->n + 1) > h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 64;
		uint64_t *nv;

		if (h->n >= HSET_MAX || !(nv = calloc(cap, sizeof(*nv))))
			return false;
		for (size_t i = 0; i < h->cap; i++)
			if (h->v[i])
				for (size_t k = h->v[i] & (cap - 1);; k = (k + 1) & (cap - 1))
					if (!nv[k]) {
						nv[k] = h->v[i];
						break;
					}
		free(h->v);
		h->v = nv;
		h->cap = cap;
	}
	for (size_t k = x & (h->cap - 1);; k = (k + 1) & (h->cap - 1)) {
		if (h->v[k] == x)
			return true;
		if (!h->v[k]) {
			h->v[k] = x;
			h->n++;
			return true;
		}
	}
}

static bool hset_has(const struct hset *h, uint64_t x)
{
	if (!h->cap)
		return false;
	for (size_t k = x & (h->cap - 1);; k = (k + 1) & (h->cap - 1)) {
		if (h->v[k] == x)
			return true;
		if (!h->v[k])
			return false;
	}
}

static uint64_t pair_hash(const struct pmu_jfield *path, const struct pmu_jfield *bid)
{
	uint64_t h = hash_bytes(path->s, path->slen) * 31 ^ hash_bytes(bid->s, bid->slen);

	return h ? h : 1;
}

static void loss_finding(struct v *v, const char *file, uint64_t rec, const char *what)
{
	eval(v, PMU_CHECK_LOSS);
	pmu_v_report_sev(v, PMU_CHECK_LOSS, v->tolerate_loss ? PMU_SEV_WARNING : PMU_SEV_ERROR, file, rec, "%s%s",
			 what, v->tolerate_loss ? " (tolerated: run.json tolerate_loss)" : "");
}

/* ---- the samples stream -------------------------------------------------- */

/* A dwarf sample's user registers (one 0x address per bit of regs_mask,
 * in its order), their ABI, and the stack copy (base64). */
static void user_regs(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r)
{
	const struct pmu_jfield *regs = rf(r, "regs"), *st = rf(r, "stack"), *abi = rf(r, "user_abi");
	uint64_t a;
	int n = 0;

	if (!regs != !abi) {
		report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "regs and user_abi come together");
		return;
	}
	if (abi && !fis(abi, "64") && !fis(abi, "32"))
		report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "user_abi '%.*s' is not 64 or 32", (int)abi->slen,
		       abi->s);
	for (const char *p = regs ? regs->s : NULL, *e = regs ? regs->s + regs->slen : NULL; p && p <= e; n++) {
		const char *sp = memchr(p, ' ', (size_t)(e - p)), *end = sp ? sp : e;

		if (!parse_addr(p, (size_t)(end - p), &a)) {
			report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "register %d is not a 0x-prefixed lowercase hex value",
			       n);
			return;
		}
		p = sp ? sp + 1 : NULL;
	}
	if (regs && ss_nregs(s) >= 0 && n != ss_nregs(s))
		report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "%d registers, regs_mask has %d", n, ss_nregs(s));
	if (st) {
		bool b64 = st->slen % 4 == 0;

		for (size_t i = 0; b64 && i < st->slen; i++) {
			char c = st->s[i];

			b64 = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
			      c == '/' || (c == '=' && i + 2 >= st->slen && (i + 1 == st->slen || st->s[i + 1] == '='));
		}
		if (!b64)
			report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "stack is not base64");
	}
}

static void sample_rec(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r)
{
	struct samples_state *ss = s->ss;
	const struct pmu_jfield *ip = rf(r, "ip"), *chain = rf(r, "chain"), *kf = rf(r, "kframes"),
				*kip = rf(r, "kernel_ip");
	uint64_t ipv = 0, kframes = kf ? (uint64_t)kf->i : 0;
	bool kernel = kip && kip->b;

	ss->samples++;
	if (!faddr(ip, &ipv)) {
		report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "ip '%.*s' is not a 0x-prefixed lowercase hex address",
		       ip ? (int)ip->slen : 0, ip ? ip->s : "");
		return;
	}
	if (kernel)
		ss->kaddr_seen = true;
	if (kernel && !ss->kernel_sampled)
		report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "a kernel ip, but config says kernel code is excluded");
	if (ss->hibit && kernel != (ipv >> 63))
		report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "kernel_ip is %s for ip %.*s", kernel ? "true" : "false",
		       (int)ip->slen, ip->s);
	if (ss->have_config && ss->chains != (chain != NULL))
		report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "%s", ss->chains
		       ? "no chain, but config records call chains" : "a chain, but config's call_graph is none");
	if ((chain != NULL) != (kf != NULL)) {
		report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "chain and kframes come together");
		return;
	}
	if (rf(r, "chain_cut") && !chain)
		report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "chain_cut without a chain");
	if ((rf(r, "regs") || rf(r, "stack") || rf(r, "user_abi")) && ss->have_config && !ss->dwarf)
		report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "regs, stack or user_abi without call_graph dwarf");
	else if (rf(r, "regs") || rf(r, "stack") || rf(r, "user_abi"))
		user_regs(v, s, rec, r);
	if (!chain)
		return;
	/* "0x.. 0x..": one space between addresses, none around */
	const char *p = chain->s, *e = chain->s + chain->slen;
	uint64_t n = 0, a;

	while (p <= e) {
		const char *sp = memchr(p, ' ', (size_t)(e - p));
		const char *end = sp ? sp : e;

		if (!parse_addr(p, (size_t)(end - p), &a)) {
			report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec,
			       "chain entry %llu '%.*s' is not a 0x-prefixed lowercase hex address", (unsigned long long)n,
			       (int)(end - p > 40 ? 40 : end - p), p);
			return;
		}
		if (n == 0 && a != ipv) {
			report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "chain[0] %.*s is not the ip %.*s",
			       (int)(end - p), p, (int)ip->slen, ip->s);
			return;
		}
		/* the kernel's own frames, and the ip, are checked; the user part
		 * of a chain is what the kernel read from the user's stack, and a
		 * frame-pointer walk through code built without frame pointers
		 * reads whatever is there (any value, a "kernel" one included) */
		if (ss->hibit && (n < kframes || n == 0) && (n < kframes) != (a >> 63)) {
			report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "chain entry %llu %.*s is %s address, kframes %llu",
			       (unsigned long long)n, (int)(end - p), p, a >> 63 ? "a kernel" : "a user",
			       (unsigned long long)kframes);
			return;
		}
		n++;
		if (!sp)
			break;
		p = sp + 1;
	}
	if (kframes > n)
		report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "kframes %llu exceeds the chain's %llu addresses",
		       (unsigned long long)kframes, (unsigned long long)n);
	else if (kernel != (kframes > 0))
		report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "kernel_ip is %s with kframes %llu",
		       kernel ? "true" : "false", (unsigned long long)kframes);
}

void pmu_v_on_samples(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r, const char *type)
{
	struct samples_state *ss = s->ss;
	bool timed = !strcmp(type, "sample") || !strcmp(type, "loss") || !strcmp(type, "throttle");

	eval(v, PMU_CHECK_SAMPLES_SHAPE);
	if (ss->phase == PH_END) {
		report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "a %s record after the summary", type);
		return;
	}
	if (!strcmp(type, "config")) {
		if (ss->phase != PH_START || ss->configs)
			report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "a second config, or config not first");
		ss->configs++;
		if (ss->configs > 1)
			return;
		const struct pmu_jfield *cg = rf(r, "call_graph"), *arch = rf(r, "arch");

		ss->have_config = true;
		ss->kernel_sampled = fis(rf(r, "kernel"), "sampled");
		ss->dwarf = fis(cg, "dwarf");
		ss->chains = !fis(cg, "none");
		ss->hibit = fis(arch, "x86_64") || fis(arch, "aarch64");
		if (!rf(r, "freq_hz") == !rf(r, "period"))
			report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "config has one of freq_hz and period");
		if (ss->dwarf != (rf(r, "stack_bytes") && rf(r, "regs_mask")))
			report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec,
			       "stack_bytes and regs_mask are present exactly with call_graph dwarf");
		ss->nregs = -1;
		if (rf(r, "regs_mask")) {
			uint64_t m;

			if (!faddr(rf(r, "regs_mask"), &m))
				report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "regs_mask is not 0x-prefixed lowercase hex");
			else
				ss->nregs = __builtin_popcountll(m);
		}
		if (fis(rf(r, "kernel"), "excluded") != (rf(r, "kernel_reason") != NULL))
			report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "kernel_reason is present exactly when kernel "
			       "code is excluded");
		ss->phase = PH_BODY;
		return;
	}
	if (ss->phase == PH_START) {
		report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "a %s record before the config", type);
		ss->phase = PH_BODY;
	}
	if (timed) {
		uint64_t t = ri(r, "t_ns");

		if (ss->phase == PH_KSYM)
			report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "a %s record after the ksym records", type);
		pmu_v_time_order(v, s, rec, "t_ns", t);
		check_window(v, s->file, rec, "t_ns", t);
	}
	if (!strcmp(type, "sample")) {
		pmu_v_attribute(v, s->file, rec, r, true, ri(r, "t_ns"), ri(r, "t_ns"));
		sample_rec(v, s, rec, r);
	} else if (!strcmp(type, "loss")) {
		uint64_t lost = ri(r, "lost");
		bool recs = fis(rf(r, "what"), "records");

		if (recs)
			ss->lost_records += lost;
		else
			ss->lost_samples += lost;
		eval(v, PMU_CHECK_LOSS);
		if (lost > 0) {
			char what[128];

			snprintf(what, sizeof(what), recs ? "%llu sampling records lost on cpu %llu (the ring was full)"
				 : "%llu samples lost on cpu %llu (PERF_RECORD_LOST_SAMPLES)", (unsigned long long)lost,
				 (unsigned long long)ri(r, "cpu"));
			loss_finding(v, s->file, rec, what);
		}
	} else if (!strcmp(type, "throttle")) {
		eval(v, PMU_CHECK_LOSS);
		if (fis(rf(r, "what"), "throttle")) {
			char what[128];

			ss->throttles++;
			snprintf(what, sizeof(what), "the kernel throttled sampling on cpu %llu (samples were not taken)",
				 (unsigned long long)ri(r, "cpu"));
			loss_finding(v, s->file, rec, what);
		}
	} else if (!strcmp(type, "ksym")) {
		uint64_t a;

		ss->phase = PH_KSYM;
		ss->ksyms++;
		if (!faddr(rf(r, "addr"), &a))
			report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "addr is not a 0x-prefixed lowercase hex address");
		else if (ss->hibit && !(a >> 63))
			report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "a ksym at a user address");
	} else if (!strcmp(type, "summary")) {
		const struct pmu_jfield *ks = rf(r, "kallsyms");

		ss->phase = PH_END;
		ss->have_summary = true;
		ss->sum_line = rec;
		ss->sum_samples = ri(r, "samples");
		ss->sum_lost_records = ri(r, "lost_records");
		ss->sum_lost_samples = ri(r, "lost_samples");
		ss->sum_throttles = ri(r, "throttles");
		if (fis(ks, "unreadable") != (rf(r, "kallsyms_reason") != NULL))
			report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec,
			       "kallsyms_reason is present exactly when kallsyms is unreadable");
		if (ss->ksyms && !fis(ks, "recorded"))
			report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "ksym records, but kallsyms is not 'recorded'");
		if (ss->kaddr_seen && fis(ks, "not-needed"))
			report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, rec, "kallsyms 'not-needed', but a kernel address was sampled");
	}
}

/* ---- perf.data beside the samples ----------------------------------------- */

/* perf.data read forward through a buffer: the scanner asks for a record
 * header, then its body, a few bytes at a time */
#define FDRD_BUF (256u << 10)

struct fdrd {
	int fd;
	unsigned char *buf;
	size_t at, end;
	bool err;
};

static long fd_read(void *ctx, void *out, size_t n)
{
	struct fdrd *f = ctx;
	size_t got = 0;

	while (got < n) {
		if (f->at == f->end) {
			ssize_t r;

			if (f->err)
				return -1;
			if (n - got >= FDRD_BUF) { /* a large piece: straight in */
				r = read(f->fd, (char *)out + got, n - got);
				if (r < 0)
					return -1;
				if (r == 0)
					break;
				got += (size_t)r;
				continue;
			}
			r = read(f->fd, f->buf, FDRD_BUF);
			if (r < 0)
				return -1;
			if (r == 0)
				break;
			f->at = 0;
			f->end = (size_t)r;
		}
		size_t k = f->end - f->at < n - got ? f->end - f->at : n - got;

		memcpy((char *)out + got, f->buf + f->at, k);
		f->at += k;
		got += k;
	}
	return (long)got;
}

/* The perf.data of the samples stream at file (a sibling), against its
 * counts: it exists, and its SAMPLE, LOST, LOST_SAMPLES and THROTTLE
 * records agree with the stream's. */
static void perf_data(struct v *v, struct stream_state *s)
{
	struct samples_state *ss = s->ss;
	char p[512], why[256] = "";
	const char *slash = strrchr(s->file, '/');
	struct pmu_perfdata_stats st;
	struct fdrd f = { -1, NULL, 0, 0, false };
	int err;

	eval(v, PMU_CHECK_PERF_DATA);
	snprintf(p, sizeof(p), "%.*s/perf.data", (int)(slash - s->file), s->file);
	if (!pmu_v_find_file(v, p)) {
		report(v, PMU_CHECK_PERF_DATA, s->file, 0, "the samples stream has no perf.data beside it (%s)", p);
		return;
	}
	f.fd = openat(v->rootfd, p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (f.fd < 0) {
		report(v, PMU_CHECK_PERF_DATA, p, 0, "cannot open it");
		return;
	}
	memset(&st, 0, sizeof(st));
	f.buf = malloc(FDRD_BUF);
	err = f.buf ? pmu_perfdata_scan(fd_read, &f, &st, why, sizeof(why)) : PMU_ERR_NOMEM;
	free(f.buf);
	close(f.fd);
	if (err) {
		report(v, PMU_CHECK_PERF_DATA, p, 0, "not a perf.data that can be read: %s", why[0] ? why : pmu_errname(err));
		return;
	}
	if (st.samples != ss->samples)
		report(v, PMU_CHECK_PERF_DATA, p, 0, "%llu SAMPLE records, the samples stream has %llu samples",
		       (unsigned long long)st.samples, (unsigned long long)ss->samples);
	if (st.lost_records != ss->lost_records || st.lost_samples != ss->lost_samples)
		report(v, PMU_CHECK_PERF_DATA, p, 0,
		       "LOST sums to %llu and LOST_SAMPLES to %llu, the stream's loss records to %llu and %llu",
		       (unsigned long long)st.lost_records, (unsigned long long)st.lost_samples,
		       (unsigned long long)ss->lost_records, (unsigned long long)ss->lost_samples);
	if (st.throttles != ss->throttles)
		report(v, PMU_CHECK_PERF_DATA, p, 0, "%llu THROTTLE records, the stream has %llu throttles",
		       (unsigned long long)st.throttles, (unsigned long long)ss->throttles);
}

void pmu_v_samples_end(struct v *v, struct stream_state *s)
{
	struct samples_state *ss = s->ss;

	eval(v, PMU_CHECK_SAMPLES_SHAPE);
	eval(v, PMU_CHECK_SAMPLES_SUMMARY);
	if (!ss->configs)
		report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, 0, "the samples stream has no config record");
	if (!ss->have_summary) {
		report(v, PMU_CHECK_SAMPLES_SHAPE, s->file, 0, "the samples stream has no summary record at its end");
	} else {
		if (ss->sum_samples != ss->samples)
			report(v, PMU_CHECK_SAMPLES_SUMMARY, s->file, ss->sum_line, "summary says %llu samples, the stream "
			       "has %llu", (unsigned long long)ss->sum_samples, (unsigned long long)ss->samples);
		if (ss->sum_lost_records != ss->lost_records)
			report(v, PMU_CHECK_SAMPLES_SUMMARY, s->file, ss->sum_line, "summary says %llu lost records, the "
			       "loss records of what records sum to %llu", (unsigned long long)ss->sum_lost_records,
			       (unsigned long long)ss->lost_records);
		if (ss->sum_lost_samples != ss->lost_samples)
			report(v, PMU_CHECK_SAMPLES_SUMMARY, s->file, ss->sum_line, "summary says %llu lost samples, the "
			       "loss records of what samples sum to %llu", (unsigned long long)ss->sum_lost_samples,
			       (unsigned long long)ss->lost_samples);
		if (ss->sum_throttles != ss->throttles)
			report(v, PMU_CHECK_SAMPLES_SUMMARY, s->file, ss->sum_line, "summary says %llu throttles, the "
			       "stream has %llu throttle records of what throttle", (unsigned long long)ss->sum_throttles,
			       (unsigned long long)ss->throttles);
	}
	/* the samples' addresses are named through the maps: one without the
	 * other cannot be symbolized */
	{
		char p[512];
		const char *slash = strrchr(s->file, '/');

		eval(v, PMU_CHECK_MAPS_SHAPE);
		snprintf(p, sizeof(p), "%.*s/maps.jsonl", (int)(slash - s->file), s->file);
		if (!pmu_v_find_file(v, p))
			report(v, PMU_CHECK_MAPS_SHAPE, s->file, 0, "the samples stream has no maps stream beside it (%s)", p);
		else if (v->maps_kmap >= 0 && ss->have_config && ss->kernel_sampled != (v->maps_kmap == 1))
			report(v, PMU_CHECK_MAPS_SHAPE, p, 0, "%s", ss->kernel_sampled
			       ? "kernel code is sampled, but the maps stream has no kmap"
			       : "a kmap, but kernel code is excluded from sampling");
		v->maps_kmap = -1;
	}
	perf_data(v, s);
	free(ss);
	s->ss = NULL;
}

/* ---- the maps stream ------------------------------------------------------ */

/* The ELF build-id of a retained file, read through the bag's fd. */
struct prd {
	int fd;
};

static long p_read(void *ctx, void *buf, size_t n, uint64_t off)
{
	ssize_t r = pread(((struct prd *)ctx)->fd, buf, n, (off_t)off);

	return r < 0 ? -1 : (long)r;
}

static void remember_retained(struct v *v, const char *file)
{
	if (v->nretained == v->capretained) {
		size_t cap = v->capretained ? 2 * v->capretained : 16;
		char **nv;

		if (cap > (1u << 20) || !(nv = realloc(v->retained, cap * sizeof(*nv))))
			return;
		v->retained = nv;
		v->capretained = cap;
	}
	if ((v->retained[v->nretained] = strdup(file)))
		v->nretained++;
}

static void retained_rec(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r)
{
	struct maps_state *ms = s->ms;
	const struct pmu_jfield *bid = rf(r, "build_id"), *kind = rf(r, "kind"), *file = rf(r, "file"),
				*path = rf(r, "path"), *size = rf(r, "size_bytes");
	bool jit = fis(kind, "jit-map"), dbg = fis(kind, "debug") || fis(kind, "debug-alt");
	char want[300], rel[600];
	struct vfile *vf;

	eval(v, PMU_CHECK_RETAINED);
	eval(v, PMU_CHECK_BUILD_ID);
	if (jit != !bid) {
		report(v, PMU_CHECK_RETAINED, s->file, rec, "a retained %.*s %s", (int)kind->slen, kind->s,
		       jit ? "has no build_id" : "has a build_id");
		return;
	}
	if (bid && !bid_ok(bid)) {
		report(v, PMU_CHECK_BUILD_ID, s->file, rec, "build_id '%.*s' is not 2 to 64 bytes of lowercase hex",
		       (int)(bid->slen > 140 ? 140 : bid->slen), bid->s);
		return;
	}
	/* the object is one the maps name: a binary or vdso by path and
	 * build-id, its debug file by build-id (debug-alt, dwz's file, has a
	 * build-id of its own) */
	if (!ms->full && ((fis(kind, "binary") || fis(kind, "vdso")) ? !hset_has(&ms->pairs, pair_hash(path, bid))
			  : fis(kind, "debug") ? !hset_has(&ms->bids, hash_bytes(bid->s, bid->slen)) : false))
		report(v, PMU_CHECK_BUILD_ID, s->file, rec, "no map has %s%.*s%s with build-id %.*s",
		       fis(kind, "debug") ? "" : "'", fis(kind, "debug") ? 0 : (int)path->slen, path->s,
		       fis(kind, "debug") ? "an object" : "'", (int)bid->slen, bid->s);
	/* where the copy must be */
	if (jit) {
		const char *base = memrchr(path->s, '/', path->slen);

		/* relative to its repetition's directory (as pmurec writes it
		 * and pmuanalyze reads it): collectors/<name>/ */
		base = base ? base + 1 : path->s;
		snprintf(want, sizeof(want), "collectors/%s/%.*s", s->collector,
			 (int)(path->s + path->slen - base > 200 ? 200 : path->s + path->slen - base), base);
		size_t bl = (size_t)(path->s + path->slen - base);
		bool form = bl > 9 && !memcmp(base, "perf-", 5) && !memcmp(base + bl - 4, ".map", 4);

		for (size_t i = 5; form && i < bl - 4; i++)
			form = base[i] >= '0' && base[i] <= '9';
		if (!form) {
			report(v, PMU_CHECK_RETAINED, s->file, rec, "a jit-map's path '%.*s' is not perf-PID.map",
			       (int)path->slen, path->s);
			return;
		}
	} else {
		snprintf(want, sizeof(want), "build-id/%.2s/%.*s%s", bid->s, (int)bid->slen - 2, bid->s + 2,
			 dbg ? ".debug" : "");
	}
	if (!fis(file, want)) {
		report(v, PMU_CHECK_RETAINED, s->file, rec, "file '%.*s' is not where a retained %.*s goes ('%s')",
		       (int)(file->slen > 200 ? 200 : file->slen), file->s, (int)kind->slen, kind->s, want);
		return;
	}
	snprintf(rel, sizeof(rel), "%s%s", jit ? v->scope : "data/", want);
	remember_retained(v, rel);
	vf = pmu_v_find_file(v, rel);
	if (!vf) {
		report(v, PMU_CHECK_RETAINED, s->file, rec, "the retained file %s does not exist", rel);
		return;
	}
	if (vf->listed != 1) {
		report(v, PMU_CHECK_RETAINED, s->file, rec, "the retained file %s is not in the manifest", rel);
		return;
	}
	if (size && (uint64_t)size->i != vf->size)
		report(v, PMU_CHECK_RETAINED, s->file, rec, "size_bytes %llu, but %s has %llu bytes",
		       (unsigned long long)size->i, rel, (unsigned long long)vf->size);
	if (jit)
		return;
	/* the copy is the object: its ELF build-id note is the record's */
	struct prd pr = { openat(v->rootfd, rel, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) };
	unsigned char b[PMU_ELF_BID_MAX];
	char hex[2 * PMU_ELF_BID_MAX + 1];
	size_t n = 0;
	int err;

	if (pr.fd < 0) {
		report(v, PMU_CHECK_RETAINED, s->file, rec, "cannot open the retained file %s", rel);
		return;
	}
	err = pmu_elf_build_id(p_read, &pr, vf->size, b, &n);
	close(pr.fd);
	if (err) {
		report(v, PMU_CHECK_RETAINED, s->file, rec, "the retained file %s has no build-id to compare: %s", rel,
		       pmu_error_detail());
		return;
	}
	for (size_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", b[i]);
	if (!fis(bid, hex))
		report(v, PMU_CHECK_RETAINED, s->file, rec, "the retained file %s has build-id %s, the record says %.*s",
		       rel, hex, (int)bid->slen, bid->s);
}

static void map_build_id(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r, bool kmap)
{
	struct maps_state *ms = s->ms;
	const struct pmu_jfield *bid = rf(r, "build_id"), *why = rf(r, "build_id_reason"),
				*src = rf(r, "build_id_source"), *path = rf(r, "path");

	eval(v, PMU_CHECK_BUILD_ID);
	if (!bid == !why) {
		report(v, PMU_CHECK_BUILD_ID, s->file, rec, "a %s has %s of build_id and build_id_reason",
		       kmap ? "kmap" : "map", bid ? "both" : "neither");
		return;
	}
	if (!bid)
		return;
	if (!bid_ok(bid)) {
		report(v, PMU_CHECK_BUILD_ID, s->file, rec, "build_id '%.*s' is not 2 to 64 bytes of lowercase hex",
		       (int)(bid->slen > 140 ? 140 : bid->slen), bid->s);
		return;
	}
	if (kmap)
		return;
	if (!src)
		report(v, PMU_CHECK_BUILD_ID, s->file, rec, "a build_id without its build_id_source");
	else if (fis(path, "[vdso]") != fis(src, "memory"))
		report(v, PMU_CHECK_BUILD_ID, s->file, rec, "build_id_source memory is [vdso]'s, and only its");
	if (!ms->full && (!hset_add(&ms->pairs, pair_hash(path, bid)) ||
			  !hset_add(&ms->bids, hash_bytes(bid->s, bid->slen))))
		ms->full = true; /* more objects than held: the retained records are not matched */
}

void pmu_v_on_maps(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r, const char *type)
{
	struct maps_state *ms = s->ms;
	uint64_t a, b, pg;

	eval(v, PMU_CHECK_MAPS_SHAPE);
	if (!strcmp(type, "kmap")) {
		if (ms->phase != 0)
			report(v, PMU_CHECK_MAPS_SHAPE, s->file, rec, "a kmap after other records (one kmap, first)");
		ms->phase = 1;
		ms->kmaps++;
		if (!faddr(rf(r, "start"), &a) || !faddr(rf(r, "end"), &b))
			report(v, PMU_CHECK_MAPS_SHAPE, s->file, rec, "start and end are 0x-prefixed lowercase hex addresses");
		else if (a >= b)
			report(v, PMU_CHECK_MAPS_SHAPE, s->file, rec, "the kmap ends at or before its start");
		map_build_id(v, s, rec, r, true);
		return;
	}
	if (!strcmp(type, "map")) {
		uint64_t t = ri(r, "t_ns");

		if (ms->phase > 2)
			report(v, PMU_CHECK_MAPS_SHAPE, s->file, rec, "a map after the retained and unretained records");
		ms->phase = 2;
		/* no TIME-ORDER: map records come in the order the recorder
		 * learned them, t_ns is when the mapping took effect (22.3) */
		check_window(v, s->file, rec, "t_ns", t);
		pmu_v_attribute(v, s->file, rec, r, true, t, t);
		if (!faddr(rf(r, "start"), &a) || !faddr(rf(r, "end"), &b) || !faddr(rf(r, "pgoff"), &pg))
			report(v, PMU_CHECK_MAPS_SHAPE, s->file, rec,
			       "start, end and pgoff are 0x-prefixed lowercase hex addresses");
		else if (a >= b)
			report(v, PMU_CHECK_MAPS_SHAPE, s->file, rec, "the map ends at or before its start");
		map_build_id(v, s, rec, r, false);
		return;
	}
	ms->phase = 3;
	if (!strcmp(type, "retained")) {
		retained_rec(v, s, rec, r);
	} else {
		const struct pmu_jfield *bid = rf(r, "build_id");

		eval(v, PMU_CHECK_BUILD_ID);
		if (bid && !bid_ok(bid))
			report(v, PMU_CHECK_BUILD_ID, s->file, rec, "build_id '%.*s' is not 2 to 64 bytes of lowercase hex",
			       (int)(bid->slen > 140 ? 140 : bid->slen), bid->s);
	}
}

void pmu_v_maps_end(struct v *v, struct stream_state *s)
{
	v->maps_kmap = s->ms->kmaps > 0;
	free(s->ms->pairs.v);
	free(s->ms->bids.v);
	free(s->ms);
	s->ms = NULL;
}

int pmu_v_samples_begin(struct stream_state *s)
{
	if (!strcmp(s->sd->kind, "samples")) {
		if (!(s->ss = calloc(1, sizeof(*s->ss))))
			return PMU_ERR_NOMEM;
		s->ss->nregs = -1;
		return 0;
	}
	if (!strcmp(s->sd->kind, "maps"))
		return (s->ms = calloc(1, sizeof(*s->ms))) ? 0 : PMU_ERR_NOMEM;
	return 0;
}

/* ---- the files of the bundle ---------------------------------------------- */

/* The sampling collector's files that are not streams (spec 1.6): rel
 * is relative to a repetition's directory, k the repetition. */
bool pmu_v_sampling_file(const char *rel, int k)
{
	const char *b;
	size_t n;

	if (!strncmp(rel, "collectors/sampling/", 20)) {
		b = rel + 20;
		n = strlen(b);
		if (!strcmp(b, "perf.data"))
			return true;
		if (n > 9 && !memcmp(b, "perf-", 5) && !strcmp(b + n - 4, ".map") && b[5] != '0') {
			for (size_t i = 5; i < n - 4; i++)
				if (b[i] < '0' || b[i] > '9')
					return false;
			return true;
		}
		return false;
	}
	/* build-id/xx/yyyy[.debug], at the bundle's level */
	if (k != 1 || strncmp(rel, "build-id/", 9))
		return false;
	b = rel + 9;
	if (!is_hexdig(b[0]) || !is_hexdig(b[1]) || b[2] != '/')
		return false;
	b += 3;
	n = strlen(b);
	if (n > 6 && !strcmp(b + n - 6, ".debug"))
		n -= 6;
	if (n < 2 || n > 126 || n % 2)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_hexdig(b[i]))
			return false;
	return true;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every retained file is named by a retained record (of any repetition);
 * perf.data has its samples stream. */
void pmu_v_check_sampling_files(struct v *v)
{
	char p[600];

	if (v->minor < 6)
		return;
	eval(v, PMU_CHECK_RETAINED);
	eval(v, PMU_CHECK_PERF_DATA);
	if (v->nretained)
		qsort(v->retained, v->nretained, sizeof(*v->retained), cmp_str);
	for (size_t i = 0; i < v->nfiles; i++) {
		const char *f = v->files[i].path, *rel, *base = strrchr(f, '/');
		const char *key = f;

		if (strncmp(f, "data/", 5))
			continue;
		rel = f + 5;
		if (!strncmp(rel, "repeats/", 8) && strchr(rel + 8, '/'))
			rel = strchr(rel + 8, '/') + 1;
		if (!pmu_v_sampling_file(rel, rel == f + 5 ? 1 : 2))
			continue;
		if (base && !strcmp(base, "/perf.data")) {
			snprintf(p, sizeof(p), "%.*s/samples.jsonl", (int)(base - f), f);
			if (!pmu_v_find_file(v, p))
				report(v, PMU_CHECK_PERF_DATA, f, 0, "perf.data without a samples stream beside it");
			continue;
		}
		if (!v->nretained || !bsearch(&key, v->retained, v->nretained, sizeof(*v->retained), cmp_str))
			report(v, PMU_CHECK_RETAINED, f, 0, "no retained record names this file");
	}
}
