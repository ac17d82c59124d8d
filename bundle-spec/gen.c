/*
 * specgen: derives the bundle spec's machine-readable artefacts from the
 * tables in lib/spec.c and lib/checks.def, so that the C validator, the JSON
 * Schemas and the documentation cannot drift apart.
 *
 *   specgen schemas DIR   one JSON Schema (draft 2020-12) per document type
 *                         (<type>.schema.json) and per stream kind
 *                         (<kind>.schema.json, a schema for ONE line)
 *   specgen checks        the markdown table of check IDs (bundle-spec/checks.md)
 *   specgen fields        markdown tables of every document's and record
 *                         type's fields (the generated part of README.md)
 *
 * Output is deterministic: keys appear in a fixed order (table order), the
 * JSON is indented by two spaces and every file ends with a newline.  Before
 * writing anything the tables are checked for internal consistency (every
 * numeric field has a known unit, one field name has one unit everywhere,
 * stream records are flat, ...); a violation is an error, not a warning.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "checks.h"
#include "spec.h"
#include "util.h"

#define DIALECT "https://json-schema.org/draft/2020-12/schema"
#define MAX_DEPTH 8
#define MAX_UNITS 256

static const char *prog = "specgen";

__attribute__((noreturn, format(printf, 1, 2)))
static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* Every jansson constructor result goes through here: out of memory is fatal. */
static json_t *nn(json_t *j)
{
	if (!j)
		die("out of memory");
	return j;
}

static void set(json_t *obj, const char *key, json_t *val)
{
	if (json_object_set_new(obj, key, nn(val)))
		die("out of memory");
}

static void append(json_t *arr, json_t *val)
{
	if (json_array_append_new(arr, nn(val)))
		die("out of memory");
}

/* ---- the units of a document or stream ---------------------------------- */

struct units {
	const char *key[MAX_UNITS];
	const char *unit[MAX_UNITS];
	size_t n;
	const char *where;
};

static void units_add(void *ctx, const char *key, const char *unit)
{
	struct units *u = ctx;

	for (size_t i = 0; i < u->n; i++)
		if (!strcmp(u->key[i], key)) {
			if (strcmp(u->unit[i], unit))
				die("%s: numeric field '%s' has unit '%s' and '%s'; the units map "
				    "cannot hold both", u->where, key, u->unit[i], unit);
			return;
		}
	if (u->n == MAX_UNITS)
		die("%s: more than %d numeric field names", u->where, MAX_UNITS);
	u->key[u->n] = key;
	u->unit[u->n] = unit;
	u->n++;
}

/* ---- table consistency -------------------------------------------------- */

static bool is_unit(const char *u)
{
	return u && pmu_enum_has(pmu_unit_values, u, strlen(u));
}

static void lint_obj(const struct pmu_objdef *o, const char *where, bool flat, int depth)
{
	if (depth > MAX_DEPTH)
		die("%s: objects nest deeper than %d", where, MAX_DEPTH);
	if (!o->nfields)
		die("%s: object '%s' has no fields", where, o->name);
	for (size_t i = 0; i < o->nfields; i++) {
		const struct pmu_field *f = &o->fields[i];
		bool numeric = f->type == PMU_FT_INT || f->type == PMU_FT_ARR_INT;
		bool nested = f->type == PMU_FT_OBJ || f->type == PMU_FT_ARR_OBJ || f->type == PMU_FT_MAP_OBJ;

		if (!f->key || !*f->key || !f->doc || !*f->doc)
			die("%s: field %zu of '%s' lacks a name or a doc string", where, i, o->name);
		for (size_t k = 0; k < i; k++)
			if (!strcmp(o->fields[k].key, f->key))
				die("%s: field '%s' of '%s' is defined twice", where, f->key, o->name);
		if (numeric != (f->unit != NULL) || (numeric && !is_unit(f->unit)))
			die("%s: field '%s' of '%s': numeric fields, and only they, carry a unit "
			    "from the unit vocabulary", where, f->key, o->name);
		if (nested != (f->sub != NULL))
			die("%s: field '%s' of '%s': objects, and only they, have a sub-object",
			    where, f->key, o->name);
		if ((f->type == PMU_FT_ENUM) != (f->enumv != NULL) || (f->enumv && !f->enumv[0]))
			die("%s: field '%s' of '%s': enums, and only they, have values", where, f->key,
			    o->name);
		if (!strcmp(f->key, "status") &&
		    (f->type != PMU_FT_ENUM || f->enumv != pmu_status_values ||
		     !pmu_objdef_field(o, "reason", 6) || !pmu_objdef_field(o, "remedy", 6)))
			die("%s: '%s' has a status that is not the status vocabulary, or lacks the "
			    "reason and remedy fields the status rule requires", where, o->name);
		/* stream records are flat, save the one array the validator's
		 * record check reads (PMU_FT_ARGV, pmu_json_strarr()) */
		if (flat && f->type != PMU_FT_STR && f->type != PMU_FT_INT && f->type != PMU_FT_BOOL &&
		    f->type != PMU_FT_ENUM && f->type != PMU_FT_HEX64 && f->type != PMU_FT_ARGV &&
		    !(f->type == PMU_FT_UNITS && !strcmp(o->name, "header")))
			die("%s: field '%s' of stream record '%s' is not a scalar", where, f->key, o->name);
		if (f->sub)
			lint_obj(f->sub, where, flat, depth + 1);
	}
}

