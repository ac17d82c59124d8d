/*
 * The profile's exports: folded stacks (flamegraph.pl), speedscope's JSON
 * file format and pprof's profile.proto (gzip), and the flame graph tree
 * the HTML report draws.  All of them walk the aggregated stacks of
 * profile.h (an_prof_each_stack), never the samples stream: memory grows
 * with the distinct stacks, not with the samples.
 *
 * A stack whose chain was cut (longer than the recorder or the unwinder
 * kept) stands on a "[chain cut]" frame, so that its missing callers are
 * not mistaken for the program's root.
 *
 * Frame names are the same in every export: the function as symbolized,
 * or, when it could not be, a placeholder that says why in brackets, e.g.
 * "[stale hot 0x1234]" (object basename and the address in the object), so
 * that an unresolved frame is never shown as a wrong name and never
 * silently merged with another.  Inline frames are frames of their own in
 * folded and speedscope stacks (flamegraph.pl's "_[i]" suffix marks them in
 * folded output, "_[k]" the kernel's); in pprof they are the lines of one
 * location, innermost first, as profile.proto says.
 *
 * Output files are written whole or not at all (an_out_open: a temporary
 * sibling renamed over the path), so a failure never leaves an empty or
 * partial file behind.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "error.h"
#include "export.h"
#include "model.h"
#include "profile.h"
#include "profile.pb-c.h"
#include "spec.h"

/* ---- a string -> number table ------------------------------------------------ */

/*
 * Open addressing over copied keys: the string table of pprof, its
 * functions, locations and mappings, speedscope's frames and the folded
 * lines are all "have I seen this key, and what number did it get".
 */
struct smap {
	char **key;
	size_t *val;
	size_t n, cap; /* cap a power of two, at least twice n */
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static void smap_release(struct smap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->key[i]);
	free(m->key);
	free(m->val);
	memset(m, 0, sizeof(*m));
}

static int smap_grow(struct smap *m)
{
	struct smap g = { NULL, NULL, m->n, m->cap ? m->cap * 2 : 64 };

	g.key = calloc(g.cap, sizeof(*g.key));
	g.val = calloc(g.cap, sizeof(*g.val));
	if (!g.key || !g.val) {
		free(g.key);
		free(g.val);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->key[i])
			continue;
		for (j = hash_str(m->key[i]) & (g.cap - 1); g.key[j]; j = (j + 1) & (g.cap - 1))
			;
		g.key[j] = m->key[i];
		g.val[j] = m->val[i];
	}
	free(m->key);
	free(m->val);
	*m = g;
	return 0;
}

/* The slot of key: found (*added false), or put with value val (*added
 * true).  -1 when out of memory. */
static long smap_put(struct smap *m, const char *key, size_t val, bool *added)
{
	size_t j;

	if ((m->n + 1) * 2 > m->cap && smap_grow(m))
		return -1;
	for (j = hash_str(key) & (m->cap - 1); m->key[j]; j = (j + 1) & (m->cap - 1))
		if (!strcmp(m->key[j], key)) {
			*added = false;
			return (long)j;
		}
	if (!(m->key[j] = strdup(key)))
		return -1;
	m->val[j] = val;
	m->n++;
	*added = true;
	return (long)j;
}

/* ---- frame names --------------------------------------------------------------- */

