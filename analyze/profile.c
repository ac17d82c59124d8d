/*
 * The profile section (profile.h): the samples stream of one repetition,
 * read record by record, aggregated by distinct call stack, symbolized once
 * per distinct address, and reported per program and per incarnation.
 *
 * Memory: the cohort's incarnations, the distinct stacks (their addresses,
 * once each) and the distinct addresses' frames; never the samples.  A
 * sample costs one parse, one hash of its address list and one probe.
 *
 * What a "function" is here: the physical function that holds the sampled
 * address (the outermost frame of its inline chain), found by build-id and
 * symbol, never by name alone.  Inlined code counts for the function it was
 * inlined into, as perf report counts it; the inline chain of the hottest
 * address of a function is shown beside it ("mix (hot.c:30) inlined into
 * hot_loop (hot.c:39)").  A frame that could not be symbolized is grouped
 * by object and reason ("[unknown] in hot: stale binary (build-id
 * mismatch)"), never given a name.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bundle.h"
#include "error.h"
#include "jsonl.h"
#include "model.h"
#include "profile.h"
#include "stats.h"
#include "spec_json.h"
#include "util.h"

/* The longest chain kept (kernel.perf_event_max_stack's default is 127, a
 * DWARF unwind a few hundred): a longer one is cut, and counted so. */
#define PROF_MAX_CHAIN 1024
/* Rows per list in the report. */
#define PROF_TOP_PROGRAM 50
#define PROF_TOP_INC 10
#define PROF_TOP_TEXT 10
#define PROF_TOP_EDGES 5  /* callers/callees listed of the top entries */
#define PROF_EDGE_ROWS 5
#define PROF_INCS_LISTED 20
#define PROF_PROGS_LISTED 20
/* Fewer samples than this in a scope: the shares are rough, and said so. */
#define PROF_FEW 50

enum { K_SELF, K_INCL, K_FLINE, K_FCHAIN, K_HOT, K_CALLER, K_CALLEE };

/* One distinct stack of one incarnation. */
struct stk {
	uint64_t h;
	uint64_t samples, period, t;
	uint32_t inc, n, kframes, off; /* its addresses (then locs) at addr[off..off+n) */
	bool cut;
};

/* A distinct address of an incarnation, symbolized: frames fr[f0..f0+nf),
 * innermost first. */
struct loc {
	uint32_t f0, nf;
	uint32_t fid;     /* the physical function (outermost frame) */
	uint32_t line;    /* "file:line" of the outermost frame (strs), or UINT32_MAX */
	uint32_t chain;   /* the inline chain's text (strs) */
	uint32_t srcfile; /* the innermost frame's file (strs), or UINT32_MAX */
	int srcline;
};

struct fn {
	/* a representative frame (strings in the symbolizer), copied: p->fr
	 * moves when it grows */
	struct pmu_frame fr;
	bool have;
	enum pmu_frame_status status;
};

struct acc_key {
	uint32_t scope, a, b;
	uint8_t kind;
};

struct acc {
	struct acc_key k;
	uint64_t samples;
};

struct acache {
	uint64_t addr;
	uint32_t inc;  /* UINT32_MAX: a kernel address */
	uint32_t loc1; /* loc + 1, 0: empty */
	bool ret;
};

struct an_prof {
	const struct pmu_bundle *b;
	int rep;
	struct pmu_sym *sym;
	char sym_why[256];          /* why there is no symbolizer */
	struct an_prof_info info;
	char *event, *event_reason, *call_graph, *arch, *regs_mask, *kernel, *kernel_reason, *kallsyms, *kallsyms_reason;
	bool have_config, have_summary;
	uint64_t malformed, unknown_inc, cut_samples, unwind_failed, no_chain;
	char unwind_why[256];
	uint64_t lost_records_seen, lost_samples_seen, throttles_seen, recs_samples;

	/* the cohort */
	struct an_ids incs;        /* id -> number */
	int32_t *inc_parent, *inc_prog;
	int64_t *inc_pid;
	char **inc_own;            /* the program it exec'd, or NULL: inherited */
	char **inc_comm;
	size_t ninc;
	struct an_ids progs;       /* program name -> number */
	size_t nscope;             /* 1 + programs + incarnations */
	uint64_t *sc_samples, *sc_period, *sc_cut;
	size_t last_inc;           /* the last sample's incarnation (samples come in runs) */
	char last_id[128];

	/* stacks */
	struct stk *stk;
	size_t nstk, cstk;
	uint32_t *sslot;
	size_t nsslot;
	uint64_t *addr;
	size_t naddr, caddr;

	/* symbolized */
	struct acache *ac;
	size_t nac, cac;
	struct loc *loc;
	size_t nloc, cloc;
	struct pmu_frame *fr;
	size_t nfr, cfr;
	struct an_ids fnk;         /* function keys -> fid */
	struct fn *fn;
	size_t cfn;
	struct an_ids strs;        /* lines, chains, files */

	/* counts */
	struct acc *acc;
	size_t nacc, cacc;         /* open addressing, then sorted */
	bool sorted;

	struct pmu_frame *scratch;
	size_t cscratch;
};

/* ---- small helpers ---------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static const char *base_of(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s && s[1] ? s + 1 : p ? p : "?";
}

static char *dupn(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static char *jstr(const struct pmu_jrec *r, const char *k)
{
	const struct pmu_jfield *f = pmu_jrec_get(r, k);

	return f && f->type == PMU_JV_STR ? dupn(f->s, f->slen) : NULL;
}

static bool jint(const struct pmu_jrec *r, const char *k, uint64_t *v)
{
	const struct pmu_jfield *f = pmu_jrec_get(r, k);

	if (!f || f->type != PMU_JV_INT || f->overflow || f->i < 0)
		return false;
	*v = (uint64_t)f->i;
	return true;
}

/* "0x..." lowercase or uppercase hex at s[0..n): the value, false when it
 * is not one */
static bool hex_at(const char *s, size_t n, uint64_t *v)
{
	/* the value of a hex digit, 0xff for any other byte */
	static unsigned char hexv[256];
	static bool init;
	uint64_t x = 0;

	if (!init) {
		memset(hexv, 0xff, sizeof(hexv));
		for (int c = 0; c < 10; c++)
			hexv['0' + c] = (unsigned char)c;
		for (int c = 0; c < 6; c++)
			hexv['a' + c] = hexv['A' + c] = (unsigned char)(10 + c);
		init = true;
	}
	if (n < 3 || n > 18 || s[0] != '0' || s[1] != 'x')
		return false;
	for (size_t i = 2; i < n; i++) {
		unsigned d = hexv[(unsigned char)s[i]];

		if (d > 15)
			return false;
		x = x << 4 | d;
	}
	*v = x;
	return true;
}


static uint32_t str_id(struct an_prof *p, const char *s)
{
	long i = an_ids_put(&p->strs, s, NULL);

	return i < 0 ? UINT32_MAX : (uint32_t)i;
}

/* ---- the cohort ---------------------------------------------------------------- */

