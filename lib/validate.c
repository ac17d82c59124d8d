/*
 * pmuvalidate's engine.  Order of work:
 *   1. archive (if any) -> private temporary directory, under the
 *      ARCHIVE-* rules;
 *   2. walk the tree, read the tag files, compare manifests with the tree;
 *   3. start hashing every listed file (second thread) while
 *   4. the documents and streams are checked against the spec tables and
 *      the semantic rules (cohort, attribution, spans, lifecycles, loss);
 *   5. compare digests.
 * Every finding carries its check ID from checks.def.  A check is marked
 * evaluated when its inputs could be read; one that could not be evaluated
 * is reported by the tools as "not evaluated", never as passed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
/* x86-64 line masks (AVX2, AVX-512BW), picked at run time; build with
 * -DPMU_NO_LINE_MASKS to check the byte scans other CPUs use */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(PMU_NO_LINE_MASKS)
#include <immintrin.h>
#define HAVE_LINE_MASKS 1
#endif

#include <jansson.h>

#include "bag.h"
#include "bundle.h"
#include "docsplit.h"
#include "error.h"
#include "jsonbound.h"
#include "jsonl.h"
#include "sha256.h"
#include "spec.h"
#include "util.h"
#include "validate.h"

#define TAG_LIMIT (64u << 20)     /* a tag file */
#define LINE_LIMIT (1u << 20)     /* a stream record */
#define SHAPE_OVERREAD 128        /* bytes the shapes may read past the buffered ones */
#define STACK_LIMIT 4096          /* open enters per thread */

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

	struct span *spans;
	size_t nspans, capspans;

	struct pmu_jrec rec;
	struct inc *inc_cache[16]; /* check_stream's: by the id's length and last byte */
	struct {                   /* check_stream's: a thread's pairing slot, by tid */
		const struct inc *in;
		int64_t tid;
		size_t slot;
	} tid_cache[64];
};

/* ---- findings ----------------------------------------------------------- */

static void eval(struct v *v, enum pmu_check c)
{
	v->res->evaluated[c] = true;
}