static const char *base_name(const char *path)
{
	const char *s;

	if (!path || !*path)
		return "?";
	s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

/*
 * The name every export gives frame f: its function, or a bracketed
 * placeholder that says why there is none.  Characters that would break a
 * format (';' in folded stacks, control characters) are replaced.
 */
static void frame_name(const struct pmu_frame *f, char *out, size_t n)
{
	switch (f->status) {
	case PMU_FRAME_OK:
		if (f->func) {
			snprintf(out, n, "%s", f->func);
			break;
		}
		/* a resolved frame without a name is a symbol-less one */
		__attribute__((fallthrough));
	case PMU_FRAME_NOSYM:
		snprintf(out, n, "[%s 0x%" PRIx64 "]", base_name(f->object), f->rel);
		break;
	case PMU_FRAME_STALE:
		snprintf(out, n, "[stale %s 0x%" PRIx64 "]", base_name(f->object), f->rel);
		break;
	case PMU_FRAME_NOTFOUND:
		snprintf(out, n, "[not found %s 0x%" PRIx64 "]", base_name(f->object), f->rel);
		break;
	case PMU_FRAME_UNMAPPED:
		snprintf(out, n, "[unmapped 0x%" PRIx64 "]", f->addr);
		break;
	case PMU_FRAME_KERNEL:
		snprintf(out, n, "%s", f->func ? f->func : "[kernel]");
		break;
	}
	for (char *c = out; *c; c++)
		if (*c == ';' || (unsigned char)*c < 0x20 || *c == 0x7f)
			*c = *c == ';' ? ':' : '?';
}

static bool frame_resolved(const struct pmu_frame *f)
{
	return (f->status == PMU_FRAME_OK && f->func) || (f->status == PMU_FRAME_KERNEL && f->func);
}

static const char *frame_kind(const struct pmu_frame *f)
{
	if (f->status == PMU_FRAME_KERNEL)
		return "kernel";
	if (!frame_resolved(f))
		return "unresolved";
	return f->inlined ? "inline" : "func";
}

#define CUT_FRAME "[chain cut]"

/* A program name in a stack: the same replacements. */
static void prog_name(const char *prog, char *out, size_t n)
{
	snprintf(out, n, "%s", prog && *prog ? prog : "?");
	for (char *c = out; *c; c++)
		if (*c == ';' || (unsigned char)*c < 0x20 || *c == 0x7f)
			*c = *c == ';' ? ':' : '?';
}

/*
 * The frames of one physical location: frames[i] and the frames inlined
 * into it, which follow it (root first) with inlined set and the same
 * address.  Returns the end of the group.
 */
static size_t group_end(const struct an_prof_stack *s, size_t i)
{
	size_t e = i + 1;

	while (e < s->nframes && s->frames[e].inlined && s->frames[e].addr == s->frames[i].addr)
		e++;
	return e;
}

/* ---- output files ------------------------------------------------------------- */

static int out_open(struct an_out *o, const char *path)
{
	if (!an_out_open(o, path)) {
		int e = errno;

		an_out_close(o, false);
		return pmu_error(PMU_ERR_IO, "cannot write '%s': %s", path, strerror(e));
	}
	return 0;
}

/* Close o, renaming it into place when ok; the message is printed by
 * an_out_close() when that fails. */
static int out_close(struct an_out *o, const char *path, int err)
{
	bool ok = !err && !ferror(o->f) && !fflush(o->f);

	if (!err && !ok)
		err = pmu_error(PMU_ERR_IO, "cannot write '%s': %s", path, strerror(errno ? errno : EIO));
	if (an_out_close(o, ok) && !err)
		err = pmu_error(PMU_ERR_IO, "cannot write '%s'", path);
	return err;
}

/* ---- folded stacks --------------------------------------------------------------- */

/*
 * flamegraph.pl's input: "program;outer;...;inner count", one line per
 * distinct stack (the incarnations of a program merged), sorted.
 */
struct folded {
	struct smap lines;
	uint64_t *counts;
	size_t ncounts;
	char *buf;
	size_t cap;
};

static int buf_cat(char **buf, size_t *cap, size_t *len, const char *s)
{
	size_t l = strlen(s);

	if (*len + l + 1 > *cap) {
		size_t nc = (*len + l + 1) * 2;
		char *nb = realloc(*buf, nc);

		if (!nb)
			return -1;
		*buf = nb;
		*cap = nc;
	}
	memcpy(*buf + *len, s, l + 1);
	*len += l;
	return 0;
}

static int folded_stack(void *ctx, const struct an_prof_stack *s)
{
	struct folded *fo = ctx;
	char name[600];
	size_t len = 0;
	bool added;
	long slot;

	if (!s->samples)
		return 0;
	prog_name(s->program, name, sizeof(name));
	if (buf_cat(&fo->buf, &fo->cap, &len, name) || (s->cut && buf_cat(&fo->buf, &fo->cap, &len, ";" CUT_FRAME)))
		return PMU_ERR_NOMEM;
	for (size_t i = 0; i < s->nframes; i++) {
		const struct pmu_frame *f = &s->frames[i];

		frame_name(f, name, sizeof(name) - 8);
		if (f->status == PMU_FRAME_KERNEL)
			strcat(name, "_[k]");
		else if (f->inlined)
			strcat(name, "_[i]");
		if (buf_cat(&fo->buf, &fo->cap, &len, ";") || buf_cat(&fo->buf, &fo->cap, &len, name))
			return PMU_ERR_NOMEM;
	}
	slot = smap_put(&fo->lines, fo->buf, fo->ncounts, &added);
	if (slot < 0)
		return PMU_ERR_NOMEM;
	if (added) {
		uint64_t *nc = realloc(fo->counts, (fo->ncounts + 1) * sizeof(*nc));

		if (!nc)
			return PMU_ERR_NOMEM;
		fo->counts = nc;
		fo->counts[fo->ncounts++] = 0;
	}
	fo->counts[fo->lines.val[slot]] += s->samples;
	return 0;
}

struct folded_line {
	const char *text;
	uint64_t count;
};

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->text, ((const struct folded_line *)b)->text);
}

static int no_samples(const char *path)
{
	return pmu_error(PMU_ERR_NOTFOUND, "cannot write '%s': the bundle has no samples to export", path);
}

int an_export_folded(const struct an_prof *p, const char *path)
{
	struct folded fo;
	struct folded_line *v = NULL;
	struct an_out o;
	size_t n = 0;
	int err;

	memset(&fo, 0, sizeof(fo));
	err = an_prof_each_stack(p, folded_stack, &fo);
	if (err == PMU_ERR_NOMEM)
		err = pmu_error(PMU_ERR_NOMEM, "--folded: out of memory");
	if (!err && !fo.ncounts)
		err = no_samples(path);
	if (!err && !(v = calloc(fo.ncounts, sizeof(*v))))
		err = pmu_error(PMU_ERR_NOMEM, "--folded: out of memory");
	if (!err) {
		for (size_t i = 0; i < fo.lines.cap; i++)
			if (fo.lines.key[i])
				v[n++] = (struct folded_line){ fo.lines.key[i], fo.counts[fo.lines.val[i]] };
		qsort(v, n, sizeof(*v), cmp_line);
		err = out_open(&o, path);
		if (!err) {
			for (size_t i = 0; i < n; i++)
				fprintf(o.f, "%s %" PRIu64 "\n", v[i].text, v[i].count);
			err = out_close(&o, path, 0);
		}
	}
	free(v);
	free(fo.counts);
	free(fo.buf);
	smap_release(&fo.lines);
	return err;
}