static int grow_incs(struct an_prof *p, size_t n)
{
	if (n <= p->ninc)
		return 0;
	int32_t *pa = realloc(p->inc_parent, n * sizeof(*pa));
	if (pa)
		p->inc_parent = pa;
	int32_t *pg = realloc(p->inc_prog, n * sizeof(*pg));
	if (pg)
		p->inc_prog = pg;
	int64_t *pi = realloc(p->inc_pid, n * sizeof(*pi));
	if (pi)
		p->inc_pid = pi;
	char **ow = realloc(p->inc_own, n * sizeof(*ow));
	if (ow)
		p->inc_own = ow;
	char **cm = realloc(p->inc_comm, n * sizeof(*cm));
	if (cm)
		p->inc_comm = cm;
	if (!pa || !pg || !pi || !ow || !cm)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	for (size_t i = p->ninc; i < n; i++) {
		p->inc_parent[i] = -1;
		p->inc_prog[i] = -1;
		p->inc_pid[i] = -1;
		p->inc_own[i] = NULL;
		p->inc_comm[i] = NULL;
	}
	p->ninc = n;
	return 0;
}

/*
 * An incarnation's program, as the report's programs section names it
 * (model.c): the basename of its last exec's argv[0] where it differs from
 * the image's, else the image's basename; one that never exec'd runs its
 * nearest exec'ing ancestor's program.
 */
static int cohort_inc(void *ctx, json_t *in, size_t seq)
{
	struct an_prof *p = ctx;
	const char *id = json_string_value(json_object_get(in, "id"));
	const char *par = json_string_value(json_object_get(in, "parent"));
	const char *comm = json_string_value(json_object_get(in, "comm"));
	json_t *ex = json_object_get(in, "exec"), *last = json_array_get(ex, json_array_size(ex) - 1);
	const char *path = json_string_value(json_object_get(last, "path"));
	const char *a0 = json_string_value(json_array_get(json_object_get(last, "argv"), 0));
	long i, pi = -1;

	(void)seq;
	if (!id)
		return 0;
	i = an_ids_put(&p->incs, id, NULL);
	if (i >= 0 && par)
		pi = an_ids_put(&p->incs, par, NULL);
	if (i < 0 || (par && pi < 0) || grow_incs(p, p->incs.n))
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	if (p->inc_comm[i])
		return 0; /* an id used twice: the first */
	p->inc_parent[i] = (int32_t)pi;
	p->inc_pid[i] = json_integer_value(json_object_get(in, "pid"));
	p->inc_comm[i] = strdup(comm ? comm : "?");
	if (path)
		p->inc_own[i] = strdup(a0 && *a0 && strcmp(base_of(a0), base_of(path)) ? base_of(a0) : base_of(path));
	if (!p->inc_comm[i] || (path && !p->inc_own[i]))
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	return 0;
}

static int cohort_load(struct an_prof *p)
{
	int err = pmu_bundle_cohort_each(p->b, p->rep, cohort_inc, p, NULL);

	if (err)
		return err;
	for (size_t i = 0; i < p->ninc; i++) {
		long j = (long)i;
		const char *name = NULL;

		for (int k = 0; j >= 0 && k < 64; k++) {
			if (p->inc_own[j]) {
				name = p->inc_own[j];
				break;
			}
			j = p->inc_parent[j];
		}
		if (!name)
			name = p->inc_comm[i] ? p->inc_comm[i] : "?";
		long g = an_ids_put(&p->progs, name, NULL);

		if (g < 0)
			return pmu_error(PMU_ERR_NOMEM, "out of memory");
		p->inc_prog[i] = (int32_t)g;
	}
	p->nscope = 1 + p->progs.n + p->ninc;
	p->sc_samples = calloc(p->nscope, sizeof(uint64_t));
	p->sc_period = calloc(p->nscope, sizeof(uint64_t));
	p->sc_cut = calloc(p->nscope, sizeof(uint64_t));
	if (!p->sc_samples || !p->sc_period || !p->sc_cut)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	return 0;
}

static uint32_t scope_prog(const struct an_prof *p, size_t g)
{
	(void)p;
	return (uint32_t)(1 + g);
}

static uint32_t scope_inc(const struct an_prof *p, size_t i)
{
	return (uint32_t)(1 + p->progs.n + i);
}

/* ---- stacks -------------------------------------------------------------------- */

static int stk_rehash(struct an_prof *p)
{
	size_t ns = p->nsslot ? p->nsslot * 2 : 1024;
	uint32_t *sl = calloc(ns, sizeof(*sl));

	if (!sl)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < p->nstk; i++) {
		size_t j = p->stk[i].h & (ns - 1);

		while (sl[j])
			j = (j + 1) & (ns - 1);
		sl[j] = (uint32_t)i + 1;
	}
	free(p->sslot);
	p->sslot = sl;
	p->nsslot = ns;
	return 0;
}

static int stk_add(struct an_prof *p, uint32_t inc, const uint64_t *a, uint32_t n, uint32_t kframes, bool cut,
		   uint64_t period, uint64_t t)
{
	uint64_t h = mix64(inc ^ ((uint64_t)kframes << 32) ^ ((uint64_t)cut << 63));
	size_t j;

	for (uint32_t k = 0; k < n; k++)
		h = mix64(h ^ a[k]) + k;
	if (!p->nsslot || (p->nstk + 1) * 2 > p->nsslot)
		if (stk_rehash(p))
			return PMU_ERR_NOMEM;
	for (j = h & (p->nsslot - 1); p->sslot[j]; j = (j + 1) & (p->nsslot - 1)) {
		struct stk *s = &p->stk[p->sslot[j] - 1];

		if (s->h == h && s->inc == inc && s->n == n && s->kframes == kframes && s->cut == cut &&
		    !memcmp(p->addr + s->off, a, n * sizeof(*a))) {
			s->samples++;
			s->period += period;
			return 0;
		}
	}
	if (pmu_grow(&p->stk, &p->cstk, p->nstk, sizeof(*p->stk), 256))
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	while (p->naddr + n > p->caddr) {
		size_t nc = p->caddr ? p->caddr * 2 : 4096;
		uint64_t *na = realloc(p->addr, nc * sizeof(*na));

		if (!na)
			return pmu_error(PMU_ERR_NOMEM, "out of memory");
		p->addr = na;
		p->caddr = nc;
	}
	memcpy(p->addr + p->naddr, a, n * sizeof(*a));
	p->stk[p->nstk] = (struct stk){ .h = h, .samples = 1, .period = period, .t = t, .inc = inc, .n = n,
					.kframes = kframes, .off = (uint32_t)p->naddr, .cut = cut };
	p->naddr += n;
	p->sslot[j] = (uint32_t)++p->nstk;
	return 0;
}

/* ---- the stream ---------------------------------------------------------------- */

static long inc_of(struct an_prof *p, const struct pmu_jfield *f)
{
	long i;

	if (f->slen < sizeof(p->last_id) && p->last_id[f->slen] == '\0' && !memcmp(p->last_id, f->s, f->slen) &&
	    p->last_id[0])
		return (long)p->last_inc;
	{
		char id[256];

		if (f->slen >= sizeof(id))
			return -1;
		memcpy(id, f->s, f->slen);
		id[f->slen] = '\0';
		i = an_ids_find(&p->incs, id);
		if (i >= 0 && f->slen < sizeof(p->last_id)) {
			memcpy(p->last_id, id, f->slen + 1);
			p->last_inc = (size_t)i;
		}
	}
	return i;
}

