/*
 * What the validator's files share; private to lib/validate*.c (the
 * public interface is validate.h).  lib/validate.c drives the others:
 *   validate_bag.c     the bag: tree walk, tag files, manifests, digests
 *   validate_docs.c    documents: schema and units of JSON objects, run.json
 *   validate_cohort.c  the cohort table, from cohort.json or the cohort stream
 *   validate_scan.c    reading stream records: the line reader, the full
 *                      path's schema check, record shapes and line masks
 *   validate_rules.c   the rules of streams (time, attribution, spans,
 *                      pairing, lifecycles, counts) and pmu_v_check_stream()
 *   validate_samples.c the sampling collector's files (spec 1.6): samples and
 *                      maps streams, retained files (their ELF build-id notes,
 *                      lib/elfnote.h), perf.data (lib/perfdata.h's scanner)
 *   validate_os.c      the OS-event collectors' streams (spec 1.7): syscalls,
 *                      syscall-stats and sched
 *   validate_rt.c      the runtime-evidence collectors' streams (spec 1.8):
 *                      probes (with the span rules per incarnation) and alloc
 *   validate_jobs.c    events streams in parallel, findings replayed in order
 * One struct v carries a validation's state through all of them; nothing
 * lives at file scope.  The helpers defined here are static inline because
 * the stream fast path calls them for every record.
 */
#ifndef PMU_VALIDATE_INT_H
#define PMU_VALIDATE_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "checks.h"
#include "jsonl.h"
#include "sha256.h"
#include "spec.h"
#include "validate.h"

struct vfile {
	char *path;
	uint64_t size;
	int listed;                /* 0 no, 1 manifest, 2 tagmanifest */
	char expect[PMU_SHA256_HEX];
	char actual[PMU_SHA256_HEX];
	int hash_err;
	uint64_t line;             /* manifest line */
	atomic_bool claimed;       /* listed: somebody hashes it (the hashing
				    * thread, or the stream check that reads it) */
};

/* One incarnation of the cohort, compact: the cohort may hold
 * PMU_COHORT_MAX_INCARNATIONS of them. */
struct inc {
	const char *id;            /* in v->pool */
	uint32_t idlen;
	uint32_t ntids;
	uint64_t id_h;
	int64_t pid;
	uint64_t start, end;       /* end: UINT64_MAX when alive at the end */
	int64_t *tids;             /* sorted, a run of v->tids */
	size_t slot;               /* first pairing slot of its threads */
	union {
		const char *parent; /* cohort.json: the parent's id as written (in v->pool) */
		uint64_t last_exec; /* cohort stream: t_ns of its latest exec, 0 before one */
	};
	uint32_t parent_ix;        /* index of the parent in v->incs, or NO_PARENT */
	uint16_t res_mask;         /* cohort stream: the resource fields seen */
	uint8_t flags;             /* INC_* */
};

#define NO_PARENT UINT32_MAX
#define INC_ENDED 1                /* its end record came */
#define INC_MAIN 2                 /* a thread record (or tid) for its pid came */
#define INC_PREEXISTING 4
#define INC_MARK 8                 /* tree check: on the path being walked */
#define INC_ROOTED 16              /* tree check: its parents lead to the root */

/* A thread of the cohort as read, before the threads are grouped by
 * incarnation (a stream interleaves the incarnations' threads). */
struct tpair {
	int64_t tid;
	uint32_t inc;
	uint32_t line;
};

/* Names that live as long as the repetition's cohort: blocks that never
 * move, so the pointers into them stay valid while the cohort grows. */
struct pool_blk {
	struct pool_blk *next;
	size_t used, cap;
	char data[];
};

struct span {
	uint64_t id_h, parent_h, begin, end, line;
	bool has_parent;
	int state;
	size_t parent_ix;
};

struct stack {
	uint64_t *v;
	size_t n, cap;
	uint64_t line;             /* line of the latest open enter */
};

struct collector {
	char *name;
	bool requested, seen_dir;
};

/* One validation: its options, sink and result, the bag, and the repetition
 * being checked (run window, collectors, cohort, spans).  A job of
 * validate_jobs.c checks a stream on a shallow copy of it. */
struct v {
	const struct pmu_validate_opts *opts;
	pmu_finding_fn fn;
	void *ctx;
	struct pmu_validate_result *res;
	int rootfd;

	struct vfile *files;
	size_t nfiles, capfiles;
	bool structure_ok;

	char spec[16];
	bool info_ok, spec_ok, oxum_ok;
	int minor;                 /* the bundle is spec 1.<minor> */
	uint64_t oxum_bytes, oxum_count;