static void lint_first(const struct pmu_objdef *o, const char *where, const char *key, bool required)
{
	const struct pmu_field *f = pmu_objdef_field(o, key, strlen(key));

	if (!f || f->type != PMU_FT_STR || f->required != required)
		die("%s: '%s' must have a %s string field '%s'", where, o->name,
		    required ? "required" : "optional", key);
}

static void lint(void)
{
	struct units all = { .where = "lib/spec.c" };

	/* one unit per field name across the whole spec */
	for (size_t d = 0; d < pmu_ndocs; d++)
		pmu_objdef_units(pmu_docs[d].obj, units_add, &all);
	for (size_t s = 0; s < pmu_nstreams; s++)
		for (size_t r = 0; r < pmu_streams[s].nrecs; r++)
			pmu_objdef_units(pmu_streams[s].recs[r].obj, units_add, &all);
	for (size_t d = 0; d < pmu_ndocs; d++) {
		const struct pmu_objdef *o = pmu_docs[d].obj;
		const struct pmu_field *u = pmu_objdef_field(o, "units", 5);

		lint_obj(o, pmu_docs[d].file, false, 0);
		lint_first(o, pmu_docs[d].file, "spec", true);
		lint_first(o, pmu_docs[d].file, "type", true);
		if (!u || u->type != PMU_FT_UNITS || !u->required)
			die("%s: a document must have a required units map", pmu_docs[d].file);
		for (size_t k = 0; k < d; k++)
			if (!strcmp(pmu_docs[k].type, pmu_docs[d].type) ||
			    !strcmp(pmu_docs[k].file, pmu_docs[d].file))
				die("%s: document type or file defined twice", pmu_docs[d].file);
	}
	for (size_t s = 0; s < pmu_nstreams; s++) {
		const struct pmu_streamdef *sd = &pmu_streams[s];
		const struct pmu_field *u = pmu_objdef_field(sd->header, "units", 5);

		lint_obj(sd->header, sd->file, true, 0);
		lint_first(sd->header, sd->file, "type", true);
		lint_first(sd->header, sd->file, "spec", true);
		lint_first(sd->header, sd->file, "stream", true);
		if (!u || u->type != PMU_FT_UNITS || !u->required)
			die("%s: a stream header must have a required units map", sd->file);
		if (!sd->nrecs)
			die("%s: a stream kind without record types", sd->kind);
		for (size_t r = 0; r < sd->nrecs; r++) {
			lint_obj(sd->recs[r].obj, sd->file, true, 0);
			lint_first(sd->recs[r].obj, sd->file, "type", true);
			if (!strcmp(sd->recs[r].type, "header"))
				die("%s: 'header' is reserved for the first line", sd->file);
			for (size_t k = 0; k < r; k++)
				if (!strcmp(sd->recs[k].type, sd->recs[r].type))
					die("%s: record type '%s' defined twice", sd->file, sd->recs[r].type);
		}
		for (size_t k = 0; k < s; k++)
			if (!strcmp(pmu_streams[k].kind, sd->kind))
				die("%s: stream kind defined twice", sd->kind);
		/* one schema file per name and version: a stream may take the
		 * name of a document that ended before it began */
		for (size_t d = 0; d < pmu_ndocs; d++)
			if (!strcmp(pmu_docs[d].type, sd->kind) && (!pmu_docs[d].until || pmu_docs[d].until >= sd->since))
				die("%s: a stream kind and a document type share a name (and a schema file)",
				    sd->kind);
	}
}