/* Parse a chain "0x.. 0x.." into a[]; the count, or -1 when malformed.
 * *cut is set when it is longer than max. */
static long parse_chain(const char *s, size_t n, uint64_t *a, size_t max, bool *cut)
{
	size_t i = 0, k = 0;

	while (i < n) {
		size_t j = i;

		const char *sp = memchr(s + i, ' ', n - i);

		j = sp ? (size_t)(sp - s) : n;
		if (k < max) {
			if (!hex_at(s + i, j - i, &a[k]))
				return -1;
			k++;
		} else {
			*cut = true;
		}
		i = j + 1;
	}
	return (long)k;
}

static int on_sample(struct an_prof *p, const struct pmu_jrec *r, uint64_t *a)
{
	const struct pmu_jfield *fi = NULL, *fc = NULL, *fip = NULL, *fk = NULL, *fcut = NULL, *freg = NULL, *fst = NULL,
				*ft = NULL, *fper = NULL, *fkf = NULL;
	uint64_t t = 0, period = 0, kf = 0, ip;
	long inc, n;
	bool cut;

	/* one pass over the members (a million samples are read at once) */
	for (int i = 0; i < r->n; i++) {
		const struct pmu_jfield *f = &r->f[i];

#define KEY(lit) (f->klen == sizeof(lit) - 1 && !memcmp(f->key, lit, sizeof(lit) - 1))
		switch (f->key[0]) {
		case 'i':
			if (KEY("inc"))
				fi = f;
			else if (KEY("ip"))
				fip = f;
			break;
		case 'c':
			if (KEY("chain"))
				fc = f;
			else if (KEY("chain_cut"))
				fcut = f;
			break;
		case 'k':
			if (KEY("kernel_ip"))
				fk = f;
			else if (KEY("kframes"))
				fkf = f;
			break;
		case 't':
			if (KEY("t_ns"))
				ft = f;
			break;
		case 'p':
			if (KEY("period"))
				fper = f;
			break;
		case 'r':
			if (KEY("regs"))
				freg = f;
			break;
		case 's':
			if (KEY("stack"))
				fst = f;
			break;
		}
#undef KEY
	}
	cut = fcut && fcut->type == PMU_JV_BOOL && fcut->b;
	if (ft && ft->type == PMU_JV_INT && !ft->overflow && ft->i >= 0)
		t = (uint64_t)ft->i;
	else
		ft = NULL;
	p->recs_samples++;
	if (!fi || fi->type != PMU_JV_STR || !fip || fip->type != PMU_JV_STR || !hex_at(fip->s, fip->slen, &ip) || !ft) {
		p->malformed++;
		return 0;
	}
	inc = inc_of(p, fi);
	if (inc < 0) {
		p->unknown_inc++;
		return 0;
	}
	if (fper && fper->type == PMU_JV_INT && !fper->overflow && fper->i >= 0)
		period = (uint64_t)fper->i;
	else
		period = p->info.period;
	if (fc && fc->type == PMU_JV_STR) {
		n = parse_chain(fc->s, fc->slen, a, PROF_MAX_CHAIN, &cut);
		if (n <= 0) {
			p->malformed++;
			return 0;
		}
		if (fkf && fkf->type == PMU_JV_INT && !fkf->overflow && fkf->i >= 0)
			kf = (uint64_t)fkf->i;
		if (kf > (uint64_t)n)
			kf = (uint64_t)n;
	} else {
		a[0] = ip;
		n = 1;
		kf = fk && fk->type == PMU_JV_BOOL && fk->b;
		p->no_chain++;
	}
	if (freg && freg->type == PMU_JV_STR && fst && fst->type == PMU_JV_STR && p->sym) {
		/* call_graph dwarf: the kernel part of the chain, then the user
		 * stack unwound from the registers and the stack copy */
		char regs[4096], why[256] = "";
		char *stack = dupn(fst->s, fst->slen);
		size_t m;

		if (!stack)
			return pmu_error(PMU_ERR_NOMEM, "out of memory");
		if (freg->slen < sizeof(regs)) {
			memcpy(regs, freg->s, freg->slen);
			regs[freg->slen] = '\0';
			m = pmu_sym_unwind(p->sym, an_ids_name(&p->incs, (size_t)inc), t, p->arch ? p->arch : "",
					   p->regs_mask ? strtoull(p->regs_mask, NULL, 16) : 0, regs, stack, a + kf,
					   PROF_MAX_CHAIN - kf, why, sizeof(why));
		} else {
			m = 0;
			snprintf(why, sizeof(why), "the registers field is too long");
		}
		free(stack);
		if (m) {
			n = (long)(kf + m);
		} else {
			p->unwind_failed++;
			if (!p->unwind_why[0])
				snprintf(p->unwind_why, sizeof(p->unwind_why), "%s", why[0] ? why : "unwinding failed");
			/* the chain's user part as the kernel gave it (the ip) */
			if ((uint64_t)n <= kf) {
				a[kf] = ip;
				n = (long)kf + 1;
			}
			cut = true;
		}
	}
	{
		uint32_t sp = scope_prog(p, (size_t)p->inc_prog[inc]), si = scope_inc(p, (size_t)inc);

		p->sc_samples[0]++;
		p->sc_samples[sp]++;
		p->sc_samples[si]++;
		p->sc_period[0] += period;
		p->sc_period[sp] += period;
		p->sc_period[si] += period;
		if (cut) {
			p->sc_cut[0]++;
			p->sc_cut[sp]++;
			p->sc_cut[si]++;
		}
	}
	return stk_add(p, (uint32_t)inc, a, (uint32_t)n, (uint32_t)kf, cut, period, t);
}

static int on_record(struct an_prof *p, const struct pmu_jrec *r, uint64_t *a)
{
	const struct pmu_jfield *ty = pmu_jrec_get(r, "type");
	uint64_t v;

	if (!ty || ty->type != PMU_JV_STR) {
		p->malformed++;
		return 0;
	}
#define IS(lit) (ty->slen == sizeof(lit) - 1 && !memcmp(ty->s, lit, sizeof(lit) - 1))
	if (IS("sample"))
		return on_sample(p, r, a);
	if (IS("loss")) {
		const struct pmu_jfield *w = pmu_jrec_get(r, "what");

		if (jint(r, "lost", &v)) {
			if (w && w->type == PMU_JV_STR && w->slen == 7 && !memcmp(w->s, "samples", 7))
				p->lost_samples_seen += v;
			else
				p->lost_records_seen += v;
		}
	} else if (IS("throttle")) {
		const struct pmu_jfield *w = pmu_jrec_get(r, "what");

		if (w && w->type == PMU_JV_STR && w->slen == 8 && !memcmp(w->s, "throttle", 8))
			p->throttles_seen++;
	} else if (IS("ksym")) {
		char *ad = jstr(r, "addr"), *nm = jstr(r, "name");

		if (ad && nm && hex_at(ad, strlen(ad), &v) && p->sym)
			pmu_sym_ksym(p->sym, v, nm);
		free(ad);
		free(nm);
	} else if (IS("config")) {
		p->have_config = true;
		p->event = jstr(r, "event");
		p->event_reason = jstr(r, "event_reason");
		p->call_graph = jstr(r, "call_graph");
		p->arch = jstr(r, "arch");
		p->regs_mask = jstr(r, "regs_mask");
		p->kernel = jstr(r, "kernel");
		p->kernel_reason = jstr(r, "kernel_reason");
		jint(r, "freq_hz", &p->info.freq_hz);
		jint(r, "period", &p->info.period);
	} else if (IS("summary")) {
		p->have_summary = true;
		jint(r, "samples", &p->info.samples);
		jint(r, "unattributed", &p->info.unattributed);
		jint(r, "lost_records", &p->info.lost_records);
		jint(r, "lost_samples", &p->info.lost_samples);
		jint(r, "throttles", &p->info.throttles);
		p->kallsyms = jstr(r, "kallsyms");
		p->kallsyms_reason = jstr(r, "kallsyms_reason");
	}
#undef IS
	return 0;
}

