/*
 * The bag (RFC 8493 as the spec narrows it): the tree walked into
 * v->files, the tag files bagit.txt and bag-info.txt, both manifests read
 * line by line against the tree, and the digests of the listed files,
 * hashed by a second thread or by the stream check that reads them anyway.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bag.h"
#include "error.h"
#include "sha256.h"
#include "util.h"
#include "validate_int.h"

#define TAG_LIMIT (64u << 20)     /* a tag file */

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

int pmu_v_walk(struct v *v, int dirfd, const char *rel, int depth)
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

				err = pmu_v_walk(v, dirfd, p, depth + 1);
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

int pmu_v_cmp_vfile(const void *a, const void *b)
{
	return strcmp(((const struct vfile *)a)->path, ((const struct vfile *)b)->path);
}

struct vfile *pmu_v_find_file(struct v *v, const char *path)
{
	struct vfile key = { .path = (char *)path };

	return bsearch(&key, v->files, v->nfiles, sizeof(*v->files), pmu_v_cmp_vfile);
}

/* ---- tag files ---------------------------------------------------------- */

void pmu_v_check_bagit(struct v *v)
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

void pmu_v_check_baginfo(struct v *v)
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

		if (pmu_v_find_file(v, path) || path_hash(hash_key(), path, len - 66) != h)
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
		if ((f = pmu_v_find_file(v, path))) {
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

void pmu_v_check_manifests(struct v *v)
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
 * not two), or pmu_v_hash_files().  The hashing thread takes the files no stream
 * check reads (jsonl: false); what no check claimed is hashed after the
 * checks (jsonl: true). */
void pmu_v_hash_files(struct v *v, bool jsonl)
{
	for (size_t k = 0; k < v->nfiles; k++) {
		struct vfile *f = &v->files[k];

		if (!f->listed || (!jsonl && is_jsonl(f->path)) || atomic_exchange(&f->claimed, true))
			continue;
		f->hash_err = pmu_sha256_file(v->rootfd, f->path, f->actual, NULL);
	}
}

void *pmu_v_hash_other(void *arg)
{
	pmu_v_hash_files(arg, false);
	return NULL;
}

void pmu_v_report_hashes(struct v *v)
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