/* ---- JSON Schema -------------------------------------------------------- */

static json_t *str_array(const char *const *v)
{
	json_t *a = nn(json_array());

	for (; *v; v++)
		append(a, json_string(*v));
	return a;
}

static json_t *int_schema(void)
{
	json_t *s = nn(json_object());

	set(s, "type", json_string("integer"));
	set(s, "minimum", json_integer(0));
	set(s, "maximum", json_integer(INT64_MAX));
	return s;
}

static json_t *nonempty_string(void)
{
	json_t *s = nn(json_object());

	set(s, "type", json_string("string"));
	set(s, "minLength", json_integer(1));
	return s;
}

static json_t *units_schema(const struct units *u)
{
	json_t *s = nn(json_object()), *req = nn(json_array()), *props = nn(json_object());

	set(s, "type", json_string("object"));
	for (size_t i = 0; i < u->n; i++) {
		json_t *p = nn(json_object());
		char d[256];

		snprintf(d, sizeof(d), "unit of '%s'", u->key[i]);
		set(p, "description", json_string(d));
		set(p, "const", json_string(u->unit[i]));
		set(props, u->key[i], p);
		append(req, json_string(u->key[i]));
	}
	set(s, "required", req);
	set(s, "properties", props);
	set(s, "additionalProperties", json_false());
	return s;
}

/* Schema of the STATUS-REASON rule for an object with a status field. */
static json_t *status_rule(void)
{
	static const struct { const char *status; const char *const need[3]; } rules[] = {
		{ "unavailable", { "reason", "remedy", NULL } },
		{ "failed", { "reason", NULL, NULL } },
	};
	json_t *all = nn(json_array());

	for (size_t i = 0; i < PMU_ARRAY_SIZE(rules); i++) {
		json_t *rule = nn(json_object()), *cond = nn(json_object()), *then = nn(json_object());
		json_t *props = nn(json_object()), *st = nn(json_object()), *req = nn(json_array());

		set(st, "const", json_string(rules[i].status));
		set(props, "status", st);
		set(cond, "properties", props);
		append(req, json_string("status"));
		set(cond, "required", req);
		set(then, "required", str_array(rules[i].need));
		set(rule, "if", cond);
		set(rule, "then", then);
		append(all, rule);
	}
	return all;
}

struct ctx {
	const struct units *units;   /* for the UNITS field of the top object */
	const char *type_const;      /* value of "type" at the top, or NULL */
	const char *stream_const;    /* value of "stream" at the top, or NULL */
};

static json_t *obj_schema(const struct pmu_objdef *o, const struct ctx *c, int depth);

/* The minor version the schemas are generated for (specgen schemas DIR
 * [--minor N]): fields added after it are left out. */
static int g_minor = PMU_SPEC_MINOR;
static char g_version[16] = PMU_SPEC_VERSION;

static void units_v(const struct pmu_objdef *o, void (*fn)(void *, const char *, const char *), void *ctx)
{
	pmu_objdef_units_v(o, g_minor, fn, ctx);
}