/* A stream record, including its LF, is at most 1 MiB (spec 8.2): a longer
 * line is no record, and is skipped (counted malformed) without being held. */
#define PROF_LINE_MAX (1u << 20)

/* Parse one line (without its LF) and take its record. */
static int take_line(struct an_prof *p, struct pmu_jrec *r, const char *line, size_t n, uint64_t *a)
{
	const char *why;
	size_t at;

	if (!n)
		return 0;
	if (pmu_jrec_parse(r, line, n, &why, &at)) {
		p->malformed++;
		return 0;
	}
	return on_record(p, r, a);
}

/*
 * The stream read in large blocks with read(2), each line parsed in place:
 * one copy of the bytes, a buffer of PROF_LINE_MAX * 2 whatever the file's
 * size.
 */
static int stream(struct an_prof *p, int fd)
{
	size_t cap = 2 * (size_t)PROF_LINE_MAX + 2, have = 0;
	char *buf = malloc(cap);
	uint64_t *a = malloc((PROF_MAX_CHAIN + 1) * sizeof(*a));
	struct pmu_jrec r;
	bool skipping = false; /* inside an overlong line, up to its LF */
	int err = 0;

	if (!buf || !a) {
		close(fd);
		free(a);
		free(buf);
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	}
	pmu_jrec_init(&r);
	for (;;) {
		ssize_t got = read(fd, buf + have, cap - have);
		size_t at = 0;

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			err = pmu_error(PMU_ERR_IO, "cannot read the samples stream: %s", strerror(errno));
			break;
		}
		have += (size_t)got;
		while (!err && at < have) {
			char *nl = memchr(buf + at, '\n', have - at);

			if (!nl)
				break;
			if (!skipping)
				err = take_line(p, &r, buf + at, (size_t)(nl - (buf + at)), a);
			skipping = false;
			at = (size_t)(nl - buf) + 1;
		}
		if (err)
			break;
		memmove(buf, buf + at, have - at);
		have -= at;
		if (got == 0) {
			/* the last line without its LF */
			if (have && !skipping)
				err = take_line(p, &r, buf, have, a);
			break;
		}
		if (have > PROF_LINE_MAX) {
			/* no record: counted, and its bytes dropped up to its LF */
			if (!skipping)
				p->malformed++;
			skipping = true;
			have = 0;
		}
	}
	pmu_jrec_release(&r);
	free(buf);
	free(a);
	close(fd);
	return err;
}

/* ---- symbolization -------------------------------------------------------------- */

static const char *status_name(enum pmu_frame_status s)
{
	switch (s) {
	case PMU_FRAME_OK:
		return "ok";
	case PMU_FRAME_NOSYM:
		return "no-symbol";
	case PMU_FRAME_STALE:
		return "stale";
	case PMU_FRAME_NOTFOUND:
		return "not-found";
	case PMU_FRAME_UNMAPPED:
		return "unmapped";
	case PMU_FRAME_KERNEL:
		return "kernel";
	}
	return "?";
}

/* The function a frame stands for: by build-id (else object) and symbol
 * when it has one; else the object and the reason, grouped. */
static long fn_of(struct an_prof *p, const struct pmu_frame *f)
{
	char key[1200];
	long i;
	bool added = false;

	if (f->status == PMU_FRAME_OK || (f->status == PMU_FRAME_KERNEL && f->func))
		snprintf(key, sizeof(key), "%d\x1f%s\x1f%s", (int)f->status,
			 f->build_id ? f->build_id : f->object ? f->object : "", f->func ? f->func : "?");
	else
		snprintf(key, sizeof(key), "%d\x1f%s\x1f%s\x1f%s", (int)f->status, f->object ? f->object : "",
			 f->build_id ? f->build_id : "", f->why ? f->why : "");
	i = an_ids_put(&p->fnk, key, &added);
	if (i < 0)
		return -1;
	if (added) {
		if (pmu_grow(&p->fn, &p->cfn, (size_t)i, sizeof(*p->fn), 256))
			return -1;
		p->fn[i] = (struct fn){ .have = false, .status = f->status };
	}
	return i;
}

static void fmt_fl(char *out, size_t n, const struct pmu_frame *f)
{
	if (f->file && f->line > 0)
		snprintf(out, n, "%s:%d", base_of(f->file), f->line);
	else if (f->file)
		snprintf(out, n, "%s", base_of(f->file));
	else
		snprintf(out, n, "%s+0x%llx", base_of(f->object), (unsigned long long)f->rel);
}