/* ---- speedscope ------------------------------------------------------------------ */

/*
 * speedscope's file format (https://www.speedscope.app/file-format-schema.json):
 * the frames shared by every profile ({name, file, line}: a frame is a
 * function with its file; line only when every sample in it was at the
 * same line, since speedscope merges frames by index and a line per sample
 * would split a function into many), and one "sampled" profile per program
 * (its incarnations merged), each stack root first, weighted by its number
 * of samples (unit "none").
 */
struct sscope {
	struct smap frames, progs;
	json_t *jframes, *jprofs;
	uint64_t total;
};

static int sscope_stack(void *ctx, const struct an_prof_stack *s)
{
	struct sscope *sc = ctx;
	char name[600], key[1200];
	json_t *stack, *prof;
	bool added;
	long slot;

	if (!s->samples)
		return 0;
	prog_name(s->program, name, sizeof(name));
	if ((slot = smap_put(&sc->progs, name, json_array_size(sc->jprofs), &added)) < 0)
		return PMU_ERR_NOMEM;
	if (added && json_array_append_new(sc->jprofs, json_pack("{s:s,s:s,s:s,s:i,s:I,s:[],s:[]}", "type",
								  "sampled", "name", name, "unit", "none",
								  "startValue", 0, "endValue", (json_int_t)0,
								  "samples", "weights")))
		return PMU_ERR_NOMEM;
	prof = json_array_get(sc->jprofs, sc->progs.val[slot]);
	if (!(stack = json_array()))
		return PMU_ERR_NOMEM;
	if (s->cut) {
		long fs = smap_put(&sc->frames, CUT_FRAME "\x1f", json_array_size(sc->jframes), &added);

		if (fs < 0) {
			json_decref(stack);
			return PMU_ERR_NOMEM;
		}
		if (added)
			json_array_append_new(sc->jframes, json_pack("{s:s}", "name", CUT_FRAME));
		json_array_append_new(stack, json_integer((json_int_t)sc->frames.val[fs]));
	}
	for (size_t i = 0; i < s->nframes; i++) {
		const struct pmu_frame *f = &s->frames[i];
		long fs;

		frame_name(f, name, sizeof(name));
		snprintf(key, sizeof(key), "%s\x1f%s", name, f->file ? f->file : "");
		if ((fs = smap_put(&sc->frames, key, json_array_size(sc->jframes), &added)) < 0) {
			json_decref(stack);
			return PMU_ERR_NOMEM;
		}
		if (added) {
			json_t *jf = json_pack("{s:s}", "name", name);

			if (f->file)
				json_object_set_new(jf, "file", json_string(f->file));
			if (f->line > 0)
				json_object_set_new(jf, "line", json_integer(f->line));
			json_array_append_new(sc->jframes, jf);
		} else {
			json_t *jf = json_array_get(sc->jframes, sc->frames.val[fs]);
			json_t *jl = json_object_get(jf, "line");

			if (jl && json_integer_value(jl) != f->line)
				json_object_del(jf, "line");
		}
		json_array_append_new(stack, json_integer((json_int_t)sc->frames.val[fs]));
	}
	json_array_append_new(json_object_get(prof, "samples"), stack);
	json_array_append_new(json_object_get(prof, "weights"), json_integer((json_int_t)s->samples));
	json_object_set_new(prof, "endValue",
			    json_integer(json_integer_value(json_object_get(prof, "endValue")) + (json_int_t)s->samples));
	sc->total += s->samples;
	return 0;
}

static int cmp_prof(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "endValue"));
	json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "endValue"));

	return x < y ? 1 : x > y ? -1 : 0;
}

int an_export_speedscope(const struct an_prof *p, const char *path)
{
	struct sscope sc;
	const struct an_prof_info *in = an_prof_info(p);
	json_t *doc = NULL, **v = NULL, *sorted = NULL;
	struct an_out o;
	size_t n;
	int err;

	memset(&sc, 0, sizeof(sc));
	sc.jframes = json_array();
	sc.jprofs = json_array();
	err = an_prof_each_stack(p, sscope_stack, &sc);
	if (err == PMU_ERR_NOMEM)
		err = pmu_error(PMU_ERR_NOMEM, "--speedscope: out of memory");
	if (!err && !sc.total)
		err = no_samples(path);
	if (!err) {
		/* the program with the most samples first: the one speedscope opens */
		n = json_array_size(sc.jprofs);
		v = calloc(n ? n : 1, sizeof(*v));
		sorted = json_array();
		for (size_t i = 0; v && i < n; i++)
			v[i] = json_array_get(sc.jprofs, i);
		if (v)
			qsort(v, n, sizeof(*v), cmp_prof);
		for (size_t i = 0; v && i < n; i++) {
			json_array_append(sorted, v[i]);
		}
		doc = json_pack("{s:s,s:{s:O},s:O,s:s,s:i,s:s}", "$schema",
				"https://www.speedscope.app/file-format-schema.json", "shared", "frames", sc.jframes,
				"profiles", sorted, "name", in && in->event ? in->event : "samples", "activeProfileIndex",
				0, "exporter", "pmuanalyze " PMU_VERSION);
		if (!v || !doc) {
			err = pmu_error(PMU_ERR_NOMEM, "--speedscope: out of memory");
		} else {
			char name[200];

			snprintf(name, sizeof(name), "%s samples (%" PRIu64 ")", in && in->event ? in->event : "",
				 sc.total);
			json_object_set_new(doc, "name", json_string(name));
			err = out_open(&o, path);
			if (!err) {
				int jr = json_dumpf(doc, o.f, JSON_COMPACT);

				if (!jr)
					fputc('\n', o.f);
				err = out_close(&o, path, jr ? pmu_error(PMU_ERR_IO, "cannot write '%s'", path) : 0);
			}
		}
	}
	free(v);
	json_decref(doc);
	json_decref(sorted);
	json_decref(sc.jframes);
	json_decref(sc.jprofs);
	smap_release(&sc.frames);
	smap_release(&sc.progs);
	return err;
}

