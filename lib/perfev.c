/*
 * The event list: parsing `-e LIST` and resolving each item to
 * perf_event_attr fields.  Generic names come from perfev.def, PMU/TERMS/
 * items through sysfs (Documentation/ABI/testing/sysfs-bus-event_source-
 * devices-format and -events), pfm: items through libpfm4, loaded at run time
 * so that neither the library nor the tools link it.
 */
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The kernel's header first: libpfm4's perfmon/perf_event.h then keeps its
 * own copy of the perf_event_attr definitions out. */
#include <linux/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "error.h"
#include "perfev.h"
#include "util.h"

#define SYSFS_DEFAULT  "/sys/bus/event_source/devices"
#define LIBPFM_DEFAULT "libpfm.so.4"
#define SYSFS_FILE_MAX 4096     /* sysfs attributes are at most a page */
#define TERMS_MAX      32

#define PMU_EVSET_DEFAULT true
#define PMU_EVSET_EXTRA   false
static const struct pmu_evdef evtable[] = {
#define PMU_EVDEF(name, aliases, type, config, unit, set, desc) \
	{ name, aliases, PERF_TYPE_##type, config, unit, PMU_EVSET_##set, desc },
#include "perfev.def"
#undef PMU_EVDEF
};
#undef PMU_EVSET_DEFAULT
#undef PMU_EVSET_EXTRA

struct cputab {
	const char *vendor;
	unsigned family, model_lo, model_hi, stepping_lo, stepping_hi;
	const char *table, *what;
};

static const struct cputab cputable[] = {
#define PMU_CPUTAB(vendor, family, mlo, mhi, slo, shi, table, what) \
	{ vendor, family, mlo, mhi, slo, shi, table, what },
#include "perfev-cpu.def"
#undef PMU_CPUTAB
};

/* ---- small helpers ---------------------------------------------------- */

/* snprintf that may truncate on purpose: display strings have fixed room. */
__attribute__((format(printf, 3, 4)))
static void setf(char *dst, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dst, size, fmt, ap);
	va_end(ap);
}

/* Mark s as well formed but not resolvable here.  Returns 0: this is not an
 * error of the list. */
__attribute__((format(printf, 3, 4)))
static int unavailable(struct pmu_evspec *s, const char *remedy, const char *fmt, ...)
{
	va_list ap;

	s->available = false;
	va_start(ap, fmt);
	vsnprintf(s->reason, sizeof(s->reason), fmt, ap);
	va_end(ap);
	setf(s->remedy, sizeof(s->remedy), "%s", remedy);
	return 0;
}

static bool word_in(const char *words, const char *w)
{
	size_t len = strlen(w);

	for (const char *p = words; *p;) {
		size_t k = strcspn(p, " ");

		if (k == len && !strncmp(p, w, len))
			return true;
		p += k;
		p += strspn(p, " ");
	}
	return false;
}

/* Levenshtein distance, for "did you mean"; SIZE_MAX for absurd lengths. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), prev[257], cur[257];

	if (la > 256 || lb > 256)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);

			cur[j] = del < ins ? del : ins;
			if (sub < cur[j])
				cur[j] = sub;
		}
		memcpy(prev, cur, (lb + 1) * sizeof(prev[0]));
	}
	return prev[lb];
}

static void consider(const char *cand, size_t len, const char *name, size_t *best_d,
		     char *best, size_t best_size)
{
	char w[64];
	size_t d, limit;

	if (len >= sizeof(w))
		return;
	memcpy(w, cand, len);
	w[len] = '\0';
	d = edit_distance(name, w);
	/* Close means a typo or two, not a different word: at most a third of
	 * the candidate's letters, and never more than three. */
	limit = len / 3 < 1 ? 1 : len / 3 > 3 ? 3 : len / 3;
	if (d <= limit && d < *best_d) {
		*best_d = d;
		setf(best, best_size, "%s", w);
	}
}

/* The table name or alias closest to name, or "" when none is close. */
static void suggest(const char *name, char *best, size_t best_size)
{
	size_t best_d = SIZE_MAX;

	best[0] = '\0';
	for (size_t i = 0; i < PMU_ARRAY_SIZE(evtable); i++) {
		const char *a = evtable[i].aliases;

		consider(evtable[i].name, strlen(evtable[i].name), name, &best_d, best, best_size);
		while (*a) {
			size_t k = strcspn(a, " ");

			consider(a, k, name, &best_d, best, best_size);
			a += k;
			a += strspn(a, " ");
		}
	}
}

/* Decimal or 0x hex, the whole string, at most 64 bits. */
static int parse_u64(const char *s, uint64_t *v)
{
	unsigned base = 10;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return -1;
	*v = 0;
	for (; *s; s++) {
		unsigned d;

		if (isdigit((unsigned char)*s))
			d = (unsigned)(*s - '0');
		else if (base == 16 && isxdigit((unsigned char)*s))
			d = (unsigned)(tolower((unsigned char)*s) - 'a' + 10);
		else
			return -1;
		if (*v > (UINT64_MAX - d) / base)
			return -1;
		*v = *v * base + d;
	}
	return 0;
}

/* ---- the generic table ------------------------------------------------ */

size_t pmu_evtable_count(void)
{
	return PMU_ARRAY_SIZE(evtable);
}

const struct pmu_evdef *pmu_evtable_get(size_t i)
{
	return i < PMU_ARRAY_SIZE(evtable) ? &evtable[i] : NULL;
}