/* The frames of one address, once per (incarnation, address, kind). */
static long resolve(struct an_prof *p, uint32_t inc, uint64_t t, uint64_t addr, bool ret, bool kern)
{
	uint32_t key_inc = kern ? UINT32_MAX : inc;
	uint64_t h = mix64(addr ^ ((uint64_t)key_inc << 1) ^ ret);
	size_t j;
	struct pmu_frame tmp[64];
	size_t nf;
	struct loc *L;

	if (!p->cac || (p->nac + 1) * 2 > p->cac) {
		size_t nc = p->cac ? p->cac * 2 : 4096;
		struct acache *na = calloc(nc, sizeof(*na));

		if (!na)
			return -1;
		for (size_t i = 0; i < p->cac; i++)
			if (p->ac[i].loc1) {
				size_t k = mix64(p->ac[i].addr ^ ((uint64_t)p->ac[i].inc << 1) ^ p->ac[i].ret) & (nc - 1);

				while (na[k].loc1)
					k = (k + 1) & (nc - 1);
				na[k] = p->ac[i];
			}
		free(p->ac);
		p->ac = na;
		p->cac = nc;
	}
	for (j = h & (p->cac - 1); p->ac[j].loc1; j = (j + 1) & (p->cac - 1))
		if (p->ac[j].addr == addr && p->ac[j].inc == key_inc && p->ac[j].ret == ret)
			return (long)p->ac[j].loc1 - 1;
	if (p->sym) {
		nf = pmu_sym_frames(p->sym, an_ids_name(&p->incs, inc), t, addr, ret, kern, tmp, PMU_ARRAY_SIZE(tmp));
		if (nf > PMU_ARRAY_SIZE(tmp))
			nf = PMU_ARRAY_SIZE(tmp);
	} else {
		nf = 0;
	}
	if (!nf) {
		tmp[0] = (struct pmu_frame){ .status = kern ? PMU_FRAME_KERNEL : PMU_FRAME_UNMAPPED,
					     .why = p->sym ? "the symbolizer gave no frame" : p->sym_why, .addr = addr };
		nf = 1;
	}
	if (pmu_grow(&p->loc, &p->cloc, p->nloc, sizeof(*p->loc), 1024))
		return -1;
	while (p->nfr + nf > p->cfr) {
		size_t nc = p->cfr ? p->cfr * 2 : 4096;
		struct pmu_frame *na = realloc(p->fr, nc * sizeof(*na));

		if (!na)
			return -1;
		p->fr = na;
		p->cfr = nc;
	}
	memcpy(p->fr + p->nfr, tmp, nf * sizeof(*tmp));
	L = &p->loc[p->nloc];
	*L = (struct loc){ .f0 = (uint32_t)p->nfr, .nf = (uint32_t)nf, .line = UINT32_MAX, .srcfile = UINT32_MAX };
	p->nfr += nf;
	{
		const struct pmu_frame *out = &p->fr[L->f0 + nf - 1], *in = &p->fr[L->f0];
		long fid = fn_of(p, out);
		char buf[2048], fl[600];
		size_t len = 0;

		if (fid < 0)
			return -1;
		L->fid = (uint32_t)fid;
		if (!p->fn[fid].have) {
			p->fn[fid].fr = *out;
			p->fn[fid].have = true;
		}
		if (out->status == PMU_FRAME_OK && out->file && out->line > 0) {
			snprintf(buf, sizeof(buf), "%s:%d", out->file, out->line);
			L->line = str_id(p, buf);
		}
		if (in->file) {
			L->srcfile = str_id(p, in->file);
			L->srcline = in->line;
		}
		/* the chain as text, innermost first */
		buf[0] = '\0';
		for (size_t k = 0; k < nf; k++) {
			const struct pmu_frame *f = &p->fr[L->f0 + k];

			fmt_fl(fl, sizeof(fl), f);
			len += (size_t)snprintf(buf + len, len < sizeof(buf) ? sizeof(buf) - len : 0, "%s%s (%s)",
						k ? " inlined into " : "",
						f->func ? f->func : "[unknown]", fl);
			if (len >= sizeof(buf))
				break;
		}
		L->chain = str_id(p, buf);
	}
	p->ac[j] = (struct acache){ .addr = addr, .inc = key_inc, .loc1 = (uint32_t)++p->nloc, .ret = ret };
	p->nac++;   /* counted, or the table never grows and its probe never ends */
	return (long)p->nloc - 1;
}

/* ---- counting ------------------------------------------------------------------- */

static uint64_t acc_hash(const struct acc_key *k)
{
	return mix64(((uint64_t)k->scope << 32 | k->a) ^ mix64((uint64_t)k->b << 8 | k->kind));
}

static int acc_add(struct an_prof *p, uint8_t kind, uint32_t scope, uint32_t a, uint32_t b, uint64_t n)
{
	struct acc_key k = { scope, a, b, kind };
	size_t j;

	if (!p->cacc || (p->nacc + 1) * 2 > p->cacc) {
		size_t nc = p->cacc ? p->cacc * 2 : 4096;
		struct acc *na = calloc(nc, sizeof(*na));

		if (!na)
			return pmu_error(PMU_ERR_NOMEM, "out of memory");
		for (size_t i = 0; i < p->cacc; i++)
			if (p->acc[i].samples) {
				size_t q = acc_hash(&p->acc[i].k) & (nc - 1);

				while (na[q].samples)
					q = (q + 1) & (nc - 1);
				na[q] = p->acc[i];
			}
		free(p->acc);
		p->acc = na;
		p->cacc = nc;
	}
	for (j = acc_hash(&k) & (p->cacc - 1); p->acc[j].samples; j = (j + 1) & (p->cacc - 1))
		if (p->acc[j].k.scope == scope && p->acc[j].k.a == a && p->acc[j].k.b == b && p->acc[j].k.kind == kind) {
			p->acc[j].samples += n;
			return 0;
		}
	p->acc[j] = (struct acc){ k, n };
	p->nacc++;
	return 0;
}

/* Edge lists and per-function details are ordered by their function
 * first; the rankings by samples. */
static bool keyed(uint8_t kind)
{
	return kind == K_FLINE || kind == K_FCHAIN || kind == K_CALLER || kind == K_CALLEE;
}

static int acc_cmp(const void *x, const void *y)
{
	const struct acc *a = x, *b = y;

	if (a->k.kind != b->k.kind)
		return a->k.kind < b->k.kind ? -1 : 1;
	if (a->k.scope != b->k.scope)
		return a->k.scope < b->k.scope ? -1 : 1;
	if (keyed(a->k.kind) && a->k.a != b->k.a)
		return a->k.a < b->k.a ? -1 : 1;
	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	if (a->k.a != b->k.a)
		return a->k.a < b->k.a ? -1 : 1;
	return a->k.b < b->k.b ? -1 : a->k.b > b->k.b;
}

/* [*lo, *hi) of the sorted entries of kind and scope (and a, when keyed). */
static void acc_range(const struct an_prof *p, uint8_t kind, uint32_t scope, uint32_t a, size_t *lo, size_t *hi)
{
	size_t l = 0, h = p->nacc;

#define BEFORE(e) ((e)->k.kind < kind || ((e)->k.kind == kind && ((e)->k.scope < scope || \
		   ((e)->k.scope == scope && keyed(kind) && (e)->k.a < a))))
#define SAME(e) ((e)->k.kind == kind && (e)->k.scope == scope && (!keyed(kind) || (e)->k.a == a))
	while (l < h) {
		size_t m = l + (h - l) / 2;

		if (BEFORE(&p->acc[m]))
			l = m + 1;
		else
			h = m;
	}
	*lo = l;
	while (l < p->nacc && SAME(&p->acc[l]))
		l++;
	*hi = l;
#undef BEFORE
#undef SAME
}