__attribute__((format(printf, 6, 7)))
static void report_sev(struct v *v, enum pmu_check c, enum pmu_severity sev, const char *file,
		       uint64_t record, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	struct pmu_finding f = { c, sev, file, record, msg };

	eval(v, c);
	v->res->count[c]++;
	if (sev == PMU_SEV_ERROR)
		v->res->errors++;
	else
		v->res->warnings++;
	if (v->res->count[c] > v->opts->max_per_check) {
		v->res->suppressed[c]++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	v->fn(v->ctx, &f);
}

#define report(v, c, file, rec, ...) report_sev(v, c, pmu_checks[c].severity, file, rec, __VA_ARGS__)

/* A 64-bit hash of a name, a word at a time with overlapping loads (no
 * loop for names up to 16 bytes); never 0. */
static uint64_t hash_bytes(const char *s, size_t n)
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

/* ---- tree walk ---------------------------------------------------------- */

static int add_file(struct v *v, const char *path, uint64_t size)
{
	if (v->nfiles == v->capfiles) {
		size_t cap = v->capfiles ? 2 * v->capfiles : 64;
		struct vfile *f = realloc(v->files, cap * sizeof(*f));

		if (!f)
			return pmu_error(PMU_ERR_NOMEM, "out of memory");
		v->files = f;
		v->capfiles = cap;
	}
	memset(&v->files[v->nfiles], 0, sizeof(v->files[0]));
	if (!(v->files[v->nfiles].path = strdup(path)))
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	v->files[v->nfiles].size = size;
	v->nfiles++;
	return 0;
}

static bool is_tag_name(const char *n)
{
	return !strcmp(n, "bagit.txt") || !strcmp(n, "bag-info.txt") ||
	       !strcmp(n, "manifest-sha256.txt") || !strcmp(n, "tagmanifest-sha256.txt");
}

static int walk(struct v *v, int dirfd, const char *rel, int depth)
{
	DIR *d;
	int fd, err = 0;

	if (depth > 16) {
		report(v, PMU_CHECK_BAG_STRUCTURE, rel, 0, "directories nest too deep");
		return 0;
	}
	fd = openat(dirfd, rel[0] ? rel : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return pmu_error(PMU_ERR_IO, "cannot open '%s': %s", rel[0] ? rel : ".", strerror(errno));
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return pmu_error(PMU_ERR_IO, "cannot read '%s': %s", rel, strerror(errno));
	}
	for (struct dirent *e; !err && (e = readdir(d));) {
		char *p;
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (asprintf(&p, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name) < 0)
			return closedir(d), pmu_error(PMU_ERR_NOMEM, "out of memory");
		if (fstatat(dirfd, p, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			err = pmu_error(PMU_ERR_IO, "cannot stat '%s': %s", p, strerror(errno));
		} else if (S_ISDIR(st.st_mode)) {
			if (depth == 0 && strcmp(p, "data")) {
				report(v, PMU_CHECK_BAG_STRUCTURE, p, 0,
				       "unexpected directory at the top of the bag");
				v->structure_ok = false;
			} else {
				size_t before = v->nfiles;

				err = walk(v, dirfd, p, depth + 1);
				if (!err && v->nfiles == before) {
					report(v, PMU_CHECK_BAG_STRUCTURE, p, 0, "directory holds no file");
					v->structure_ok = false;
				}
			}
		} else if (!S_ISREG(st.st_mode)) {
			report(v, PMU_CHECK_BAG_STRUCTURE, p, 0, "%s is not a regular file or directory",
			       S_ISLNK(st.st_mode) ? "symbolic link" : "special file");
			v->structure_ok = false;
		} else if (depth == 0 && !is_tag_name(p)) {
			report(v, PMU_CHECK_BAG_STRUCTURE, p, 0,
			       "unexpected file at the top of the bag (only the four tag files and data/)");
			v->structure_ok = false;
		} else {
			err = add_file(v, p, (uint64_t)st.st_size);
		}
		free(p);
	}
	closedir(d);
	return err;
}

static int cmp_vfile(const void *a, const void *b)
{
	return strcmp(((const struct vfile *)a)->path, ((const struct vfile *)b)->path);
}

static struct vfile *find_file(struct v *v, const char *path)
{
	struct vfile key = { .path = (char *)path };

	return bsearch(&key, v->files, v->nfiles, sizeof(*v->files), cmp_vfile);
}

/* ---- tag files ---------------------------------------------------------- */

static void check_bagit(struct v *v)
{
	static const char want[] = "BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n";
	char *txt = NULL;
	size_t n;
	int err;

	eval(v, PMU_CHECK_BAG_DECLARATION);
	err = pmu_read_file(v->rootfd, "bagit.txt", 4096, &txt, &n);
	if (err)
		report(v, PMU_CHECK_BAG_DECLARATION, "bagit.txt", 0, "%s", pmu_error_detail());
	else if (n != sizeof(want) - 1 || memcmp(txt, want, n))
		report(v, PMU_CHECK_BAG_DECLARATION, "bagit.txt", 0,
		       "must be exactly 'BagIt-Version: 1.0' and 'Tag-File-Character-Encoding: UTF-8'");
	free(txt);
}

static bool all_digits(const char *s, size_t n)
{
	if (!n || n > 19)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* YYYY-MM-DD naming a real day of the Gregorian calendar. */
static bool valid_date(const char *d)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int y, m, day;

	if (strlen(d) != 10 || !all_digits(d, 4) || d[4] != '-' || !all_digits(d + 5, 2) ||
	    d[7] != '-' || !all_digits(d + 8, 2))
		return false;
	y = atoi(d);
	m = atoi(d + 5);
	day = atoi(d + 8);
	if (m < 1 || m > 12 || day < 1 || day > mdays[m - 1])
		return false;
	return !(m == 2 && day == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0));
}

static void check_baginfo(struct v *v)
{
	static const char *const req[] = { "Bag-Software-Agent", "Bagging-Date", "Payload-Oxum",
					   "PMU-Spec-Version" };
	const char *f = "bag-info.txt";
	char *txt = NULL, *line, *save = NULL;
	const char *val[4] = { 0 }, *last_req = NULL;
	int seen[4] = { 0 };
	uint64_t lineno = 0;
	bool ok = true;
	size_t n;

	eval(v, PMU_CHECK_BAG_INFO);
	if (pmu_read_file(v->rootfd, f, TAG_LIMIT, &txt, &n)) {
		report(v, PMU_CHECK_BAG_INFO, f, 0, "%s", pmu_error_detail());
		return;
	}
	if (n == 0 || txt[n - 1] != '\n' || strlen(txt) != n || strstr(txt, "\n\n") || txt[0] == '\n') {
		report(v, PMU_CHECK_BAG_INFO, f, 0, "must be non-empty text lines, each ending in a newline");
		free(txt);
		return;
	}
	for (line = strtok_r(txt, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon;

		lineno++;
		if (line[0] == ' ' || line[0] == '\t') {
			/* RFC 8493 continuation of the previous value: not for the
			 * labels this spec reads, whose values are one line */
			if (last_req) {
				report(v, PMU_CHECK_BAG_INFO, f, lineno, "'%s' must be on one line", last_req);
				ok = false;
			}
			continue;
		}
		last_req = NULL;
		if (line[0] == '\r' || line[strlen(line) - 1] == '\r') {
			report(v, PMU_CHECK_BAG_INFO, f, lineno, "line ends in a carriage return");
			ok = false;
			continue;
		}
		colon = strstr(line, ": ");
		if (!colon || colon == line) {
			report(v, PMU_CHECK_BAG_INFO, f, lineno, "line is not 'Label: value'");
			ok = false;
			continue;
		}
		*colon = '\0';
		for (size_t i = 0; i < 4; i++)
			if (!strcmp(line, req[i])) {
				seen[i]++;
				val[i] = colon + 2;
				last_req = req[i];
			}
	}
	for (size_t i = 0; i < 4; i++)
		if (seen[i] != 1) {
			report(v, PMU_CHECK_BAG_INFO, f, 0, "'%s' must occur once, occurs %d times",
			       req[i], seen[i]);
			ok = false;
		}
	if (ok) {
		const char *d = val[1], *o = val[2], *dot = strchr(o, '.');

		if (!valid_date(d)) {
			report(v, PMU_CHECK_BAG_INFO, f, 0, "Bagging-Date '%s' is not YYYY-MM-DD", d);
			ok = false;
		}
		if (!dot || !all_digits(o, (size_t)(dot - o)) || !all_digits(dot + 1, strlen(dot + 1))) {
			report(v, PMU_CHECK_BAG_INFO, f, 0, "Payload-Oxum '%s' is not <bytes>.<count>", o);
			ok = false;
		} else {
			v->oxum_bytes = strtoull(o, NULL, 10);
			v->oxum_count = strtoull(dot + 1, NULL, 10);
			v->oxum_ok = true;
		}
		if (strlen(val[3]) >= sizeof(v->spec) || !val[3][0]) {
			report(v, PMU_CHECK_BAG_INFO, f, 0, "PMU-Spec-Version '%.32s' is malformed", val[3]);
			ok = false;
		} else {
			snprintf(v->spec, sizeof(v->spec), "%s", val[3]);
		}
	}
	v->info_ok = ok;
	free(txt);
}

static bool is_hex64(const char *s, size_t n)
{
	if (n != 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/*
 * Manifests are checked line by line against the payload walk (v->files,
 * sorted), in memory that does not grow with the manifest: a listed path
 * is looked up by binary search and marked on its file, so a second line
 * naming an existing file is found by the mark; a listed path that does
 * not exist costs a 64-bit hash (to find it listed twice) and, for the
 * first max_per_check of them, its text (to report it).
 *
 * What is reported is what reading the whole manifest first would give:
 * a file that is not text lines (a NUL byte, no final LF) outranks a
 * malformed line, which outranks a path listed twice; any of them makes
 * the manifest unusable, so its marks are undone and the checks that need
 * it are not evaluated.
 */
#define MAN_LINE_MAX 2048         /* bytes of a manifest line kept; the rest is
				   * a path over the 1024-byte name limit anyway */

struct mreader {
	const char *name;
	int fd;
	uint64_t total, lineno;
	bool nul;
	char last;                 /* the last byte read */
	size_t len, pos;
	char blk[1 << 16];
	char line[MAN_LINE_MAX + 1];
};

/* Open a tag file with pmu_read_file()'s checks and messages. */
static int mreader_open(struct mreader *r, struct v *v, const char *name)
{
	struct stat st;

	memset(r, 0, offsetof(struct mreader, blk));
	r->name = name;
	r->fd = openat(v->rootfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (r->fd < 0)
		return pmu_error(errno == ENOENT ? PMU_ERR_NOTFOUND : PMU_ERR_IO, "cannot open '%s': %s", name,
				 strerror(errno));
	if (fstat(r->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(r->fd);
		return pmu_error(PMU_ERR_IO, "cannot read '%s': not a regular file", name);
	}
	if ((uint64_t)st.st_size > TAG_LIMIT) {
		close(r->fd);
		return pmu_error(PMU_ERR_LIMIT, "'%s' is %lld bytes, over the %zu-byte limit", name,
				 (long long)st.st_size, (size_t)TAG_LIMIT);
	}
	return 0;
}

/* The next line, without its LF, NUL-terminated in r->line (*cut: longer
 * than MAN_LINE_MAX, the rest skipped): 1, or 0 at the end, or a negative
 * error (detail recorded).  A last line without LF is returned too. */
static int mreader_next(struct mreader *r, size_t *len, bool *cut)
{
	size_t n = 0;
	bool any = false;

	*cut = false;
	for (;;) {
		char *s, *nl;
		size_t avail, take, room;

		if (r->pos == r->len) {
			ssize_t k;

			do
				k = read(r->fd, r->blk, sizeof(r->blk));
			while (k < 0 && errno == EINTR);
			if (k < 0)
				return pmu_error(PMU_ERR_IO, "cannot read '%s': %s", r->name, strerror(errno));
			if (k == 0) {
				if (!any)
					return 0;
				break;
			}
			if (r->total + (uint64_t)k > TAG_LIMIT)
				return pmu_error(PMU_ERR_LIMIT, "'%s' is over the %zu-byte limit", r->name,
						 (size_t)TAG_LIMIT);
			r->nul |= memchr(r->blk, '\0', (size_t)k) != NULL;
			r->total += (uint64_t)k;
			r->last = r->blk[k - 1];
			r->len = (size_t)k;
			r->pos = 0;
		}
		any = true;
		s = r->blk + r->pos;
		avail = r->len - r->pos;
		nl = memchr(s, '\n', avail);
		take = nl ? (size_t)(nl - s) : avail;
		room = MAN_LINE_MAX - n;
		memcpy(r->line + n, s, take < room ? take : room);
		*cut |= take > room;
		n += take < room ? take : room;
		r->pos += take + (nl != NULL);
		if (nl)
			break;
	}
	r->line[n] = '\0';
	*len = n;
	r->lineno++;
	return 1;
}

static void mreader_close(struct mreader *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
}

/* s for a message: control characters, backslashes and non-ASCII bytes
 * escaped ("\r", "\x01"), so that a carriage return shows */
static const char *esc(char *buf, size_t bsz, const char *s)
{
	size_t o = 0;

	for (; *s && o + 5 < bsz; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\r' || c == '\t' || c == '\\')
			o += (size_t)snprintf(buf + o, bsz - o, "\\%c", c == '\r' ? 'r' : c == '\t' ? 't' : '\\');
		else if (c < 0x20 || c >= 0x7f)
			o += (size_t)snprintf(buf + o, bsz - o, "\\x%02x", c);
		else
			buf[o++] = (char)c;
	}
	buf[o] = '\0';
	return buf;
}

struct mshown {
	char *path;
	uint64_t line;
};

struct mpass {
	const char *f;
	bool tag;
	int id;                    /* vfile.listed of its entries: 1 manifest, 2 tagmanifest */
	bool ok;
	uint64_t *miss;            /* hashes of the listed paths that do not exist */
	size_t nmiss, capmiss;
	struct mshown *shown;      /* the first of them, to report */
	size_t nshown, maxshown;
	unsigned want;             /* tagmanifest: bits of the tag files listed */
};

static const char *const tag_want[] = { "bag-info.txt", "bagit.txt", "manifest-sha256.txt" };

/* A keyed 64-bit hash of a path, so that paths chosen to collide cannot
 * make the listed-twice check rescan the manifest again and again. */
static uint64_t path_hash(uint64_t key, const char *s, size_t n)
{
	uint64_t h = key ^ (n * 0x9e3779b97f4a7c15ull), w;

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w ^ key) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 32;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

static uint64_t hash_key(void)
{
	static uint64_t key;
	uint64_t k = 0;

	if (!key) {
		if (getrandom(&k, sizeof(k), GRND_NONBLOCK) != sizeof(k))
			k = pmu_now_mono_ns() ^ ((uint64_t)getpid() << 32);
		key = k | 1;
	}
	return key;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The line that lists again a path that does not exist and has hash h, or
 * 0 when the paths of hash h all differ.  Read again from the start: this
 * runs only when two missing paths share a hash. */
static uint64_t missing_twice(struct v *v, struct mpass *mp, uint64_t h, char *first, size_t firstsz)
{
	struct mreader *r = malloc(sizeof(*r));
	uint64_t found = 0;
	size_t len;
	bool cut, have = false;

	if (!r || mreader_open(r, v, mp->f)) {
		free(r);
		return 0;
	}
	while (!found && mreader_next(r, &len, &cut) > 0) {
		const char *path = r->line + 66;

		if (find_file(v, path) || path_hash(hash_key(), path, len - 66) != h)
			continue;
		if (!have) {
			snprintf(first, firstsz, "%s", path);
			have = true;
		} else if (!strcmp(first, path)) {
			found = r->lineno;
		}
	}
	mreader_close(r);
	free(r);
	return found;
}

static void mpass_forget(struct v *v, struct mpass *mp)
{
	for (size_t i = 0; i < v->nfiles; i++)
		if (v->files[i].listed == mp->id) {
			v->files[i].listed = 0;
			v->files[i].line = 0;
			memset(v->files[i].expect, 0, sizeof(v->files[i].expect));
		}
	for (size_t i = 0; i < mp->nshown; i++)
		free(mp->shown[i].path);
	mp->nshown = 0;
	free(mp->miss);
	mp->miss = NULL;
	mp->nmiss = mp->capmiss = 0;
}

static void mpass_release(struct mpass *mp)
{
	for (size_t i = 0; i < mp->nshown; i++)
		free(mp->shown[i].path);
	free(mp->shown);
	free(mp->miss);
}

/* Read one manifest: check its form, mark the files it lists and remember
 * the listed paths that do not exist.  mp->ok says whether it was usable. */
static void read_manifest(struct v *v, struct mpass *mp)
{
	struct mreader *r = malloc(sizeof(*r));
	char msg[1024] = "", dup[1024] = "", e[960];
	uint64_t msg_line = 0, dup_line = 0;
	size_t len;
	bool cut;
	int got;

	mp->ok = false;
	mp->maxshown = v->opts->max_per_check;
	mp->shown = calloc(mp->maxshown ? mp->maxshown : 1, sizeof(*mp->shown));
	if (!r || !mp->shown) {
		free(r);
		report(v, PMU_CHECK_MANIFEST_FORMAT, mp->f, 0, "out of memory");
		return;
	}
	if (mreader_open(r, v, mp->f)) {
		free(r);
		report(v, PMU_CHECK_MANIFEST_FORMAT, mp->f, 0, "%s", pmu_error_detail());
		return;
	}
	while ((got = mreader_next(r, &len, &cut)) > 0) {
		const char *p = r->line, *path = p + 66;
		struct vfile *f;

		if (msg[0])
			continue; /* still read to the end: a NUL byte outranks it */
		if (len < 67 || !is_hex64(p, 64) || p[64] != ' ' || p[65] != ' ') {
			snprintf(msg, sizeof(msg), "line is not '<64 lowercase hex>  <path>'");
			msg_line = r->lineno;
			continue;
		}
		if (cut || (mp->tag ? !is_tag_name(path) || !strcmp(path, "tagmanifest-sha256.txt")
				    : strncmp(path, "data/", 5) || !pmu_bag_name_ok(path))) {
			snprintf(msg, sizeof(msg), "path '%s' is not allowed here", esc(e, sizeof(e), path));
			msg_line = r->lineno;
			continue;
		}
		for (size_t w = 0; mp->tag && w < 3; w++)
			if (!strcmp(path, tag_want[w]))
				mp->want |= 1u << w;
		if ((f = find_file(v, path))) {
			if (f->listed == mp->id) {
				if (!dup[0]) {
					snprintf(dup, sizeof(dup), "'%s' is listed twice", path);
					dup_line = r->lineno;
				}
				continue;
			}
			f->listed = mp->id;
			f->line = r->lineno;
			memcpy(f->expect, p, 64);
			f->expect[64] = '\0';
			continue;
		}
		if (mp->nmiss == mp->capmiss) {
			size_t cap = mp->capmiss ? 2 * mp->capmiss : 256;
			uint64_t *m = realloc(mp->miss, cap * sizeof(*m));

			if (!m) {
				snprintf(msg, sizeof(msg), "out of memory");
				continue;
			}
			mp->miss = m;
			mp->capmiss = cap;
		}
		mp->miss[mp->nmiss++] = path_hash(hash_key(), path, len - 66);
		if (mp->nshown < mp->maxshown) {
			mp->shown[mp->nshown].path = strdup(path);
			mp->shown[mp->nshown].line = r->lineno;
			if (mp->shown[mp->nshown].path)
				mp->nshown++;
		}
	}
	mreader_close(r);
	if (got < 0) {
		report(v, PMU_CHECK_MANIFEST_FORMAT, mp->f, 0, "%s", pmu_error_detail());
	} else if (r->nul || (r->total && r->last != '\n')) {
		report(v, PMU_CHECK_MANIFEST_FORMAT, mp->f, 0, "must be text lines, each ending in a newline");
	} else if (msg[0]) {
		report(v, PMU_CHECK_MANIFEST_FORMAT, mp->f, msg_line, "%s", msg);
	} else if (dup[0]) {
		report(v, PMU_CHECK_MANIFEST_FORMAT, mp->f, dup_line, "%s", dup);
	} else {
		/* a path that does not exist, listed twice: equal hashes, then
		 * the text (a few tries: a second pair of equal hashes with
		 * different paths takes a key made to collide) */
		unsigned tries = 0;

		mp->ok = true;
		if (mp->nmiss)
			qsort(mp->miss, mp->nmiss, sizeof(*mp->miss), cmp_u64);
		for (size_t i = 1; mp->ok && i < mp->nmiss; i++) {
			char first[MAN_LINE_MAX + 1];
			uint64_t line;

			if (mp->miss[i] != mp->miss[i - 1] || (i > 1 && mp->miss[i] == mp->miss[i - 2]))
				continue;
			if ((line = missing_twice(v, mp, mp->miss[i], first, sizeof(first)))) {
				report(v, PMU_CHECK_MANIFEST_FORMAT, mp->f, line, "'%s' is listed twice", first);
				mp->ok = false;
			} else if (++tries == 8) {
				report(v, PMU_CHECK_MANIFEST_FORMAT, mp->f, 0,
				       "cannot tell whether a path is listed twice (paths made to collide)");
				mp->ok = false;
			}
		}
	}
	free(r);
	free(mp->miss);
	mp->miss = NULL;
	if (!mp->ok)
		mpass_forget(v, mp);
}

/* Count n findings of check c that are not listed (the first
 * max_per_check of c were reported already). */
static void count_unreported(struct v *v, enum pmu_check c, uint64_t n)
{
	if (!n)
		return;
	v->res->count[c] += (unsigned)n;
	v->res->suppressed[c] += (unsigned)n;
	if (pmu_checks[c].severity == PMU_SEV_ERROR)
		v->res->errors += (unsigned)n;
	else
		v->res->warnings += (unsigned)n;
}

static void check_manifests(struct v *v)
{
	struct mpass man = { .f = "manifest-sha256.txt", .id = 1 };
	struct mpass tag = { .f = "tagmanifest-sha256.txt", .tag = true, .id = 2 };
	uint64_t bytes = 0, count = 0;

	eval(v, PMU_CHECK_MANIFEST_FORMAT);
	read_manifest(v, &man);
	read_manifest(v, &tag);

	for (size_t i = 0; i < v->nfiles; i++)
		if (!strncmp(v->files[i].path, "data/", 5)) {
			bytes += v->files[i].size;
			count++;
		}
	v->res->payload_bytes = bytes;
	v->res->files = (unsigned)count;
	if (v->oxum_ok) {
		eval(v, PMU_CHECK_BAG_OXUM);
		if (v->oxum_bytes != bytes || v->oxum_count != count)
			report(v, PMU_CHECK_BAG_OXUM, "bag-info.txt", 0,
			       "Payload-Oxum says %llu.%llu, the payload is %llu.%llu",
			       (unsigned long long)v->oxum_bytes, (unsigned long long)v->oxum_count,
			       (unsigned long long)bytes, (unsigned long long)count);
	}
	if (man.ok) {
		eval(v, PMU_CHECK_MANIFEST_UNLISTED);
		eval(v, PMU_CHECK_MANIFEST_MISSING);
		for (size_t i = 0; i < man.nshown; i++)
			report(v, PMU_CHECK_MANIFEST_MISSING, man.f, man.shown[i].line,
			       "'%s' is listed but does not exist", man.shown[i].path);
		count_unreported(v, PMU_CHECK_MANIFEST_MISSING, man.nmiss - man.nshown);
		for (size_t i = 0; i < v->nfiles; i++)
			if (!strncmp(v->files[i].path, "data/", 5) && !v->files[i].listed)
				report(v, PMU_CHECK_MANIFEST_UNLISTED, v->files[i].path, 0,
				       "payload file is not listed in manifest-sha256.txt");
	}
	if (tag.ok) {
		eval(v, PMU_CHECK_TAGMANIFEST);
		for (size_t w = 0; w < 3; w++)
			if (!(tag.want & 1u << w))
				report(v, PMU_CHECK_TAGMANIFEST, tag.f, 0, "'%s' is not listed", tag_want[w]);
		for (size_t i = 0; i < tag.nshown; i++)
			report(v, PMU_CHECK_TAGMANIFEST, tag.f, tag.shown[i].line,
			       "'%s' is listed but does not exist", tag.shown[i].path);
		count_unreported(v, PMU_CHECK_TAGMANIFEST, tag.nmiss - tag.nshown);
	}
	mpass_release(&man);
	mpass_release(&tag);
}

/* ---- hashing ------------------------------------------------------------ */

struct hasher {
	struct v *v;
	pthread_t th;
	bool running;
};

static bool is_jsonl(const char *path)
{
	size_t n = strlen(path);

	return n > 6 && !strcmp(path + n - 6, ".jsonl");
}

/* Every listed file is hashed once, by whoever claims it first: a stream
 * check, which hashes the blocks it reads anyway (one read of each byte,
 * not two), or hash_files().  The hashing thread takes the files no stream
 * check reads (jsonl: false); what no check claimed is hashed after the
 * checks (jsonl: true). */
static void hash_files(struct v *v, bool jsonl)
{
	for (size_t k = 0; k < v->nfiles; k++) {
		struct vfile *f = &v->files[k];

		if (!f->listed || (!jsonl && is_jsonl(f->path)) || atomic_exchange(&f->claimed, true))
			continue;
		f->hash_err = pmu_sha256_file(v->rootfd, f->path, f->actual, NULL);
	}
}

static void *hash_other(void *arg)
{
	hash_files(arg, false);
	return NULL;
}

static void report_hashes(struct v *v)
{
	for (size_t i = 0; i < v->nfiles; i++) {
		struct vfile *f = &v->files[i];
		enum pmu_check c = f->listed == 2 ? PMU_CHECK_CHECKSUM_TAG : PMU_CHECK_CHECKSUM_PAYLOAD;

		if (!f->listed)
			continue;
		eval(v, c);
		if (f->hash_err)
			report(v, c, f->path, 0, "cannot be read to check its digest");
		else if (strcmp(f->expect, f->actual))
			report(v, c, f->path, 0, "SHA-256 is %.12s…, %s says %.12s…", f->actual,
			       f->listed == 2 ? "tagmanifest-sha256.txt" : "manifest-sha256.txt", f->expect);
	}
}

/* ---- schema checks ------------------------------------------------------ */

static const char *const type_names[] = {
	[PMU_FT_STR] = "a non-empty string", [PMU_FT_INT] = "an integer >= 0", [PMU_FT_BOOL] = "a boolean",
	[PMU_FT_ENUM] = "one of the allowed strings", [PMU_FT_HEX64] = "64 lowercase hex digits",
	[PMU_FT_OBJ] = "an object", [PMU_FT_ARR_STR] = "an array of strings",
	[PMU_FT_ARR_INT] = "an array of integers >= 0", [PMU_FT_ARR_OBJ] = "an array of objects",
	[PMU_FT_MAP_STR] = "an object of strings", [PMU_FT_UNITS] = "an object of units",
	[PMU_FT_MAP_OBJ] = "an object of objects",
};

static bool str_ok(json_t *j)
{
	return json_is_string(j) && json_string_length(j) > 0;
}

/* Check the status rule on an object that has a "status" field. */
static void status_rule(struct v *v, const char *file, uint64_t rec, const char *where,
			const char *status, bool has_reason, bool has_remedy)
{
	if (!status)
		return;
	eval(v, PMU_CHECK_STATUS_REASON);
	if (!strcmp(status, "unavailable") && (!has_reason || !has_remedy))
		report(v, PMU_CHECK_STATUS_REASON, file, rec, "%s: 'unavailable' without %s", where,
		       !has_reason ? "a reason" : "a remedy");
	else if (!strcmp(status, "failed") && !has_reason)
		report(v, PMU_CHECK_STATUS_REASON, file, rec, "%s: 'failed' without a reason", where);
}

/* Returns the number of schema findings. */
static int check_json_obj(struct v *v, const char *file, const struct pmu_objdef *o, json_t *obj,
			  const char *where, int depth)
{
	const char *key;
	json_t *val;
	int bad = 0;

	if (depth > 8)
		return 1;
	json_object_foreach(obj, key, val) {
		const struct pmu_field *f = pmu_objdef_field(o, key, strlen(key));
		char sub[256];
		bool ok = true;

		if (!f || f->since > v->minor) {
			report(v, PMU_CHECK_SCHEMA_FIELD, file, 0, "%s: unknown field '%s'%s", where, key,
			       f ? " (added in a later minor version of the spec)" : "");
			bad++;
			continue;
		}
		snprintf(sub, sizeof(sub), "%s.%s", where, key);
		switch (f->type) {
		case PMU_FT_STR:
			ok = str_ok(val);
			break;
		case PMU_FT_INT:
			ok = json_is_integer(val) && json_integer_value(val) >= 0;
			break;
		case PMU_FT_BOOL:
			ok = json_is_boolean(val);
			break;
		case PMU_FT_ENUM:
			ok = json_is_string(val) &&
			     pmu_enum_has(f->enumv, json_string_value(val), json_string_length(val));
			break;
		case PMU_FT_HEX64:
			ok = json_is_string(val) && is_hex64(json_string_value(val), json_string_length(val));
			break;
		case PMU_FT_OBJ:
			ok = json_is_object(val);
			if (ok)
				bad += check_json_obj(v, file, f->sub, val, sub, depth + 1);
			break;
		case PMU_FT_ARR_STR:
		case PMU_FT_ARR_INT:
		case PMU_FT_ARR_OBJ:
			ok = json_is_array(val);
			for (size_t i = 0; ok && i < json_array_size(val); i++) {
				json_t *e = json_array_get(val, i);

				if (f->type == PMU_FT_ARR_STR)
					ok = str_ok(e);
				else if (f->type == PMU_FT_ARR_INT)
					ok = json_is_integer(e) && json_integer_value(e) >= 0;
				else if (!(ok = json_is_object(e)))
					;
				else {
					char el[300];

					snprintf(el, sizeof(el), "%s[%zu]", sub, i);
					bad += check_json_obj(v, file, f->sub, e, el, depth + 1);
				}
			}
			break;
		case PMU_FT_MAP_OBJ:
			ok = json_is_object(val);
			if (ok) {
				const char *k2;
				json_t *v2;

				json_object_foreach(val, k2, v2) {
					char el[300];

					snprintf(el, sizeof(el), "%s.%s", sub, k2);
					if (!json_is_object(v2))
						ok = false;
					else
						bad += check_json_obj(v, file, f->sub, v2, el, depth + 1);
				}
			}
			break;
		case PMU_FT_MAP_STR:
		case PMU_FT_UNITS:
			ok = json_is_object(val);
			if (ok) {
				const char *k2;
				json_t *v2;

				json_object_foreach(val, k2, v2)
					if (!json_is_string(v2) ||
					    (f->type == PMU_FT_UNITS &&
					     !pmu_enum_has(pmu_unit_values, json_string_value(v2),
							   json_string_length(v2))))
						ok = false;
			}
			break;
		}
		if (!ok) {
			report(v, PMU_CHECK_SCHEMA_FIELD, file, 0, "%s must be %s", sub, type_names[f->type]);
			bad++;
		}
	}
	for (size_t i = 0; i < o->nfields; i++)
		if (o->fields[i].required && o->fields[i].since <= v->minor &&
		    !json_object_get(obj, o->fields[i].key)) {
			report(v, PMU_CHECK_SCHEMA_FIELD, file, 0, "%s: required field '%s' is missing", where,
			       o->fields[i].key);
			bad++;
		}
	if (pmu_objdef_field(o, "fields", 6) && json_is_object(json_object_get(obj, "fields"))) {
		/* Every numeric field has a status entry; its value is present
		 * exactly when that status is ok: "not measured" is never 0. */
		json_t *fm = json_object_get(obj, "fields");
		const char *k2;
		json_t *v2;

		eval(v, PMU_CHECK_FIELD_STATUS);
		for (size_t i = 0; i < o->nfields; i++) {
			const struct pmu_field *nf = &o->fields[i];
			json_t *e;
			const char *st;

			if (nf->type != PMU_FT_INT || nf->since > v->minor)
				continue;
			e = json_object_get(fm, nf->key);
			st = json_string_value(json_object_get(e, "status"));
			if (!st)
				report(v, PMU_CHECK_FIELD_STATUS, file, 0, "%s: '%s' has no status", where, nf->key);
			else if (!strcmp(st, "ok") != (json_object_get(obj, nf->key) != NULL))
				report(v, PMU_CHECK_FIELD_STATUS, file, 0, "%s: '%s' is '%s' but its value is %s", where,
				       nf->key, st, json_object_get(obj, nf->key) ? "present" : "absent");
		}
		json_object_foreach(fm, k2, v2) {
			const struct pmu_field *nf = pmu_objdef_field(o, k2, strlen(k2));

			if (!nf || nf->type != PMU_FT_INT || nf->since > v->minor)
				report(v, PMU_CHECK_FIELD_STATUS, file, 0, "%s: status given for unknown field '%s'", where,
				       k2);
		}
	}
	if (pmu_objdef_field(o, "kind", 4) && pmu_objdef_field(o, "signal", 6)) {
		/* exit objects: the number that goes with the kind */
		const char *kind = json_string_value(json_object_get(obj, "kind"));

		if (kind && !strcmp(kind, "exited") && !json_object_get(obj, "code")) {
			report(v, PMU_CHECK_SCHEMA_FIELD, file, 0, "%s: kind 'exited' needs 'code'", where);
			bad++;
		} else if (kind && !strcmp(kind, "signaled") && !json_object_get(obj, "signal")) {
			report(v, PMU_CHECK_SCHEMA_FIELD, file, 0, "%s: kind 'signaled' needs 'signal'", where);
			bad++;
		}
	}
	if (pmu_objdef_field(o, "status", 6)) {
		json_t *st = json_object_get(obj, "status");

		if (json_is_string(st))
			status_rule(v, file, 0, where, json_string_value(st),
				    str_ok(json_object_get(obj, "reason")),
				    str_ok(json_object_get(obj, "remedy")));
	}
	return bad;
}

struct units_cmp {
	struct v *v;
	const char *file;
	uint64_t rec;
	json_t *units;
	json_t *seen;
};

static void unit_expect(void *ctx, const char *key, const char *unit)
{
	struct units_cmp *u = ctx;
	json_t *got = json_object_get(u->units, key);

	if (json_object_get(u->seen, key))
		return;
	json_object_set_new(u->seen, key, json_true());
	if (!got)
		report(u->v, PMU_CHECK_UNITS, u->file, u->rec, "numeric field '%s' has no declared unit", key);
	else if (!json_is_string(got) || strcmp(json_string_value(got), unit))
		report(u->v, PMU_CHECK_UNITS, u->file, u->rec, "unit of '%s' is '%s', the spec says '%s'",
		       key, json_is_string(got) ? json_string_value(got) : "?", unit);
}

static void check_units(struct v *v, const char *file, uint64_t rec, json_t *units,
			const struct pmu_objdef *const *objs, size_t nobjs)
{
	struct units_cmp u = { v, file, rec, units, json_object() };
	const char *key;
	json_t *val;

	eval(v, PMU_CHECK_UNITS);
	if (!json_is_object(units) || !u.seen) {
		json_decref(u.seen);
		return; /* reported as SCHEMA-FIELD */
	}
	for (size_t i = 0; i < nobjs; i++)
		pmu_objdef_units_v(objs[i], v->minor, unit_expect, &u);
	json_object_foreach(units, key, val)
		if (!json_object_get(u.seen, key))
			report(v, PMU_CHECK_UNITS, file, rec, "units names '%s', which is no numeric field here",
			       key);
	json_decref(u.seen);
}

/* Load a document in bounded memory (jsonbound.h: the byte limit of its
 * spec version and the parse budget); returns NULL when it is missing, over
 * a limit or not JSON (reported). */
static json_t *load_doc(struct v *v, const char *file)
{
	struct pmu_json_limits lim = pmu_doc_limits(v->minor);
	uint64_t line = 0;
	json_t *j;
	int fd, err;

	if (!find_file(v, file))
		return NULL; /* FILE-REQUIRED */
	eval(v, PMU_CHECK_JSON_SYNTAX);
	fd = openat(v->rootfd, file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		report(v, PMU_CHECK_JSON_SYNTAX, file, 0, "cannot open '%s': %s", file, strerror(errno));
		return NULL;
	}
	err = pmu_json_load_fd(fd, &lim, &j, &line);
	close(fd);
	if (err) {
		report(v, PMU_CHECK_JSON_SYNTAX, file, line, "%s", pmu_error_detail());
		return NULL;
	}
	if (!json_is_object(j)) {
		report(v, PMU_CHECK_JSON_SYNTAX, file, 0, "document is not a JSON object");
		json_decref(j);
		return NULL;
	}
	return j;
}

/* The checks every document shares; returns true when it is structurally sound. */
static bool check_doc(struct v *v, const struct pmu_docdef *d, const char *file, json_t *j)
{
	json_t *type = json_object_get(j, "type"), *spec = json_object_get(j, "spec");
	const struct pmu_objdef *objs[1] = { d->obj };

	eval(v, PMU_CHECK_SCHEMA_TYPE);
	eval(v, PMU_CHECK_SCHEMA_FIELD);
	eval(v, PMU_CHECK_SPEC_VERSION);
	if (!json_is_string(type) || strcmp(json_string_value(type), d->type)) {
		report(v, PMU_CHECK_SCHEMA_TYPE, file, 0, "document type must be '%s'", d->type);
		return false;
	}
	if (json_is_string(spec) && strcmp(json_string_value(spec), v->spec))
		report(v, PMU_CHECK_SPEC_VERSION, file, 0, "spec '%s' differs from the bag's '%s'",
		       json_string_value(spec), v->spec);
	if (check_json_obj(v, file, d->obj, j, d->type, 0))
		return false;
	check_units(v, file, 0, json_object_get(j, "units"), objs, 1);
	return true;
}

static uint64_t ju(json_t *o, const char *k)
{
	return (uint64_t)json_integer_value(json_object_get(o, k));
}

static void check_run(struct v *v, json_t *j)
{
	char f[80];
	json_t *rep = json_object_get(j, "repetition");

	snprintf(f, sizeof(f), "%srun.json", v->scope);
	eval(v, PMU_CHECK_REPETITION);
	if (v->scope_k == 1) {
		json_t *n = json_object_get(j, "repeat");

		v->repeat = n ? (int)(json_integer_value(n) > 10000 ? 10001 : json_integer_value(n)) : 1;
		if (v->repeat < 1 || v->repeat > 10000) {
			report(v, PMU_CHECK_REPETITION, f, 0, "repeat %lld is not 1 to 10000",
			       (long long)json_integer_value(n));
			v->repeat = 1;
		}
	} else if (json_object_get(j, "repeat")) {
		report(v, PMU_CHECK_REPETITION, f, 0, "only data/run.json gives the number of repetitions");
	}
	if ((rep || v->repeat > 1) && json_integer_value(rep) != v->scope_k)
		report(v, PMU_CHECK_REPETITION, f, 0, "names repetition %s, it is repetition %d",
		       rep ? "another" : "none", v->scope_k);
	json_t *colls = json_object_get(j, "collectors");
	const char *result = json_string_value(json_object_get(j, "result"));

	v->run_start = ju(j, "start_ns");
	v->run_end = ju(j, "end_ns");
	v->tolerate_loss = json_is_true(json_object_get(j, "tolerate_loss"));
	eval(v, PMU_CHECK_TIME_ORDER);
	if (v->run_end < v->run_start) {
		report(v, PMU_CHECK_TIME_ORDER, f, 0, "end_ns %llu is before start_ns %llu",
		       (unsigned long long)v->run_end, (unsigned long long)v->run_start);
		return;
	}
	eval(v, PMU_CHECK_RESULT);
	if (strcmp(result, "complete")) {
		const char *why = json_string_value(json_object_get(j, "result_reason"));

		report(v, PMU_CHECK_RESULT, f, 0, "result is '%s'%s%s", result, why ? ": " : "",
		       why ? why : "");
	}
	v->colls = calloc(json_array_size(colls) + 1, sizeof(*v->colls));
	if (!v->colls)
		return;
	eval(v, PMU_CHECK_COLLECTOR_LISTED);
	for (size_t i = 0; i < json_array_size(colls); i++) {
		json_t *c = json_array_get(colls, i);
		const char *name = json_string_value(json_object_get(c, "name"));

		if (strchr(name, '/') || !pmu_bag_name_ok(name)) {
			report(v, PMU_CHECK_COLLECTOR_LISTED, f, 0, "collector name '%s' is not allowed", name);
			continue;
		}
		for (size_t k = 0; k < v->ncolls; k++)
			if (!strcmp(v->colls[k].name, name)) {
				report(v, PMU_CHECK_COLLECTOR_LISTED, f, 0, "collector '%s' is listed twice", name);
				name = NULL;
				break;
			}
		if (!name)
			continue;
		v->colls[v->ncolls].name = strdup(name);
		v->colls[v->ncolls].requested = json_is_true(json_object_get(c, "requested"));
		v->ncolls++;
	}
	v->run_ok = true;
}

static void check_window(struct v *v, const char *file, uint64_t rec, const char *what, uint64_t t)
{
	if (!v->run_ok)
		return;
	eval(v, PMU_CHECK_TIME_WINDOW);
	if (t < v->run_start || t > v->run_end)
		report(v, PMU_CHECK_TIME_WINDOW, file, rec, "%s %llu is outside the run window [%llu, %llu]",
		       what, (unsigned long long)t, (unsigned long long)v->run_start,
		       (unsigned long long)v->run_end);
}

static struct inc *find_inc(struct v *v, const char *id, size_t len)
{
	uint64_t h = hash_bytes(id, len);

	if (!v->inc_cap)
		return NULL;
	for (size_t j = h & (v->inc_cap - 1); v->inc_index[j]; j = (j + 1) & (v->inc_cap - 1)) {
		struct inc *in = &v->incs[v->inc_index[j] - 1];

		if (in->id_h == h && in->idlen == len && lit_eq(in->id, id, len))
			return in;
	}
	return NULL;
}

/* ---- the cohort ----------------------------------------------------------
 *
 * Both forms, the document cohort.json of 1.0-1.2 and the stream
 * cohort.jsonl of 1.3, fill the same table: v->incs, found by id through
 * v->inc_index, their threads in v->tids.  Every check is linear: ids and
 * (pid, start) pairs are hashed, the threads grouped by a counting sort,
 * and the tree of a document checked with marks, each incarnation walked
 * once (the stream's tree is sound by construction: a parent is an earlier
 * record).
 */

static const char *pool_dup(struct v *v, const char *s, size_t n)
{
	struct pool_blk *b = v->pool;
	char *d;

	if (!b || b->cap - b->used < n + 1) {
		size_t cap = n + 1 > 65536 - sizeof(*b) ? n + 1 : 65536 - sizeof(*b);

		if (!(b = malloc(sizeof(*b) + cap)))
			return NULL;
		b->next = v->pool;
		b->used = 0;
		b->cap = cap;
		v->pool = b;
	}
	d = b->data + b->used;
	memcpy(d, s, n);
	d[n] = '\0';
	b->used += n + 1;
	return d;
}

static uint64_t ps_hash(int64_t pid, uint64_t start)
{
	uint64_t h = ((uint64_t)pid * 0x9e3779b97f4a7c15ull) ^ (start * 0xc4ceb9fe1a85ec53ull);

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

/* Room for one more incarnation: the table grows by doubling, the hash
 * indexes stay at most half full. */
static int incs_reserve(struct v *v)
{
	if (pmu_grow(&v->incs, &v->capincs, v->nincs, sizeof(*v->incs), 64))
		return PMU_ERR_NOMEM;
	if (2 * (v->nincs + 1) > v->inc_cap) {
		size_t cap = v->inc_cap ? 2 * v->inc_cap : 128;
		uint32_t *ix = calloc(cap, sizeof(*ix));
		uint32_t *ps = calloc(cap, sizeof(*ps));

		if (!ix || !ps) {
			free(ix);
			free(ps);
			return PMU_ERR_NOMEM;
		}
		for (size_t i = 0; i < v->nincs; i++) {
			size_t h = v->incs[i].id_h & (cap - 1);

			while (ix[h])
				h = (h + 1) & (cap - 1);
			ix[h] = (uint32_t)i + 1;
			h = ps_hash(v->incs[i].pid, v->incs[i].start) & (cap - 1);
			while (ps[h])
				h = (h + 1) & (cap - 1);
			ps[h] = (uint32_t)i + 1;
		}
		free(v->inc_index);
		free(v->ps_index);
		v->inc_index = ix;
		v->ps_index = ps;
		v->inc_cap = cap;
	}
	return 0;
}

/* Add an incarnation whose id is new; returns it, or NULL out of memory
 * (reported).  *same: an earlier incarnation with the same pid and start. */
static struct inc *inc_add(struct v *v, const char *file, const char *id, size_t idlen, int64_t pid,
			   uint64_t start, struct inc **same)
{
	struct inc *in;
	size_t h;

	*same = NULL;
	if (incs_reserve(v) || !(id = pool_dup(v, id, idlen))) {
		report(v, PMU_CHECK_COHORT, file, 0, "out of memory after %zu incarnations", v->nincs);
		return NULL;
	}
	in = &v->incs[v->nincs];
	memset(in, 0, sizeof(*in));
	in->id = id;
	in->idlen = (uint32_t)idlen;
	in->id_h = hash_bytes(id, idlen);
	in->pid = pid;
	in->start = start;
	in->end = UINT64_MAX;
	in->parent_ix = NO_PARENT;
	for (h = ps_hash(pid, start) & (v->inc_cap - 1); v->ps_index[h]; h = (h + 1) & (v->inc_cap - 1)) {
		struct inc *o = &v->incs[v->ps_index[h] - 1];

		if (o->pid == pid && o->start == start && !*same)
			*same = o;
	}
	v->ps_index[h] = (uint32_t)v->nincs + 1;
	for (h = in->id_h & (v->inc_cap - 1); v->inc_index[h]; h = (h + 1) & (v->inc_cap - 1))
		;
	v->inc_index[h] = (uint32_t)++v->nincs;
	return in;
}

static int tid_add(struct v *v, struct inc *in, int64_t tid, uint64_t line)
{
	if (pmu_grow(&v->tp, &v->captp, v->ntp, sizeof(*v->tp), 256))
		return PMU_ERR_NOMEM;
	v->tp[v->ntp++] = (struct tpair){ tid, (uint32_t)(in - v->incs), line > UINT32_MAX ? 0 : (uint32_t)line };
	if (tid == in->pid)
		in->flags |= INC_MAIN;
	return 0;
}

static int cmp_tpair(const void *a, const void *b)
{
	const struct tpair *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Group the threads by incarnation (a counting sort, in place: linear, and
 * no second copy of them), each incarnation's sorted, and give them their
 * pairing slots.  Returns false when a thread is listed twice (reported)
 * or memory ran out. */
static bool threads_index(struct v *v, const char *file)
{
	uint32_t *at = calloc(v->nincs + 1, sizeof(*at)), *next = malloc((v->nincs + 1) * sizeof(*next));
	bool ok = true;

	if (!at || !next) {
		free(at);
		free(next);
		report(v, PMU_CHECK_COHORT, file, 0, "out of memory grouping %zu threads", v->ntp);
		return false;
	}
	/* at[i]: the first place of incarnation i's threads */
	for (size_t i = 0; i < v->ntp; i++)
		at[v->tp[i].inc + 1]++;
	for (size_t i = 0; i < v->nincs; i++) {
		v->incs[i].ntids = at[i + 1];
		at[i + 1] += at[i];
	}
	memcpy(next, at, (v->nincs + 1) * sizeof(*next));
	/* each thread swapped into its incarnation's run: every swap places one */
	for (size_t b = 0; b < v->nincs; b++)
		while (next[b] < at[b + 1]) {
			struct tpair t = v->tp[next[b]];

			while (t.inc != b) {
				struct tpair u = v->tp[next[t.inc]];

				v->tp[next[t.inc]++] = t;
				t = u;
			}
			v->tp[next[b]++] = t;
		}
	free(next);
	free(at);
	v->tids = malloc((v->ntp + 1) * sizeof(*v->tids));
	if (!v->tids) {
		report(v, PMU_CHECK_COHORT, file, 0, "out of memory grouping %zu threads", v->ntp);
		return false;
	}
	v->nslots = 0;
	for (size_t i = 0; i < v->nincs; i++) {
		struct inc *in = &v->incs[i];
		struct tpair *t = v->tp + v->nslots;

		qsort(t, in->ntids, sizeof(*t), cmp_tpair);
		in->tids = v->tids + v->nslots;
		in->slot = v->nslots;
		for (size_t k = 0; k < in->ntids; k++) {
			in->tids[k] = t[k].tid;
			if (k && t[k].tid == t[k - 1].tid) {
				report(v, PMU_CHECK_COHORT, file, t[k].line, "incarnation '%s': thread %lld is listed twice",
				       in->id, (long long)t[k].tid);
				ok = false;
			}
		}
		v->nslots += in->ntids;
	}
	free(v->tp);
	v->tp = NULL;
	v->ntp = v->captp = 0;
	return ok;
}

/* The end of a cohort of either form: the threads indexed, the pairing
 * stacks ready; attribution runs against it when ok. */
static void cohort_done(struct v *v, const char *file, bool ok)
{
	/* (pid, start) pairs are checked: their index is not needed now */
	free(v->ps_index);
	v->ps_index = NULL;
	ok &= threads_index(v, file);
	v->stacks = calloc(v->nslots + 1, sizeof(*v->stacks));
	v->cohort_ok = ok && v->stacks;
}

/* -- cohort.json (1.0-1.2): one incarnation object, schema-checked -- */

static bool legacy_inc(struct v *v, const char *f, json_t *o)
{
	json_t *tids = json_object_get(o, "tids"), *exec = json_object_get(o, "exec");
	const char *id = json_string_value(json_object_get(o, "id"));
	const char *parent = json_string_value(json_object_get(o, "parent"));
	struct inc *in, *same;
	bool ok = true;
	char where[300];

	snprintf(where, sizeof(where), "incarnation '%s'", id);
	if (find_inc(v, id, strlen(id))) {
		report(v, PMU_CHECK_COHORT, f, 0, "%s: id is not unique", where);
		return false;
	}
	in = inc_add(v, f, id, strlen(id), json_integer_value(json_object_get(o, "pid")), ju(o, "start_ns"), &same);
	if (!in)
		return false;
	if (same) {
		report(v, PMU_CHECK_COHORT, f, 0, "incarnations '%s' and '%s' share pid %lld and start", same->id,
		       in->id, (long long)in->pid);
		ok = false;
	}
	in->end = json_object_get(o, "end_ns") ? ju(o, "end_ns") : UINT64_MAX;
	if (parent && !(in->parent = pool_dup(v, parent, strlen(parent)))) {
		report(v, PMU_CHECK_COHORT, f, 0, "out of memory after %zu incarnations", v->nincs);
		return false;
	}
	for (size_t t = 0; t < json_array_size(tids); t++)
		if (tid_add(v, in, json_integer_value(json_array_get(tids, t)), 0)) {
			report(v, PMU_CHECK_COHORT, f, 0, "out of memory after %zu threads", v->ntp);
			return false;
		}
	if (!(in->flags & INC_MAIN)) {
		report(v, PMU_CHECK_COHORT, f, 0, "%s: its tids do not include its pid %lld", where,
		       (long long)in->pid);
		ok = false;
	}
	eval(v, PMU_CHECK_TIME_ORDER);
	if (in->end != UINT64_MAX && in->end < in->start)
		report(v, PMU_CHECK_TIME_ORDER, f, 0, "%s: end_ns is before start_ns", where);
	if (!json_is_true(json_object_get(o, "preexisting")))
		check_window(v, f, 0, "start_ns", in->start);
	if (in->end != UINT64_MAX)
		check_window(v, f, 0, "end_ns", in->end);
	for (size_t e = 0; e < json_array_size(exec); e++) {
		uint64_t t = ju(json_array_get(exec, e), "t_ns");

		check_window(v, f, 0, "exec t_ns", t);
		if (t < in->start || t > in->end)
			report(v, PMU_CHECK_TIME_ORDER, f, 0, "%s: exec at %llu outside its lifetime", where,
			       (unsigned long long)t);
	}
	return ok;
}

/*
 * The tree of a cohort.json: parents exist, one root, no cycle.  Linear:
 * from each incarnation not yet known to reach the root, walk up marking
 * the path until an incarnation that does (or the root); the path then
 * does too.  Meeting a mark of the same walk is a cycle.  Every
 * incarnation is walked over once as the path's member, once to settle it.
 */
static bool legacy_tree(struct v *v, const char *f, bool ok)
{
	struct inc *r = v->root[0] ? find_inc(v, v->root, strlen(v->root)) : NULL;

	for (size_t i = 0; i < v->nincs; i++) {
		struct inc *a = &v->incs[i];
		struct inc *p = a->parent ? find_inc(v, a->parent, strlen(a->parent)) : NULL;

		if (a->parent && !p) {
			report(v, PMU_CHECK_COHORT, f, 0, "incarnation '%s': parent '%s' does not exist", a->id,
			       a->parent);
			ok = false;
		}
		a->parent_ix = p ? (uint32_t)(p - v->incs) : NO_PARENT;
	}
	if (!r) {
		report(v, PMU_CHECK_COHORT, f, 0, "root incarnation '%s' does not exist", v->root);
		return false;
	}
	if (r->parent) {
		report(v, PMU_CHECK_COHORT, f, 0, "root incarnation '%s' has a parent", v->root);
		return false;
	}
	for (size_t i = 0; ok && i < v->nincs; i++)
		if (!v->incs[i].parent && &v->incs[i] != r) {
			report(v, PMU_CHECK_COHORT, f, 0, "incarnation '%s' has no parent and is not the root",
			       v->incs[i].id);
			return false;
		}
	if (!ok)
		return false;
	r->flags |= INC_ROOTED;
	for (size_t i = 0; i < v->nincs; i++) {
		struct inc *a = &v->incs[i];
		bool rooted;

		while (!(a->flags & (INC_ROOTED | INC_MARK))) {
			a->flags |= INC_MARK;
			a = &v->incs[a->parent_ix]; /* only the root has none, and it is rooted */
		}
		rooted = a->flags & INC_ROOTED;
		if (!rooted) {
			report(v, PMU_CHECK_COHORT, f, 0, "incarnation '%s' is its own ancestor", a->id);
			ok = false;
		}
		/* settle the path: rooted, or on a cycle (reported once) */
		for (a = &v->incs[i]; a->flags & INC_MARK; a = &v->incs[a->parent_ix])
			a->flags = (uint8_t)((a->flags & ~INC_MARK) | INC_ROOTED);
	}
	return ok;
}

/*
 * A cohort.json, in flat memory: the splitter (lib/docsplit.c) hands over
 * one incarnation at a time, each schema-checked and entered on its own,
 * and the rest of the document (its "incarnations" emptied) at the end.
 */
struct legacy_ctx {
	struct v *v;
	const char *file;
	const struct pmu_objdef *inc;
	bool ok;
};

static int legacy_elem(void *ctx, json_t *e, size_t i)
{
	struct legacy_ctx *c = ctx;
	char where[64];

	snprintf(where, sizeof(where), "cohort.incarnations[%zu]", i);
	if (!json_is_object(e)) {
		report(c->v, PMU_CHECK_SCHEMA_FIELD, c->file, 0, "cohort.incarnations must be %s",
		       type_names[PMU_FT_ARR_OBJ]);
		c->ok = false;
	} else if (check_json_obj(c->v, c->file, c->inc, e, where, 1)) {
		c->ok = false;
	} else {
		c->ok &= legacy_inc(c->v, c->file, e);
	}
	return 0;
}

static void check_cohort_doc(struct v *v, const struct pmu_docdef *d, const char *file)
{
	struct legacy_ctx c = { v, file, pmu_objdef_field(d->obj, "incarnations", 12)->sub, true };
	const char *root;
	json_t *top = NULL;
	int fd, err;

	eval(v, PMU_CHECK_JSON_SYNTAX);
	eval(v, PMU_CHECK_COHORT);
	fd = openat(v->rootfd, file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		report(v, PMU_CHECK_JSON_SYNTAX, file, 0, "cannot open '%s': %s", file, strerror(errno));
		return;
	}
	err = pmu_docsplit_fd(fd, "incarnations", LINE_LIMIT, PMU_DOC_MAX_BYTES_OLD, legacy_elem, &c, &top);
	close(fd);
	if (err) {
		report(v, PMU_CHECK_JSON_SYNTAX, file, 0, "%s", pmu_error_detail());
		return;
	}
	if (!json_is_object(top)) {
		report(v, PMU_CHECK_JSON_SYNTAX, file, 0, "document is not a JSON object");
		json_decref(top);
		return;
	}
	if (!check_doc(v, d, file, top)) {
		json_decref(top);
		return;
	}
	root = json_string_value(json_object_get(top, "root"));
	snprintf(v->root, sizeof(v->root), "%s", strlen(root) < sizeof(v->root) ? root : "");
	json_decref(top);
	cohort_done(v, file, legacy_tree(v, file, c.ok));
}

/* ---- streams ------------------------------------------------------------ */

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

/* read(2), and the bytes into the file's digest when this reader hashes */
static ssize_t lines_read(struct lines *l, char *buf, size_t n)
{
	ssize_t r;

	do
		r = read(l->fd, buf, n);
	while (r < 0 && errno == EINTR);
	if (r < 0 && l->hash && !l->hash_err)
		l->hash_err = pmu_error(PMU_ERR_IO, "read error: %s", strerror(errno));
	if (r > 0 && l->hash && !l->hash_err)
		l->hash_err = pmu_sha256_update(&l->sha, buf, (size_t)r);
	return r;
}

static int lines_open(struct lines *l, struct v *v, const char *path)
{
	struct vfile *f;

	memset(l, 0, sizeof(*l));
	l->fd = openat(v->rootfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (l->fd < 0)
		return pmu_error(PMU_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
	(void)posix_fadvise(l->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	l->cap = 2 * LINE_LIMIT;
	/* SHAPE_OVERREAD bytes after the last: shape_match() reads up to 64
	 * past a line's end and the line masks MASK_WINDOW (128) from its
	 * start; zeroed, so every byte they read is defined */
	l->buf = calloc(1, l->cap + SHAPE_OVERREAD);
	if (!l->buf) {
		close(l->fd);
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	}
	f = find_file(v, path);
	if (f && f->listed && !atomic_exchange(&f->claimed, true)) {
		l->hash = f;
		l->hash_err = pmu_sha256_init(&l->sha);
	}
	return 0;
}

static void lines_close(struct lines *l)
{
	if (l->hash) {
		/* a check that stopped early: the digest still takes the rest */
		while (!l->hash_err && lines_read(l, l->buf, l->cap) > 0)
			;
		if (!l->hash_err)
			l->hash_err = pmu_sha256_final_hex(&l->sha, l->hash->actual);
		else if (l->sha.ctx)
			pmu_sha256_release(&l->sha);
		l->hash->hash_err = l->hash_err;
	}
	free(l->buf);
	close(l->fd);
}

/* 1: a line (*nl false when the file ends without '\n'), 0: end, -1: line too
 * long (skipped), <-1: read error */
static int lines_next(struct lines *l, const char **p, size_t *len, bool *nl)
{
	for (;;) {
		char *s = l->buf + l->start, *e = memchr(s, '\n', l->end - l->start);

		if (e) {
			*p = s;
			*len = (size_t)(e - s);
			*nl = true;
			l->start += *len + 1;
			l->lineno++;
			return *len >= LINE_LIMIT ? -1 : 1; /* the LF counts */
		}
		if (l->eof) {
			if (l->start == l->end)
				return 0;
			*p = s;
			*len = l->end - l->start;
			*nl = false;
			l->start = l->end;
			l->lineno++;
			return 1;
		}
		if (l->end - l->start >= LINE_LIMIT) {
			/* skip to the next newline */
			l->lineno++;
			for (;;) {
				ssize_t n = lines_read(l, l->buf, l->cap);

				if (n <= 0) {
					l->start = l->end = 0;
					l->eof = true;
					return -1;
				}
				e = memchr(l->buf, '\n', (size_t)n);
				if (e) {
					l->start = (size_t)(e - l->buf) + 1;
					l->end = (size_t)n;
					return -1;
				}
			}
		}
		memmove(l->buf, s, l->end - l->start);
		l->end -= l->start;
		l->start = 0;
		ssize_t n = lines_read(l, l->buf + l->end, l->cap - l->end);
		if (n < 0)
			return pmu_error(PMU_ERR_IO, "read error: %s", strerror(errno));
		if (n == 0)
			l->eof = true;
		l->end += (size_t)n;
	}
}

static bool key_is(const char *fk, const char *key, size_t klen)
{
	size_t j = 0;

	while (j < klen && fk[j] && fk[j] == key[j])
		j++;
	return j == klen && !fk[j];
}

/* pmu_objdef_field() for a record's key, without a strlen() of every
 * candidate: the hot path of every stream record.  Writers put members in
 * the table's order, so field number hint is tried first (keys are unique
 * in a table: the result is the same). */
static const struct pmu_field *rec_field(const struct pmu_objdef *o, const char *key, size_t klen,
					 size_t hint)
{
	if (hint < o->nfields && key_is(o->fields[hint].key, key, klen))
		return &o->fields[hint];
	for (size_t i = 0; i < o->nfields; i++)
		if (key_is(o->fields[i].key, key, klen))
			return &o->fields[i];
	return NULL;
}

/* Schema check of a flat record; returns the number of findings. */
static int check_rec(struct v *v, const char *file, uint64_t rec, const struct pmu_objdef *o,
		     const struct pmu_jrec *r)
{
	int bad = 0;
	const struct pmu_jfield *st = NULL;
	bool has_reason = false, has_remedy = false;
	size_t nreq = 0, req_seen = 0;

	if (r->too_many) {
		report(v, PMU_CHECK_SCHEMA_FIELD, file, rec, "record has more than %d fields", PMU_JREC_MAX);
		bad++;
	}
	for (int i = 0; i < r->n; i++) {
		const struct pmu_jfield *jf = &r->f[i];
		const struct pmu_field *f = rec_field(o, jf->key, jf->klen, (size_t)i);
		bool ok;

		if (!f) {
			report(v, PMU_CHECK_SCHEMA_FIELD, file, rec, "unknown field '%.*s' in a %s record",
			       (int)jf->klen, jf->key, o->name);
			bad++;
			continue;
		}
		req_seen += f->required; /* member names are unique: each counts once */
		switch (f->type) {
		case PMU_FT_STR:
			ok = jf->type == PMU_JV_STR && jf->slen > 0;
			break;
		case PMU_FT_INT:
			ok = jf->type == PMU_JV_INT && !jf->overflow && jf->i >= 0;
			break;
		case PMU_FT_BOOL:
			ok = jf->type == PMU_JV_BOOL;
			break;
		case PMU_FT_ENUM:
			ok = jf->type == PMU_JV_STR && pmu_enum_has(f->enumv, jf->s, jf->slen);
			break;
		case PMU_FT_HEX64:
			ok = jf->type == PMU_JV_STR && is_hex64(jf->s, jf->slen);
			break;
		default:
			ok = false; /* stream records are flat */
			break;
		}
		if (!ok) {
			report(v, PMU_CHECK_SCHEMA_FIELD, file, rec, "'%s' must be %s", f->key, type_names[f->type]);
			bad++;
		}
		if (f->key[0] == 's' && !strcmp(f->key, "status") && ok)
			st = jf;
		else if (f->key[0] == 'r' && !strcmp(f->key, "reason"))
			has_reason = ok;
		else if (f->key[0] == 'r' && !strcmp(f->key, "remedy"))
			has_remedy = ok;
	}
	for (size_t i = 0; i < o->nfields; i++)
		nreq += o->fields[i].required;
	for (size_t i = 0; req_seen < nreq && i < o->nfields; i++)
		if (o->fields[i].required && !pmu_jrec_get(r, o->fields[i].key)) {
			report(v, PMU_CHECK_SCHEMA_FIELD, file, rec, "required field '%s' is missing from a %s record",
			       o->fields[i].key, o->name);
			bad++;
		}
	if (st) {
		char s[32];

		snprintf(s, sizeof(s), "%.*s", (int)st->slen, st->s);
		status_rule(v, file, rec, o->name, s, has_reason, has_remedy);
	}
	return bad;
}

/* ---- record shapes: the fast path of stream records ---------------------
 *
 * A writer emits every record of one type with the same members in the same
 * order, compactly.  A shape is such a record with its values cut out: the
 * literal bytes between values, the kind of each value and its schema field.
 * It is learned from a record that the full path (pmu_jrec_parse() and
 * check_rec()) accepted without a finding, and a later line that matches it
 * byte for byte outside its values, with values that pass the same per-value
 * rules check_rec() applies, gets the same verdict from both paths: the set
 * of members is the same, so unknown, missing and duplicate members cannot
 * differ.  Anything else (a different order, whitespace, an escape, a
 * non-ASCII byte, a negative or long number, a value check that fails) is
 * not a match, and the full path judges the line and reports.  Records with
 * a "status" member (the status rule reads several members) are never
 * shapes.  The "type" member's value is part of the literal: a shape is one
 * record type.
 */

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

static bool obj_has_status(const struct pmu_objdef *o)
{
	for (size_t i = 0; i < o->nfields; i++)
		if (!strcmp(o->fields[i].key, "status"))
			return true;
	return false;
}

static int shapes_common(const struct shape *a, const struct shape *b)
{
	int i;

	for (i = 0; i < a->n && i < b->n; i++)
		if (a->f[i].kind != b->f[i].kind || a->f[i].sf != b->f[i].sf ||
		    a->f[i].prelen != b->f[i].prelen ||
		    memcmp(a->lit + a->f[i].pre, b->lit + b->f[i].pre, a->f[i].prelen))
			break;
	return i;
}

/* lw := s[0..n); false when it is longer than LIT_WORDS words */
static bool litw_set(struct litw *lw, const char *s, size_t n)
{
	memset(lw, 0, sizeof(*lw));
	if (n > 8 * LIT_WORDS)
		return false;
	for (size_t k = 0; 8 * k < n; k++) {
		size_t b = n - 8 * k < 8 ? n - 8 * k : 8;

		memcpy(&lw->w[k], s + 8 * k, b);
		memset(&lw->m[k], 0xff, b);
		lw->nw = (uint8_t)(k + 1);
	}
	return true;
}

/* p[0..) starts with lw's literal; reads 16 bytes from p, 8 * lw->nw
 * when that is more.  Words 0 and 1 are compared whatever nw is (a word
 * past the literal has mask 0): most literals fit in two words, and a
 * branch on nw, which differs from field to field, is mispredicted. */
static inline bool litw_at(const char *p, const struct litw *lw)
{
	uint64_t x, y, d;

	memcpy(&x, p, 8);
	memcpy(&y, p + 8, 8);
	d = ((x ^ lw->w[0]) & lw->m[0]) | ((y ^ lw->w[1]) & lw->m[1]);
	if (__builtin_expect(lw->nw > 2, 0)) {
		memcpy(&x, p + 16, 8);
		memcpy(&y, p + 24, 8);
		d |= ((x ^ lw->w[2]) & lw->m[2]) | ((y ^ lw->w[3]) & lw->m[3]);
	}
	return d == 0;
}

/* The digits at p and in *v their value, reading up to 24 bytes from p
 * whatever the digits' count; more than 16 digits: 17 (too many). */
static inline size_t digits_over(const char *p, uint64_t *v)
{
	uint64_t x, acc = 0;
	size_t n = 0;

	for (int blk = 0; blk < 2; blk++) {
		unsigned k;

		x = pmu_load_le64(p + n);
		k = pmu_digits_in(x);
		if (k)
			acc = acc * pow10_u64(k) + pmu_digits_value(x, k);
		n += k;
		if (k < 8) {
			*v = acc;
			return n;
		}
	}
	*v = acc;
	return p[16] >= '0' && p[16] <= '9' ? 17 : 16;
}

/* digits_over() when the value is not wanted: the count alone */
static inline size_t digits_count(const char *p)
{
	uint64_t x;
	unsigned k;

	x = pmu_load_le64(p);
	if ((k = pmu_digits_in(x)) < 8)
		return k;
	x = pmu_load_le64(p + 8);
	if ((k = pmu_digits_in(x)) < 8)
		return 8 + k;
	return p[16] >= '0' && p[16] <= '9' ? 17 : 16;
}

/* How many bytes at p pmu_json_plain[] accepts, up to PLAIN_STEP: the
 * first '"', '\\', control or non-ASCII byte ends the run.  Reads
 * PLAIN_STEP bytes from p. */
#ifdef __SSE2__
#define PLAIN_STEP 16u
static inline unsigned plain_run(const char *p)
{
	__m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
	/* signed: below 0x20 is a control byte or, negative, a non-ASCII one */
	__m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
						 _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))),
				    _mm_cmplt_epi8(x, _mm_set1_epi8(0x20)));
	unsigned m = (unsigned)_mm_movemask_epi8(stop);

	return m ? (unsigned)__builtin_ctz(m) : PLAIN_STEP;
}
#else
#define PLAIN_STEP 8u
static inline unsigned plain_run(const char *p)
{
	const uint64_t ones = 0x0101010101010101ull;
	uint64_t x = pmu_load_le64(p), q = x ^ (ones * '"'), b = x ^ (ones * '\\'), m;

	/* Each of the four tests flags its first hit exactly (a borrow only
	 * flags bytes above a true hit), so the lowest flag of their union is
	 * the first byte refused. */
	m = (((q - ones) & ~q) | ((b - ones) & ~b) | ((x - ones * 0x20) & ~x) | x) & 0x8080808080808080ull;
	return m ? (unsigned)__builtin_ctzll(m) / 8 : PLAIN_STEP;
}
#endif

/*
 * Line masks: one bit per byte of the MASK_WINDOW bytes from a line's
 * start, made with a few vector compares per 64 bytes.  stop: a byte
 * plain_run() stops at; nd: a byte that is not a digit.  The last bit of
 * each is set whatever the byte is, so a search from any bit finds one, and
 * a find at that bit means "not known in the window": the caller falls back
 * to the byte scans.  With the masks a value's length is a shift and a
 * count of trailing zeros, not a load and a scan that the next field
 * waits for.
 */
#define MASK_WINDOW 128

struct lmask {
	uint64_t stop[2], nd[2];
};

typedef void (*lmask_fn)(const char *p, struct lmask *m);

#ifdef HAVE_LINE_MASKS
__attribute__((target("avx512bw"))) static void lmask_avx512(const char *p, struct lmask *m)
{
	for (int h = 0; h < 2; h++) {
		__m512i x = _mm512_loadu_si512((const void *)(p + 64 * h));
		__mmask64 q = _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8('"'));
		__mmask64 b = _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8('\\'));
		/* signed: control bytes and, negative, non-ASCII ones */
		__mmask64 c = _mm512_cmplt_epi8_mask(x, _mm512_set1_epi8(0x20));
		__mmask64 d = _mm512_cmple_epu8_mask(_mm512_sub_epi8(x, _mm512_set1_epi8('0')), _mm512_set1_epi8(9));

		m->stop[h] = (uint64_t)(q | b | c);
		m->nd[h] = ~(uint64_t)d;
	}
	m->stop[1] |= 1ull << 63;
	m->nd[1] |= 1ull << 63;
}

__attribute__((target("avx2"))) static void lmask_avx2(const char *p, struct lmask *m)
{
	uint32_t st[4], dg[4];

	for (int k = 0; k < 4; k++) {
		__m256i x = _mm256_loadu_si256((const void *)(p + 32 * k));
		__m256i s = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(x, _mm256_set1_epi8('"')),
							    _mm256_cmpeq_epi8(x, _mm256_set1_epi8('\\'))),
					    _mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), x));
		__m256i d = _mm256_and_si256(_mm256_cmpgt_epi8(x, _mm256_set1_epi8('0' - 1)),
					     _mm256_cmpgt_epi8(_mm256_set1_epi8('9' + 1), x));

		st[k] = (uint32_t)_mm256_movemask_epi8(s);
		dg[k] = (uint32_t)_mm256_movemask_epi8(d);
	}
	m->stop[0] = st[0] | (uint64_t)st[1] << 32;
	m->stop[1] = st[2] | (uint64_t)st[3] << 32 | 1ull << 63;
	m->nd[0] = ~(dg[0] | (uint64_t)dg[1] << 32);
	m->nd[1] = ~(dg[2] | (uint64_t)dg[3] << 32) | 1ull << 63;
}
#endif

/* The first set bit of m at or after o (o < MASK_WINDOW): one always is. */
static inline unsigned mask_next(const uint64_t m[2], unsigned o)
{
	/* which word o is in depends on the field, not the line: predicted */
	if (o < 64) {
		uint64_t x = m[0] >> o;

		return x ? o + (unsigned)__builtin_ctzll(x) : 64 + (unsigned)__builtin_ctzll(m[1]);
	}
	return o + (unsigned)__builtin_ctzll(m[1] >> (o - 64));
}

/* With masks mk of the window at line, the offset of the first bit of
 * m (mk->nd or mk->stop) at or after p; 0 when it is not known there (no
 * masks, p or the find past the window; p is past line's first byte, so
 * a find is never 0): the caller scans the bytes. */
static inline size_t mask_end(const struct lmask *mk, const uint64_t m[2], const char *line, const char *p)
{
	size_t o = (size_t)(p - line), e;

	if (!mk || o >= MASK_WINDOW - 1 || (e = mask_next(m, (unsigned)o)) >= MASK_WINDOW - 1)
		return 0;
	return e;
}

/* The mask maker for opts->line_masks on this CPU, or NULL (none, or the
 * one asked for is not there). */
static lmask_fn lmask_pick(enum pmu_line_masks want)
{
#ifdef HAVE_LINE_MASKS
	__builtin_cpu_init();
	bool avx512 = __builtin_cpu_supports("avx512bw"), avx2 = __builtin_cpu_supports("avx2");

	switch (want) {
	case PMU_LINE_MASKS_AUTO: return avx512 ? lmask_avx512 : avx2 ? lmask_avx2 : NULL;
	case PMU_LINE_MASKS_AVX512: return avx512 ? lmask_avx512 : NULL;
	case PMU_LINE_MASKS_AVX2: return avx2 ? lmask_avx2 : NULL;
	case PMU_LINE_MASKS_NONE: break;
	}
#else
	(void)want;
#endif
	return NULL;
}

enum pmu_line_masks pmu_validate_line_masks(enum pmu_line_masks want)
{
	return want == PMU_LINE_MASKS_AUTO || want == PMU_LINE_MASKS_NONE || lmask_pick(want) ? want
												 : PMU_LINE_MASKS_NONE;
}

/* The value of the n (1 to 16) digits at p. */
static inline uint64_t digits_value_n(const char *p, size_t n)
{
	uint64_t x = pmu_load_le64(p);

	if (n <= 8)
		return pmu_digits_value(x, (unsigned)n);
	return pmu_eight_digits(x) * pow10_u64((unsigned)n - 8) + pmu_digits_value(pmu_load_le64(p + 8), (unsigned)n - 8);
}

/* Learn the shape of line, which the full path accepted as a record of rd
 * with no finding; silently nothing when it is not compact.  events: the
 * stream is one on_event() checks (on_event_roles() may take the record). */
static void shape_learn(struct shapes *ss, const char *line, size_t len, const struct pmu_jrec *r,
			const struct pmu_recdef *rd, bool events)
{
	struct shape sh;
	const char *p = line, *end = line + len;
	size_t used = 0;

	if (r->n == 0 || r->n > SHAPE_FIELDS || r->too_many || obj_has_status(rd->obj))
		return;
	memset(&sh, 0, sizeof(sh));
	for (int i = 0; i < SHAPE_FIELDS; i++)
		for (int e = 0; e < SHAPE_ENUMS; e++)
			sh.f[i].ek[e] = ~0ull;
	sh.rd = rd;
	sh.n = r->n;
	for (int i = 0; i < r->n; i++) {
		const struct pmu_jfield *jf = &r->f[i];
		const char *vstart, *vend, *cut;
		size_t pre;

		/* compact: the key sits in the line right after p's literal */
		if ((uintptr_t)jf->key < (uintptr_t)p || (uintptr_t)jf->key > (uintptr_t)end ||
		    jf->key + jf->klen + 2 > end || jf->key[jf->klen] != '"' || jf->key[jf->klen + 1] != ':')
			return;
		vstart = jf->key + jf->klen + 2;
		sh.f[i].sf = rec_field(rd->obj, jf->key, jf->klen, (size_t)i);
		if (!sh.f[i].sf)
			return;
		if (jf->klen == 4 && !memcmp(jf->key, "type", 4)) {
			if (jf->type != PMU_JV_STR || jf->s != vstart + 1 || jf->slen == 0)
				return;
			sh.f[i].kind = SK_TYPE;
			cut = vend = vstart + 1 + jf->slen + 1;
		} else if (jf->type == PMU_JV_STR) {
			if (jf->s != vstart + 1)
				return; /* unescaped into scratch: not compact */
			sh.f[i].kind = SK_STR;
			cut = vstart + 1;
			vend = jf->s + jf->slen;
		} else if (jf->type == PMU_JV_INT) {
			sh.f[i].kind = SK_INT;
			cut = vstart;
			for (vend = vstart; vend < end && *vend >= '0' && *vend <= '9'; vend++)
				;
		} else if (jf->type == PMU_JV_BOOL) {
			sh.f[i].kind = SK_BOOL;
			cut = vstart;
			vend = vstart + (jf->b ? 4 : 5);
		} else {
			return;
		}
		if (vend > end)
			return;
		/* the literal runs from p to the value (the type's value included) */
		pre = (size_t)(cut - p);
		if (used + pre > SHAPE_LIT || !litw_set(&sh.f[i].lw, p, pre))
			return;
		switch (sh.f[i].kind) {
		case SK_TYPE: sh.f[i].op = OP_TYPE; break;
		case SK_INT: sh.f[i].op = OP_INT; break;
		case SK_BOOL: sh.f[i].op = OP_BOOL; break;
		default:
			sh.f[i].op = sh.f[i].sf->type == PMU_FT_ENUM ? OP_ENUM :
				     sh.f[i].sf->type == PMU_FT_HEX64 ? OP_HEX : OP_STR;
			break;
		}
		memcpy(sh.lit + used, p, pre);
		sh.f[i].pre = (uint16_t)used;
		sh.f[i].prelen = (uint16_t)pre;
		sh.f[i].key = (uint16_t)(used + (size_t)(jf->key - p));
		sh.f[i].klen = (uint16_t)jf->klen;
		used += pre;
		p = vend;
	}
	if (used + (size_t)(end - p) > SHAPE_LIT || !litw_set(&sh.postw, p, (size_t)(end - p)))
		return;
	memcpy(sh.lit + used, p, (size_t)(end - p));
	sh.post = (uint16_t)used;
	sh.postlen = (uint16_t)(end - p);
	/* the members event_core() reads, by place */
	memset(&sh.ev, -1, sizeof(sh.ev));
	for (int i = 0; i < sh.n; i++) {
		static const struct {
			const char *key;
			size_t off;
			enum shape_kind kind;
		} roles[] = {
			{ "t_ns", offsetof(struct ev_roles, t), SK_INT },
			{ "inc", offsetof(struct ev_roles, inc), SK_STR },
			{ "pid", offsetof(struct ev_roles, pid), SK_INT },
			{ "tid", offsetof(struct ev_roles, tid), SK_INT },
			{ "name", offsetof(struct ev_roles, name), SK_STR },
			{ "ph", offsetof(struct ev_roles, ph), SK_STR },
		};

		for (size_t k = 0; k < PMU_ARRAY_SIZE(roles); k++)
			if (sh.f[i].klen == strlen(roles[k].key) &&
			    !memcmp(sh.lit + sh.f[i].key, roles[k].key, sh.f[i].klen) && sh.f[i].kind == roles[k].kind)
				*((int8_t *)&sh.ev + roles[k].off) = (int8_t)i;
	}
	sh.ev.ok = events && !strcmp(rd->type, "event") && sh.ev.t >= 0 && sh.ev.inc >= 0 && sh.ev.pid >= 0 &&
		   sh.ev.tid >= 0 && sh.ev.name >= 0 && sh.ev.ph >= 0;
	/* on_event_roles() reads three integers; every other consumer may
	 * read any */
	for (int i = 0; i < sh.n; i++)
		sh.f[i].need = !sh.ev.ok || i == sh.ev.t || i == sh.ev.pid || i == sh.ev.tid;
	/* a full set replaces the one after the last matched */
	int k = ss->n < SHAPES ? ss->n++ : (ss->mru + 1) % SHAPES;
	ss->s[k] = sh;
	ss->mru = k;
	for (int o = 0; o < ss->n; o++)
		ss->common[k][o] = ss->common[o][k] = (uint8_t)(o == k ? sh.n : shapes_common(&sh, &ss->s[o]));
}

/* A value of n <= 7 bytes at s as one word: its bytes, then n in the top
 * byte (which its bytes leave 0) */
static inline uint64_t enum_key(const char *s, size_t n)
{
	return (pmu_load_le64(s) & ((1ull << (8 * n)) - 1)) | (uint64_t)n << 56;
}

/* enum_ok() of a value not accepted so far: the schema's list, and the
 * value remembered when there is room */
static __attribute__((noinline)) bool enum_new(struct shape *sh, int i, const char *s, size_t n)
{
	if (!pmu_enum_has(sh->f[i].sf->enumv, s, n))
		return false;
	if (sh->f[i].nev < SHAPE_ENUMS && n <= sizeof(sh->f[i].ev[0])) {
		if (n <= 7)
			sh->f[i].ek[sh->f[i].nev] = enum_key(s, n);
		memcpy(sh->f[i].ev[sh->f[i].nev], s, n);
		sh->f[i].elen[sh->f[i].nev++] = (uint8_t)n;
	}
	return true;
}

static inline __attribute__((always_inline)) bool enum_ok(struct shape *sh, int i, const char *s, size_t n)
{
	if (n <= 7) {
		/* one word against every value accepted so far, with no branch
		 * on which one it is (the phases of events alternate) */
		uint64_t k = enum_key(s, n);
		const uint64_t *ek = sh->f[i].ek;
		bool hit = false;

		for (int e = 0; e < SHAPE_ENUMS; e++)
			hit |= ek[e] == k;
		if (hit)
			return true;
	} else if (n == 8) {
		uint64_t x = pmu_load_le64(s);

		for (int e = 0; e < sh->f[i].nev; e++)
			if (sh->f[i].elen[e] == 8 && pmu_load_le64(sh->f[i].ev[e]) == x)
				return true;
	} else {
		for (int e = 0; e < sh->f[i].nev; e++)
			if (sh->f[i].elen[e] == n && lit_eq(sh->f[i].ev[e], s, n))
				return true;
	}
	return enum_new(sh, i, s, n);
}

/*
 * Match line against sh from field i0 on (fields before it matched already,
 * the line's field i0 starting at pos[i0]).  1: the whole line matches and
 * passes the per-value rules; r is filled as pmu_jrec_parse() would (strings
 * point into line, keys into the shape).  0: *failed is the field that did
 * not match (sh->n: what follows the last value); pos[] holds where each
 * field up to it starts.
 *
 * It reads up to 64 bytes past the line's end (the lines buffer has
 * SHAPE_OVERREAD): no bound check per byte.  Whatever those bytes are, a
 * match must end exactly at the line's end, and no field starts past it.
 * mk, when not NULL, has the masks of the MASK_WINDOW bytes from line.
 */
static inline __attribute__((always_inline)) bool shape_match(struct shape *sh, const char *line, const char *end, bool nl, size_t *len,
			struct pmu_jrec *r, int i0, const char **pos, int *failed, const struct lmask *mk)
{
	const char *p = pos[i0];
	int i;

	/* r's names, types and constant values are this shape's already when
	 * it matched r last (r->owner): only the values change.  Else they are
	 * set here, from i0 on (the fields before hold another shape's match,
	 * with the same names).  Until this match succeeds r belongs to no
	 * shape: a failed try must not leave another shape's names behind
	 * for the shape that owned r. */
	if (r->owner != sh) {
		r->owner = NULL;
		for (i = i0; i < sh->n; i++) {
			struct pmu_jfield *f = &r->f[i];

			f->key = sh->lit + sh->f[i].key;
			f->klen = sh->f[i].klen;
			f->overflow = false;
			f->b = false;
			f->i = 0;
			f->type = sh->f[i].kind == SK_INT ? PMU_JV_INT : sh->f[i].kind == SK_BOOL ? PMU_JV_BOOL : PMU_JV_STR;
			if (sh->f[i].op == OP_TYPE) { /* the value is in the literal */
				f->s = f->key + f->klen + 3;
				f->slen = (size_t)(sh->lit + sh->f[i].pre + sh->f[i].prelen - 1 - f->s);
			}
		}
	}
	for (i = i0; i < sh->n; i++) {
		struct pmu_jfield *f = &r->f[i];
		unsigned op = sh->f[i].op;

		pos[i] = p;
		if (p > end || !litw_at(p, &sh->f[i].lw))
			goto fail;
		p += sh->f[i].prelen;
		if (op == OP_INT) {
			uint64_t v = 0;
			size_t nd, e = mask_end(mk, mk ? mk->nd : NULL, line, p);

			if (e) {
				nd = e - (size_t)(p - line);
				if (sh->f[i].need && nd - 1 <= 15)
					v = digits_value_n(p, nd);
			} else {
				nd = sh->f[i].need ? digits_over(p, &v) : digits_count(p);
			}

			/* 1 to 16 digits, no leading zero: what follows is the next
			 * literal, which refuses a fraction or an exponent */
			if (nd - 1 > 15 || (*p == '0' && nd > 1))
				goto fail;
			p += nd;
			f->i = (int64_t)v;
		} else if (op >= OP_STR && op <= OP_HEX) {
			/* strings: the next literal starts with the closing quote */
			const char *s = p;
			size_t n, e = mask_end(mk, mk ? mk->stop : NULL, line, p);

			if (e) {
				p = line + e;
			} else {
				for (;;) {
					unsigned k = plain_run(p);

					p += k;
					if (k < PLAIN_STEP)
						break;
					if (p > end)
						goto fail;
				}
			}
			n = (size_t)(p - s);
			f->s = s;
			f->slen = n;
			if (op == OP_STR ? !n : op == OP_ENUM ? !enum_ok(sh, i, s, n) : !is_hex64(s, n))
				goto fail;
		} else if (op == OP_BOOL) {
			if (p <= end - 4 && lit_eq(p, "true", 4))
				f->b = true, p += 4;
			else if (p <= end - 5 && lit_eq(p, "false", 5))
				f->b = false, p += 5;
			else
				goto fail;
		}
		/* OP_TYPE: the value is in the literal */
	}
	pos[i] = p;
	if (p > end || !litw_at(p, &sh->postw))
		goto fail;
	if (nl) {
		/* no match runs past a '\n': the first one ends the line */
		if ((size_t)(end - p) <= sh->postlen || p[sh->postlen] != '\n' ||
		    (size_t)(p + sh->postlen - line) >= LINE_LIMIT)
			goto fail;
		*len = (size_t)(p + sh->postlen - line);
	} else if ((size_t)(end - p) != sh->postlen) {
		goto fail;
	}
	r->n = sh->n;
	r->too_many = false;
	r->owner = sh;
	return true;
fail:
	*failed = i;
	return false;
}

/* The shape line matches, the last matched tried first, or NULL.  With nl,
 * end is the end of the buffered bytes and a match must be followed by a
 * '\n': *len gets the line's length.  Else the line is line[0..*len). */
static struct shape *shapes_match(struct shapes *ss, const char *line, const char *end, bool nl, size_t *len,
				  struct pmu_jrec *r)
{
	const char *pos[SHAPE_FIELDS + 1];
	int valid, m = ss->mru;
	struct lmask mask, *mk = NULL;

	if (!ss->n)
		return NULL;
	if (ss->masks) {
		ss->masks(line, &mask);
		mk = &mask;
	}
	pos[0] = line;
	if (shape_match(&ss->s[m], line, end, nl, len, r, 0, pos, &valid, mk))
		return &ss->s[m];
	/* pos[0..valid] and r->f[0..valid) hold what m matched; a try of k
	 * keeps them for the fields k shares with m */
	for (int k = 0; k < ss->n; k++) {
		int from = ss->common[m][k] < valid ? ss->common[m][k] : valid, f2;

		if (k == m)
			continue;
		if (shape_match(&ss->s[k], line, end, nl, len, r, from, pos, &f2, mk)) {
			ss->mru = k;
			return &ss->s[k];
		}
		valid = from;
	}
	return NULL;
}

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

/* Attribution of a record (its inc member, and pid when has_pid) to a live
 * incarnation; returns the inc or NULL. */
static inline struct inc *attribute_f(struct v *v, const char *file, uint64_t rec, const struct pmu_jfield *inc,
				      bool has_pid, uint64_t pid, int64_t tid, uint64_t t0, uint64_t t1, size_t *slot)
{
	int64_t *tp;
	struct inc *in;

	if (!v->cohort_ok)
		return NULL;
	eval(v, PMU_CHECK_ATTRIBUTION);
	struct inc **c = &v->inc_cache[(inc->slen * 7 + (inc->slen ? (unsigned char)inc->s[inc->slen - 1] : 0)) & 15];

	in = *c;
	if (!in || in->idlen != inc->slen || !lit_eq(in->id, inc->s, inc->slen))
		in = *c = find_inc(v, inc->s, inc->slen);
	if (!in) {
		report(v, PMU_CHECK_ATTRIBUTION, file, rec, "incarnation '%.*s' is not in the cohort",
		       (int)inc->slen, inc->s);
		return NULL;
	}
	if (has_pid && (int64_t)pid != in->pid) {
		report(v, PMU_CHECK_ATTRIBUTION, file, rec, "pid %llu is not incarnation '%s' (pid %lld)",
		       (unsigned long long)pid, in->id, (long long)in->pid);
		return NULL;
	}
	/* a thread seen lately: its slot, with no search */
	size_t tc = (size_t)tid & 63;

	if (v->tid_cache[tc].in == in && v->tid_cache[tc].tid == tid) {
		if (t0 < in->start || t1 > in->end) {
			report(v, PMU_CHECK_ATTRIBUTION, file, rec, "at %llu incarnation '%s' was not alive",
			       (unsigned long long)(t0 < in->start ? t0 : t1), in->id);
			return NULL;
		}
		*slot = v->tid_cache[tc].slot;
		return in;
	}
	/* bsearch(), without a call per probe; a few threads: counted,
	 * without a branch to mispredict */
	tp = NULL;
	if (in->ntids <= 16) {
		size_t lo = 0;

		for (size_t i = 0; i < in->ntids; i++)
			lo += in->tids[i] < tid;
		if (lo < in->ntids && in->tids[lo] == tid)
			tp = &in->tids[lo];
	}
	for (size_t lo = 0, hi = in->ntids > 16 ? in->ntids : 0; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (in->tids[mid] == tid) {
			tp = &in->tids[mid];
			break;
		}
		if (in->tids[mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!tp) {
		report(v, PMU_CHECK_ATTRIBUTION, file, rec, "tid %lld is not a thread of incarnation '%s'",
		       (long long)tid, in->id);
		return NULL;
	}
	if (t0 < in->start || t1 > in->end) {
		report(v, PMU_CHECK_ATTRIBUTION, file, rec, "at %llu incarnation '%s' was not alive",
		       (unsigned long long)(t0 < in->start ? t0 : t1), in->id);
		return NULL;
	}
	*slot = in->slot + (size_t)(tp - in->tids);
	v->tid_cache[tc].in = in;
	v->tid_cache[tc].tid = tid;
	v->tid_cache[tc].slot = *slot;
	return in;
}

static struct inc *attribute(struct v *v, const char *file, uint64_t rec, const struct pmu_jrec *r,
			     bool has_pid, uint64_t t0, uint64_t t1, size_t *slot)
{
	return attribute_f(v, file, rec, rf(r, "inc"), has_pid, has_pid ? ri(r, "pid") : 0, (int64_t)ri(r, "tid"),
			   t0, t1, slot);
}

/* ---- counts streams (spec 1.2) ------------------------------------------ */

#define COUNTERS_MAX 64

struct csum {                  /* a running sum of parts */
	uint64_t sum;
	uint32_t n, min_ppm;
	bool bad, est, overflow;
};

/*
 * The sums of counts whose total has not come yet, by (incarnation,
 * counter).  Writers give an incarnation its totals once its threads are
 * counted, so few are open at once; a dense [incarnation][counter] table
 * would take 64 sums per incarnation (150 MiB at 100,000), whatever the
 * stream holds.  An open sum leaves the table at its total, and a bit per
 * (incarnation, counter) remembers that the total came.  More than
 * OPEN_SUMS_MAX open at once is refused (COUNT-SUM), so memory stays
 * bounded for any stream.
 */
#define OPEN_SUMS_MAX (1u << 18)

struct open_sum {
	uint64_t key;              /* incarnation index * COUNTERS_MAX + counter, + 1; 0: free */
	struct csum c;
};

struct counts_state {
	struct {
		char name[256];
		bool ns, ok;
	} ctr[COUNTERS_MAX];
	int nctr;
	struct open_sum *open;     /* open addressing, linear probes */
	size_t open_cap, open_n;
	bool open_full;            /* OPEN_SUMS_MAX was reached (reported) */
	uint64_t *totaled;         /* [inc]: bit c set once counter c's total came */
	struct csum tot[COUNTERS_MAX]; /* totals of all incarnations, by counter */
	size_t nincs;
	bool cohort_seen[COUNTERS_MAX];
};

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
};

static void check_header(struct v *v, struct stream_state *s, const char *line, size_t len)
{
	json_error_t je;
	/* no NUL: jansson would drop one that follows a number or literal */
	json_t *j = memchr(line, '\0', len) ? NULL : json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	const struct pmu_objdef *objs[8];
	json_t *type, *stream, *spec;

	eval(v, PMU_CHECK_STREAM_HEADER);
	if (!j || !json_is_object(j)) {
		report(v, PMU_CHECK_STREAM_HEADER, s->file, 1, "first record is not a header object");
		json_decref(j);
		return;
	}
	type = json_object_get(j, "type");
	stream = json_object_get(j, "stream");
	spec = json_object_get(j, "spec");
	if (!json_is_string(type) || strcmp(json_string_value(type), "header")) {
		report(v, PMU_CHECK_STREAM_HEADER, s->file, 1, "first record is not a header");
	} else if (!json_is_string(stream) || strcmp(json_string_value(stream), s->sd->kind)) {
		report(v, PMU_CHECK_STREAM_HEADER, s->file, 1, "header names stream '%s', this file holds '%s'",
		       json_is_string(stream) ? json_string_value(stream) : "?", s->sd->kind);
	} else if (!check_json_obj(v, s->file, s->sd->header, j, "header", 0)) {
		if (strcmp(json_string_value(spec), v->spec))
			report(v, PMU_CHECK_SPEC_VERSION, s->file, 1, "spec '%s' differs from the bag's '%s'",
			       json_string_value(spec), v->spec);
		size_t nobj = 0;

		for (size_t i = 0; i < s->sd->nrecs && nobj < 8; i++)
			if (s->sd->recs[i].since <= v->minor)
				objs[nobj++] = s->sd->recs[i].obj;
		check_units(v, s->file, 1, json_object_get(j, "units"), objs, nobj);
	}
	json_decref(j);
}

static void time_order(struct v *v, struct stream_state *s, uint64_t rec, const char *what, uint64_t t)
{
	eval(v, PMU_CHECK_TIME_ORDER);
	if (s->have_t && t < s->last_t)
		report(v, PMU_CHECK_TIME_ORDER, s->file, rec, "%s %llu is before the previous record's %llu",
		       what, (unsigned long long)t, (unsigned long long)s->last_t);
	s->last_t = t;
	s->have_t = true;
}

static void on_mark(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r)
{
	uint64_t t = ri(r, "t_ns");
	size_t slot;

	time_order(v, s, rec, "t_ns", t);
	check_window(v, s->file, rec, "t_ns", t);
	attribute(v, s->file, rec, r, false, t, t, &slot);
}

static void on_span(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r)
{
	uint64_t b = ri(r, "begin_ns"), e = ri(r, "end_ns");
	const struct pmu_jfield *id = rf(r, "id"), *parent = rf(r, "parent");
	size_t slot;

	if (e < b) {
		eval(v, PMU_CHECK_TIME_ORDER);
		report(v, PMU_CHECK_TIME_ORDER, s->file, rec, "span ends before it begins");
	}
	time_order(v, s, rec, "end_ns", e);
	check_window(v, s->file, rec, "begin_ns", b);
	check_window(v, s->file, rec, "end_ns", e);
	attribute(v, s->file, rec, r, false, b, e, &slot);
	if (v->nspans == v->capspans) {
		size_t cap = v->capspans ? 2 * v->capspans : 256;
		struct span *sp = realloc(v->spans, cap * sizeof(*sp));

		if (!sp)
			return;
		v->spans = sp;
		v->capspans = cap;
	}
	v->spans[v->nspans++] = (struct span){
		hash_bytes(id->s, id->slen), parent ? hash_bytes(parent->s, parent->slen) : 0, b, e, rec,
		parent != NULL, 0, 0,
	};
}

static int cmp_span(const void *a, const void *b)
{
	uint64_t x = ((const struct span *)a)->id_h, y = ((const struct span *)b)->id_h;

	return (x > y) - (x < y);
}

static void check_spans(struct v *v, const char *file)
{
	size_t n = v->nspans;

	eval(v, PMU_CHECK_SPAN_ID);
	eval(v, PMU_CHECK_SPAN_PARENT);
	eval(v, PMU_CHECK_SPAN_CYCLE);
	eval(v, PMU_CHECK_SPAN_NESTING);
	if (!n)
		return; /* no spans: v->spans is NULL, which qsort must not get */
	qsort(v->spans, n, sizeof(*v->spans), cmp_span);
	for (size_t i = 1; i < n; i++)
		if (v->spans[i].id_h == v->spans[i - 1].id_h)
			report(v, PMU_CHECK_SPAN_ID, file, v->spans[i].line, "span id is not unique");
	for (size_t i = 0; i < n; i++) {
		struct span *sp = &v->spans[i], key, *p;

		sp->parent_ix = SIZE_MAX;
		if (!sp->has_parent)
			continue;
		key.id_h = sp->parent_h;
		p = bsearch(&key, v->spans, n, sizeof(*v->spans), cmp_span);
		if (!p) {
			report(v, PMU_CHECK_SPAN_PARENT, file, sp->line, "parent span does not exist");
			continue;
		}
		sp->parent_ix = (size_t)(p - v->spans);
		if (sp->begin < p->begin || sp->end > p->end)
			report(v, PMU_CHECK_SPAN_NESTING, file, sp->line,
			       "span [%llu, %llu] is not inside its parent's [%llu, %llu]",
			       (unsigned long long)sp->begin, (unsigned long long)sp->end,
			       (unsigned long long)p->begin, (unsigned long long)p->end);
	}
	/* Cycle detection: follow parent links, colouring 1 (on the current
	 * path) and 2 (known to reach a root). */
	for (size_t i = 0; i < n; i++) {
		size_t k = i;

		while (k != SIZE_MAX && v->spans[k].state == 0) {
			v->spans[k].state = 1;
			k = v->spans[k].parent_ix;
		}
		if (k != SIZE_MAX && v->spans[k].state == 1)
			report(v, PMU_CHECK_SPAN_CYCLE, file, v->spans[k].line, "span is its own ancestor");
		for (k = i; k != SIZE_MAX && v->spans[k].state == 1; k = v->spans[k].parent_ix)
			v->spans[k].state = 2;
	}
}

/* An event's attribution and enter/exit pairing, from its members. */
static inline void event_core(struct v *v, struct stream_state *s, uint64_t rec, uint64_t t,
			      const struct pmu_jfield *inc, uint64_t pid, int64_t tid, const struct pmu_jfield *name,
			      const struct pmu_jfield *ph)
{
	size_t slot;

	if (!attribute_f(v, s->file, rec, inc, true, pid, tid, t, t, &slot))
		return;
	struct stack *st = &v->stacks[slot];
	uint64_t h;

	eval(v, PMU_CHECK_PAIRING);
	if (ph->s[0] != 'B' && ph->s[0] != 'E')
		return; /* an instant pairs with nothing */
	h = hash_bytes(name->s, name->slen);
	if (ph->s[0] == 'B') {
		if (st->n == STACK_LIMIT) {
			report(v, PMU_CHECK_PAIRING, s->file, rec, "more than %d enters open on tid %llu",
			       STACK_LIMIT, (unsigned long long)tid);
			return;
		}
		if (st->n == st->cap) {
			size_t cap = st->cap ? 2 * st->cap : 8;
			uint64_t *nv = realloc(st->v, cap * sizeof(*nv));

			if (!nv)
				return;
			st->v = nv;
			st->cap = cap;
		}
		st->v[st->n++] = h;
		st->line = rec;
	} else if (ph->s[0] == 'E') {
		if (!st->n || st->v[st->n - 1] != h)
			report(v, PMU_CHECK_PAIRING, s->file, rec, "exit of '%.*s' on tid %llu matches no open enter",
			       (int)name->slen, name->s, (unsigned long long)tid);
		else
			st->n--;
	}
}

static void on_event(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r,
		     const char *type)
{
	uint64_t t = ri(r, "t_ns");

	time_order(v, s, rec, "t_ns", t);
	check_window(v, s->file, rec, "t_ns", t);
	if (type[0] == 'l' && !strcmp(type, "loss")) {
		uint64_t lost = ri(r, "lost");

		eval(v, PMU_CHECK_LOSS);
		if (lost > 0)
			report_sev(v, PMU_CHECK_LOSS, v->tolerate_loss ? PMU_SEV_WARNING : PMU_SEV_ERROR,
				   s->file, rec, "%llu records lost%s", (unsigned long long)lost,
				   v->tolerate_loss ? " (tolerated: run.json tolerate_loss)" : "");
		return;
	}
	if (type[0] == 'm' && !strcmp(type, "malformed")) {
		const struct pmu_jfield *why = rf(r, "reason");

		report(v, PMU_CHECK_MALFORMED, s->file, rec, "collector saw a malformed record: %.*s",
		       (int)why->slen, why->s);
		return;
	}
	if (type[0] == 't' && !strcmp(type, "truncation")) {
		const struct pmu_jfield *why = rf(r, "reason");

		report(v, PMU_CHECK_TRUNCATED, s->file, rec, "stream truncated: %.*s", (int)why->slen, why->s);
		return;
	}
	event_core(v, s, rec, t, rf(r, "inc"), ri(r, "pid"), (int64_t)ri(r, "tid"), rf(r, "name"), rf(r, "ph"));
}

/* on_event() of an "event" record that matched a shape with every member
 * event_core() reads: straight from their places, no lookup by name. */
static void on_event_roles(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r,
			   const struct ev_roles *ro)
{
	uint64_t t = (uint64_t)r->f[ro->t].i;

	time_order(v, s, rec, "t_ns", t);
	check_window(v, s->file, rec, "t_ns", t);
	event_core(v, s, rec, t, &r->f[ro->inc], (uint64_t)r->f[ro->pid].i, r->f[ro->tid].i, &r->f[ro->name],
		   &r->f[ro->ph]);
}

static int lc_step(const char *ev)
{
	static const char *const order[] = { "requested", "probed", "opened", "attached", "stopped",
					     "detached", "final" };

	for (int i = 0; i < 7; i++)
		if (!strcmp(ev, order[i]))
			return i;
	return -1; /* drop, malformed */
}

static void on_lifecycle(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r)
{
	const struct pmu_jfield *evf = rf(r, "event"), *stf = rf(r, "status");
	char ev[16], st[16] = "";
	int step;

	snprintf(ev, sizeof(ev), "%.*s", (int)evf->slen, evf->s);
	if (stf)
		snprintf(st, sizeof(st), "%.*s", (int)stf->slen, stf->s);
	time_order(v, s, rec, "t_ns", ri(r, "t_ns"));
	check_window(v, s->file, rec, "t_ns", ri(r, "t_ns"));
	eval(v, PMU_CHECK_LIFECYCLE);
	s->lc_records++;
	if (s->final_seen) {
		report(v, PMU_CHECK_LIFECYCLE, s->file, rec, "'%s' after the final record", ev);
		return;
	}
	step = lc_step(ev);
	if (step < 0) {
		uint64_t count = ri(r, "count");

		if (!rf(r, "count"))
			report(v, PMU_CHECK_LIFECYCLE, s->file, rec, "'%s' without a count", ev);
		else if (!s->steps[2])
			report(v, PMU_CHECK_LIFECYCLE, s->file, rec, "'%s' before the collector opened", ev);
		if (!strcmp(ev, "drop") && count) {
			eval(v, PMU_CHECK_LOSS);
			report_sev(v, PMU_CHECK_LOSS, v->tolerate_loss ? PMU_SEV_WARNING : PMU_SEV_ERROR, s->file,
				   rec, "collector '%s' dropped %llu records%s", s->collector,
				   (unsigned long long)count,
				   v->tolerate_loss ? " (tolerated: run.json tolerate_loss)" : "");
		} else if (!strcmp(ev, "malformed") && count) {
			report(v, PMU_CHECK_MALFORMED, s->file, rec, "collector '%s' saw %llu malformed records",
			       s->collector, (unsigned long long)count);
		}
		return;
	}
	if (step <= s->last_step)
		report(v, PMU_CHECK_LIFECYCLE, s->file, rec, "'%s' is out of order", ev);
	if (step == 3 && !rf(r, "evidence"))
		report(v, PMU_CHECK_LIFECYCLE, s->file, rec, "'attached' without evidence");
	if (step == 6) {
		if (!stf)
			report(v, PMU_CHECK_LIFECYCLE, s->file, rec, "'final' without a status");
		snprintf(s->final_status, sizeof(s->final_status), "%s", st);
		s->final_seen = true;
	}
	s->steps[step] = true;
	s->last_step = step;
}

static struct collector *find_coll(struct v *v, const char *name)
{
	for (size_t i = 0; i < v->ncolls; i++)
		if (!strcmp(v->colls[i].name, name))
			return &v->colls[i];
	return NULL;
}

static void lifecycle_end(struct v *v, struct stream_state *s)
{
	struct collector *c = v->run_ok ? find_coll(v, s->collector) : NULL;
	const char *st = s->final_status;

	eval(v, PMU_CHECK_LIFECYCLE);
	if (!s->final_seen) {
		report(v, PMU_CHECK_LIFECYCLE, s->file, 0, "collector '%s' has no final record", s->collector);
		return;
	}
	eval(v, PMU_CHECK_COLLECTOR_FAILED);
	if (!strcmp(st, "failed")) {
		report(v, PMU_CHECK_COLLECTOR_FAILED, s->file, 0, "collector '%s' failed", s->collector);
		return;
	}
	if (!c)
		return;
	if (!c->requested) {
		if (strcmp(st, "not-requested") || s->lc_records != 1)
			report(v, PMU_CHECK_LIFECYCLE, s->file, 0,
			       "collector '%s' was not requested: its lifecycle is one final 'not-requested'",
			       s->collector);
		return;
	}
	if (!s->steps[0] || !s->steps[1])
		report(v, PMU_CHECK_LIFECYCLE, s->file, 0, "collector '%s' lacks 'requested' or 'probed'",
		       s->collector);
	else if (!strcmp(st, "not-requested"))
		report(v, PMU_CHECK_LIFECYCLE, s->file, 0, "collector '%s' was requested but ends 'not-requested'",
		       s->collector);
	else if ((!strcmp(st, "ok") || !strcmp(st, "no-events")) &&
		 !(s->steps[2] && s->steps[3] && s->steps[4] && s->steps[5]))
		report(v, PMU_CHECK_LIFECYCLE, s->file, 0,
		       "collector '%s' ends '%s' without opened, attached, stopped and detached", s->collector, st);
	else if (!strcmp(st, "unavailable") && s->steps[3])
		report(v, PMU_CHECK_LIFECYCLE, s->file, 0, "collector '%s' attached, then ends 'unavailable'",
		       s->collector);
}

static void csum_init(struct csum *c)
{
	memset(c, 0, sizeof(*c));
	c->min_ppm = 1000000;
}

static void csum_add(struct csum *c, bool ok, uint64_t val, bool est, uint64_t ppm)
{
	c->n++;
	if (!ok) {
		c->bad = true;
		return;
	}
	if (c->sum > (uint64_t)INT64_MAX - val)
		c->overflow = true;
	else
		c->sum += val;
	c->est |= est;
	if (ppm < c->min_ppm)
		c->min_ppm = (uint32_t)ppm;
}

static size_t open_slot(const struct counts_state *cs, uint64_t key)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & (cs->open_cap - 1);
}

/* The open sum of key, or NULL. */
static struct csum *open_find(struct counts_state *cs, uint64_t key)
{
	for (size_t j = cs->open_cap ? open_slot(cs, key) : 0; cs->open_cap && cs->open[j].key;
	     j = (j + 1) & (cs->open_cap - 1))
		if (cs->open[j].key == key)
			return &cs->open[j].c;
	return NULL;
}

/* The open sum of key, added when new; NULL when out of memory or full. */
static struct csum *open_get(struct counts_state *cs, uint64_t key)
{
	struct csum *c = open_find(cs, key);
	size_t j;

	if (c)
		return c;
	if (cs->open_n >= OPEN_SUMS_MAX)
		return NULL;
	if (2 * (cs->open_n + 1) > cs->open_cap) {
		size_t ncap = cs->open_cap ? 2 * cs->open_cap : 1024;
		struct open_sum *old = cs->open, *nt = calloc(ncap, sizeof(*nt));
		size_t ocap = cs->open_cap;

		if (!nt)
			return NULL;
		cs->open = nt;
		cs->open_cap = ncap;
		for (size_t i = 0; i < ocap; i++)
			if (old[i].key) {
				for (j = open_slot(cs, old[i].key); nt[j].key; j = (j + 1) & (ncap - 1))
					;
				nt[j] = old[i];
			}
		free(old);
	}
	for (j = open_slot(cs, key); cs->open[j].key; j = (j + 1) & (cs->open_cap - 1))
		;
	cs->open[j].key = key;
	csum_init(&cs->open[j].c);
	cs->open_n++;
	return &cs->open[j].c;
}

/* Remove key's open sum (backward-shift deletion keeps the probes whole). */
static void open_del(struct counts_state *cs, uint64_t key)
{
	size_t m = cs->open_cap - 1, i, j;

	if (!cs->open_cap)
		return;
	for (i = open_slot(cs, key); cs->open[i].key != key; i = (i + 1) & m)
		if (!cs->open[i].key)
			return;
	for (j = (i + 1) & m; cs->open[j].key; j = (j + 1) & m) {
		size_t h = open_slot(cs, cs->open[j].key);

		/* move j into the hole at i when its home does not lie in (i, j] */
		if (((j - h) & m) >= ((j - i) & m)) {
			cs->open[i] = cs->open[j];
			i = j;
		}
	}
	cs->open[i].key = 0;
	cs->open_n--;
}

static int cmp_open(const void *a, const void *b)
{
	uint64_t x = ((const struct open_sum *)a)->key, y = ((const struct open_sum *)b)->key;

	return (x > y) - (x < y);
}

/* The totals-seen bits, made at the first count or total; false (reported)
 * when there is no memory for them. */
static bool counts_totaled(struct v *v, struct stream_state *s)
{
	struct counts_state *cs = s->cs;

	if (cs->totaled)
		return true;
	cs->nincs = v->nincs;
	cs->totaled = calloc(v->nincs + 1, sizeof(*cs->totaled));
	if (!cs->totaled)
		report(v, PMU_CHECK_COUNT_SUM, s->file, 0, "out of memory for the sums of %zu incarnations", v->nincs);
	return cs->totaled != NULL;
}

static bool fstr_is(const struct pmu_jfield *f, const char *s)
{
	return f && f->type == PMU_JV_STR && f->slen == strlen(s) && !memcmp(f->s, s, f->slen);
}

/* The counter a record names, or -1 with a finding. */
static int count_counter(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r)
{
	const struct pmu_jfield *c = rf(r, "counter");

	for (int i = 0; i < s->cs->nctr; i++)
		if (strlen(s->cs->ctr[i].name) == c->slen && !memcmp(s->cs->ctr[i].name, c->s, c->slen)) {
			if (!s->cs->ctr[i].ok) {
				report(v, PMU_CHECK_COUNT_VALUE, s->file, rec,
				       "counter '%.*s' was not counted (its counter record is not ok)", (int)c->slen, c->s);
				return -1;
			}
			return i;
		}
	report(v, PMU_CHECK_COUNT_VALUE, s->file, rec, "counter '%.*s' is not declared before it", (int)c->slen, c->s);
	return -1;
}

/*
 * The value rules shared by count, total and cohort records: the value is
 * in the field of the counter's unit exactly when the status is ok, with
 * its labels.  Returns false when the record is unusable for sums.
 */
static bool count_value(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r, int ci,
			bool *ok, uint64_t *val, bool *est, uint64_t *ppm)
{
	bool ns = s->cs->ctr[ci].ns;
	const struct pmu_jfield *st = rf(r, "status"), *fv = rf(r, ns ? "value_ns" : "value"),
				*fo = rf(r, ns ? "value" : "value_ns"), *fe = rf(r, "estimate"),
				*fp = rf(r, "running_ppm"), *fz = rf(r, "suspect_zero");
	bool good = true;

	*ok = fstr_is(st, "ok");
	eval(v, PMU_CHECK_FIELD_STATUS);
	if (fo) {
		report(v, PMU_CHECK_COUNT_VALUE, s->file, rec, "'%s' is not the field of a counter in %s",
		       ns ? "value" : "value_ns", ns ? "ns" : "count");
		good = false;
	}
	if (*ok != (fv != NULL)) {
		report(v, PMU_CHECK_FIELD_STATUS, s->file, rec, "status '%.*s' %s a value", (int)st->slen, st->s,
		       *ok ? "without" : "with");
		return false;
	}
	if (!*ok) {
		if (fe || fp || fz) {
			report(v, PMU_CHECK_COUNT_VALUE, s->file, rec, "a record without a value carries its labels");
			good = false;
		}
		*val = 0;
		*est = false;
		*ppm = 0;
		return good;
	}
	*val = (uint64_t)fv->i;
	if (!fe || !fp) {
		report(v, PMU_CHECK_COUNT_VALUE, s->file, rec, "a value without 'estimate' and 'running_ppm'");
		return false;
	}
	*est = fe->type == PMU_JV_BOOL && fe->b;
	*ppm = (uint64_t)fp->i;
	if (*ppm > 1000000 || *est != (*ppm < 1000000)) {
		report(v, PMU_CHECK_COUNT_VALUE, s->file, rec,
		       "running_ppm %llu and estimate %s disagree: an estimate ran under 1000000 ppm, an exact "
		       "value all of it", (unsigned long long)*ppm, *est ? "true" : "false");
		good = false;
	}
	if (fz && fz->type == PMU_JV_BOOL && fz->b && *val != 0) {
		report(v, PMU_CHECK_COUNT_VALUE, s->file, rec, "suspect_zero on a value of %llu",
		       (unsigned long long)*val);
		good = false;
	}
	return good;
}

static void on_counts(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r, const char *type)
{
	struct counts_state *cs = s->cs;
	bool ok, est;
	uint64_t val, ppm, t;
	int ci;

	eval(v, PMU_CHECK_COUNT_VALUE);
	eval(v, PMU_CHECK_COUNT_SUM);
	if (!strcmp(type, "counter")) {
		const struct pmu_jfield *n = rf(r, "name"), *u = rf(r, "unit");
		bool cok = fstr_is(rf(r, "status"), "ok");

		for (int i = 0; i < cs->nctr; i++)
			if (strlen(cs->ctr[i].name) == n->slen && !memcmp(cs->ctr[i].name, n->s, n->slen)) {
				report(v, PMU_CHECK_COUNT_VALUE, s->file, rec, "counter '%.*s' is declared twice",
				       (int)n->slen, n->s);
				return;
			}
		if (cs->nctr == COUNTERS_MAX) {
			report(v, PMU_CHECK_COUNT_VALUE, s->file, rec, "more than %d counters", COUNTERS_MAX);
			return;
		}
		if (cok != (rf(r, "group") != NULL))
			report(v, PMU_CHECK_COUNT_VALUE, s->file, rec, "a counter has a group exactly when it is ok");
		snprintf(cs->ctr[cs->nctr].name, sizeof(cs->ctr[cs->nctr].name), "%.*s", (int)n->slen, n->s);
		cs->ctr[cs->nctr].ns = fstr_is(u, "ns");
		cs->ctr[cs->nctr].ok = cok;
		cs->nctr++;
		return;
	}
	if (!strcmp(type, "scope") || !strcmp(type, "fallback") || !strcmp(type, "cgstat")) {
		if (type[0] == 'f' || type[1] == 'g') {
			t = ri(r, "t_ns");
			time_order(v, s, rec, "t_ns", t);
			check_window(v, s->file, rec, "t_ns", t);
		}
		if (type[1] == 'g') {
			int nv = !!rf(r, "value") + !!rf(r, "value_ns") + !!rf(r, "value_bytes");

			eval(v, PMU_CHECK_FIELD_STATUS);
			if (nv > 1)
				report(v, PMU_CHECK_COUNT_VALUE, s->file, rec, "a cgstat record has one value field");
			else if (fstr_is(rf(r, "status"), "ok") != (nv == 1))
				report(v, PMU_CHECK_FIELD_STATUS, s->file, rec, "a cgstat value is present exactly when "
				       "its status is ok");
			else if (nv == 0 && rf(r, "gauge"))
				report(v, PMU_CHECK_COUNT_VALUE, s->file, rec, "'gauge' labels a value that is absent");
		}
		return;
	}
	t = ri(r, "t_ns");
	time_order(v, s, rec, "t_ns", t);
	check_window(v, s->file, rec, "t_ns", t);
	if ((ci = count_counter(v, s, rec, r)) < 0)
		return;
	if (!count_value(v, s, rec, r, ci, &ok, &val, &est, &ppm))
		return;
	/* sums are checked against the cohort: without one, COHORT says why */
	if (!strcmp(type, "count")) {
		size_t slot;
		struct inc *in = attribute(v, s->file, rec, r, false, t, t, &slot);
		bool ns = cs->ctr[ci].ns;
		const struct pmu_jfield *fr = rf(r, ns ? "raw_ns" : "raw"), *fo = rf(r, ns ? "raw" : "raw_ns"),
					*fe = rf(r, "enabled_ns"), *fu = rf(r, "running_ns");

		if (fo)
			report(v, PMU_CHECK_COUNT_VALUE, s->file, rec, "'%s' is not the raw field of this counter",
			       ns ? "raw" : "raw_ns");
		if (ok && (!fr || !fe || !fu)) {
			report(v, PMU_CHECK_COUNT_VALUE, s->file, rec, "a counted value without raw, enabled_ns and "
			       "running_ns");
		} else if (ok) {
			uint64_t raw = (uint64_t)fr->i, en = (uint64_t)fe->i, run = (uint64_t)fu->i;

			if (!est && (run != en || val != raw))
				report(v, PMU_CHECK_COUNT_VALUE, s->file, rec,
				       "an exact value must be the raw count of a counter that ran all the time "
				       "(value %llu, raw %llu, running %llu of %llu ns)", (unsigned long long)val,
				       (unsigned long long)raw, (unsigned long long)run, (unsigned long long)en);
			if (est) {
				unsigned __int128 want = run ? ((unsigned __int128)raw * en + run / 2) / run : 0;
				uint64_t want_ppm = en ? (uint64_t)((unsigned __int128)run * 1000000u / en) : 0;

				if (!run || run >= en || want != val || want_ppm != ppm)
					report(v, PMU_CHECK_COUNT_VALUE, s->file, rec,
					       "an estimate must be raw * enabled / running, rounded (%llu * %llu / %llu), "
					       "with running_ppm %llu; it is %llu with %llu",
					       (unsigned long long)raw, (unsigned long long)en, (unsigned long long)run,
					       (unsigned long long)want_ppm, (unsigned long long)val,
					       (unsigned long long)ppm);
			}
		}
		if (!in)
			return;
		if (!counts_totaled(v, s))
			return;
		size_t ix = (size_t)(in - v->incs);

		if (cs->totaled[ix] >> ci & 1) {
			report(v, PMU_CHECK_COUNT_SUM, s->file, rec, "a count of '%s' in '%s' after its total",
			       cs->ctr[ci].name, in->id);
			return;
		}
		struct csum *a = open_get(cs, (uint64_t)ix * COUNTERS_MAX + (uint64_t)ci + 1);

		if (!a) {
			if (!cs->open_full)
				report(v, PMU_CHECK_COUNT_SUM, s->file, rec, "more than %u sums of counts are open at "
				       "once (counts whose incarnation's total has not come): a writer gives each "
				       "incarnation its totals after its counts", OPEN_SUMS_MAX);
			cs->open_full = true;
			return;
		}
		csum_add(a, ok, val, est, ppm);
		return;
	}
	if (!strcmp(type, "total")) {
		const struct pmu_jfield *inc = rf(r, "inc");
		struct inc *in = v->cohort_ok ? find_inc(v, inc->s, inc->slen) : NULL;
		struct csum empty, *a;
		uint64_t threads = ri(r, "threads");

		if (!v->cohort_ok)
			return;
		if (!in) {
			eval(v, PMU_CHECK_ATTRIBUTION);
			report(v, PMU_CHECK_ATTRIBUTION, s->file, rec, "incarnation '%.*s' is not in the cohort",
			       (int)inc->slen, inc->s);
			return;
		}
		if (!counts_totaled(v, s))
			return;
		size_t ix = (size_t)(in - v->incs);
		uint64_t key = (uint64_t)ix * COUNTERS_MAX + (uint64_t)ci + 1;

		if (cs->totaled[ix] >> ci & 1) {
			report(v, PMU_CHECK_COUNT_SUM, s->file, rec, "a second total of '%s' for '%s'", cs->ctr[ci].name,
			       in->id);
			return;
		}
		cs->totaled[ix] |= 1ull << ci;
		csum_init(&empty);
		a = open_find(cs, key);
		if (a)
			empty = *a;
		open_del(cs, key);
		a = &empty;
		if (threads != a->n)
			report(v, PMU_CHECK_COUNT_SUM, s->file, rec, "total of '%s' for '%s' sums %llu threads, the "
			       "stream has %u counts", cs->ctr[ci].name, in->id, (unsigned long long)threads, a->n);
		else if (ok != (a->n && !a->bad && !a->overflow))
			report(v, PMU_CHECK_COUNT_SUM, s->file, rec, "total of '%s' for '%s' is %s, but %s",
			       cs->ctr[ci].name, in->id, ok ? "ok" : "not ok",
			       ok ? "a part has no value" : "every part has one");
		else if (ok && (val != a->sum || est != a->est || ppm != a->min_ppm))
			report(v, PMU_CHECK_COUNT_SUM, s->file, rec,
			       "total of '%s' for '%s' is %llu (estimate %d, %llu ppm); its counts sum to %llu "
			       "(estimate %d, %u ppm)", cs->ctr[ci].name, in->id, (unsigned long long)val, est,
			       (unsigned long long)ppm, (unsigned long long)a->sum, a->est, a->min_ppm);
		csum_add(&cs->tot[ci], ok, val, est, ppm);
		return;
	}
	/* cohort */
	if (v->cohort_ok && fstr_is(rf(r, "scope"), "incarnations")) {
		struct csum *a = &cs->tot[ci];
		const struct pmu_jfield *fp = rf(r, "parts");

		if (cs->cohort_seen[ci]) {
			report(v, PMU_CHECK_COUNT_SUM, s->file, rec, "a second cohort total of '%s'", cs->ctr[ci].name);
			return;
		}
		cs->cohort_seen[ci] = true;
		if (!fp || (uint64_t)fp->i != a->n)
			report(v, PMU_CHECK_COUNT_SUM, s->file, rec, "cohort total of '%s' must sum the %u totals",
			       cs->ctr[ci].name, a->n);
		else if (ok != (a->n && !a->bad && !a->overflow))
			report(v, PMU_CHECK_COUNT_SUM, s->file, rec, "cohort total of '%s' is %s, but %s", cs->ctr[ci].name,
			       ok ? "ok" : "not ok", ok ? "a total has no value" : "every total has one");
		else if (ok && (val != a->sum || est != a->est || ppm != a->min_ppm))
			report(v, PMU_CHECK_COUNT_SUM, s->file, rec,
			       "cohort total of '%s' is %llu; the incarnations' totals sum to %llu", cs->ctr[ci].name,
			       (unsigned long long)val, (unsigned long long)a->sum);
	}
}

static void counts_end(struct v *v, struct stream_state *s)
{
	struct counts_state *cs = s->cs;

	/* what is still open had no total; reported in (incarnation, counter)
	 * order, as the stream's readers expect */
	size_t n = 0;

	for (size_t i = 0; i < cs->open_cap; i++)
		if (cs->open[i].key)
			cs->open[n++] = cs->open[i];
	if (n)
		qsort(cs->open, n, sizeof(*cs->open), cmp_open);
	for (size_t i = 0; i < n; i++) {
		size_t ix = (size_t)((cs->open[i].key - 1) / COUNTERS_MAX);
		int c = (int)((cs->open[i].key - 1) % COUNTERS_MAX);

		if (cs->open[i].c.n && ix < v->nincs)
			report(v, PMU_CHECK_COUNT_SUM, s->file, 0, "counts of '%s' in '%s' have no total",
			       cs->ctr[c].name, v->incs[ix].id);
	}
	for (int c = 0; c < cs->nctr; c++)
		if (cs->ctr[c].ok && cs->tot[c].n && !cs->cohort_seen[c])
			report(v, PMU_CHECK_COUNT_SUM, s->file, 0, "counter '%s' has totals but no cohort total",
			       cs->ctr[c].name);
	free(cs->open);
	free(cs->totaled);
	free(cs);
	s->cs = NULL;
}

static void check_stream(struct v *v, const struct pmu_streamdef *sd, const char *file, const char *coll);

/* ---- the cohort stream (spec 1.3) ---------------------------------------- */

/* The incarnation a thread, exec, resource or end record names: one whose
 * incarnation record came and whose end has not. */
static struct inc *cohort_open(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r,
			       const char *type)
{
	const struct pmu_jfield *id = rf(r, "inc");
	struct inc *in = find_inc(v, id->s, id->slen);

	if (!in) {
		if (!s->c_over)
			report(v, PMU_CHECK_COHORT, s->file, rec,
			       "a %s record names incarnation '%.*s', which has no earlier incarnation record", type,
			       (int)id->slen, id->s);
		return NULL;
	}
	if (in->flags & INC_ENDED) {
		report(v, PMU_CHECK_COHORT, s->file, rec, "a %s record for incarnation '%s' after its end record", type,
		       in->id);
		return NULL;
	}
	return in;
}

static void cohort_incarnation(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r)
{
	const struct pmu_jfield *id = rf(r, "id"), *par = rf(r, "parent"), *pre = rf(r, "preexisting");
	struct inc *in, *p = NULL, *same;

	if (s->c_over)
		return;
	if (v->nincs >= PMU_COHORT_MAX_INCARNATIONS) {
		report(v, PMU_CHECK_COHORT, s->file, rec, "more than %d incarnations: the limit of spec %s",
		       PMU_COHORT_MAX_INCARNATIONS, v->spec);
		s->c_over = true;
		return;
	}
	if (s->c_records == 1 && par)
		report(v, PMU_CHECK_COHORT, s->file, rec,
		       "the first incarnation record is the root's: '%.*s' has a parent", (int)id->slen, id->s);
	else if (s->c_records > 1 && !par)
		report(v, PMU_CHECK_COHORT, s->file, rec,
		       "incarnation '%.*s' has no parent: only the first incarnation record, the root's, has none",
		       (int)id->slen, id->s);
	if (find_inc(v, id->s, id->slen)) {
		report(v, PMU_CHECK_COHORT, s->file, rec, "incarnation '%.*s': id is not unique", (int)id->slen, id->s);
		return;
	}
	if (par && !(p = find_inc(v, par->s, par->slen)))
		report(v, PMU_CHECK_COHORT, s->file, rec,
		       "incarnation '%.*s': parent '%.*s' is not an earlier incarnation record", (int)id->slen, id->s,
		       (int)par->slen, par->s);
	if (!(in = inc_add(v, s->file, id->s, id->slen, (int64_t)ri(r, "pid"), ri(r, "start_ns"), &same))) {
		s->c_over = true;
		return;
	}
	if (same)
		report(v, PMU_CHECK_COHORT, s->file, rec, "incarnations '%s' and '%s' share pid %lld and start",
		       same->id, in->id, (long long)in->pid);
	in->parent_ix = p ? (uint32_t)(p - v->incs) : NO_PARENT;
	if (pre && pre->b)
		in->flags |= INC_PREEXISTING;
	else
		check_window(v, s->file, rec, "start_ns", in->start);
}

static void cohort_resource(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r,
			    struct inc *in)
{
	const struct pmu_jfield *field = rf(r, "field"), *st = rf(r, "status");
	bool ok = st->slen == 2 && !memcmp(st->s, "ok", 2);
	int k = 0;

	eval(v, PMU_CHECK_FIELD_STATUS);
	while (pmu_resource_fields[k] && !key_is(pmu_resource_fields[k], field->s, field->slen))
		k++;
	if (in->res_mask & (1u << k))
		report(v, PMU_CHECK_FIELD_STATUS, s->file, rec, "incarnation '%s': a second resource record for '%s'",
		       in->id, pmu_resource_fields[k]);
	in->res_mask |= (uint16_t)(1u << k);
	/* each record carries its own total's value only, and that exactly
	 * when the status is ok: "not measured" is never 0 */
	for (int j = 0; pmu_resource_fields[j]; j++) {
		bool has = pmu_jrec_get(r, pmu_resource_fields[j]) != NULL;

		if (j != k && has)
			report(v, PMU_CHECK_FIELD_STATUS, s->file, rec,
			       "incarnation '%s': the resource record of '%s' carries '%s'", in->id,
			       pmu_resource_fields[k], pmu_resource_fields[j]);
		else if (j == k && has != ok)
			report(v, PMU_CHECK_FIELD_STATUS, s->file, rec, "incarnation '%s': '%s' is '%.*s' but its value is %s",
			       in->id, pmu_resource_fields[k], (int)st->slen, st->s, has ? "present" : "absent");
	}
}

static void cohort_end(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r,
		       struct inc *in)
{
	const struct pmu_jfield *end = rf(r, "end_ns"), *ex = rf(r, "exit");
	bool code = pmu_jrec_get(r, "code"), sig = pmu_jrec_get(r, "signal");
	char kind = ex->s[0]; /* exited, signaled or unknown: the schema checked it */

	in->flags |= INC_ENDED;
	in->end = end ? (uint64_t)end->i : UINT64_MAX;
	eval(v, PMU_CHECK_TIME_ORDER);
	if (end) {
		if (in->end < in->start)
			report(v, PMU_CHECK_TIME_ORDER, s->file, rec, "incarnation '%s': end_ns is before start_ns", in->id);
		if (in->last_exec > in->end)
			report(v, PMU_CHECK_TIME_ORDER, s->file, rec, "incarnation '%s': exec at %llu after its end",
			       in->id, (unsigned long long)in->last_exec);
		check_window(v, s->file, rec, "end_ns", in->end);
	}
	if (!(in->flags & INC_MAIN))
		report(v, PMU_CHECK_COHORT, s->file, rec, "incarnation '%s' has no thread record for its pid %lld",
		       in->id, (long long)in->pid);
	if (in->res_mask && in->res_mask != (1u << 9) - 1) {
		int k = 0;

		while (in->res_mask & (1u << k))
			k++;
		report(v, PMU_CHECK_FIELD_STATUS, s->file, rec,
		       "incarnation '%s' has resource records, but none for '%s': every total has its status",
		       in->id, pmu_resource_fields[k]);
	}
	if ((kind == 'e' && (!code || sig)) || (kind == 's' && (!sig || code)) || (kind == 'u' && (code || sig)))
		report(v, PMU_CHECK_SCHEMA_FIELD, s->file, rec,
		       "incarnation '%s': exit '%.*s' goes with %s", in->id, (int)ex->slen, ex->s,
		       kind == 'e' ? "'code' alone" : kind == 's' ? "'signal' alone" : "neither 'code' nor 'signal'");
}

static void on_cohort(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r, const char *type)
{
	struct inc *in;

	eval(v, PMU_CHECK_COHORT);
	if (++s->c_records == 1 && type[0] != 'i')
		report(v, PMU_CHECK_COHORT, s->file, rec,
		       "the first record after the header is the root's incarnation record, not a %s record", type);
	if (type[0] == 'i') {
		cohort_incarnation(v, s, rec, r);
		return;
	}
	if (!(in = cohort_open(v, s, rec, r, type)))
		return;
	if (type[0] == 't') {
		if (v->ntp >= PMU_COHORT_MAX_THREADS) {
			if (!s->c_thr_over)
				report(v, PMU_CHECK_COHORT, s->file, rec, "more than %d threads: the limit of spec %s",
				       PMU_COHORT_MAX_THREADS, v->spec);
			s->c_thr_over = true;
		} else if (tid_add(v, in, (int64_t)ri(r, "tid"), rec)) {
			report(v, PMU_CHECK_COHORT, s->file, rec, "out of memory after %zu threads", v->ntp);
			s->c_thr_over = true;
		}
	} else if (type[0] == 'e' && type[1] == 'x') {
		uint64_t t = ri(r, "t_ns");

		eval(v, PMU_CHECK_TIME_ORDER);
		check_window(v, s->file, rec, "exec t_ns", t);
		if (t < in->start)
			report(v, PMU_CHECK_TIME_ORDER, s->file, rec, "incarnation '%s': exec at %llu before its start",
			       in->id, (unsigned long long)t);
		else if (t < in->last_exec)
			report(v, PMU_CHECK_TIME_ORDER, s->file, rec,
			       "incarnation '%s': exec at %llu before its previous exec at %llu", in->id,
			       (unsigned long long)t, (unsigned long long)in->last_exec);
		if (t > in->last_exec)
			in->last_exec = t;
	} else if (type[0] == 'r') {
		cohort_resource(v, s, rec, r, in);
	} else {
		cohort_end(v, s, rec, r, in);
	}
}

/* Checks that hold the cohort stream's records back from attribution. */
static const enum pmu_check cohort_gates[] = {
	PMU_CHECK_COHORT, PMU_CHECK_SCHEMA_FIELD, PMU_CHECK_SCHEMA_TYPE, PMU_CHECK_JSON_SYNTAX,
	PMU_CHECK_STREAM_HEADER,
};

/* A repetition's cohort stream, before its other streams: they attribute
 * their records to it. */
static void check_cohort_stream(struct v *v, const struct pmu_streamdef *sd, const char *file)
{
	unsigned before[PMU_ARRAY_SIZE(cohort_gates)];
	bool ok = true;

	eval(v, PMU_CHECK_COHORT);
	for (size_t i = 0; i < PMU_ARRAY_SIZE(cohort_gates); i++)
		before[i] = v->res->count[cohort_gates[i]];
	check_stream(v, sd, file, NULL);
	if (!v->nincs)
		report(v, PMU_CHECK_COHORT, file, 0, "the cohort has no incarnation: the root's record is missing");
	for (size_t i = 0; i < v->nincs; i++)
		if (!(v->incs[i].flags & INC_ENDED))
			report(v, PMU_CHECK_COHORT, file, 0, "incarnation '%s' has no end record", v->incs[i].id);
	for (size_t i = 0; i < PMU_ARRAY_SIZE(cohort_gates); i++)
		ok &= v->res->count[cohort_gates[i]] == before[i];
	cohort_done(v, file, ok);
}

static void check_stream(struct v *v, const struct pmu_streamdef *sd, const char *file, const char *coll)
{
	struct stream_state s = { sd, file, coll, 0, false, -1, { 0 }, false, "", 0, NULL, 0, false, false };
	struct shapes *shp;
	struct lines l;
	const char *line = NULL, *why;
	size_t len = 0, at;
	bool nl = true;
	int r;

	memset(v->inc_cache, 0, sizeof(v->inc_cache));
	memset(v->tid_cache, 0, sizeof(v->tid_cache));
	if (lines_open(&l, v, file)) {
		report(v, PMU_CHECK_JSON_SYNTAX, file, 0, "%s", pmu_error_detail());
		return;
	}
	eval(v, PMU_CHECK_JSON_SYNTAX);
	eval(v, PMU_CHECK_SCHEMA_TYPE);
	eval(v, PMU_CHECK_SCHEMA_FIELD);
	/* only the stacks used are written: the others stay pages never
	 * touched (calloc), which take no memory */
	if (v->cohort_ok)
		for (size_t i = 0; i < v->nslots; i++)
			if (v->stacks[i].n)
				v->stacks[i].n = 0;
	bool is_spans = !strcmp(sd->kind, "spans"), is_lifecycle = !strcmp(sd->kind, "lifecycle"),
	     is_counts = !strcmp(sd->kind, "counts"), is_cohort = !strcmp(sd->kind, "cohort"),
	     is_events = !is_spans && !is_lifecycle && !is_counts && !is_cohort;

	if (is_counts) {
		s.cs = calloc(1, sizeof(*s.cs));
		if (!s.cs) {
			report(v, PMU_CHECK_JSON_SYNTAX, file, 0, "out of memory");
			lines_close(&l);
			return;
		}
		for (int i = 0; i < COUNTERS_MAX; i++)
			csum_init(&s.cs->tot[i]);
	}

	/* none: every line takes the full path */
	shp = v->opts->no_shapes ? NULL : calloc(1, sizeof(*shp));
	if (shp)
		shp->masks = lmask_pick(v->opts->line_masks);
	for (;;) {
		const struct pmu_recdef *rd;
		const struct pmu_jfield *type;
		struct shape *sh;

		/* the next buffered line, found by the shape it matches: no
		 * search for its end (a line not whole in the buffer yet, or
		 * of no shape, takes lines_next()) */
		if (shp && l.lineno > 0 &&
		    (sh = shapes_match(shp, l.buf + l.start, l.buf + l.end, true, &len, &v->rec))) {
			line = l.buf + l.start;
			l.start += len + 1;
			l.lineno++;
			goto matched;
		}
		if ((r = lines_next(&l, &line, &len, &nl)) == 0)
			break;

		if (r == -1) {
			report(v, PMU_CHECK_JSON_SYNTAX, file, l.lineno, "record longer than %u bytes", LINE_LIMIT);
			continue;
		}
		if (r < 0) {
			report(v, PMU_CHECK_JSON_SYNTAX, file, l.lineno, "%s", pmu_error_detail());
			break;
		}
		if (!nl)
			report(v, PMU_CHECK_JSON_SYNTAX, file, l.lineno, "last record does not end with a newline");
		/* Anywhere in the line: JSON members have no order, so a header
		 * may name its type after a long units object. */
		if (l.lineno == 1 && len > 9 && memmem(line, len, "\"header\"", 8)) {
			check_header(v, &s, line, len);
			continue;
		}
		if (l.lineno == 1)
			report(v, PMU_CHECK_STREAM_HEADER, file, 1, "first record is not a header");
		if (shp && (sh = shapes_match(shp, line, line + len, false, &len, &v->rec))) {
matched:
			rd = sh->rd;
			v->res->shape_records++;
			if (sh->ev.ok && is_events) {
				on_event_roles(v, &s, l.lineno, &v->rec, &sh->ev);
				continue;
			}
			goto accepted;
		}
		if (pmu_jrec_parse(&v->rec, line, len, &why, &at)) {
			report(v, PMU_CHECK_JSON_SYNTAX, file, l.lineno, "%s at byte %zu", why, at + 1);
			continue;
		}
		type = rf(&v->rec, "type");
		if (!type || type->type != PMU_JV_STR) {
			report(v, PMU_CHECK_SCHEMA_TYPE, file, l.lineno, "record has no type");
			continue;
		}
		rd = pmu_streamdef_rec(sd, type->s, type->slen);
		if (rd && rd->since > v->minor) {
			report(v, PMU_CHECK_SCHEMA_TYPE, file, l.lineno,
			       "record type '%s' was added after spec 1.%d", rd->type, v->minor);
			continue;
		}
		if (!rd) {
			report(v, PMU_CHECK_SCHEMA_TYPE, file, l.lineno, "record type '%.*s' is not defined for %s streams",
			       (int)type->slen, type->s, sd->kind);
			continue;
		}
		if (check_rec(v, file, l.lineno, rd->obj, &v->rec))
			continue;
		if (shp)
			shape_learn(shp, line, len, &v->rec, rd, is_events);
accepted:
		if (is_spans && rd->type[0] == 'm')
			on_mark(v, &s, l.lineno, &v->rec);
		else if (is_spans)
			on_span(v, &s, l.lineno, &v->rec);
		else if (is_lifecycle)
			on_lifecycle(v, &s, l.lineno, &v->rec);
		else if (is_counts)
			on_counts(v, &s, l.lineno, &v->rec, rd->type);
		else if (is_cohort)
			on_cohort(v, &s, l.lineno, &v->rec, rd->type);
		else
			on_event(v, &s, l.lineno, &v->rec, rd->type);
	}
	free(shp);
	if (l.lineno == 0) {
		eval(v, PMU_CHECK_STREAM_HEADER);
		report(v, PMU_CHECK_STREAM_HEADER, file, 0, "stream is empty: it has no header");
	}
	lines_close(&l);
	if (!strcmp(sd->kind, "lifecycle"))
		lifecycle_end(v, &s);
	if (!strcmp(sd->kind, "spans"))
		check_spans(v, file);
	if (s.cs)
		counts_end(v, &s);
	if (!strcmp(sd->kind, "events") && v->cohort_ok) {
		eval(v, PMU_CHECK_PAIRING);
		for (size_t i = 0; i < v->nslots; i++)
			if (v->stacks[i].n)
				report(v, PMU_CHECK_PAIRING, file, v->stacks[i].line,
				       "%zu enter(s) never exited", v->stacks[i].n);
	}
}

/* ---- files of the payload ---------------------------------------------- */

/* The stream kind of a path relative to its repetition's directory. */
static const struct pmu_streamdef *stream_for(const char *rel, char *coll, size_t collsz)
{
	const char *rest;

	for (size_t i = 0; i < pmu_nstreams; i++) {
		const struct pmu_streamdef *sd = &pmu_streams[i];

		if (!sd->per_collector) {
			if (!strcmp(rel, sd->file))
				return sd;
			continue;
		}
		if (strncmp(rel, "collectors/", 11))
			continue;
		rest = strchr(rel + 11, '/');
		if (!rest || strcmp(rest + 1, sd->file) || (size_t)(rest - (rel + 11)) >= collsz)
			continue;
		snprintf(coll, collsz, "%.*s", (int)(rest - (rel + 11)), rel + 11);
		return sd;
	}
	return NULL;
}

/*
 * The repetition a payload path belongs to, and the path relative to its
 * directory: data/X is repetition 1 (unless X is under repeats/),
 * data/repeats/<k>/X repetition k (decimal, no leading zero).  0 when the
 * path is under repeats/ but not of that form.
 */
static int repetition_of(const char *path, const char **rel)
{
	const char *p = path + 5, *slash;
	long k;

	if (strncmp(p, "repeats/", 8)) {
		*rel = p;
		return 1;
	}
	p += 8;
	if (*p < '1' || *p > '9')
		return 0;
	k = strtol(p, (char **)&slash, 10);
	if (*slash != '/' || k < 2 || k > 10000)
		return 0;
	*rel = slash + 1;
	return (int)k;
}

static void reset_scope(struct v *v)
{
	for (size_t i = 0; i < v->ncolls; i++)
		free(v->colls[i].name);
	free(v->colls);
	v->colls = NULL;
	v->ncolls = 0;
	while (v->pool) {
		struct pool_blk *b = v->pool;

		v->pool = b->next;
		free(b);
	}
	free(v->incs);
	v->incs = NULL;
	v->nincs = v->capincs = 0;
	free(v->inc_index);
	free(v->ps_index);
	v->inc_index = NULL;
	v->ps_index = NULL;
	v->inc_cap = 0;
	free(v->tp);
	v->tp = NULL;
	v->ntp = v->captp = 0;
	free(v->tids);
	v->tids = NULL;
	v->root[0] = '\0';
	for (size_t i = 0; v->stacks && i < v->nslots; i++)
		free(v->stacks[i].v);
	free(v->stacks);
	v->stacks = NULL;
	v->nslots = 0;
	free(v->spans);
	v->spans = NULL;
	v->nspans = v->capspans = 0;
	v->run_ok = v->cohort_ok = false;
}

/*
 * Events streams are checked in parallel, one stream per job: each job
 * runs on a private copy of the validator state whose shared parts (the
 * cohort, the run window, the collectors) are read-only by then, with its
 * own parser, pairing stacks and result, and its findings buffered.  The
 * buffers are replayed in stream order afterwards, so the report is the
 * same whatever the scheduling.
 */
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

struct pool {
	struct v *v;
	struct job *jobs;
	size_t n;
	size_t next;
	pthread_mutex_t mu;
};

static void job_finding(void *ctx, const struct pmu_finding *f)
{
	struct job *j = ctx;
	struct jfound *nf;

	if (j->nf == j->cap) {
		size_t cap = j->cap ? 2 * j->cap : 16;

		nf = realloc(j->f, cap * sizeof(*nf));
		if (!nf)
			return;
		j->f = nf;
		j->cap = cap;
	}
	j->f[j->nf++] = (struct jfound){ f->check, f->severity, f->file ? strdup(f->file) : NULL,
					 strdup(f->message), f->record };
}

static void run_job(struct v *shared, struct job *j)
{
	struct v w = *shared;

	/* private: the result, the findings sink, the parser, the stacks */
	w.res = &j->res;
	w.fn = job_finding;
	w.ctx = j;
	pmu_jrec_init(&w.rec);
	w.stacks = shared->cohort_ok ? calloc(shared->nslots + 1, sizeof(*w.stacks)) : NULL;
	if (shared->cohort_ok && !w.stacks)
		w.cohort_ok = false;
	check_stream(&w, j->sd, j->path, j->coll);
	for (size_t i = 0; w.stacks && i < w.nslots; i++)
		free(w.stacks[i].v);
	free(w.stacks);
	pmu_jrec_release(&w.rec);
}

static void *pool_worker(void *arg)
{
	struct pool *p = arg;

	for (;;) {
		size_t i;

		pthread_mutex_lock(&p->mu);
		i = p->next++;
		pthread_mutex_unlock(&p->mu);
		if (i >= p->n)
			return NULL;
		run_job(p->v, &p->jobs[i]);
	}
}

static void run_jobs(struct v *v, struct job *jobs, size_t n)
{
	struct pool p = { v, jobs, n, 0, PTHREAD_MUTEX_INITIALIZER };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t th[8];
	size_t nth = 0;

	for (size_t i = 0; i < n; i++) {
		memset(&jobs[i].res, 0, sizeof(jobs[i].res));
		jobs[i].f = NULL;
		jobs[i].nf = jobs[i].cap = 0;
	}
	/* the calling thread works too.  Up to two workers per CPU: a stream
	 * is one job, and when one CPU runs slower than another (a shared
	 * host), jobs pinned one per CPU finish at the slower one's pace;
	 * with more runnable workers than CPUs the scheduler spreads them. */
	while (nth + 1 < n && (long)nth + 1 < 2 * cpus && nth < 8 &&
	       pthread_create(&th[nth], NULL, pool_worker, &p) == 0)
		nth++;
	pool_worker(&p);
	for (size_t i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	/* replay, in stream order */
	for (size_t i = 0; i < n; i++) {
		struct job *j = &jobs[i];
		unsigned errs = 0, warns = 0, kept[PMU_CHECK_COUNT_] = { 0 };

		for (size_t k = 0; k < j->nf; k++) {
			report_sev(v, (enum pmu_check)j->f[k].check, j->f[k].sev, j->f[k].file, j->f[k].record, "%s",
				   j->f[k].msg);
			errs += j->f[k].sev == PMU_SEV_ERROR;
			warns += j->f[k].sev == PMU_SEV_WARNING;
			kept[j->f[k].check]++;
			free(j->f[k].file);
			free(j->f[k].msg);
		}
		free(j->f);
		/* the findings the job counted but did not keep */
		for (int c = 0; c < PMU_CHECK_COUNT_; c++) {
			v->res->evaluated[c] |= j->res.evaluated[c];
			v->res->count[c] += j->res.count[c] - kept[c];
			v->res->suppressed[c] += j->res.count[c] - kept[c];
		}
		v->res->shape_records += j->res.shape_records;
		v->res->errors += j->res.errors - errs;
		v->res->warnings += j->res.warnings - warns;
	}
}

/* Documents and streams of one repetition. */
static void check_scope(struct v *v, int k)
{
	char coll[256], last_unlisted[256] = "", p[128];
	struct job jobs[MAX_JOBS];
	size_t njobs = 0;

	reset_scope(v);
	v->scope_k = k;
	if (k == 1)
		snprintf(v->scope, sizeof(v->scope), "data/");
	else
		snprintf(v->scope, sizeof(v->scope), "data/repeats/%d/", k);
	for (size_t i = 0; i < pmu_nstreams; i++) {
		snprintf(p, sizeof(p), "%s%s", v->scope, pmu_streams[i].file);
		if (!pmu_streams[i].per_collector && pmu_streams[i].required && pmu_streams[i].since <= v->minor &&
		    !find_file(v, p))
			report(v, PMU_CHECK_FILE_REQUIRED, p, 0, "required stream is missing");
	}
	/* documents, in dependency order: run (window), cohort (attribution) */
	for (size_t i = 0; i < pmu_ndocs; i++) {
		json_t *doc;

		if (!pmu_docs[i].per_repetition || !pmu_docdef_in(&pmu_docs[i], v->minor))
			continue;
		snprintf(p, sizeof(p), "%s%s", v->scope, pmu_docs[i].file);
		if (!find_file(v, p)) {
			report(v, PMU_CHECK_FILE_REQUIRED, p, 0, "required document is missing");
			continue;
		}
		if (!strcmp(pmu_docs[i].type, "cohort")) {
			check_cohort_doc(v, &pmu_docs[i], p); /* grows with the workload: never whole */
			continue;
		}
		doc = load_doc(v, p);
		if (doc && check_doc(v, &pmu_docs[i], p, doc) && !strcmp(pmu_docs[i].type, "run"))
			check_run(v, doc);
		json_decref(doc);
	}
	/* the cohort stream (1.3): the cohort, before the streams that name it */
	for (size_t i = 0; i < pmu_nstreams; i++) {
		if (strcmp(pmu_streams[i].kind, "cohort") || pmu_streams[i].since > v->minor)
			continue;
		snprintf(p, sizeof(p), "%s%s", v->scope, pmu_streams[i].file);
		if (find_file(v, p) && pmu_bag_name_ok(p))
			check_cohort_stream(v, &pmu_streams[i], p);
	}
	/* streams: spans first, then each collector's files */
	for (size_t i = 0; i < v->nfiles; i++) {
		const char *rel;
		const struct pmu_streamdef *sd;

		if (strncmp(v->files[i].path, "data/", 5) || repetition_of(v->files[i].path, &rel) != k)
			continue;
		sd = stream_for(rel, coll, sizeof(coll));
		if (sd && !strcmp(sd->kind, "cohort"))
			continue; /* read above */
		if (sd && sd->since <= v->minor && pmu_bag_name_ok(v->files[i].path)) {
			struct collector *c = sd->per_collector && v->run_ok ? find_coll(v, coll) : NULL;

			if (sd->per_collector && v->run_ok && !c) {
				/* once per unlisted collector directory (files are sorted) */
				if (strcmp(coll, last_unlisted)) {
					report(v, PMU_CHECK_COLLECTOR_LISTED, v->files[i].path, 0,
					       "collector '%s' is not listed in run.json", coll);
					snprintf(last_unlisted, sizeof(last_unlisted), "%s", coll);
				}
			} else if (c && !strcmp(sd->kind, "lifecycle")) {
				c->seen_dir = true;
			}
			if (!strcmp(sd->kind, "events") && njobs < MAX_JOBS) {
				/* the large streams: checked in parallel below */
				jobs[njobs].path = v->files[i].path;
				jobs[njobs].sd = sd;
				snprintf(jobs[njobs].coll, sizeof(jobs[njobs].coll), "%s", coll);
				njobs++;
			} else {
				check_stream(v, sd, v->files[i].path, sd->per_collector ? coll : NULL);
			}
		}
	}
	run_jobs(v, jobs, njobs);
	if (v->cohort_ok) {
		/* every stream was read against the cohort */
		eval(v, PMU_CHECK_ATTRIBUTION);
		eval(v, PMU_CHECK_PAIRING);
	}
	snprintf(p, sizeof(p), "%srun.json", v->scope);
	for (size_t i = 0; v->run_ok && i < v->ncolls; i++)
		if (!v->colls[i].seen_dir)
			report(v, PMU_CHECK_COLLECTOR_LISTED, p, 0, "collector '%s' has no %scollectors/%s/lifecycle.jsonl",
			       v->colls[i].name, v->scope, v->colls[i].name);
}

static void check_payload(struct v *v)
{
	eval(v, PMU_CHECK_FILE_REQUIRED);
	eval(v, PMU_CHECK_FILE_UNKNOWN);
	/* Loss, malformed input and truncation can only be recorded in the
	 * streams read below: with the streams read, their absence is a pass. */
	eval(v, PMU_CHECK_LOSS);
	eval(v, PMU_CHECK_MALFORMED);
	eval(v, PMU_CHECK_TRUNCATED);
	/* the documents of the whole bundle */
	for (size_t i = 0; i < pmu_ndocs; i++) {
		char p[64];
		json_t *doc;

		if (pmu_docs[i].per_repetition || !pmu_docdef_in(&pmu_docs[i], v->minor))
			continue;
		snprintf(p, sizeof(p), "data/%s", pmu_docs[i].file);
		if (!find_file(v, p)) {
			if (pmu_docs[i].required)
				report(v, PMU_CHECK_FILE_REQUIRED, p, 0, "required document is missing");
			continue;
		}
		doc = load_doc(v, p);
		if (doc)
			check_doc(v, &pmu_docs[i], p, doc);
		json_decref(doc);
	}
	/* the first repetition tells how many there are */
	v->repeat = 1;
	check_scope(v, 1);
	for (size_t i = 0; i < v->nfiles; i++) {
		const char *p = v->files[i].path, *rel;
		char coll[256];
		bool known = false, earlier = false;
		int k;

		if (strncmp(p, "data/", 5))
			continue;
		k = repetition_of(p, &rel);
		for (size_t d = 0; d < pmu_ndocs; d++)
			if (!strcmp(rel, pmu_docs[d].file) && (k == 1 || pmu_docs[d].per_repetition)) {
				known |= pmu_docdef_in(&pmu_docs[d], v->minor);
				earlier |= !pmu_docdef_in(&pmu_docs[d], v->minor);
			}
		const struct pmu_streamdef *sd = stream_for(rel, coll, sizeof(coll));

		known |= sd != NULL && sd->since <= v->minor && pmu_bag_name_ok(p);
		if (!k || k > v->repeat || !known)
			report(v, PMU_CHECK_FILE_UNKNOWN, p, 0, "file is not defined by spec %s%s", v->spec,
			       k > v->repeat ? " (a repetition beyond data/run.json's repeat)"
			       : sd && sd->since > v->minor ? " (its stream kind was added in a later version)"
			       : earlier ? " (a document of earlier versions only)" : "");
	}
	for (int k = 2; k <= v->repeat; k++)
		check_scope(v, k);
}

static void check_spec_version(struct v *v)
{
	char *end;
	long major, minor;

	eval(v, PMU_CHECK_SPEC_VERSION);
	snprintf(v->res->spec, sizeof(v->res->spec), "%s", v->spec);
	/* "<major>.<minor>", decimal, no sign, space or leading zero */
	major = v->spec[0] >= '1' && v->spec[0] <= '9' ? strtol(v->spec, &end, 10) : -1;
	minor = major > 0 && *end == '.' && end[1] >= '0' && end[1] <= '9' && !(end[1] == '0' && end[2])
		? strtol(end + 1, &end, 10) : -1;
	if (major <= 0 || minor < 0 || *end)
		report(v, PMU_CHECK_SPEC_VERSION, "bag-info.txt", 0,
		       "'%s' is not a spec version of the form MAJOR.MINOR (decimal, no leading zero)", v->spec);
	else if (major != PMU_SPEC_MAJOR)
		report(v, PMU_CHECK_SPEC_VERSION, "bag-info.txt", 0,
		       "spec major version of '%s' is unknown (this validator implements %s)", v->spec,
		       PMU_SPEC_VERSION);
	else if (minor > PMU_SPEC_MINOR)
		report(v, PMU_CHECK_SPEC_VERSION, "bag-info.txt", 0,
		       "spec version '%s' is newer than this validator's %s: its records cannot be checked",
		       v->spec, PMU_SPEC_VERSION);
	else {
		v->minor = (int)minor;
		v->spec_ok = true;
	}
}

/* ---- driver ------------------------------------------------------------- */

void pmu_validate_default_opts(struct pmu_validate_opts *o)
{
	memset(o, 0, sizeof(*o));
	pmu_archive_default_limits(&o->limits);
	o->max_per_check = 20;
	o->hash_thread = true;
}

static void v_release(struct v *v)
{
	reset_scope(v);
	for (size_t i = 0; i < v->nfiles; i++)
		free(v->files[i].path);
	free(v->files);
	pmu_jrec_release(&v->rec);
}

static int validate_dir(struct v *v)
{
	pthread_t th;
	bool threaded = false;
	int err;

	v->structure_ok = true;
	eval(v, PMU_CHECK_BAG_STRUCTURE);
	err = walk(v, v->rootfd, "", 0);
	if (err)
		return err;
	qsort(v->files, v->nfiles, sizeof(*v->files), cmp_vfile);
	check_bagit(v);
	check_baginfo(v);
	check_manifests(v);
	if (v->opts->hash_thread && pthread_create(&th, NULL, hash_other, v) == 0)
		threaded = true;
	else
		hash_files(v, false);
	if (v->info_ok)
		check_spec_version(v);
	if (v->spec_ok)
		check_payload(v);
	if (threaded)
		pthread_join(th, NULL);
	hash_files(v, true);
	report_hashes(v);
	return 0;
}

int pmu_validate_path(const char *path, const struct pmu_validate_opts *opts, pmu_finding_fn fn,
		      void *ctx, struct pmu_validate_result *res)
{
	struct v v = { 0 };
	struct pmu_bundle b;
	int err, check;

	memset(res, 0, sizeof(*res));
	v.opts = opts;
	v.fn = fn;
	v.ctx = ctx;
	v.res = res;
	err = pmu_bundle_open(&b, path, opts->tmpbase, &opts->limits, &check);
	if (b.archive)
		for (int c = PMU_CHECK_ARCHIVE_FORMAT; c <= PMU_CHECK_ARCHIVE_LAYOUT; c++)
			eval(&v, (enum pmu_check)c);
	if (err == PMU_ERR_CORRUPT && check >= 0) {
		report(&v, (enum pmu_check)check, NULL, 0, "%s", pmu_error_detail());
		return 0;
	}
	if (err)
		return err;
	pmu_jrec_init(&v.rec);
	v.rootfd = b.rootfd;
	err = validate_dir(&v);
	v_release(&v);
	pmu_bundle_close(&b);
	return err;
}