const struct pmu_evdef *pmu_evtable_find(const char *name)
{
	for (size_t i = 0; i < PMU_ARRAY_SIZE(evtable); i++)
		if (!strcmp(evtable[i].name, name) || word_in(evtable[i].aliases, name))
			return &evtable[i];
	return NULL;
}

const char *pmu_evkind_name(enum pmu_evkind kind)
{
	switch (kind) {
	case PMU_EV_SOFTWARE:
		return "software";
	case PMU_EV_HARDWARE:
		return "hardware";
	case PMU_EV_RAW:
		return "raw";
	case PMU_EV_PMU:
		return "pmu";
	case PMU_EV_PFM:
		return "pfm";
	}
	return "unknown";
}

/* The two clocks count nanoseconds, whichever way they were named. */
static const char *unit_of(uint32_t type, uint64_t config)
{
	for (size_t i = 0; i < PMU_ARRAY_SIZE(evtable); i++)
		if (evtable[i].type == type && evtable[i].config == config)
			return evtable[i].unit;
	return "count";
}

static void set_generic(struct pmu_evspec *s, const struct pmu_evdef *d)
{
	s->kind = d->type == PERF_TYPE_SOFTWARE ? PMU_EV_SOFTWARE : PMU_EV_HARDWARE;
	s->type = d->type;
	s->config = d->config;
	s->unit = d->unit;
}

/* ---- modifiers --------------------------------------------------------- */

/*
 * u, k and h each name a privilege level to count; the ones not named are
 * excluded (perf's convention: "cycles:u" is exclude_kernel and exclude_hv).
 * canon gets the letters in ukh order.
 */
static int parse_mods(struct pmu_evspec *s, const char *m, const char *item, char canon[4])
{
	bool u = false, k = false, h = false;
	size_t n = 0;

	if (!*m)
		return pmu_error(PMU_ERR_INVAL, "empty modifier in '%s' (give u, k or h after the ':')", item);
	for (; *m; m++) {
		bool *f = *m == 'u' ? &u : *m == 'k' ? &k : *m == 'h' ? &h : NULL;

		if (!f)
			return pmu_error(PMU_ERR_INVAL, "unknown modifier '%c' in '%s' (u, k and h are supported)",
					 *m, item);
		if (*f)
			return pmu_error(PMU_ERR_INVAL, "modifier '%c' repeated in '%s'", *m, item);
		*f = true;
	}
	s->modifier = true;
	s->exclude_user = !u;
	s->exclude_kernel = !k;
	s->exclude_hv = !h;
	if (u)
		canon[n++] = 'u';
	if (k)
		canon[n++] = 'k';
	if (h)
		canon[n++] = 'h';
	canon[n] = '\0';
	return 0;
}

/* ---- PMU/TERMS/ through sysfs ------------------------------------------ */

struct term {
	char name[64];
	uint64_t value;
	bool has_value;
	bool done;              /* consumed as a named sysfs event */
};

/* term[=value],... into t; on failure why says what, and the caller decides
 * whether that is the user's mistake or the host's. */
static int split_terms(const char *text, struct term *t, size_t *nt, char *why, size_t why_size)
{
	char buf[SYSFS_FILE_MAX + 1], *save = NULL, *tok;
	size_t len = strlen(text);

	*nt = 0;
	if (len >= sizeof(buf)) {
		setf(why, why_size, "terms too long");
		return -1;
	}
	memcpy(buf, text, len + 1);
	while (len && isspace((unsigned char)buf[len - 1]))
		buf[--len] = '\0';
	if (!len) {
		setf(why, why_size, "no terms");
		return -1;
	}
	/* strtok_r would skip empty terms; walk the commas by hand. */
	for (tok = buf; tok; tok = save) {
		char *eq, *c;
		struct term *x;

		save = strchr(tok, ',');
		if (save)
			*save++ = '\0';
		if (!*tok) {
			setf(why, why_size, "empty term");
			return -1;
		}
		if (*nt == TERMS_MAX) {
			setf(why, why_size, "more than %d terms", TERMS_MAX);
			return -1;
		}
		x = &t[(*nt)++];
		memset(x, 0, sizeof(*x));
		eq = strchr(tok, '=');
		if (eq)
			*eq = '\0';
		if (!isalnum((unsigned char)tok[0]) && tok[0] != '_') {
			setf(why, why_size, "bad term name '%s'", tok);
			return -1;
		}
		for (c = tok; *c; c++)
			if (!isalnum((unsigned char)*c) && !strchr("_.-", *c)) {
				setf(why, why_size, "bad term name '%s'", tok);
				return -1;
			}
		if (strlen(tok) >= sizeof(x->name)) {
			setf(why, why_size, "term name '%.20s...' too long", tok);
			return -1;
		}
		strcpy(x->name, tok);
		x->value = 1;   /* a bare term is a flag: on */
		if (eq) {
			x->has_value = true;
			if (parse_u64(eq + 1, &x->value)) {
				setf(why, why_size, "bad value '%s' for term '%s' (a decimal or 0x hex number of at most 64 bits)",
				     eq + 1, tok);
				return -1;
			}
		}
	}
	return 0;
}

/* A format file: "config:0-7", "config1:0-63", "config:0-7,32-35", "config:21". */
struct format {
	int field;              /* 0 config, 1 config1, 2 config2 */
	unsigned n, lo[16], hi[16], width;
};