/* Every distinct stack's locations, functions and counts. */
static int aggregate(struct an_prof *p)
{
	uint32_t *seq = malloc((PROF_MAX_CHAIN * 2 + 2) * sizeof(*seq));
	int err = 0;

	if (!seq)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	for (size_t i = 0; !err && i < p->nstk; i++) {
		struct stk *s = &p->stk[i];
		uint64_t *a = p->addr + s->off;
		uint32_t scopes[3] = { 0, scope_prog(p, (size_t)p->inc_prog[s->inc]), scope_inc(p, s->inc) };
		size_t ns = 0;

		for (uint32_t k = 0; k < s->n; k++) {
			bool kern = k < s->kframes;
			/* the first address is the sampled ip, and so is the first user
			 * address after kernel frames (the user registers at the kernel
			 * entry); every other is a return address, looked up at pc - 1 */
			bool ret = !(k == 0 || k == s->kframes);
			long l = resolve(p, s->inc, s->t, a[k], ret, kern);

			if (l < 0) {
				err = pmu_error(PMU_ERR_NOMEM, "out of memory");
				break;
			}
			a[k] = (uint64_t)l;
		}
		if (err)
			break;
		/* the physical functions, root first */
		for (uint32_t k = s->n; k-- > 0;)
			seq[ns++] = p->loc[a[k]].fid;
		for (int c = 0; c < 3; c++) {
			const struct loc *leaf = &p->loc[a[0]];

			err |= acc_add(p, K_SELF, scopes[c], leaf->fid, 0, s->samples);
			if (leaf->line != UINT32_MAX)
				err |= acc_add(p, K_FLINE, scopes[c], leaf->fid, leaf->line, s->samples);
			err |= acc_add(p, K_FCHAIN, scopes[c], leaf->fid, leaf->chain, s->samples);
			err |= acc_add(p, K_HOT, scopes[c], leaf->chain, 0, s->samples);
			for (size_t k = 0; k < ns; k++) {
				bool first = true;

				for (size_t q = 0; q < k; q++)
					if (seq[q] == seq[k]) {
						first = false;
						break;
					}
				if (!first)
					continue;
				/* counted once per sample, at its outermost place */
				err |= acc_add(p, K_INCL, scopes[c], seq[k], 0, s->samples);
				/* a function calling itself (recursion, or an object's
				 * unsymbolized frames grouped as one) is no edge */
				if (k > 0 && seq[k - 1] != seq[k])
					err |= acc_add(p, K_CALLER, scopes[c], seq[k], seq[k - 1], s->samples);
				if (k + 1 < ns && seq[k + 1] != seq[k])
					err |= acc_add(p, K_CALLEE, scopes[c], seq[k], seq[k + 1], s->samples);
			}
		}
	}
	free(seq);
	if (err)
		return err < 0 ? err : PMU_ERR_NOMEM;
	/* compact and sort */
	{
		size_t n = 0;

		for (size_t i = 0; i < p->cacc; i++)
			if (p->acc[i].samples)
				p->acc[n++] = p->acc[i];
		qsort(p->acc, n, sizeof(*p->acc), acc_cmp);
		p->nacc = n;
		p->sorted = true;
	}
	return 0;
}

/* ---- the API --------------------------------------------------------------------- */

int an_prof_load(struct an_prof **out, const struct pmu_bundle *b, int rep)
{
	char path[300];
	struct an_prof *p;
	int fd, err;

	*out = NULL;
	if (rep <= 1)
		snprintf(path, sizeof(path), "data/collectors/sampling/samples.jsonl");
	else
		snprintf(path, sizeof(path), "data/repeats/%d/collectors/sampling/samples.jsonl", rep);
	fd = openat(b->rootfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return pmu_error(PMU_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		close(fd);
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	}
	p->b = b;
	p->rep = rep;
	an_ids_init(&p->incs);
	an_ids_init(&p->progs);
	an_ids_init(&p->fnk);
	an_ids_init(&p->strs);
	err = cohort_load(p);
	if (!err && pmu_sym_new(&p->sym, b, rep)) {
		p->sym = NULL;
		snprintf(p->sym_why, sizeof(p->sym_why), "not symbolized: %s", pmu_error_detail());
	}
	if (err) {
		close(fd);
		an_prof_free(p);
		return err;
	}
	err = stream(p, fd);
	if (!err)
		err = aggregate(p);
	if (err) {
		an_prof_free(p);
		return err;
	}
	p->info.event = p->event ? p->event : "?";
	p->info.call_graph = p->call_graph ? p->call_graph : "?";
	if (!p->have_summary) {
		/* no summary (a cut stream analyzed on request): what was seen */
		p->info.samples = p->recs_samples;
		p->info.lost_records = p->lost_records_seen;
		p->info.lost_samples = p->lost_samples_seen;
		p->info.throttles = p->throttles_seen;
	}
	*out = p;
	return 0;
}

void an_prof_free(struct an_prof *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->ninc; i++) {
		free(p->inc_own[i]);
		free(p->inc_comm[i]);
	}
	free(p->inc_parent);
	free(p->inc_prog);
	free(p->inc_pid);
	free(p->inc_own);
	free(p->inc_comm);
	an_ids_release(&p->incs);
	an_ids_release(&p->progs);
	an_ids_release(&p->fnk);
	an_ids_release(&p->strs);
	free(p->sc_samples);
	free(p->sc_period);
	free(p->sc_cut);
	free(p->stk);
	free(p->sslot);
	free(p->addr);
	free(p->ac);
	free(p->loc);
	free(p->fr);
	free(p->fn);
	free(p->acc);
	free(p->scratch);
	free(p->event);
	free(p->event_reason);
	free(p->call_graph);
	free(p->arch);
	free(p->regs_mask);
	free(p->kernel);
	free(p->kernel_reason);
	free(p->kallsyms);
	free(p->kallsyms_reason);
	if (p->sym)
		pmu_sym_free(p->sym);
	free(p);
}

const struct an_prof_info *an_prof_info(const struct an_prof *p)
{
	return &p->info;
}

int an_prof_each_stack(const struct an_prof *p, int (*fn)(void *ctx, const struct an_prof_stack *s), void *ctx)
{
	struct an_prof *q = (struct an_prof *)p; /* the scratch buffer only */

	for (size_t i = 0; i < p->nstk; i++) {
		const struct stk *s = &p->stk[i];
		const uint64_t *l = p->addr + s->off;
		size_t nf = 0, at = 0;
		struct an_prof_stack st;
		int r;

		for (uint32_t k = 0; k < s->n; k++)
			nf += p->loc[l[k]].nf;
		if (nf > q->cscratch) {
			struct pmu_frame *na = realloc(q->scratch, nf * sizeof(*na));

			if (!na)
				return pmu_error(PMU_ERR_NOMEM, "out of memory");
			q->scratch = na;
			q->cscratch = nf;
		}
		for (uint32_t k = s->n; k-- > 0;) {
			const struct loc *L = &p->loc[l[k]];

			for (uint32_t f = L->nf; f-- > 0;)
				q->scratch[at++] = p->fr[L->f0 + f];
		}
		st = (struct an_prof_stack){ .program = an_ids_name(&p->progs, (size_t)p->inc_prog[s->inc]),
					     .inc = an_ids_name(&p->incs, s->inc), .frames = q->scratch, .nframes = nf,
					     .cut = s->cut, .samples = s->samples, .period = s->period };
		if ((r = fn(ctx, &st)))
			return r;
	}
	return 0;
}

/* ---- the section as JSON ------------------------------------------------------------ */

static const char *fn_name(const struct an_prof *p, uint32_t fid, char *buf, size_t n)
{
	const struct pmu_frame *f = p->fn[fid].have ? &p->fn[fid].fr : NULL;

	if (!f)
		return "?";
	switch (f->status) {
	case PMU_FRAME_OK:
		return f->func ? f->func : "?";
	case PMU_FRAME_KERNEL:
		if (f->func)
			snprintf(buf, n, "%s [kernel]", f->func);
		else
			snprintf(buf, n, "[kernel]");
		return buf;
	case PMU_FRAME_NOSYM:
		snprintf(buf, n, "[no symbol] in %s", base_of(f->object));
		return buf;
	case PMU_FRAME_UNMAPPED:
		snprintf(buf, n, "[unmapped]");
		return buf;
	case PMU_FRAME_STALE:
	case PMU_FRAME_NOTFOUND:
		snprintf(buf, n, "[unknown] in %s", base_of(f->object));
		return buf;
	}
	return "?";
}

static void set_str(json_t *o, const char *k, const char *v)
{
	if (v)
		json_object_set_new(o, k, pmu_json_text(v));
}