static json_t *field_schema(const struct pmu_field *f, const struct ctx *c, int depth)
{
	json_t *s = NULL, *items;
	char doc[512];

	if (depth == 0 && !strcmp(f->key, "spec")) {
		s = nn(json_object());
		set(s, "type", json_string("string"));
		set(s, "const", json_string(g_version));
	} else if (depth == 0 && !strcmp(f->key, "type") && c->type_const) {
		s = nn(json_object());
		set(s, "type", json_string("string"));
		set(s, "const", json_string(c->type_const));
	} else if (depth == 0 && !strcmp(f->key, "stream") && c->stream_const) {
		s = nn(json_object());
		set(s, "type", json_string("string"));
		set(s, "const", json_string(c->stream_const));
	} else {
		switch (f->type) {
		case PMU_FT_STR:
			s = nonempty_string();
			break;
		case PMU_FT_INT:
			s = int_schema();
			break;
		case PMU_FT_BOOL:
			s = nn(json_object());
			set(s, "type", json_string("boolean"));
			break;
		case PMU_FT_ENUM:
			s = nn(json_object());
			set(s, "type", json_string("string"));
			set(s, "enum", str_array(f->enumv));
			break;
		case PMU_FT_HEX64:
			s = nn(json_object());
			set(s, "type", json_string("string"));
			set(s, "pattern", json_string("^[0-9a-f]{64}$"));
			break;
		case PMU_FT_OBJ:
			s = obj_schema(f->sub, c, depth + 1);
			break;
		case PMU_FT_ARR_STR:
		case PMU_FT_ARR_INT:
		case PMU_FT_ARR_OBJ:
			items = f->type == PMU_FT_ARR_STR ? nonempty_string()
				: f->type == PMU_FT_ARR_INT ? int_schema()
				: obj_schema(f->sub, c, depth + 1);
			s = nn(json_object());
			set(s, "type", json_string("array"));
			set(s, "items", items);
			break;
		case PMU_FT_ARGV:
			/* the byte bound (PMU_ARGV_MAX_BYTES) is the validator's:
			 * JSON Schema cannot sum lengths */
			items = nn(json_object());
			set(items, "type", json_string("string"));
			s = nn(json_object());
			set(s, "type", json_string("array"));
			set(s, "items", items);
			set(s, "maxItems", json_integer(PMU_ARGV_MAX_ARGS));
			break;
		case PMU_FT_MAP_OBJ:
			s = nn(json_object());
			set(s, "type", json_string("object"));
			set(s, "additionalProperties", obj_schema(f->sub, c, depth + 1));
			break;
		case PMU_FT_MAP_STR:
			items = nn(json_object());
			set(items, "type", json_string("string"));
			s = nn(json_object());
			set(s, "type", json_string("object"));
			set(s, "additionalProperties", items);
			break;
		case PMU_FT_UNITS:
			if (depth != 0 || !c->units)
				die("units map '%s' outside a document or stream header", f->key);
			s = units_schema(c->units);
			break;
		}
	}
	if (!s)
		die("field '%s' has an unknown type %d", f->key, (int)f->type);
	char since[24] = "";

	if (f->since)
		snprintf(since, sizeof(since), " [since 1.%d]", f->since);
	snprintf(doc, sizeof(doc), "%s%s%s%s%s", f->doc, f->unit ? " (unit: " : "", f->unit ? f->unit : "",
		 f->unit ? ")" : "", since);
	/* description first: easier to read */
	{
		json_t *out = nn(json_object());
		const char *k;
		json_t *v;

		set(out, "description", json_string(doc));
		json_object_foreach(s, k, v)
			set(out, k, json_incref(v));
		json_decref(s);
		return out;
	}
}

static json_t *obj_schema(const struct pmu_objdef *o, const struct ctx *c, int depth)
{
	json_t *s = nn(json_object()), *req = nn(json_array()), *props = nn(json_object());

	if (depth > MAX_DEPTH)
		die("'%s' nests too deep", o->name);
	if (depth > 0)
		set(s, "title", json_string(o->name));
	set(s, "type", json_string("object"));
	for (size_t i = 0; i < o->nfields; i++)
		if (o->fields[i].required && o->fields[i].since <= g_minor)
			append(req, json_string(o->fields[i].key));
	set(s, "required", req);
	for (size_t i = 0; i < o->nfields; i++)
		if (o->fields[i].since <= g_minor)
			set(props, o->fields[i].key, field_schema(&o->fields[i], c, depth));
	set(s, "properties", props);
	set(s, "additionalProperties", json_false());
	if (pmu_objdef_field(o, "status", 6))
		set(s, "allOf", status_rule());
	return s;
}