/* 0 parsed; -1 malformed; -2 a field perf_event_attr has that we do not keep. */
static int parse_format(const char *text, struct format *f)
{
	const char *p = text;
	size_t k = strcspn(p, ":");

	if (p[k] != ':')
		return -1;
	if (k == 6 && !strncmp(p, "config", 6))
		f->field = 0;
	else if (k == 7 && !strncmp(p, "config1", 7))
		f->field = 1;
	else if (k == 7 && !strncmp(p, "config2", 7))
		f->field = 2;
	else if (k > 6 && !strncmp(p, "config", 6))
		return -2;
	else
		return -1;
	p += k + 1;
	f->n = f->width = 0;
	for (;;) {
		char *end;
		unsigned long lo, hi;

		if (!isdigit((unsigned char)*p) || f->n == PMU_ARRAY_SIZE(f->lo))
			return -1;
		lo = strtoul(p, &end, 10);
		hi = lo;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return -1;
			hi = strtoul(end + 1, &end, 10);
		}
		if (lo > hi || hi > 63)
			return -1;
		f->lo[f->n] = (unsigned)lo;
		f->hi[f->n++] = (unsigned)hi;
		f->width += (unsigned)(hi - lo + 1);
		p = end;
		if (*p != ',')
			break;
		p++;
	}
	while (isspace((unsigned char)*p))
		p++;
	return *p || f->width > 64 ? -1 : 0;
}

/* Scatter v's low bits over f's ranges, lowest range first. */
static void place(uint64_t cfg[3], const struct format *f, uint64_t v)
{
	unsigned used = 0;

	for (unsigned i = 0; i < f->n; i++) {
		unsigned w = f->hi[i] - f->lo[i] + 1;
		uint64_t mask = w == 64 ? UINT64_MAX : ((uint64_t)1 << w) - 1;
		uint64_t bits = used < 64 ? (v >> used) & mask : 0;

		cfg[f->field] = (cfg[f->field] & ~(mask << f->lo[i])) | (bits << f->lo[i]);
		used += w;
	}
}

struct pmuctx {
	struct pmu_evspec *s;
	const char *item, *sysfs, *pmu;
	int pmufd, fmtfd;       /* fmtfd -1: the PMU has no format directory */
	uint64_t cfg[3];
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The format terms the PMU has, for the unknown-term message. */
static void list_formats(const struct pmuctx *c, char *out, size_t size)
{
	int fd = openat(c->pmufd, "format", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	char names[TERMS_MAX * 2][64];
	size_t n = 0, len = 0, i;
	struct dirent *e;

	out[0] = '\0';
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d)) && n < PMU_ARRAY_SIZE(names))
		if (e->d_name[0] != '.' && strlen(e->d_name) < sizeof(names[0]))
			strcpy(names[n++], e->d_name);
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_name);
	/* Room is kept for ", ..." when not all fit. */
	for (i = 0; i < n && len + strlen(names[i]) + 2 + 5 < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%s", i ? ", " : "", names[i]);
	if (i < n)
		setf(out + len, size - len, "%s...", i ? ", " : "");
}

static bool is_config_term(const char *name, int *field)
{
	static const char *const f[] = { "config", "config1", "config2" };

	for (int i = 0; i < 3; i++)
		if (!strcmp(name, f[i])) {
			*field = i;
			return true;
		}
	return false;
}

/*
 * Place one term.  user: it came from the command line, so an unknown term
 * or a value too wide is the user's mistake (PMU_ERR_INVAL); otherwise it came
 * from a sysfs event file and a mismatch is the host's (unavailable).
 * Returns 0 placed, 1 the spec was marked unavailable, or an error.
 */
static int apply_term(struct pmuctx *c, const struct term *t, bool user)
{
	struct format f;
	char *text = NULL, known[200];
	size_t len;
	int err, field;

	if (is_config_term(t->name, &field)) {
		c->cfg[field] = t->value;
		return 0;
	}
	if (c->fmtfd < 0) {
		unavailable(c->s, "give the bits with config=, config1= and config2= terms",
			    "PMU '%s' has no format directory in %s/%s to place term '%s'",
			    c->pmu, c->sysfs, c->pmu, t->name);
		return 1;
	}
	err = pmu_read_file(c->fmtfd, t->name, SYSFS_FILE_MAX, &text, &len);
	if (err == PMU_ERR_NOTFOUND) {
		if (!user) {
			unavailable(c->s, "give the event's bits with config= terms",
				    "a sysfs event of PMU '%s' uses term '%s', which %s/%s/format lacks",
				    c->pmu, t->name, c->sysfs, c->pmu);
			return 1;
		}
		list_formats(c, known, sizeof(known));
		return pmu_error(PMU_ERR_INVAL, "unknown term '%s' in '%s' (PMU '%s' has %s%s)", t->name, c->item,
				 c->pmu, known[0] ? "format terms " : "no format terms", known);
	}
	if (err) {
		unavailable(c->s, "check that sysfs is mounted and readable",
			    "cannot read %s/%s/format/%s: %s", c->sysfs, c->pmu, t->name, pmu_error_detail());
		return 1;
	}
	text[strcspn(text, "\n")] = '\0';
	err = parse_format(text, &f);
	if (err) {
		unavailable(c->s, "give the bits with config=, config1= and config2= terms",
			    err == -2 ? "%s/%s/format/%s places bits in a field pmu does not support: %.40s"
				      : "%s/%s/format/%s is not a format pmu understands: %.40s",
			    c->sysfs, c->pmu, t->name, text);
		free(text);
		return 1;
	}
	if (f.width < 64 && t->value >> f.width) {
		err = pmu_error(PMU_ERR_INVAL, "value 0x%llx of term '%s' in '%s' does not fit its %u bits (%s)",
				(unsigned long long)t->value, t->name, c->item, f.width, text);
		free(text);
		if (!user) {
			unavailable(c->s, "give the event's bits with config= terms",
				    "a sysfs event of PMU '%s' gives term '%s' a value wider than its format",
				    c->pmu, t->name);
			return 1;
		}
		return err;
	}
	free(text);
	place(c->cfg, &f, t->value);
	return 0;
}

