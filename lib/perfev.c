/*
 * The event list, the platform-free half: splitting `-e LIST`, the syntax
 * of each item, the generic table (perfev.def) and the refusal of
 * repeats.  What an item means on a host (perf_event_attr fields, sysfs
 * PMU formats, libpfm4) is the platform resolver's: backends/<os>/.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "perfev.h"
#include "util.h"

/* a PMU's event file is a sysfs attribute, at most a page */
#define TERMS_TEXT_MAX 4096

/* perfev.def's config column is the platform's (backends/linux/perfev.c
 * expands it); here a row is its names, class, unit and description. */
#define PMU_EVSET_DEFAULT true
#define PMU_EVSET_EXTRA   false
static const struct pmu_evdef evtable[] = {
#define PMU_EVDEF(name, aliases, type, config, unit, set, desc) \
	{ name, aliases, PMU_EV_##type, unit, PMU_EVSET_##set, desc },
#include "perfev.def"
#undef PMU_EVDEF
};
#undef PMU_EVSET_DEFAULT
#undef PMU_EVSET_EXTRA

/* ---- small helpers ---------------------------------------------------- */


int pmu_evspec_unavailable(struct pmu_evspec *s, const char *remedy, const char *fmt, ...)
{
	va_list ap;

	s->available = false;
	va_start(ap, fmt);
	vsnprintf(s->reason, sizeof(s->reason), fmt, ap);
	va_end(ap);
	pmu_setf(s->remedy, sizeof(s->remedy), "%s", remedy);
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
		pmu_setf(best, best_size, "%s", w);
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

/* The grammar's view of a generic item; the resolver adds the encoding. */
static void set_generic(struct pmu_evspec *s, const struct pmu_evdef *d)
{
	s->kind = d->kind;
	s->generic = d;
	s->unit = d->unit;
	s->on_pmu = d->kind == PMU_EV_HARDWARE;
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

/* ---- terms -------------------------------------------------------------- */

int pmu_evterms_split(const char *text, struct pmu_evterm *t, size_t *nt, char *why, size_t why_size)
{
	char buf[TERMS_TEXT_MAX + 1], *save = NULL, *tok;
	size_t len = strlen(text);

	*nt = 0;
	if (len >= sizeof(buf)) {
		pmu_setf(why, why_size, "terms too long");
		return PMU_ERR_INVAL;
	}
	memcpy(buf, text, len + 1);
	while (len && isspace((unsigned char)buf[len - 1]))
		buf[--len] = '\0';
	if (!len) {
		pmu_setf(why, why_size, "no terms");
		return PMU_ERR_INVAL;
	}
	/* strtok_r would skip empty terms; walk the commas by hand. */
	for (tok = buf; tok; tok = save) {
		char *eq, *c;
		struct pmu_evterm *x;

		save = strchr(tok, ',');
		if (save)
			*save++ = '\0';
		if (!*tok) {
			pmu_setf(why, why_size, "empty term");
			return PMU_ERR_INVAL;
		}
		if (*nt == PMU_EVTERMS_MAX) {
			pmu_setf(why, why_size, "more than %d terms", PMU_EVTERMS_MAX);
			return PMU_ERR_INVAL;
		}
		x = &t[(*nt)++];
		memset(x, 0, sizeof(*x));
		eq = strchr(tok, '=');
		if (eq)
			*eq = '\0';
		if (!isalnum((unsigned char)tok[0]) && tok[0] != '_') {
			pmu_setf(why, why_size, "bad term name '%s'", tok);
			return PMU_ERR_INVAL;
		}
		for (c = tok; *c; c++)
			if (!isalnum((unsigned char)*c) && !strchr("_.-", *c)) {
				pmu_setf(why, why_size, "bad term name '%s'", tok);
				return PMU_ERR_INVAL;
			}
		if (strlen(tok) >= sizeof(x->name)) {
			pmu_setf(why, why_size, "term name '%.20s...' too long", tok);
			return PMU_ERR_INVAL;
		}
		strcpy(x->name, tok);
		x->value = 1;   /* a bare term is a flag: on */
		if (eq) {
			x->has_value = true;
			if (parse_u64(eq + 1, &x->value)) {
				pmu_setf(why, why_size, "bad value '%s' for term '%s' (a decimal or 0x hex number of at most 64 bits)",
				     eq + 1, tok);
				return PMU_ERR_INVAL;
			}
		}
	}
	return 0;
}

/* ---- PMU/TERMS/ and pfm: ----------------------------------------------- */

/* The syntax of PMU/TERMS/[MOD]: a PMU name that is a plain directory name,
 * terms that split, none given twice.  Whether the PMU and its terms exist
 * is the resolver's to say. */
static int parse_pmu_item(struct pmu_evspec *s)
{
	const char *item = s->given, *a = strchr(item, '/'), *b = a ? strchr(a + 1, '/') : NULL;
	char canon[4], why[200];
	struct pmu_evterm t[PMU_EVTERMS_MAX];
	const char *mods;
	size_t nt;
	int err;

	if (!a || !b)
		return pmu_error(PMU_ERR_INVAL, "'%s' is not PMU/TERMS/: it needs a closing '/'", item);
	if (a == item || (size_t)(a - item) >= sizeof(s->pmu))
		return pmu_error(PMU_ERR_INVAL, "bad PMU name in '%s'", item);
	memcpy(s->pmu, item, (size_t)(a - item));
	s->pmu[a - item] = '\0';
	/* A directory name under sysfs: no '/', no "." or "..". */
	for (const char *p = s->pmu; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_.-", *p))
			return pmu_error(PMU_ERR_INVAL, "bad PMU name '%s' in '%s'", s->pmu, item);
	if (s->pmu[0] == '.')
		return pmu_error(PMU_ERR_INVAL, "bad PMU name '%s' in '%s'", s->pmu, item);
	memcpy(s->terms, a + 1, (size_t)(b - a - 1));
	s->terms[b - a - 1] = '\0';
	mods = b + 1;
	if (strchr(mods, '/'))
		return pmu_error(PMU_ERR_INVAL, "unexpected '/' after '%.*s' in '%s'", (int)(b + 1 - item), item, item);
	if (*mods == ':')
		mods++;
	if ((*mods || b[1] == ':') && (err = parse_mods(s, mods, item, canon)))
		return err;
	if (pmu_evterms_split(s->terms, t, &nt, why, sizeof(why)))
		return pmu_error(PMU_ERR_INVAL, "%s in '%s'", why, item);
	for (size_t i = 0; i < nt; i++)
		for (size_t k = i + 1; k < nt; k++)
			if (!strcmp(t[i].name, t[k].name))
				return pmu_error(PMU_ERR_INVAL, "term '%s' given twice in '%s'", t[i].name, item);
	s->kind = PMU_EV_PMU;
	s->on_pmu = true;
	pmu_setf(s->name, sizeof(s->name), "%s", item);
	return 0;
}

/* ---- items and lists ------------------------------------------------------ */

static int parse_item(struct pmu_evspec *s)
{
	const char *g = s->given, *colon, *mods = NULL;
	const struct pmu_evdef *d;
	char base[256], canon[4] = "", hint[64];
	int err;

	s->available = true;
	s->unit = "count";
	if (!strncmp(g, "pfm:", 4)) {
		/* libpfm4's own syntax (and modifiers) is the resolver's */
		if (!g[4])
			return pmu_error(PMU_ERR_INVAL, "empty libpfm4 event name in '%s'", g);
		s->kind = PMU_EV_PFM;
		s->on_pmu = true;
		pmu_setf(s->name, sizeof(s->name), "%s", g);
		return 0;
	}
	if (strchr(g, '/'))
		return parse_pmu_item(s);
	colon = strchr(g, ':');
	pmu_setf(base, sizeof(base), "%.*s", colon ? (int)(colon - g) : (int)strlen(g), g);
	if (colon)
		mods = colon + 1;
	if ((d = pmu_evtable_find(base))) {
		set_generic(s, d);
	} else if (base[0] == 'r' && base[1] && strspn(base + 1, "0123456789abcdefABCDEF") == strlen(base + 1)) {
		const char *h = base + 1 + strspn(base + 1, "0");

		if (strlen(h) > 16)
			return pmu_error(PMU_ERR_INVAL, "raw selector '%s' is wider than 64 bits", base);
		s->kind = PMU_EV_RAW;
		s->on_pmu = true;
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
	if (s->kind == PMU_EV_RAW)
		pmu_setf(s->name, sizeof(s->name), "r%llx%s%s", (unsigned long long)s->config, mods ? ":" : "", canon);
	else
		pmu_setf(s->name, sizeof(s->name), "%s%s%s", d->name, mods ? ":" : "", canon);
	return 0;
}

static bool same_levels(const struct pmu_evspec *a, const struct pmu_evspec *b)
{
	return a->exclude_user == b->exclude_user && a->exclude_kernel == b->exclude_kernel &&
	       a->exclude_hv == b->exclude_hv;
}

/*
 * One event twice: the same generic row or raw selector (known from the
 * grammar alone, so it holds where nothing resolves), else the same
 * encoding when both resolved, else the same text.
 */
static bool same_event(const struct pmu_evspec *a, const struct pmu_evspec *b)
{
	if (a->generic && b->generic)
		return a->generic == b->generic && same_levels(a, b);
	if (a->kind == PMU_EV_RAW && b->kind == PMU_EV_RAW)
		return a->config == b->config && same_levels(a, b);
	if (!a->available || !b->available)
		return !strcmp(a->given, b->given);
	return a->type == b->type && a->config == b->config && a->config1 == b->config1 &&
	       a->config2 == b->config2 && same_levels(a, b);
}

int pmu_evlist_parse_with(const char *list, pmu_evresolve_fn *resolve, void *ctx, struct pmu_evspec **out,
			  size_t *n)
{
	struct pmu_evspec *v;
	const char *p = list;
	size_t cnt = 0;
	int err = 0;

	*out = NULL;
	*n = 0;
	if (!list || !*list)
		return pmu_error(PMU_ERR_INVAL, "empty event list");
	v = calloc(PMU_EVLIST_MAX, sizeof(*v));
	if (!v)
		return pmu_error(PMU_ERR_NOMEM, "cannot allocate the event list");
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
		if ((err = parse_item(&v[cnt])) || (err = resolve(ctx, &v[cnt])))
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
	*out = v;
	*n = cnt;
	return 0;
fail:
	free(v);
	return err;
}

int pmu_evlist_defaults_with(pmu_evresolve_fn *resolve, void *ctx, struct pmu_evspec **out, size_t *n)
{
	struct pmu_evspec *v = calloc(PMU_ARRAY_SIZE(evtable), sizeof(*v));
	size_t cnt = 0;
	int err;

	*out = NULL;
	*n = 0;
	if (!v)
		return pmu_error(PMU_ERR_NOMEM, "cannot allocate the default event list");
	for (size_t i = 0; i < PMU_ARRAY_SIZE(evtable); i++) {
		struct pmu_evspec *s = &v[cnt];

		if (!evtable[i].in_default)
			continue;
		set_generic(s, &evtable[i]);
		pmu_setf(s->given, sizeof(s->given), "%s", evtable[i].name);
		pmu_setf(s->name, sizeof(s->name), "%s", evtable[i].name);
		s->available = true;
		if ((err = resolve(ctx, s))) {
			free(v);
			return err;
		}
		cnt++;
	}
	*out = v;
	*n = cnt;
	return 0;
}