static void set_share(json_t *o, uint64_t k, uint64_t n)
{
	double lo, hi;

	pmu_wilson95(k, n, &lo, &hi);
	json_object_set_new(o, "samples", json_integer((json_int_t)k));
	json_object_set_new(o, "share_percent", json_real(n ? 100.0 * (double)k / (double)n : 0));
	json_object_set_new(o, "ci_low_percent", json_real(100.0 * lo));
	json_object_set_new(o, "ci_high_percent", json_real(100.0 * hi));
}

/* A function as the report names it. */
static json_t *fn_json(const struct an_prof *p, uint32_t fid)
{
	const struct pmu_frame *f = p->fn[fid].have ? &p->fn[fid].fr : NULL;
	char buf[600];
	json_t *o = json_object();

	json_object_set_new(o, "function", pmu_json_text(fn_name(p, fid, buf, sizeof(buf))));
	json_object_set_new(o, "symbol", f && f->func ? pmu_json_text(f->func) : json_null());
	json_object_set_new(o, "status", json_string(status_name(f ? f->status : PMU_FRAME_UNMAPPED)));
	if (f) {
		set_str(o, "object", f->object);
		set_str(o, "build_id", f->build_id);
		if (f->status != PMU_FRAME_OK && f->why)
			set_str(o, "reason", f->why);
	}
	return o;
}

/* A row of a ranking: the function, its count and share in scope sc, and
 * (self rows) its hottest line and that line's inline chain. */
static json_t *row_json(const struct an_prof *p, uint32_t sc, uint32_t fid, uint64_t k, bool self)
{
	json_t *o = fn_json(p, fid);
	size_t lo, hi;

	set_share(o, k, p->sc_samples[sc]);
	if (!self)
		return o;
	acc_range(p, K_FLINE, sc, fid, &lo, &hi);
	if (lo < hi) {
		const char *fl = an_ids_name(&p->strs, p->acc[lo].k.b), *c = strrchr(fl, ':');

		if (c) {
			char *file = dupn(fl, (size_t)(c - fl));

			json_object_set_new(o, "file", pmu_json_text(file ? file : "?"));
			json_object_set_new(o, "line", json_integer(atoi(c + 1)));
			json_object_set_new(o, "line_samples", json_integer((json_int_t)p->acc[lo].samples));
			free(file);
		}
	}
	acc_range(p, K_FCHAIN, sc, fid, &lo, &hi);
	if (lo < hi) {
		const char *ch = an_ids_name(&p->strs, p->acc[lo].k.b);

		if (strstr(ch, " inlined into "))
			json_object_set_new(o, "inline_chain", pmu_json_text(ch));
	}
	return o;
}

static json_t *edges_json(const struct an_prof *p, uint8_t kind, uint32_t sc, uint32_t fid, uint64_t incl)
{
	json_t *arr = json_array();
	size_t lo, hi;

	acc_range(p, kind, sc, fid, &lo, &hi);
	for (size_t i = lo; i < hi && i - lo < PROF_EDGE_ROWS; i++) {
		json_t *o = fn_json(p, p->acc[i].k.b);
		double l, h;

		pmu_wilson95(p->acc[i].samples, incl, &l, &h);
		json_object_set_new(o, "samples", json_integer((json_int_t)p->acc[i].samples));
		json_object_set_new(o, "percent_of_inclusive", json_real(incl ? 100.0 * (double)p->acc[i].samples / (double)incl : 0));
		json_array_append_new(arr, o);
	}
	return arr;
}

static uint64_t count_of(const struct an_prof *p, uint8_t kind, uint32_t sc, uint32_t fid)
{
	size_t lo, hi;

	acc_range(p, kind, sc, 0, &lo, &hi);
	for (size_t i = lo; i < hi; i++)
		if (p->acc[i].k.a == fid)
			return p->acc[i].samples;
	return 0;
}

static json_t *scope_json(const struct an_prof *p, uint32_t sc, size_t top)
{
	json_t *o = json_object(), *self = json_array(), *incl = json_array(), *cc = json_array();
	size_t lo, hi, fns;
	uint32_t picked[2 * PROF_TOP_EDGES];
	size_t np = 0;

	json_object_set_new(o, "samples", json_integer((json_int_t)p->sc_samples[sc]));
	json_object_set_new(o, "period", json_integer((json_int_t)p->sc_period[sc]));
	json_object_set_new(o, "chains_cut", json_integer((json_int_t)p->sc_cut[sc]));
	acc_range(p, K_SELF, sc, 0, &lo, &hi);
	fns = hi - lo;
	for (size_t i = lo; i < hi && i - lo < top; i++) {
		json_array_append_new(self, row_json(p, sc, p->acc[i].k.a, p->acc[i].samples, true));
		if (i - lo < PROF_TOP_EDGES)
			picked[np++] = p->acc[i].k.a;
	}
	json_object_set_new(o, "functions_with_self", json_integer((json_int_t)fns));
	json_object_set_new(o, "self", self);
	json_object_set_new(o, "self_complete", json_boolean(fns <= top));
	acc_range(p, K_INCL, sc, 0, &lo, &hi);
	json_object_set_new(o, "functions", json_integer((json_int_t)(hi - lo)));
	for (size_t i = lo; i < hi && i - lo < top; i++) {
		uint32_t fid = p->acc[i].k.a;
		bool dup = false;

		json_array_append_new(incl, row_json(p, sc, fid, p->acc[i].samples, false));
		if (i - lo >= PROF_TOP_EDGES)
			continue;
		for (size_t q = 0; q < np; q++)
			dup |= picked[q] == fid;
		if (!dup)
			picked[np++] = fid;
	}
	json_object_set_new(o, "inclusive", incl);
	for (size_t q = 0; q < np; q++) {
		uint64_t in = count_of(p, K_INCL, sc, picked[q]);
		json_t *e = fn_json(p, picked[q]);

		json_object_set_new(e, "inclusive_samples", json_integer((json_int_t)in));
		json_object_set_new(e, "self_samples", json_integer((json_int_t)count_of(p, K_SELF, sc, picked[q])));
		json_object_set_new(e, "callers", edges_json(p, K_CALLER, sc, picked[q], in));
		json_object_set_new(e, "callees", edges_json(p, K_CALLEE, sc, picked[q], in));
		json_array_append_new(cc, e);
	}
	json_object_set_new(o, "callers_callees", cc);
	acc_range(p, K_HOT, sc, 0, &lo, &hi);
	if (lo < hi) {
		json_t *h = json_object();
		const char *ch = an_ids_name(&p->strs, p->acc[lo].k.a);
		/* the chain's location: its first "(file:line)" */
		const char *op = strchr(ch, '('), *cp = op ? strchr(op, ')') : NULL;
		char *at = op && cp ? dupn(op + 1, (size_t)(cp - op - 1)) : NULL;

		json_object_set_new(h, "where", pmu_json_text(at ? at : "?"));
		json_object_set_new(h, "chain", pmu_json_text(ch));
		set_share(h, p->acc[lo].samples, p->sc_samples[sc]);
		json_object_set_new(o, "hottest_line", h);
		free(at);
	}
	return o;
}

struct byn {
	uint32_t i;
	uint64_t n;
};

static int byn_cmp(const void *x, const void *y)
{
	const struct byn *a = x, *b = y;

	return a->n != b->n ? (a->n > b->n ? -1 : 1) : (a->i > b->i) - (a->i < b->i);
}