/* One line of a small sysfs file, "" when absent or unreadable. */
static void read_line(int dirfd, const char *path, char *out, size_t size)
{
	char *text = NULL;
	size_t len;

	out[0] = '\0';
	if (pmu_read_file(dirfd, path, SYSFS_FILE_MAX, &text, &len))
		return;
	text[strcspn(text, "\n")] = '\0';
	setf(out, size, "%s", text);
	free(text);
}

/* perf scales a sysfs event's count (energy in Joules, say) for display; the
 * recorder keeps raw counts, so say what the scale would have been. */
static void note_scale(struct pmuctx *c, const char *event)
{
	char path[128], unit[32], scale[48];

	setf(path, sizeof(path), "events/%s.unit", event);
	read_line(c->pmufd, path, unit, sizeof(unit));
	setf(path, sizeof(path), "events/%s.scale", event);
	read_line(c->pmufd, path, scale, sizeof(scale));
	if (unit[0] || scale[0])
		setf(c->s->note, sizeof(c->s->note), "sysfs event '%s' has unit '%s' and scale %s; counts are "
		     "recorded unscaled", event, unit[0] ? unit : "-", scale[0] ? scale : "1");
}

/*
 * A bare term that is no format term but a file in PMU/events/ stands for the
 * terms written there (e.g. msr/tsc/ is msr/event=0x00/).  Returns 0 when
 * expanded, 1 unavailable, 2 not an event, or an error.
 */