/* ---- pprof ------------------------------------------------------------------------ */

/*
 * profile.proto (analyze/profile.proto, compiled by protoc-c): sample_type
 * [samples/count, the event's own unit], one Sample per distinct stack and
 * incarnation with the labels program and incarnation, a Location per
 * distinct address (with its inline chain as lines, innermost first), a
 * Function per name and file, a Mapping per object, build-id and load
 * bias.  The mappings span the sampled addresses only (the stream's frames
 * carry the object and the address in it, not the mapping's bounds);
 * pprof needs nothing more, since every location comes symbolized.
 */
typedef Perftools__Profiles__Profile PProfile;
typedef Perftools__Profiles__Sample PSample;
typedef Perftools__Profiles__Location PLocation;
typedef Perftools__Profiles__Function PFunction;
typedef Perftools__Profiles__Mapping PMapping;
typedef Perftools__Profiles__Line PLine;
typedef Perftools__Profiles__Label PLabel;
typedef Perftools__Profiles__ValueType PValueType;

struct pprof {
	struct smap strs, funcs, locs, maps;
	char **str;
	size_t nstr, capstr;
	PSample **sample;
	size_t nsample, capsample;
	PLocation **loc;
	size_t nloc, caploc;
	PFunction **func;
	size_t nfunc, capfunc;
	PMapping **map;
	uint64_t *map_samples;
	size_t nmap, capmap;
	uint64_t total;
};