/* What could not be symbolized, by status, object and reason: the samples
 * whose innermost frame it is, over the whole profile. */
static json_t *unsymbolized(const struct an_prof *p)
{
	json_t *arr = json_array();
	size_t lo, hi;

	acc_range(p, K_INCL, 0, 0, &lo, &hi);
	for (size_t i = lo; i < hi; i++) {
		uint32_t fid = p->acc[i].k.a;
		const struct pmu_frame *f = p->fn[fid].have ? &p->fn[fid].fr : NULL;
		json_t *o;

		if (!f || f->status == PMU_FRAME_OK || (f->status == PMU_FRAME_KERNEL && f->func))
			continue;
		o = fn_json(p, fid);
		if (!json_object_get(o, "reason"))
			json_object_set_new(o, "reason", json_string(f->status == PMU_FRAME_KERNEL
						? "kernel address without a recorded symbol" : "not symbolized"));
		json_object_set_new(o, "self_samples", json_integer((json_int_t)count_of(p, K_SELF, 0, fid)));
		json_object_set_new(o, "samples_through", json_integer((json_int_t)p->acc[i].samples));
		json_array_append_new(arr, o);
	}
	return arr;
}

json_t *an_prof_json(const struct an_prof *p)
{
	json_t *o = json_object(), *progs = json_array(), *cfg = json_object(), *acct = json_object();
	struct byn *order = calloc(p->progs.n + p->ninc + 1, sizeof(*order));
	size_t n = 0;

	json_object_set_new(o, "status", json_string(p->info.samples || p->nstk ? "ok" : "empty"));
	if (!p->nstk) {
		char why[200];

		json_object_set_new(o, "reason", json_string("the samples stream holds no sample of the cohort"));
		if (p->info.freq_hz)
			snprintf(why, sizeof(why), "at %llu Hz a run with less than %.0f ms of CPU time may take no sample: "
				 "record with a higher pmurec -F, or a longer run", (unsigned long long)p->info.freq_hz,
				 1000.0 / (double)p->info.freq_hz);
		else
			snprintf(why, sizeof(why), "record with a smaller pmurec --period, or a longer run");
		json_object_set_new(o, "remedy", json_string(why));
	}
	json_object_set_new(o, "repetition", json_integer(p->rep));
	json_object_set_new(o, "estimate", json_true());
	json_object_set_new(o, "interval", json_string("95% Wilson score interval of the share, from the sample count"));
	set_str(cfg, "event", p->event);
	set_str(cfg, "event_reason", p->event_reason);
	if (p->info.freq_hz)
		json_object_set_new(cfg, "freq_hz", json_integer((json_int_t)p->info.freq_hz));
	if (p->info.period)
		json_object_set_new(cfg, "period", json_integer((json_int_t)p->info.period));
	set_str(cfg, "call_graph", p->call_graph);
	set_str(cfg, "kernel", p->kernel);
	set_str(cfg, "kernel_reason", p->kernel_reason);
	set_str(cfg, "kallsyms", p->kallsyms);
	set_str(cfg, "kallsyms_reason", p->kallsyms_reason);
	json_object_set_new(o, "config", cfg);
	json_object_set_new(acct, "samples", json_integer((json_int_t)p->sc_samples[0]));
	json_object_set_new(acct, "summary_samples", p->have_summary ? json_integer((json_int_t)p->info.samples) : json_null());
	json_object_set_new(acct, "unattributed", p->have_summary ? json_integer((json_int_t)p->info.unattributed) : json_null());
	json_object_set_new(acct, "lost_records", json_integer((json_int_t)p->info.lost_records));
	json_object_set_new(acct, "lost_samples", json_integer((json_int_t)p->info.lost_samples));
	json_object_set_new(acct, "throttles", json_integer((json_int_t)p->info.throttles));
	json_object_set_new(acct, "chains_cut", json_integer((json_int_t)p->sc_cut[0]));
	json_object_set_new(acct, "unwind_failed", json_integer((json_int_t)p->unwind_failed));
	if (p->unwind_why[0])
		json_object_set_new(acct, "unwind_reason", pmu_json_text(p->unwind_why));
	json_object_set_new(acct, "malformed_records", json_integer((json_int_t)p->malformed));
	json_object_set_new(acct, "not_in_cohort", json_integer((json_int_t)p->unknown_inc));
	json_object_set_new(acct, "summary_present", json_boolean(p->have_summary));
	json_object_set_new(o, "accounting", acct);
	json_object_set_new(o, "distinct_stacks", json_integer((json_int_t)p->nstk));
	json_object_set_new(o, "distinct_addresses", json_integer((json_int_t)p->nloc));
	if (!p->sym)
		json_object_set_new(o, "symbolizer_reason", pmu_json_text(p->sym_why));
	json_object_set_new(o, "unsymbolized", unsymbolized(p));
	if (!order) {
		json_object_set_new(o, "programs", progs);
		return o;
	}
	for (size_t g = 0; g < p->progs.n; g++)
		if (p->sc_samples[scope_prog(p, g)])
			order[n++] = (struct byn){ (uint32_t)g, p->sc_samples[scope_prog(p, g)] };
	qsort(order, n, sizeof(*order), byn_cmp);
	json_object_set_new(o, "programs_with_samples", json_integer((json_int_t)n));
	for (size_t r = 0; r < n && r < PROF_PROGS_LISTED; r++) {
		size_t g = order[r].i, ni = 0, procs = 0;
		json_t *po = scope_json(p, scope_prog(p, g), PROF_TOP_PROGRAM), *incs = json_array();
		struct byn *io = calloc(p->ninc + 1, sizeof(*io));

		json_object_set_new(po, "program", pmu_json_text(an_ids_name(&p->progs, g)));
		for (size_t i = 0; io && i < p->ninc; i++)
			if ((size_t)p->inc_prog[i] == g && p->sc_samples[scope_inc(p, i)]) {
				io[ni++] = (struct byn){ (uint32_t)i, p->sc_samples[scope_inc(p, i)] };
				procs++;
			}
		if (io)
			qsort(io, ni, sizeof(*io), byn_cmp);
		for (size_t k = 0; k < ni && k < PROF_INCS_LISTED; k++) {
			size_t i = io[k].i;
			json_t *x = scope_json(p, scope_inc(p, i), PROF_TOP_INC);

			json_object_set_new(x, "inc", pmu_json_text(an_ids_name(&p->incs, i)));
			json_object_set_new(x, "pid", json_integer(p->inc_pid[i]));
			set_str(x, "comm", p->inc_comm[i]);
			json_array_append_new(incs, x);
		}
		json_object_set_new(po, "processes_with_samples", json_integer((json_int_t)procs));
		json_object_set_new(po, "incarnations", incs);
		json_object_set_new(po, "incarnations_omitted",
				    json_integer((json_int_t)(ni > PROF_INCS_LISTED ? ni - PROF_INCS_LISTED : 0)));
		json_array_append_new(progs, po);
		free(io);
	}
	json_object_set_new(o, "programs_omitted",
			    json_integer((json_int_t)(n > PROF_PROGS_LISTED ? n - PROF_PROGS_LISTED : 0)));
	json_object_set_new(o, "programs", progs);
	free(order);
	return o;
}