static int expand_named(struct pmuctx *c, struct term *t)
{
	struct term et[TERMS_MAX];
	char path[128], why[200], *text = NULL;
	size_t len, n;
	int err;

	if (t->has_value || (c->fmtfd >= 0 && !faccessat(c->fmtfd, t->name, F_OK, AT_SYMLINK_NOFOLLOW)))
		return 2;
	setf(path, sizeof(path), "events/%s", t->name);
	err = pmu_read_file(c->pmufd, path, SYSFS_FILE_MAX, &text, &len);
	if (err == PMU_ERR_NOTFOUND)
		return 2;
	if (err) {
		unavailable(c->s, "check that sysfs is mounted and readable",
			    "cannot read %s/%s/%s: %s", c->sysfs, c->pmu, path, pmu_error_detail());
		return 1;
	}
	err = split_terms(text, et, &n, why, sizeof(why));
	free(text);
	if (err) {
		/* "?" values (a parameter perf asks for) land here too. */
		unavailable(c->s, "give the event's bits with config= terms",
			    "cannot use sysfs event %s/%s/%s: %s", c->sysfs, c->pmu, path, why);
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		if ((err = apply_term(c, &et[i], false)))
			return err;
	t->done = true;
	note_scale(c, t->name);
	return 0;
}

static int read_type(struct pmuctx *c)
{
	char *text = NULL, *end;
	size_t len;
	unsigned long v;
	int err = pmu_read_file(c->pmufd, "type", SYSFS_FILE_MAX, &text, &len);

	if (err == PMU_ERR_NOTFOUND) {
		unavailable(c->s, "check that sysfs is mounted and readable",
			    "%s/%s has no type file", c->sysfs, c->pmu);
		return 1;
	}
	if (err) {
		unavailable(c->s, "check that sysfs is mounted and readable",
			    "cannot read %s/%s/type: %s", c->sysfs, c->pmu, pmu_error_detail());
		return 1;
	}
	text[strcspn(text, "\n")] = '\0';
	errno = 0;
	v = strtoul(text, &end, 10);
	if (!isdigit((unsigned char)text[0]) || *end || errno || v > UINT32_MAX) {
		unavailable(c->s, "check that sysfs is mounted and readable",
			    "%s/%s/type is not a perf type number: %.20s", c->sysfs, c->pmu, text);
		free(text);
		return 1;
	}
	free(text);
	c->s->type = (uint32_t)v;
	return 0;
}

static int resolve_pmu(struct pmu_evspec *s, const char *sysfs)
{
	const char *item = s->given, *a = strchr(item, '/'), *b = a ? strchr(a + 1, '/') : NULL;
	char pmu[64], terms[256], canon[4], why[200];
	struct term t[TERMS_MAX];
	struct pmuctx c = { .s = s, .item = item, .sysfs = sysfs, .pmu = pmu, .pmufd = -1, .fmtfd = -1 };
	const char *mods;
	size_t nt;
	int rootfd, err;

	if (!a || !b)
		return pmu_error(PMU_ERR_INVAL, "'%s' is not PMU/TERMS/: it needs a closing '/'", item);
	if (a == item || (size_t)(a - item) >= sizeof(pmu))
		return pmu_error(PMU_ERR_INVAL, "bad PMU name in '%s'", item);
	memcpy(pmu, item, (size_t)(a - item));
	pmu[a - item] = '\0';
	/* A directory name under sysfs: no '/', no "." or "..". */
	for (const char *p = pmu; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_.-", *p))
			return pmu_error(PMU_ERR_INVAL, "bad PMU name '%s' in '%s'", pmu, item);
	if (pmu[0] == '.')
		return pmu_error(PMU_ERR_INVAL, "bad PMU name '%s' in '%s'", pmu, item);
	memcpy(terms, a + 1, (size_t)(b - a - 1));
	terms[b - a - 1] = '\0';
	mods = b + 1;
	if (strchr(mods, '/'))
		return pmu_error(PMU_ERR_INVAL, "unexpected '/' after '%.*s' in '%s'", (int)(b + 1 - item), item, item);
	if (*mods == ':')
		mods++;
	if ((*mods || b[1] == ':') && (err = parse_mods(s, mods, item, canon)))
		return err;
	if (split_terms(terms, t, &nt, why, sizeof(why)))
		return pmu_error(PMU_ERR_INVAL, "%s in '%s'", why, item);
	for (size_t i = 0; i < nt; i++)
		for (size_t k = i + 1; k < nt; k++)
			if (!strcmp(t[i].name, t[k].name))
				return pmu_error(PMU_ERR_INVAL, "term '%s' given twice in '%s'", t[i].name, item);
	s->kind = PMU_EV_PMU;
	s->on_pmu = true;
	setf(s->name, sizeof(s->name), "%s", item);

	rootfd = open(sysfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd >= 0) {
		c.pmufd = openat(rootfd, pmu, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(rootfd);
	}
	if (c.pmufd < 0) {
		if (errno == ENOENT || errno == ENOTDIR) {
			unavailable(s, "", "no PMU '%s' in %s", pmu, sysfs);
			setf(s->remedy, sizeof(s->remedy),
			     "see this host's PMUs with 'ls %s' (a VM often has no hardware PMU)", sysfs);
		} else {
			unavailable(s, "check that sysfs is mounted and readable", "cannot open %s/%s: %s",
				    sysfs, pmu, strerror(errno));
		}
		return 0;
	}
	c.fmtfd = openat(c.pmufd, "format", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if ((err = read_type(&c)))
		goto out;
	/* Named events first, so explicit terms can override their bits
	 * (cpu/mem-loads,ldlat=30/). */
	for (size_t i = 0; i < nt; i++) {
		err = expand_named(&c, &t[i]);
		if (err == 2)
			err = 0;
		if (err)
			goto out;
	}
	for (size_t i = 0; i < nt; i++)
		if (!t[i].done && (err = apply_term(&c, &t[i], true)))
			goto out;
	s->config = c.cfg[0];
	s->config1 = c.cfg[1];
	s->config2 = c.cfg[2];
	s->on_pmu = s->type != PERF_TYPE_SOFTWARE;
	s->unit = unit_of(s->type, s->config);
out:
	if (c.fmtfd >= 0)
		close(c.fmtfd);
	close(c.pmufd);
	return err < 0 ? err : 0;
}

/* ---- CPUID -------------------------------------------------------------- */

void pmu_cpuid_decode(uint32_t eax, unsigned *family, unsigned *model, unsigned *stepping)
{
	unsigned base_family = (eax >> 8) & 0xf, ext_family = (eax >> 20) & 0xff;
	unsigned base_model = (eax >> 4) & 0xf, ext_model = (eax >> 16) & 0xf;

	*stepping = eax & 0xf;
	*family = base_family == 0xf ? base_family + ext_family : base_family;
	*model = base_family == 6 || base_family == 0xf ? (ext_model << 4) + base_model : base_model;
}

const char *pmu_cpuid_pfm_table(const char *vendor, unsigned family, unsigned model, unsigned stepping)
{
	for (size_t i = 0; i < PMU_ARRAY_SIZE(cputable); i++) {
		const struct cputab *r = &cputable[i];

		if (!strcmp(r->vendor, vendor) && r->family == family && model >= r->model_lo &&
		    model <= r->model_hi && stepping >= r->stepping_lo && stepping <= r->stepping_hi)
			return r->table;
	}
	return NULL;
}

int pmu_cpuid_host(char vendor[13], unsigned *family, unsigned *model, unsigned *stepping)
{
	vendor[0] = '\0';
	*family = *model = *stepping = 0;
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;

	if (!__get_cpuid(0, &a, &b, &c, &d) || a < 1)
		return pmu_error(PMU_ERR_UNSUPPORTED, "CPUID leaf 1 is not available");
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	vendor[12] = '\0';
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return pmu_error(PMU_ERR_UNSUPPORTED, "CPUID leaf 1 is not available");
	pmu_cpuid_decode(a, family, model, stepping);
	return 0;
#else
	return pmu_error(PMU_ERR_UNSUPPORTED, "CPUID is x86 only");
#endif
}

/* ---- pfm: through libpfm4 ------------------------------------------------ */

#define PFM_REMEDY_ABSENT "apt-get install libpfm4, or give the event as a raw r<hex> selector"
#define PFM_REMEDY_NAME   "list this CPU's event names with showevtinfo (package libpfm4-tools), " \
			  "or give a raw r<hex> selector"

/*
 * One load of libpfm4 per pmu_evlist_parse() call: loaded at the first pfm:
 * item, terminated and closed at the end.  The function pointers take their
 * types from libpfm4's header, so a prototype change fails the build.
 */
struct pfmlib {
	int state;              /* 0 not loaded yet, 1 usable, -1 not (reason, remedy) */
	void *dl;
	__typeof__(pfm_initialize) *initialize;
	__typeof__(pfm_terminate) *terminate;
	__typeof__(pfm_strerror) *strerr;
	__typeof__(pfm_get_version) *get_version;
	__typeof__(pfm_get_pmu_info) *get_pmu_info;
	__typeof__(pfm_get_os_event_encoding) *encode;
	char version[32];
	char core[64];          /* the core PMU table in use, "" when none */
	char note[256];
	char reason[320];
	char remedy[200];
};

/* The first present core PMU.  Ids past this header's PFM_PMU_MAX are asked
 * too: a newer libpfm4 at run time knows more PMUs (adl_glc). */
static void pfm_find_core(struct pfmlib *p)
{
	p->core[0] = '\0';
	for (int id = PFM_PMU_NONE; id < PFM_PMU_MAX + 512; id++) {
		pfm_pmu_info_t info;

		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		if (p->get_pmu_info((pfm_pmu_t)id, &info) == PFM_SUCCESS && info.is_present &&
		    info.type == PFM_PMU_TYPE_CORE && info.name) {
			setf(p->core, sizeof(p->core), "%s", info.name);
			return;
		}
	}
}

/* The release, from the file the loader found (libpfm.so.4.13.0); the API
 * version libpfm4 reports is only 4.0. */
static void pfm_version(struct pfmlib *p)
{
	Dl_info info;
	char real[PATH_MAX];
	const char *base;
	int v = p->get_version();

	setf(p->version, sizeof(p->version), "%d.%d", PFM_MAJ_VERSION(v), v & 0xffff);
	if (!dladdr((void *)p->initialize, &info) || !info.dli_fname || !realpath(info.dli_fname, real))
		return;
	base = strrchr(real, '/');
	base = base ? base + 1 : real;
	if (!strncmp(base, "libpfm.so.", 10) && isdigit((unsigned char)base[10]))
		setf(p->version, sizeof(p->version), "%s", base + 10);
}

static void hexfam(char *out, size_t size, unsigned family)
{
	setf(out, size, family < 10 ? "%u" : "0x%x", family);
}

/*
 * libpfm4 finds the core PMU from CPUID leaf 0xa and the model; a VM that
 * hides the architectural PMU leaves it with only the perf:: generic table.
 * Then the model's table is forced (LIBPFM_FORCE_PMU, read by
 * pfm_initialize()) so that the CPU's own event names still encode; perf::
 * names stay available.  A user's own LIBPFM_FORCE_PMU is left alone.
 */
static void pfm_cpuid_fallback(struct pfmlib *p)
{
	char vendor[13], fam[16];
	unsigned family, model, stepping;
	const char *table;
	int ret;

	if (getenv("LIBPFM_FORCE_PMU") || pmu_cpuid_host(vendor, &family, &model, &stepping))
		return;
	hexfam(fam, sizeof(fam), family);
	table = pmu_cpuid_pfm_table(vendor, family, model, stepping);
	if (!table) {
		setf(p->note, sizeof(p->note), "libpfm4 detected no core PMU, and CPUID %s family %s model 0x%x "
		     "stepping %u has no libpfm4 table in perfev-cpu.def", vendor, fam, model, stepping);
		return;
	}
	p->terminate();
	if (setenv("LIBPFM_FORCE_PMU", table, 1) == 0) {
		ret = p->initialize();
		unsetenv("LIBPFM_FORCE_PMU");
	} else {
		ret = PFM_ERR_NOMEM;
	}
	if (ret != PFM_SUCCESS) {
		p->terminate();
		if ((ret = p->initialize()) != PFM_SUCCESS) {
			p->state = -1;
			setf(p->reason, sizeof(p->reason), "libpfm4 %s failed to initialize: %s", p->version,
			     p->strerr(ret));
			setf(p->remedy, sizeof(p->remedy), "%s", PFM_REMEDY_ABSENT);
			return;
		}
	}
	pfm_find_core(p);
	if (!strcmp(p->core, table))
		setf(p->note, sizeof(p->note), "libpfm4 detected no core PMU; using its '%s' table from CPUID "
		     "%s family %s model 0x%x", table, vendor, fam, model);
	else
		setf(p->note, sizeof(p->note), "libpfm4 detected no core PMU, and libpfm4 %s has no '%s' table "
		     "for CPUID %s family %s model 0x%x", p->version, table, vendor, fam, model);
}

static void pfm_load(struct pfmlib *p, const char *path)
{
	static const char *const syms[] = {
		"pfm_initialize", "pfm_terminate", "pfm_strerror", "pfm_get_version",
		"pfm_get_pmu_info", "pfm_get_os_event_encoding",
	};
	void *fn[PMU_ARRAY_SIZE(syms)];
	int ret;

	p->state = -1;
	setf(p->remedy, sizeof(p->remedy), "%s", PFM_REMEDY_ABSENT);
	dlerror();
	p->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!p->dl) {
		const char *e = dlerror();

		setf(p->reason, sizeof(p->reason), "libpfm4 is not installed (dlopen %s: %s)", path,
		     e ? e : "unknown error");
		return;
	}
	for (size_t i = 0; i < PMU_ARRAY_SIZE(syms); i++)
		if (!(fn[i] = dlsym(p->dl, syms[i]))) {
			setf(p->reason, sizeof(p->reason), "'%s' is not a usable libpfm4: it has no %s", path, syms[i]);
			return;
		}
	p->initialize = (__typeof__(p->initialize))fn[0];
	p->terminate = (__typeof__(p->terminate))fn[1];
	p->strerr = (__typeof__(p->strerr))fn[2];
	p->get_version = (__typeof__(p->get_version))fn[3];
	p->get_pmu_info = (__typeof__(p->get_pmu_info))fn[4];
	p->encode = (__typeof__(p->encode))fn[5];
	pfm_version(p);
	if ((ret = p->initialize()) != PFM_SUCCESS) {
		setf(p->reason, sizeof(p->reason), "libpfm4 %s failed to initialize: %s", p->version, p->strerr(ret));
		return;
	}
	p->state = 1;
	pfm_find_core(p);
	if (!p->core[0])
		pfm_cpuid_fallback(p);
}

static void pfm_unload(struct pfmlib *p)
{
	if (p->state > 0)
		p->terminate();
	if (p->dl)
		dlclose(p->dl);
	memset(p, 0, sizeof(*p));
}

/* Whether a libpfm4 event string sets privilege levels itself: a u, k or h
 * attribute (":u", ":k=0", ...) after the event name. */
static bool pfm_has_modifier(const char *name)
{
	const char *p = strstr(name, "::");

	p = p ? p + 2 : name;
	while ((p = strchr(p, ':'))) {
		p++;
		if (*p && strchr("ukh", *p) && (p[1] == ':' || p[1] == '=' || !p[1]))
			return true;
	}
	return false;
}

static int resolve_pfm(struct pmu_evspec *s, const char *path, struct pfmlib *p)
{
	const char *name = s->given + 4;
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;
	char *fstr = NULL;
	int ret;

	if (!*name)
		return pmu_error(PMU_ERR_INVAL, "empty libpfm4 event name in '%s'", s->given);
	s->kind = PMU_EV_PFM;
	s->on_pmu = true;
	s->modifier = pfm_has_modifier(name);
	setf(s->name, sizeof(s->name), "%s", s->given);
	if (!p->state)
		pfm_load(p, path);
	setf(s->note, sizeof(s->note), "%s", p->note);
	if (p->state < 0)
		return unavailable(s, p->remedy, "%s", p->reason);

	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.fstr = &fstr;
	arg.size = sizeof(arg);
	ret = p->encode(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT, &arg);
	if (ret != PFM_SUCCESS) {
		free(fstr);
		return unavailable(s, PFM_REMEDY_NAME, "libpfm4 %s (core PMU table '%s') cannot resolve '%s': %s",
				   p->version, p->core[0] ? p->core : "none detected", name, p->strerr(ret));
	}
	s->type = attr.type;
	s->config = attr.config;
	s->config1 = attr.config1;
	s->config2 = attr.config2;
	s->exclude_user = attr.exclude_user;
	s->exclude_kernel = attr.exclude_kernel;
	s->exclude_hv = attr.exclude_hv;
	s->on_pmu = attr.type != PERF_TYPE_SOFTWARE;
	s->unit = unit_of(attr.type, attr.config);
	if (fstr)
		setf(s->name, sizeof(s->name), "pfm:%s", fstr);
	/* libpfm4 strdup()s fstr with the process's malloc. */
	free(fstr);
	return 0;
}

/* ---- items and lists ------------------------------------------------------ */

static int parse_item(struct pmu_evspec *s, const char *sysfs, const char *libpfm, struct pfmlib *pfm)
{
	const char *g = s->given, *colon, *mods = NULL;
	const struct pmu_evdef *d;
	char base[256], canon[4] = "", hint[64];
	int err;

	s->available = true;
	s->unit = "count";
	if (!strncmp(g, "pfm:", 4))
		return resolve_pfm(s, libpfm, pfm);
	if (strchr(g, '/'))
		return resolve_pmu(s, sysfs);
	colon = strchr(g, ':');
	setf(base, sizeof(base), "%.*s", colon ? (int)(colon - g) : (int)strlen(g), g);
	if (colon)
		mods = colon + 1;
	if ((d = pmu_evtable_find(base))) {
		set_generic(s, d);
	} else if (base[0] == 'r' && base[1] && strspn(base + 1, "0123456789abcdefABCDEF") == strlen(base + 1)) {
		const char *h = base + 1 + strspn(base + 1, "0");

		if (strlen(h) > 16)
			return pmu_error(PMU_ERR_INVAL, "raw selector '%s' is wider than 64 bits", base);
		s->kind = PMU_EV_RAW;
		s->type = PERF_TYPE_RAW;
		s->config = strtoull(base + 1, NULL, 16);
	} else {
		suggest(base, hint, sizeof(hint));
		if (hint[0])
			return pmu_error(PMU_ERR_INVAL, "unknown event '%s' (did you mean '%s'?)", base, hint);
		if (!strcmp(base, "r"))
			return pmu_error(PMU_ERR_INVAL, "empty raw selector 'r' (give r<hex>, e.g. r00c0)");
		if (base[0] == 'r' && isxdigit((unsigned char)base[1]))
			return pmu_error(PMU_ERR_INVAL, "raw selector '%s' has '%c', which is not a hex digit", base,
					 base[1 + strspn(base + 1, "0123456789abcdefABCDEF")]);
		return pmu_error(PMU_ERR_INVAL, "unknown event '%s' (not a generic name, r<hex>, PMU/term=value/ "
				 "or pfm:NAME; see pmurec --list-events)", base);
	}
	if (mods && (err = parse_mods(s, mods, g, canon)))
		return err;
	s->on_pmu = s->type != PERF_TYPE_SOFTWARE;
	if (s->kind == PMU_EV_RAW)
		setf(s->name, sizeof(s->name), "r%llx%s%s", (unsigned long long)s->config, mods ? ":" : "", canon);
	else
		setf(s->name, sizeof(s->name), "%s%s%s", d->name, mods ? ":" : "", canon);
	return 0;
}

static bool same_event(const struct pmu_evspec *a, const struct pmu_evspec *b)
{
	if (!a->available || !b->available)
		return !strcmp(a->given, b->given);
	return a->type == b->type && a->config == b->config && a->config1 == b->config1 &&
	       a->config2 == b->config2 && a->exclude_user == b->exclude_user &&
	       a->exclude_kernel == b->exclude_kernel && a->exclude_hv == b->exclude_hv;
}

int pmu_evlist_parse(const char *list, const struct pmu_evenv *env, struct pmu_evspec **out, size_t *n)
{
	const char *sysfs = env && env->sysfs ? env->sysfs : SYSFS_DEFAULT;
	const char *libpfm = env && env->libpfm ? env->libpfm : getenv("PMU_LIBPFM");
	struct pfmlib pfm;
	struct pmu_evspec *v;
	const char *p = list;
	size_t cnt = 0;
	int err = 0;

	*out = NULL;
	*n = 0;
	if (!libpfm || !*libpfm)
		libpfm = LIBPFM_DEFAULT;
	if (!list || !*list)
		return pmu_error(PMU_ERR_INVAL, "empty event list");
	v = calloc(PMU_EVLIST_MAX, sizeof(*v));
	if (!v)
		return pmu_error(PMU_ERR_NOMEM, "cannot allocate the event list");
	memset(&pfm, 0, sizeof(pfm));
	for (;;) {
		const char *start = p, *end;
		bool in_pmu = false;
		size_t len;

		/* A comma inside PMU/.../ is a term separator, not an item's end. */
		while (*p && (in_pmu || *p != ',')) {
			if (*p == '/')
				in_pmu = !in_pmu;
			p++;
		}
		end = p;
		while (start < end && (*start == ' ' || *start == '\t'))
			start++;
		while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		len = (size_t)(end - start);
		if (in_pmu) {
			err = pmu_error(PMU_ERR_INVAL, "'%.*s' in the event list has no closing '/'",
					(int)(len > 60 ? 60 : len), start);
			goto fail;
		}
		if (!len) {
			err = pmu_error(PMU_ERR_INVAL, "empty item in event list '%s'", list);
			goto fail;
		}
		if (cnt == PMU_EVLIST_MAX) {
			err = pmu_error(PMU_ERR_INVAL, "more than %d events in the event list", PMU_EVLIST_MAX);
			goto fail;
		}
		if (len >= sizeof(v[cnt].given)) {
			err = pmu_error(PMU_ERR_INVAL, "event '%.40s...' is longer than %zu characters", start,
					sizeof(v[cnt].given) - 1);
			goto fail;
		}
		for (size_t i = 0; i < len; i++)
			if (start[i] <= ' ' || start[i] > '~') {
				err = pmu_error(PMU_ERR_INVAL, "event '%.*s' has a space or a character that is "
						"not printable ASCII", (int)len, start);
				goto fail;
			}
		memcpy(v[cnt].given, start, len);
		if ((err = parse_item(&v[cnt], sysfs, libpfm, &pfm)))
			goto fail;
		for (size_t i = 0; i < cnt; i++)
			if (same_event(&v[i], &v[cnt])) {
				err = pmu_error(PMU_ERR_INVAL, "event '%s' repeats '%s'", v[cnt].given, v[i].given);
				goto fail;
			}
		cnt++;
		if (!*p)
			break;
		p++;
	}
	pfm_unload(&pfm);
	*out = v;
	*n = cnt;
	return 0;
fail:
	pfm_unload(&pfm);
	free(v);
	return err;
}

int pmu_evlist_defaults(struct pmu_evspec **out, size_t *n)
{
	struct pmu_evspec *v = calloc(PMU_ARRAY_SIZE(evtable), sizeof(*v));
	size_t cnt = 0;

	*out = NULL;
	*n = 0;
	if (!v)
		return pmu_error(PMU_ERR_NOMEM, "cannot allocate the default event list");
	for (size_t i = 0; i < PMU_ARRAY_SIZE(evtable); i++) {
		struct pmu_evspec *s = &v[cnt];

		if (!evtable[i].in_default)
			continue;
		set_generic(s, &evtable[i]);
		setf(s->given, sizeof(s->given), "%s", evtable[i].name);
		setf(s->name, sizeof(s->name), "%s", evtable[i].name);
		s->on_pmu = s->type != PERF_TYPE_SOFTWARE;
		s->available = true;
		cnt++;
	}
	*out = v;
	*n = cnt;
	return 0;
}