	/* the repetition being checked: data/ for the first, data/repeats/<k>/ */
	char scope[48];
	int scope_k, repeat;

	bool run_ok;
	uint64_t run_start, run_end;
	bool tolerate_loss;
	struct collector *colls;
	size_t ncolls;

	bool cohort_ok;
	struct inc *incs;
	size_t nincs, capincs;
	uint32_t *inc_index;       /* open addressing on id_h, values ix+1 */
	uint32_t *ps_index;        /* open addressing on (pid, start), values ix+1 */
	size_t inc_cap;
	size_t nslots;
	struct pool_blk *pool;
	struct tpair *tp;          /* the threads as read */
	size_t ntp, captp;
	int64_t *tids;             /* the threads, by incarnation: every inc->tids points here */
	char root[256];            /* cohort.json: the root's id (truncated: then none matches) */
	struct stack *stacks;

	/* the span table: 56 bytes per span of the stream being read (spans.jsonl
	 * or a probes stream), grown by doubling; spans_dropped counts those an
	 * allocation failure left out, reported by pmu_v_check_spans() */
	struct span *spans;
	size_t nspans, capspans, spans_dropped;

	/* the maps stream of the repetition's sampling collector, checked
	 * before its samples stream (the files are sorted): -1 none yet, else
	 * whether it had a kmap */
	int maps_kmap;
	/* the repetition's syscall-stats stream (spec 1.7), read before the
	 * syscalls stream beside it (the files are sorted): its keys and
	 * counts, against which the raw calls are matched (validate_os.c) */
	struct os_xref *osx;
	/* the files that retained records name (spec 1.6), "data/..." */
	char **retained;
	size_t nretained, capretained;

	struct pmu_jrec rec;
	struct inc *inc_cache[16]; /* check_stream's: by the id's length and last byte */
	struct {                   /* check_stream's: a thread's pairing slot, by tid */
		const struct inc *in;
		int64_t tid;
		size_t slot;
	} tid_cache[64];
};

/* ---- findings (validate.c) ---------------------------------------------- */

static inline void eval(struct v *v, enum pmu_check c)
{
	v->res->evaluated[c] = true;
}

/* A finding of check c at file (or NULL) and record (or 0): counted in
 * v->res, and reported through v->fn unless c has had max_per_check. */
__attribute__((format(printf, 6, 7)))
void pmu_v_report_sev(struct v *v, enum pmu_check c, enum pmu_severity sev, const char *file,
		      uint64_t record, const char *fmt, ...);

#define report(v, c, file, rec, ...) pmu_v_report_sev(v, c, pmu_checks[c].severity, file, rec, __VA_ARGS__)

/* ---- names and values, inline ------------------------------------------- */

/* A 64-bit hash of a name, a word at a time with overlapping loads (no
 * loop for names up to 16 bytes); never 0. */
static inline uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ (n * 0xff51afd7ed558ccdull), a, b;

	if (n >= 8) {
		size_t i = 0;

		for (; i + 8 < n; i += 8) {
			memcpy(&a, s + i, 8);
			h = (h ^ a) * 0xff51afd7ed558ccdull;
			h ^= h >> 32;
		}
		memcpy(&b, s + n - 8, 8);
	} else if (n >= 4) {
		uint32_t x, y;

		memcpy(&x, s, 4);
		memcpy(&y, s + n - 4, 4);
		b = (uint64_t)x << 32 | y;
	} else {
		b = n ? (uint64_t)(unsigned char)s[0] << 16 | (uint64_t)(unsigned char)s[n / 2] << 8 |
				(unsigned char)s[n - 1] : 0;
	}
	h = (h ^ b) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return h ? h : 1;
}

/* memcmp() == 0 for the short strings of records, inlined: whole words,
 * the last one overlapping, and no byte loop */
static inline bool lit_eq(const char *a, const char *b, size_t n)
{
	uint64_t x, y;
	uint32_t u, w;

	if (n >= 8) {
		for (size_t i = 0; i + 8 <= n; i += 8) {
			memcpy(&x, a + i, 8);
			memcpy(&y, b + i, 8);
			if (x != y)
				return false;
		}
		memcpy(&x, a + n - 8, 8);
		memcpy(&y, b + n - 8, 8);
		return x == y;
	}
	if (n >= 4) {
		memcpy(&u, a, 4);
		memcpy(&w, b, 4);
		if (u != w)
			return false;
		memcpy(&u, a + n - 4, 4);
		memcpy(&w, b + n - 4, 4);
		return u == w;
	}
	return n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1]);
}