static void write_json(const char *dir, const char *name, json_t *j)
{
	char path[4096], tmp[4200];
	FILE *f;
	int bad;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		die("path too long: %s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		die("cannot create '%s': %s", tmp, strerror(errno));
	bad = json_dumpf(j, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0;
	bad |= fputc('\n', f) == EOF;
	bad |= ferror(f) != 0;
	bad |= fclose(f) != 0;
	if (bad || rename(tmp, path) < 0) {
		remove(tmp);
		die("cannot write '%s': %s", path, strerror(errno));
	}
	json_decref(j);
}

static json_t *schema_head(const char *title, const char *desc)
{
	json_t *s = nn(json_object());

	set(s, "$schema", json_string(DIALECT));
	set(s, "title", json_string(title));
	set(s, "description", json_string(desc));
	set(s, "$comment", json_string("Generated by build/specgen (bundle-spec/gen.c) from lib/spec.c; "
				       "do not edit. Regenerate: build/specgen schemas bundle-spec/schema"));
	return s;
}

/* Move every key of body into head (after head's own), consuming body. */
static json_t *merge(json_t *head, json_t *body)
{
	const char *k;
	json_t *v;

	json_object_foreach(body, k, v)
		set(head, k, json_incref(v));
	json_decref(body);
	return head;
}

static void gen_doc(const char *dir, const struct pmu_docdef *d)
{
	struct units u = { .where = d->file };
	struct ctx c = { &u, d->type, NULL };
	char title[1024], desc[2048], name[256];

	units_v(d->obj, units_add, &u);
	snprintf(title, sizeof(title), "pmu bundle spec %s: data/%s", g_version, d->file);
	snprintf(desc, sizeof(desc),
		 "The %s document of a pmu bundle (%s), a single JSON object stored at data/%s. "
		 "Its units map names exactly the numeric fields of the document type, each with the "
		 "spec's unit. An object with a status of 'unavailable' carries a reason and a remedy; "
		 "'failed' carries a reason.",
		 d->type, d->required ? "required" : "optional", d->file);
	snprintf(name, sizeof(name), "%s.schema.json", d->type);
	write_json(dir, name, merge(schema_head(title, desc), obj_schema(d->obj, &c, 0)));
}

static void gen_stream(const char *dir, const struct pmu_streamdef *sd)
{
	struct units u = { .where = sd->file };
	struct ctx hc = { &u, "header", sd->kind };
	json_t *s, *one = nn(json_array()), *types = nn(json_array()), *props = nn(json_object());
	json_t *tp = nn(json_object()), *req = nn(json_array()), *h;
	char title[1024], desc[2048], name[256], where[512];

	for (size_t r = 0; r < sd->nrecs; r++)
		if (sd->recs[r].since <= g_minor)
			units_v(sd->recs[r].obj, units_add, &u);
	if (sd->per_collector)
		snprintf(where, sizeof(where), "data/collectors/<name>/%s", sd->file);
	else
		snprintf(where, sizeof(where), "data/%s", sd->file);
	snprintf(title, sizeof(title), "pmu bundle spec %s: one line of a '%s' stream (%s)", g_version,
		 sd->kind, where);
	snprintf(desc, sizeof(desc),
		 "One record (line) of a stream of kind '%s', stored at %s (%s). The first line of the file is the "
		 "header; every later line is one of the record types. Records are flat JSON objects "
		 "discriminated by their 'type'.",
		 sd->kind, where, sd->required ? (sd->per_collector ? "required for every collector" : "required")
						: "optional");
	s = schema_head(title, desc);
	set(s, "type", json_string("object"));
	append(req, json_string("type"));
	set(s, "required", req);
	append(types, json_string("header"));
	for (size_t r = 0; r < sd->nrecs; r++)
		if (sd->recs[r].since <= g_minor)
			append(types, json_string(sd->recs[r].type));
	set(tp, "description", json_string("record type: 'header' on the first line only"));
	set(tp, "enum", types);
	set(props, "type", tp);
	set(s, "properties", props);

	h = nn(json_object());
	set(h, "title", json_string("header"));
	append(one, merge(h, obj_schema(sd->header, &hc, 0)));
	for (size_t r = 0; r < sd->nrecs; r++) {
		struct ctx rc = { NULL, sd->recs[r].type, NULL };
		json_t *t;

		if (sd->recs[r].since > g_minor)
			continue;
		t = nn(json_object());
		set(t, "title", json_string(sd->recs[r].type));
		append(one, merge(t, obj_schema(sd->recs[r].obj, &rc, 0)));
	}
	set(s, "oneOf", one);
	snprintf(name, sizeof(name), "%s.schema.json", sd->kind);
	write_json(dir, name, s);
}

static int cmd_schemas(const char *dir)
{
	struct stat st;

	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		die("'%s' is not a directory", dir);
	for (size_t d = 0; d < pmu_ndocs; d++)
		if (pmu_docdef_in(&pmu_docs[d], g_minor))
			gen_doc(dir, &pmu_docs[d]);
	for (size_t s = 0; s < pmu_nstreams; s++)
		if (pmu_streams[s].since <= g_minor)
			gen_stream(dir, &pmu_streams[s]);
	return 0;
}

/* ---- markdown ------------------------------------------------------------ */

static int cmd_checks(void)
{
	printf("| ID | severity | requirement |\n|---|---|---|\n");
	for (int c = 0; c < PMU_CHECK_COUNT_; c++)
		printf("| `%s` | %s | %s |\n", pmu_checks[c].id, pmu_severity_name(pmu_checks[c].severity),
		       pmu_checks[c].description);
	return 0;
}

/* Markdown-safe: '|' would end a table cell, '<' open an HTML tag. */
static void md_text(const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", stdout);
		else if (*s == '<')
			fputs("&lt;", stdout);
		else if (*s == '>')
			fputs("&gt;", stdout);
		else
			putchar(*s);
	}
}

static const char *type_word(const struct pmu_field *f, char *buf, size_t n)
{
	switch (f->type) {
	case PMU_FT_STR:
		return "string";
	case PMU_FT_INT:
		return "integer";
	case PMU_FT_BOOL:
		return "boolean";
	case PMU_FT_ENUM: {
		size_t k = (size_t)snprintf(buf, n, "enum:");

		for (const char *const *e = f->enumv; *e && k < n; e++)
			k += (size_t)snprintf(buf + k, n - k, "%s `%s`", e == f->enumv ? "" : ",", *e);
		return buf;
	}
	case PMU_FT_HEX64:
		return "sha256 (64 lowercase hex)";
	case PMU_FT_OBJ:
		snprintf(buf, n, "object `%s`", f->sub->name);
		return buf;
	case PMU_FT_ARR_STR:
		return "array of string";
	case PMU_FT_ARR_INT:
		return "array of integer";
	case PMU_FT_ARGV:
		return "array of string (empty ones allowed): at most " PMU_XSTR(PMU_ARGV_MAX_ARGS) " strings, " PMU_XSTR(
			PMU_ARGV_MAX_BYTES) " bytes";
	case PMU_FT_ARR_OBJ:
		snprintf(buf, n, "array of `%s`", f->sub->name);
		return buf;
	case PMU_FT_MAP_STR:
		return "object of strings";
	case PMU_FT_MAP_OBJ:
		snprintf(buf, n, "object of `%s`", f->sub->name);
		return buf;
	case PMU_FT_UNITS:
		return "units map";
	}
	return "?";
}

static void md_fields(const struct pmu_objdef *o, const char *type_const, const char *stream_const)
{
	printf("| field | type | req. | unit | description |\n|---|---|---|---|---|\n");
	for (size_t i = 0; i < o->nfields; i++) {
		const struct pmu_field *f = &o->fields[i];
		char tb[512];
		const char *t = type_word(f, tb, sizeof(tb));

		if (!strcmp(f->key, "spec") && f->type == PMU_FT_STR)
			t = "string `\"" PMU_SPEC_VERSION "\"`";
		else if (!strcmp(f->key, "type") && type_const) {
			snprintf(tb, sizeof(tb), "string `\"%s\"`", type_const);
			t = tb;
		} else if (!strcmp(f->key, "stream") && stream_const) {
			snprintf(tb, sizeof(tb), "string `\"%s\"`", stream_const);
			t = tb;
		}
		printf("| `%s` | %s | %s | %s | ", f->key, t, f->required ? "yes" : "no",
		       f->unit ? f->unit : "-");
		md_text(f->doc);
		if (f->since)
			printf(" (since 1.%d)", f->since);
		printf(" |\n");
	}
}

/* Tables of the sub-objects under o, each once, depth first in field order. */
static void md_subs(const struct pmu_objdef *o, const struct pmu_objdef **seen, size_t *nseen, int depth)
{
	if (depth > MAX_DEPTH)
		return;
	for (size_t i = 0; i < o->nfields; i++) {
		const struct pmu_objdef *sub = o->fields[i].sub;
		bool dup = false;

		if (!sub)
			continue;
		for (size_t k = 0; k < *nseen; k++)
			dup |= seen[k] == sub;
		if (dup || *nseen >= 64)
			continue;
		seen[(*nseen)++] = sub;
		printf("\nObject `%s`:\n\n", sub->name);
		md_fields(sub, NULL, NULL);
		md_subs(sub, seen, nseen, depth + 1);
	}
}

static void md_units(const struct units *u)
{
	if (!u->n) {
		printf("`units` must be the empty object `{}`: this type has no numeric field.\n");
		return;
	}
	printf("`units` must be exactly `{");
	for (size_t i = 0; i < u->n; i++)
		printf("%s\"%s\": \"%s\"", i ? ", " : "", u->key[i], u->unit[i]);
	printf("}` (any key order).\n");
}

static int cmd_fields(void)
{
	for (size_t d = 0; d < pmu_ndocs; d++) {
		const struct pmu_docdef *doc = &pmu_docs[d];
		const struct pmu_objdef *seen[64];
		size_t nseen = 0;
		struct units u = { .where = doc->file };

		pmu_objdef_units(doc->obj, units_add, &u);
		if (doc->until) {
			printf("%s### `data/%s` (type `%s`, %s in spec 1.0 to 1.%d)\n\n", d ? "\n" : "", doc->file,
			       doc->type, doc->required ? "required" : "optional", doc->until);
			printf("Schema: [`schema/1.%d/%s.schema.json`](schema/1.%d/%s.schema.json).\n\n", doc->until,
			       doc->type, doc->until, doc->type);
		} else {
			printf("%s### `data/%s` (type `%s`, %s)\n\n", d ? "\n" : "", doc->file, doc->type,
			       doc->required ? "required" : "optional");
			printf("Schema: [`schema/%s.schema.json`](schema/%s.schema.json).\n\n", doc->type, doc->type);
		}
		md_fields(doc->obj, doc->type, NULL);
		md_subs(doc->obj, seen, &nseen, 0);
		printf("\n");
		md_units(&u);
	}
	for (size_t s = 0; s < pmu_nstreams; s++) {
		const struct pmu_streamdef *sd = &pmu_streams[s];
		struct units u = { .where = sd->file };

		for (size_t r = 0; r < sd->nrecs; r++)
			pmu_objdef_units(sd->recs[r].obj, units_add, &u);
		printf("\n### Stream `%s` (`%s%s`, %s", sd->kind,
		       sd->per_collector ? "data/collectors/<name>/" : "data/", sd->file,
		       sd->required ? (sd->per_collector ? "required for every listed collector" : "required")
				    : "optional");
		if (sd->since)
			printf(", since 1.%d", sd->since);
		printf(")\n\n");
		printf("Schema: [`schema/%s.schema.json`](schema/%s.schema.json) (one line).\n\n", sd->kind,
		       sd->kind);
		printf("Header (line 1):\n\n");
		md_fields(sd->header, "header", sd->kind);
		printf("\n");
		md_units(&u);
		for (size_t r = 0; r < sd->nrecs; r++) {
			printf("\nRecord type `%s`:\n\n", sd->recs[r].type);
			md_fields(sd->recs[r].obj, sd->recs[r].type, NULL);
		}
	}
	return 0;
}

/* ---- main ---------------------------------------------------------------- */

static int usage(FILE *f, int rc)
{
	fprintf(f, "usage: specgen schemas DIR   write the JSON Schemas of spec %s into DIR\n"
		   "       specgen checks        print the markdown table of check IDs\n"
		   "       specgen fields        print markdown tables of every document and record\n",
		PMU_SPEC_VERSION);
	return rc;
}

static int flushed(int rc)
{
	if (fflush(stdout) != 0 || ferror(stdout))
		die("cannot write standard output: %s", strerror(errno));
	return rc;
}

int main(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		return usage(stdout, 0);
	if (argc < 2)
		return usage(stderr, 2);
	lint();
	if (!strcmp(argv[1], "schemas") && argc == 3)
		return cmd_schemas(argv[2]);
	if (!strcmp(argv[1], "schemas") && argc == 5 && !strcmp(argv[3], "--minor")) {
		g_minor = atoi(argv[4]);
		if (g_minor < 0 || g_minor > PMU_SPEC_MINOR)
			die("--minor %s: this build knows 1.0 to %s", argv[4], PMU_SPEC_VERSION);
		snprintf(g_version, sizeof(g_version), "%d.%d", PMU_SPEC_MAJOR, g_minor);
		return cmd_schemas(argv[2]);
	}
	if (!strcmp(argv[1], "checks") && argc == 2)
		return flushed(cmd_checks());
	if (!strcmp(argv[1], "fields") && argc == 2)
		return flushed(cmd_fields());
	return usage(stderr, 2);
}