/* Grow the array *v of *cap pointers to hold n + 1. */
static int grow(void *v, size_t *cap, size_t n, size_t size)
{
	void **pv = v;

	if (n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 64;
	void *nv = realloc(*pv, nc * size);

	if (!nv)
		return -1;
	*pv = nv;
	*cap = nc;
	return 0;
}

/* The string table's index of s ("" is 0), -1 when out of memory. */
static int64_t pp_str(struct pprof *pp, const char *s)
{
	bool added;
	long slot;

	if (!s)
		s = "";
	if ((slot = smap_put(&pp->strs, s, pp->nstr, &added)) < 0)
		return -1;
	if (added) {
		if (grow(&pp->str, &pp->capstr, pp->nstr, sizeof(*pp->str)))
			return -1;
		pp->str[pp->nstr++] = pp->strs.key[slot];
	}
	return (int64_t)pp->strs.val[slot];
}

static int64_t pp_func(struct pprof *pp, const struct pmu_frame *f)
{
	char name[600], key[1300];
	bool added;
	long slot;

	frame_name(f, name, sizeof(name));
	snprintf(key, sizeof(key), "%s\x1f%s", name, f->file ? f->file : "");
	if ((slot = smap_put(&pp->funcs, key, pp->nfunc + 1, &added)) < 0)
		return -1;
	if (added) {
		PFunction *fn = malloc(sizeof(*fn));

		if (!fn || grow(&pp->func, &pp->capfunc, pp->nfunc, sizeof(*pp->func))) {
			free(fn);
			return -1;
		}
		perftools__profiles__function__init(fn);
		fn->id = pp->nfunc + 1;
		if ((fn->name = pp_str(pp, name)) < 0 || (fn->filename = pp_str(pp, f->file)) < 0) {
			free(fn);
			return -1;
		}
		fn->system_name = fn->name;
		pp->func[pp->nfunc++] = fn;
	}
	return (int64_t)pp->funcs.val[slot];
}

/* The mapping of the location of frame f (0: none), its range extended to
 * f's address. */
static int64_t pp_map(struct pprof *pp, const struct pmu_frame *f, uint64_t samples)
{
	const char *obj = f->object;
	bool kernel = f->status == PMU_FRAME_KERNEL;
	char key[1300];
	bool added;
	long slot;
	PMapping *m;

	if (!obj && kernel)
		obj = "[kernel]";
	if (!obj)
		return 0;
	/* one kernel mapping: a kernel frame's rel is not an offset in one image */
	snprintf(key, sizeof(key), "%s\x1f%s\x1f%" PRIx64, obj, f->build_id ? f->build_id : "",
		 kernel ? 0 : f->addr - f->rel);
	if ((slot = smap_put(&pp->maps, key, pp->nmap + 1, &added)) < 0)
		return -1;
	if (added) {
		if (!(m = malloc(sizeof(*m))) || grow(&pp->map, &pp->capmap, pp->nmap, sizeof(*pp->map))) {
			free(m);
			return -1;
		}
		{
			size_t c = pp->capmap, nn = pp->nmap;
			uint64_t *ns = realloc(pp->map_samples, c * sizeof(*ns));

			if (!ns) {
				free(m);
				return -1;
			}
			pp->map_samples = ns;
			ns[nn] = 0;
		}
		perftools__profiles__mapping__init(m);
		m->id = pp->nmap + 1;
		m->memory_start = f->addr;
		m->memory_limit = f->addr + 1;
		m->file_offset = kernel ? 0 : f->rel;
		if ((m->filename = pp_str(pp, obj)) < 0 || (m->build_id = pp_str(pp, f->build_id)) < 0) {
			free(m);
			return -1;
		}
		m->has_functions = true;
		m->has_inline_frames = true;
		pp->map[pp->nmap++] = m;
	}
	m = pp->map[pp->maps.val[slot] - 1];
	if (f->addr < m->memory_start) {
		if (!kernel)
			m->file_offset -= m->memory_start - f->addr;
		m->memory_start = f->addr;
	}
	if (f->addr >= m->memory_limit)
		m->memory_limit = f->addr + 1;
	if (f->file)
		m->has_filenames = true;
	if (f->line > 0)
		m->has_line_numbers = true;
	pp->map_samples[m->id - 1] += samples;
	return (int64_t)m->id;
}

/* The location of frames [b, e) of s (one address and its inline chain). */
static int64_t pp_loc(struct pprof *pp, const struct an_prof_stack *s, size_t b, size_t e)
{
	char key[512], part[64];
	size_t klen = 0, kcap = 0;
	char *k = NULL;
	int64_t map, fid[64];
	size_t nl = e - b > 64 ? 64 : e - b;
	bool added;
	long slot;

	if ((map = pp_map(pp, &s->frames[b], s->samples)) < 0)
		return -1;
	snprintf(key, sizeof(key), "%" PRId64 ":%" PRIx64, map, s->frames[b].addr);
	if (buf_cat(&k, &kcap, &klen, key))
		return -1;
	/* innermost first: the last frame of the group is the innermost */
	for (size_t i = 0; i < nl; i++) {
		const struct pmu_frame *f = &s->frames[e - 1 - i];

		if ((fid[i] = pp_func(pp, f)) < 0) {
			free(k);
			return -1;
		}
		snprintf(part, sizeof(part), ",%" PRId64 "/%d", fid[i], f->line);
		if (buf_cat(&k, &kcap, &klen, part)) {
			free(k);
			return -1;
		}
	}
	slot = smap_put(&pp->locs, k, pp->nloc + 1, &added);
	free(k);
	if (slot < 0)
		return -1;
	if (added) {
		PLocation *l = calloc(1, sizeof(*l));
		PLine **lines = calloc(nl, sizeof(*lines));

		if (!l || !lines || grow(&pp->loc, &pp->caploc, pp->nloc, sizeof(*pp->loc))) {
			free(l);
			free(lines);
			return -1;
		}
		perftools__profiles__location__init(l);
		l->id = pp->nloc + 1;
		l->mapping_id = (uint64_t)map;
		l->address = s->frames[b].addr;
		l->line = lines;
		for (size_t i = 0; i < nl; i++) {
			if (!(lines[i] = malloc(sizeof(*lines[i])))) {
				for (size_t j = 0; j < i; j++)
					free(lines[j]);
				free(lines);
				free(l);
				return -1;
			}
			perftools__profiles__line__init(lines[i]);
			lines[i]->function_id = (uint64_t)fid[i];
			lines[i]->line = s->frames[e - 1 - i].line;
		}
		l->n_line = nl;
		pp->loc[pp->nloc++] = l;
	}
	return (int64_t)pp->locs.val[slot];
}

static PLabel *pp_label(struct pprof *pp, const char *key, const char *val)
{
	PLabel *l = malloc(sizeof(*l));

	if (!l)
		return NULL;
	perftools__profiles__label__init(l);
	if ((l->key = pp_str(pp, key)) < 0 || (l->str = pp_str(pp, val)) < 0) {
		free(l);
		return NULL;
	}
	return l;
}

static int pp_stack(void *ctx, const struct an_prof_stack *s)
{
	struct pprof *pp = ctx;
	uint64_t ids[1025];
	size_t nids = 0, starts[1024], ng = 0;
	PSample *sm;

	if (!s->samples)
		return 0;
	for (size_t i = 0; i < s->nframes && ng < 1024; i = group_end(s, i))
		starts[ng++] = i;
	/* leaf first */
	for (size_t g = ng; g-- > 0;) {
		size_t e = g + 1 < ng ? starts[g + 1] : group_end(s, starts[g]);
		int64_t id = pp_loc(pp, s, starts[g], e);

		if (id < 0)
			return PMU_ERR_NOMEM;
		ids[nids++] = (uint64_t)id;
	}
	if (s->cut) {
		struct pmu_frame cf = { .status = PMU_FRAME_OK, .func = CUT_FRAME };
		struct an_prof_stack cs = { .frames = &cf, .nframes = 1, .samples = 0 };
		int64_t id = pp_loc(pp, &cs, 0, 1);

		if (id < 0)
			return PMU_ERR_NOMEM;
		ids[nids++] = (uint64_t)id;
	}
	if (!(sm = calloc(1, sizeof(*sm))) || grow(&pp->sample, &pp->capsample, pp->nsample, sizeof(*pp->sample))) {
		free(sm);
		return PMU_ERR_NOMEM;
	}
	perftools__profiles__sample__init(sm);
	pp->sample[pp->nsample++] = sm;
	sm->location_id = malloc((nids ? nids : 1) * sizeof(*sm->location_id));
	sm->value = malloc(2 * sizeof(*sm->value));
	sm->label = calloc(3, sizeof(*sm->label));
	if (!sm->location_id || !sm->value || !sm->label)
		return PMU_ERR_NOMEM;
	memcpy(sm->location_id, ids, nids * sizeof(*ids));
	sm->n_location_id = nids;
	sm->value[0] = (int64_t)s->samples;
	sm->value[1] = (int64_t)s->period;
	sm->n_value = 2;
	if (!(sm->label[sm->n_label++] = pp_label(pp, "program", s->program)))
		return PMU_ERR_NOMEM;
	if (!(sm->label[sm->n_label++] = pp_label(pp, "incarnation", s->inc)))
		return PMU_ERR_NOMEM;
	if (s->cut && !(sm->label[sm->n_label++] = pp_label(pp, "chain", "cut")))
		return PMU_ERR_NOMEM;
	pp->total += s->samples;
	return 0;
}

static void pp_release(struct pprof *pp)
{
	for (size_t i = 0; i < pp->nsample; i++) {
		PSample *sm = pp->sample[i];

		for (size_t j = 0; sm->label && j < sm->n_label; j++)
			free(sm->label[j]);
		free(sm->label);
		free(sm->location_id);
		free(sm->value);
		free(sm);
	}
	for (size_t i = 0; i < pp->nloc; i++) {
		for (size_t j = 0; j < pp->loc[i]->n_line; j++)
			free(pp->loc[i]->line[j]);
		free(pp->loc[i]->line);
		free(pp->loc[i]);
	}
	for (size_t i = 0; i < pp->nfunc; i++)
		free(pp->func[i]);
	for (size_t i = 0; i < pp->nmap; i++)
		free(pp->map[i]);
	free(pp->sample);
	free(pp->loc);
	free(pp->func);
	free(pp->map);
	free(pp->map_samples);
	free(pp->str);
	smap_release(&pp->strs);
	smap_release(&pp->funcs);
	smap_release(&pp->locs);
	smap_release(&pp->maps);
}

/*
 * The event's own unit for the sum of periods: a clock event counts
 * nanoseconds, anything else counts events.  A period is never converted
 * (no nanoseconds made up from a frequency).
 */
static void period_unit(const char *event, const char **type, const char **unit)
{
	static const struct {
		const char *event, *type, *unit;
	} units[] = {
		{ "cpu-clock", "cpu", "nanoseconds" },   { "task-clock", "cpu", "nanoseconds" },
		{ "cycles", "cycles", "count" },         { "cpu-cycles", "cycles", "count" },
		{ "instructions", "instructions", "count" },
	};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (event && !strcmp(event, units[i].event)) {
			*type = units[i].type;
			*unit = units[i].unit;
			return;
		}
	*type = event && *event ? event : "events";
	*unit = "count";
}

static int cmp_map(const void *a, const void *b, void *ctx)
{
	const uint64_t *ns = ctx;
	uint64_t x = ns[(*(PMapping *const *)a)->id - 1], y = ns[(*(PMapping *const *)b)->id - 1];

	return x < y ? 1 : x > y ? -1 : 0;
}

/* gzip (RFC 1952) of buf[0..n) into f. */
static int gzip_write(FILE *f, const uint8_t *buf, size_t n)
{
	z_stream z;
	uint8_t out[65536];
	int zr;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	z.next_in = (uint8_t *)buf;
	z.avail_in = (uInt)n;
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR || fwrite(out, 1, sizeof(out) - z.avail_out, f) != sizeof(out) - z.avail_out) {
			deflateEnd(&z);
			return -1;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	return 0;
}

int an_export_pprof(const struct an_prof *p, const char *path)
{
	const struct an_prof_info *in = an_prof_info(p);
	struct pprof pp;
	PProfile pr = PERFTOOLS__PROFILES__PROFILE__INIT;
	PValueType vt[2], pt, *vtp[2] = { &vt[0], &vt[1] };
	const char *ptype, *punit;
	int64_t comment[3];
	char text[400];
	uint8_t *buf = NULL;
	struct an_out o;
	size_t len;
	int err;

	memset(&pp, 0, sizeof(pp));
	/* string_table[0] is "" */
	err = pp_str(&pp, "") ? PMU_ERR_NOMEM : an_prof_each_stack(p, pp_stack, &pp);
	if (err == PMU_ERR_NOMEM)
		err = pmu_error(PMU_ERR_NOMEM, "--pprof: out of memory");
	if (!err && !pp.total)
		err = no_samples(path);
	if (err)
		goto out;
	err = pmu_error(PMU_ERR_NOMEM, "--pprof: out of memory");
	period_unit(in ? in->event : NULL, &ptype, &punit);
	perftools__profiles__value_type__init(&vt[0]);
	perftools__profiles__value_type__init(&vt[1]);
	perftools__profiles__value_type__init(&pt);
	if ((vt[0].type = pp_str(&pp, "samples")) < 0 || (vt[0].unit = pp_str(&pp, "count")) < 0 ||
	    (vt[1].type = pp_str(&pp, ptype)) < 0 || (vt[1].unit = pp_str(&pp, punit)) < 0)
		goto out;
	pt = vt[1];
	pr.n_sample_type = 2;
	pr.sample_type = vtp;
	pr.period_type = &pt;
	pr.period = in ? (int64_t)in->period : 0;   /* 0 when sampled at a frequency */
	pr.default_sample_type = vt[0].type;          /* what pmuanalyze ranks by */
	snprintf(text, sizeof(text), "pmuanalyze %s: %s samples%s%s", PMU_VERSION, in && in->event ? in->event : "?",
		 in && in->call_graph ? ", call graph " : "", in && in->call_graph ? in->call_graph : "");
	if ((comment[0] = pp_str(&pp, text)) < 0)
		goto out;
	if (in && in->freq_hz)
		snprintf(text, sizeof(text), "sampled at %" PRIu64 " Hz: the periods vary, the profile's period is 0",
			 in->freq_hz);
	else
		snprintf(text, sizeof(text), "sampled every %" PRIu64 " events", in ? in->period : 0);
	if ((comment[1] = pp_str(&pp, text)) < 0)
		goto out;
	snprintf(text, sizeof(text), "lost records %" PRIu64 ", lost samples %" PRIu64 ", unattributed %" PRIu64
		 ", throttled %" PRIu64 "; mappings span the sampled addresses only",
		 in ? in->lost_records : 0, in ? in->lost_samples : 0, in ? in->unattributed : 0,
		 in ? in->throttles : 0);
	if ((comment[2] = pp_str(&pp, text)) < 0)
		goto out;
	pr.comment = comment;
	pr.n_comment = 3;
	/* mapping[0] is the main binary to pprof: the object with the most samples */
	qsort_r(pp.map, pp.nmap, sizeof(*pp.map), cmp_map, pp.map_samples);
	pr.n_sample = pp.nsample;
	pr.sample = pp.sample;
	pr.n_mapping = pp.nmap;
	pr.mapping = pp.map;
	pr.n_location = pp.nloc;
	pr.location = pp.loc;
	pr.n_function = pp.nfunc;
	pr.function = pp.func;
	pr.n_string_table = pp.nstr;
	pr.string_table = pp.str;
	len = perftools__profiles__profile__get_packed_size(&pr);
	if (!(buf = malloc(len ? len : 1)))
		goto out;
	perftools__profiles__profile__pack(&pr, buf);
	err = out_open(&o, path);
	if (!err)
		err = out_close(&o, path,
				gzip_write(o.f, buf, len) ? pmu_error(PMU_ERR_IO, "cannot write '%s': %s", path,
								      strerror(errno ? errno : EIO)) : 0);
out:
	free(buf);
	pp_release(&pp);
	return err;
}

/* ---- the flame graph ---------------------------------------------------------------- */

struct fnode {
	char *name;
	const char *kind;
	char *file;
	uint64_t value;
	struct fnode *child, *next;
};

struct flame {
	struct fnode root;
	uint64_t total;
	bool nomem;
	/* (parent, kind, name) -> child: a node may have as many children as
	 * there are distinct addresses (unmapped JIT code), so never a walk of
	 * the sibling list per frame */
	struct smap kids;
};

static struct fnode *fchild(struct flame *fl, struct fnode *n, const char *name, const char *kind, const char *file)
{
	struct fnode *c;
	char key[800];
	bool added;
	long slot;

	snprintf(key, sizeof(key), "%p\x1f%s\x1f%s", (void *)n, kind, name);
	if ((slot = smap_put(&fl->kids, key, 0, &added)) < 0) {
		fl->nomem = true;
		return NULL;
	}
	if (!added)
		return (struct fnode *)(uintptr_t)fl->kids.val[slot];
	if (!(c = calloc(1, sizeof(*c))) || !(c->name = strdup(name)) || (file && !(c->file = strdup(file)))) {
		if (c)
			free(c->name);
		free(c);
		fl->nomem = true;
		return NULL;
	}
	fl->kids.val[slot] = (size_t)(uintptr_t)c;
	c->kind = kind;
	c->next = n->child;
	n->child = c;
	return c;
}

static int flame_stack(void *ctx, const struct an_prof_stack *s)
{
	struct flame *fl = ctx;
	struct fnode *n;
	char name[600];

	if (!s->samples)
		return 0;
	prog_name(s->program, name, sizeof(name));
	if (!(n = fchild(fl, &fl->root, name, "program", NULL)))
		return PMU_ERR_NOMEM;
	n->value += s->samples;
	if (s->cut) {
		if (!(n = fchild(fl, n, CUT_FRAME, "unresolved", NULL)))
			return PMU_ERR_NOMEM;
		n->value += s->samples;
	}
	for (size_t i = 0; i < s->nframes; i++) {
		frame_name(&s->frames[i], name, sizeof(name));
		if (!(n = fchild(fl, n, name, frame_kind(&s->frames[i]), s->frames[i].file)))
			return PMU_ERR_NOMEM;
		n->value += s->samples;
	}
	fl->root.value += s->samples;
	fl->total += s->samples;
	return 0;
}

static int cmp_node(const void *a, const void *b)
{
	return strcmp((*(struct fnode *const *)a)->name, (*(struct fnode *const *)b)->name);
}

/* Free the subtree under n. */
static void fnode_free(struct fnode *n)
{
	struct fnode *c = n->child, *nx;

	for (; c; c = nx) {
		nx = c->next;
		fnode_free(c);
		free(c->name);
		free(c->file);
		free(c);
	}
	n->child = NULL;
}

/* NODE as JSON, its children sorted by name, the narrow ones counted in
 * *pruned; frees the node's children. */
static json_t *fnode_json(struct fnode *n, uint64_t total, uint64_t *pruned, int depth)
{
	json_t *kids = json_array(), *j;
	struct fnode **v = NULL, *c;
	size_t nk = 0, i;

	for (c = n->child; c; c = c->next)
		nk++;
	if (nk && (v = malloc(nk * sizeof(*v)))) {
		for (i = 0, c = n->child; c; c = c->next)
			v[i++] = c;
		qsort(v, nk, sizeof(*v), cmp_node);
		for (i = 0; i < nk; i++) {
			if (v[i]->value * 2000 < total || depth > 200)
				(*pruned)++;
			else
				json_array_append_new(kids, fnode_json(v[i], total, pruned, depth + 1));
		}
	}
	j = json_pack("[s,I,s,s?,o]", n->name, (json_int_t)n->value, n->kind, n->file, kids);
	for (i = 0; v && i < nk; i++) {
		fnode_free(v[i]);
		free(v[i]->name);
		free(v[i]->file);
		free(v[i]);
	}
	free(v);
	n->child = NULL;
	return j;
}

json_t *an_flame_json(const struct an_prof *p)
{
	const struct an_prof_info *in = an_prof_info(p);
	struct flame fl;
	uint64_t pruned = 0;
	json_t *j;
	int err;

	memset(&fl, 0, sizeof(fl));
	fl.root.name = "all";
	fl.root.kind = "root";
	err = an_prof_each_stack(p, flame_stack, &fl);
	smap_release(&fl.kids);
	if (err || fl.nomem) {
		fnode_free(&fl.root);
		return NULL;
	}
	j = json_pack("{s:b,s:s,s:I,s:s}", "available", true, "event", in && in->event ? in->event : "?", "samples",
		      (json_int_t)fl.total, "call_graph", in && in->call_graph ? in->call_graph : "?");
	if (in && in->freq_hz)
		json_object_set_new(j, "freq_hz", json_integer((json_int_t)in->freq_hz));
	if (in && in->period)
		json_object_set_new(j, "period", json_integer((json_int_t)in->period));
	json_object_set_new(j, "lost_samples", json_integer(in ? (json_int_t)in->lost_samples : 0));
	json_object_set_new(j, "lost_records", json_integer(in ? (json_int_t)in->lost_records : 0));
	json_object_set_new(j, "unattributed", json_integer(in ? (json_int_t)in->unattributed : 0));
	json_object_set_new(j, "root", fnode_json(&fl.root, fl.total ? fl.total : 1, &pruned, 0));
	json_object_set_new(j, "pruned", json_integer((json_int_t)pruned));
	return j;
}

/* ---- the tool's entry ---------------------------------------------------------------- */

static json_t *unavailable(const char *reason)
{
	return json_pack("{s:b,s:s}", "available", false, "reason", reason);
}

int an_exports(const struct an_prof *p, const struct an_export_req *r, json_t **flame)
{
	int code = 0;
	const char *want = r->folded ? "--folded" : r->speedscope ? "--speedscope" : r->pprof ? "--pprof" : NULL;

	if (flame)
		*flame = NULL;
	if (!p || !an_prof_info(p) || !an_prof_info(p)->samples) {
		const char *why = !p ? "the bundle has no samples stream: the sampling collector did not run "
				       "(pmurec --mode full samples; --mode light at a low rate)"
				     : "the sampling collector recorded no samples of the cohort";

		if (want) {
			fprintf(stderr, "pmuanalyze: %s: nothing to export: %s\n", want, why);
			code = 2;
		}
		if (flame)
			*flame = unavailable(why);
		return code;
	}
	if (r->folded && an_export_folded(p, r->folded)) {
		fprintf(stderr, "pmuanalyze: --folded: %s\n", pmu_error_detail());
		code = 2;
	}
	if (r->speedscope && an_export_speedscope(p, r->speedscope)) {
		fprintf(stderr, "pmuanalyze: --speedscope: %s\n", pmu_error_detail());
		code = 2;
	}
	if (r->pprof && an_export_pprof(p, r->pprof)) {
		fprintf(stderr, "pmuanalyze: --pprof: %s\n", pmu_error_detail());
		code = 2;
	}
	if (flame && !(*flame = an_flame_json(p)))
		*flame = unavailable("out of memory while building the flame graph");
	return code;
}