static inline bool is_hex64(const char *s, size_t n)
{
	if (n != 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static inline bool key_is(const char *fk, const char *key, size_t klen)
{
	size_t j = 0;

	while (j < klen && fk[j] && fk[j] == key[j])
		j++;
	return j == klen && !fk[j];
}

/* ---- the bag (validate_bag.c) ------------------------------------------- */

/* Walk the tree at dirfd below rel into v->files (unsorted; sort them with
 * pmu_v_cmp_vfile before pmu_v_find_file()); 0, or a negative error when a
 * directory cannot be read. */
int pmu_v_walk(struct v *v, int dirfd, const char *rel, int depth);
int pmu_v_cmp_vfile(const void *a, const void *b);
struct vfile *pmu_v_find_file(struct v *v, const char *path);
void pmu_v_check_bagit(struct v *v);
void pmu_v_check_baginfo(struct v *v);
void pmu_v_check_manifests(struct v *v);
/* Hash the listed files nobody claimed: jsonl false, all but the streams
 * (the hashing thread, pmu_v_hash_other()); true, every one left. */
void pmu_v_hash_files(struct v *v, bool jsonl);
void *pmu_v_hash_other(void *arg);
void pmu_v_report_hashes(struct v *v);

/* ---- documents (validate_docs.c) ---------------------------------------- */

extern const char *const pmu_v_type_names[];   /* by enum pmu_ftype: what a value must be */
void pmu_v_status_rule(struct v *v, const char *file, uint64_t rec, const char *where,
		       const char *status, bool has_reason, bool has_remedy);
int pmu_v_check_json_obj(struct v *v, const char *file, const struct pmu_objdef *o, json_t *obj,
			 const char *where, int depth);
void pmu_v_check_units(struct v *v, const char *file, uint64_t rec, json_t *units,
		       const struct pmu_objdef *const *objs, size_t nobjs);
/* A new reference to the document, which the caller json_decref()s; NULL
 * when it is missing, over a limit or not JSON (reported). */
json_t *pmu_v_load_doc(struct v *v, const char *file);
bool pmu_v_check_doc(struct v *v, const struct pmu_docdef *d, const char *file, json_t *j);
void pmu_v_check_run(struct v *v, json_t *j);

static inline uint64_t ju(json_t *o, const char *k)
{
	return (uint64_t)json_integer_value(json_object_get(o, k));
}

static inline void check_window(struct v *v, const char *file, uint64_t rec, const char *what, uint64_t t)
{
	if (!v->run_ok)
		return;
	eval(v, PMU_CHECK_TIME_WINDOW);
	if (t < v->run_start || t > v->run_end)
		report(v, PMU_CHECK_TIME_WINDOW, file, rec, "%s %llu is outside the run window [%llu, %llu]",
		       what, (unsigned long long)t, (unsigned long long)v->run_start,
		       (unsigned long long)v->run_end);
}

/* ---- the cohort (validate_cohort.c) ------------------------------------- */

struct stream_state;

struct inc *pmu_v_find_inc(struct v *v, const char *id, size_t len);
void pmu_v_check_cohort_doc(struct v *v, const struct pmu_docdef *d, const char *file);
void pmu_v_on_cohort(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r, const char *type);
void pmu_v_check_cohort_stream(struct v *v, const struct pmu_streamdef *sd, const char *file);

/* ---- streams ------------------------------------------------------------ */

#define LINE_LIMIT (1u << 20)     /* a stream record */

struct lines {
	int fd;
	char *buf;
	size_t cap, start, end;
	bool eof;
	uint64_t lineno;
	struct vfile *hash;        /* claimed: every byte read is hashed into it */
	struct pmu_sha256 sha;
	int hash_err;
};

/* Record shapes: validate_scan.c says what they are and why a match gets
 * the full path's verdict. */

#define SHAPE_FIELDS 16
#define SHAPE_LIT 384
#define SHAPES 8
#define SHAPE_ENUMS 4

enum shape_kind { SK_TYPE, SK_INT, SK_STR, SK_BOOL };

/* what a field's value must be: its kind and its schema type together */
enum shape_op { OP_TYPE, OP_INT, OP_STR, OP_ENUM, OP_HEX, OP_BOOL };

#define LIT_WORDS 4                    /* a literal of up to 32 bytes */

/* Where an "event" record's members are in its shape (on_event_roles()) */
struct ev_roles {
	bool ok;                       /* all there, with their value kinds */
	int8_t t, inc, pid, tid, name, ph;
};

/* A literal as little-endian words and byte masks: compared with one load
 * per word, no byte loop. */
struct litw {
	uint64_t w[LIT_WORDS], m[LIT_WORDS];
	uint8_t nw;
};

struct shape {
	const struct pmu_recdef *rd;
	int n;
	struct {
		struct litw lw;                /* the literal before the value */
		uint16_t pre, prelen;          /* ... also in lit[] */
		uint16_t key, klen;            /* the member name, in lit[] */
		uint8_t kind, op;
		bool need;                     /* an integer whose value somebody reads */
		const struct pmu_field *sf;
		uint8_t nev, elen[SHAPE_ENUMS];/* enum values accepted so far */
		char ev[SHAPE_ENUMS][15];
		uint64_t ek[SHAPE_ENUMS];      /* ... up to 7 bytes, as enum_key()s; ~0: none */
	} f[SHAPE_FIELDS];
	struct litw postw;
	uint16_t post, postlen;
	struct ev_roles ev;
	char lit[SHAPE_LIT];
};

struct lmask;

struct shapes {
	struct shape s[SHAPES];
	int n, mru;
	/* common[a][b]: how many leading fields shapes a and b share (same
	 * literal, kind and schema field): a line that fails a at field i
	 * resumes b at field min(i, common[a][b]) */
	uint8_t common[SHAPES][SHAPES];
	void (*masks)(const char *p, struct lmask *m); /* NULL: byte scans only */
};

typedef void (*lmask_fn)(const char *p, struct lmask *m);

struct counts_state;
struct samples_state;
struct maps_state;
struct os_state;
struct os_xref;
struct rt_state;

/* One stream being checked, for the rules of its kind. */
struct stream_state {
	const struct pmu_streamdef *sd;
	const char *file;
	const char *collector;
	uint64_t last_t;
	bool have_t;
	/* lifecycle */
	int last_step;
	bool steps[9];
	bool final_seen;
	char final_status[16];
	uint64_t lc_records;
	struct counts_state *cs;
	/* cohort */
	uint64_t c_records;
	bool c_over, c_thr_over;   /* past the limits: the rest is not read */
	/* samples, maps (validate_samples.c) */
	struct samples_state *ss;
	struct maps_state *ms;
	/* syscalls, syscall-stats, sched (validate_os.c) */
	struct os_state *os;
	/* probes, alloc (validate_rt.c) */
	struct rt_state *rt;
};

/* pmu_jrec_get(), inlined: the key is a literal, its length a constant.
 * *hint remembers where the member was last time: a writer puts members in
 * one order, so the first probe usually finds it. */
static inline __attribute__((always_inline)) const struct pmu_jfield *rf_at(const struct pmu_jrec *r, const char *k, int *hint)
{
	size_t kl = strlen(k);
	int h = *hint;

	if (h < r->n && r->f[h].klen == kl && lit_eq(r->f[h].key, k, kl))
		return &r->f[h];
	for (int i = 0; i < r->n; i++)
		if (r->f[i].klen == kl && (kl == 0 || r->f[i].key[0] == k[0]) && lit_eq(r->f[i].key, k, kl)) {
			*hint = i;
			return &r->f[i];
		}
	return NULL;
}

/* one hint per call site and thread */
#define rf(r, k) ({ static _Thread_local int hint_; rf_at(r, k, &hint_); })

static inline uint64_t ri_of(const struct pmu_jfield *f)
{
	return f && f->type == PMU_JV_INT ? (uint64_t)f->i : 0;
}

#define ri(r, k) ri_of(rf(r, k))

/* ---- reading stream records (validate_scan.c) --------------------------- */

int pmu_v_lines_open(struct lines *l, struct v *v, const char *path);
int pmu_v_lines_next(struct lines *l, const char **p, size_t *len, bool *nl);
void pmu_v_lines_close(struct lines *l);
int pmu_v_check_rec(struct v *v, const char *file, uint64_t rec, const struct pmu_objdef *o,
		    const struct pmu_jrec *r);
void pmu_v_shape_learn(struct shapes *ss, const char *line, size_t len, const struct pmu_jrec *r,
		       const struct pmu_recdef *rd, bool events);
struct shape *pmu_v_shapes_match(struct shapes *ss, const char *line, const char *end, bool nl, size_t *len,
				 struct pmu_jrec *r);
lmask_fn pmu_v_lmask_pick(enum pmu_line_masks want);

/* ---- the rules of streams (validate_rules.c) ---------------------------- */

struct collector *pmu_v_find_coll(struct v *v, const char *name);
/* Check one stream of kind sd at file (coll: its collector, or NULL). */
void pmu_v_check_stream(struct v *v, const struct pmu_streamdef *sd, const char *file, const char *coll);

/* The rules' helpers the other stream files share: time order within s,
 * and the attribution of record r (its inc, pid when has_pid, and tid) to
 * an incarnation alive from t0 to t1 (NULL and reported when none). */
void pmu_v_time_order(struct v *v, struct stream_state *s, uint64_t rec, const char *what, uint64_t t);
struct inc *pmu_v_attribute(struct v *v, const char *file, uint64_t rec, const struct pmu_jrec *r, bool has_pid,
			    uint64_t t0, uint64_t t1);
/* The same for a record of a process (inc and pid, no tid); the life from
 * t0 to t1 only when timed. */
struct inc *pmu_v_attribute_proc(struct v *v, const char *file, uint64_t rec, const struct pmu_jrec *r, uint64_t t0,
				 uint64_t t1, bool timed);

/* The same with the thread given (a span ended on another thread than the
 * one that began it, spec 1.8). */
struct inc *pmu_v_attribute_tid(struct v *v, const char *file, uint64_t rec, const struct pmu_jfield *inc,
				uint64_t pid, int64_t tid, uint64_t t0, uint64_t t1);
/* The span rules (SPAN-ID, SPAN-PARENT, SPAN-CYCLE, SPAN-NESTING) over the
 * spans v->spans[base ..): their keys as the stream that added them made
 * them (spans.jsonl: the id; the probes stream: the incarnation and id). */
void pmu_v_check_spans(struct v *v, const char *file, size_t base);
/* Room for one more span in v->spans; false (the span counted in
 * spans_dropped) when it cannot be had */
bool pmu_v_span_room(struct v *v);

/* ---- samples and maps (validate_samples.c) ------------------------------ */

/* The state of a samples or maps stream s (others: none); 0 or
 * PMU_ERR_NOMEM.  The _end functions release it. */
int pmu_v_samples_begin(struct stream_state *s);
void pmu_v_on_samples(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r, const char *type);
void pmu_v_samples_end(struct v *v, struct stream_state *s);
void pmu_v_on_maps(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r, const char *type);
void pmu_v_maps_end(struct v *v, struct stream_state *s);
/* Whether rel (relative to repetition k's directory) is one of the
 * sampling collector's files that are not streams: perf.data,
 * perf-PID.map, and at the bundle's level build-id/xx/yyyy[.debug]. */
bool pmu_v_sampling_file(const char *rel, int k);
/* After every repetition: retained files named, perf.data beside samples. */
void pmu_v_check_sampling_files(struct v *v);

/* ---- syscalls, syscall-stats and sched (validate_os.c) ------------------ */

/* 0 syscalls, 1 syscall-stats, 2 sched; -1 for the other kinds. */
int pmu_v_os_kind(const struct pmu_streamdef *sd);
/* The state of such a stream s (others: none); 0 or PMU_ERR_NOMEM.
 * pmu_v_os_end() releases it. */
int pmu_v_os_begin(struct stream_state *s);
void pmu_v_on_os(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r, const char *type);
void pmu_v_os_end(struct v *v, struct stream_state *s);
/* Forget the repetition's syscall-stats keys (v->osx). */
void pmu_v_os_reset(struct v *v);

/* ---- probes and alloc (validate_rt.c) ----------------------------------- */

/* 0 probes, 1 alloc; -1 for the other kinds. */
int pmu_v_rt_kind(const struct pmu_streamdef *sd);
/* The state of such a stream s (others: none); 0 or PMU_ERR_NOMEM.
 * pmu_v_rt_end() releases it. */
int pmu_v_rt_begin(struct v *v, struct stream_state *s);
void pmu_v_on_rt(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r, const char *type);
void pmu_v_rt_end(struct v *v, struct stream_state *s);

/* ---- events streams in parallel (validate_jobs.c) ----------------------- */

#define MAX_JOBS 256

struct jfound {
	int check;
	enum pmu_severity sev;
	char *file, *msg;
	uint64_t record;
};

struct job {
	const char *path;
	const struct pmu_streamdef *sd;
	char coll[256];
	struct pmu_validate_result res;
	struct jfound *f;
	size_t nf, cap;
};

/* Check the n streams of jobs (path, sd and coll set), in parallel, and
 * report their findings as if they had been checked one after another. */
void pmu_v_run_jobs(struct v *v, struct job *jobs, size_t n);

#endif

