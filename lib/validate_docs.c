/*
 * Documents: the schema check of a JSON object against its spec table
 * (fields, types, the status rule, field statuses, units), a document
 * loaded in bounded memory and checked as a whole, and run.json, whose
 * window and collector list the streams are checked against.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "bag.h"
#include "error.h"
#include "jsonbound.h"
#include "spec.h"
#include "validate_int.h"

/* ---- schema checks ------------------------------------------------------ */

const char *const pmu_v_type_names[] = {
	[PMU_FT_STR] = "a non-empty string", [PMU_FT_INT] = "an integer >= 0", [PMU_FT_BOOL] = "a boolean",
	[PMU_FT_ENUM] = "one of the allowed strings", [PMU_FT_HEX64] = "64 lowercase hex digits",
	[PMU_FT_OBJ] = "an object", [PMU_FT_ARR_STR] = "an array of strings",
	[PMU_FT_ARR_INT] = "an array of integers >= 0", [PMU_FT_ARR_OBJ] = "an array of objects",
	[PMU_FT_MAP_STR] = "an object of strings", [PMU_FT_UNITS] = "an object of units",
	[PMU_FT_MAP_OBJ] = "an object of objects",
	[PMU_FT_ARGV] = "an array of at most " PMU_XSTR(PMU_ARGV_MAX_ARGS) " strings of at most " PMU_XSTR(
		PMU_ARGV_MAX_BYTES) " bytes, each counted with its NUL",
};

static bool str_ok(json_t *j)
{
	return json_is_string(j) && json_string_length(j) > 0;
}

/* Check the status rule on an object that has a "status" field. */
void pmu_v_status_rule(struct v *v, const char *file, uint64_t rec, const char *where,
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
int pmu_v_check_json_obj(struct v *v, const char *file, const struct pmu_objdef *o, json_t *obj,
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
				bad += pmu_v_check_json_obj(v, file, f->sub, val, sub, depth + 1);
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
					bad += pmu_v_check_json_obj(v, file, f->sub, e, el, depth + 1);
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
						bad += pmu_v_check_json_obj(v, file, f->sub, v2, el, depth + 1);
				}
			}
			break;
		case PMU_FT_ARGV: {
			size_t bytes = 0;

			ok = json_is_array(val) && json_array_size(val) <= PMU_ARGV_MAX_ARGS;
			for (size_t i = 0; ok && i < json_array_size(val); i++) {
				json_t *e = json_array_get(val, i);

				ok = json_is_string(e);
				bytes += ok ? json_string_length(e) + 1 : 0;
			}
			ok = ok && bytes <= PMU_ARGV_MAX_BYTES;
			break;
		}
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
			report(v, PMU_CHECK_SCHEMA_FIELD, file, 0, "%s must be %s", sub, pmu_v_type_names[f->type]);
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
			pmu_v_status_rule(v, file, 0, where, json_string_value(st),
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

void pmu_v_check_units(struct v *v, const char *file, uint64_t rec, json_t *units,
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
json_t *pmu_v_load_doc(struct v *v, const char *file)
{
	struct pmu_json_limits lim = pmu_doc_limits(v->minor);
	uint64_t line = 0;
	json_t *j;
	int fd, err;

	if (!pmu_v_find_file(v, file))
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
bool pmu_v_check_doc(struct v *v, const struct pmu_docdef *d, const char *file, json_t *j)
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
	if (pmu_v_check_json_obj(v, file, d->obj, j, d->type, 0))
		return false;
	pmu_v_check_units(v, file, 0, json_object_get(j, "units"), objs, 1);
	return true;
}

/*
 * run.json's host_load (1.4): the schema has its fields; here the status
 * rule of a measured value (present exactly when ok, never 0 for "not
 * measured") and its interval, which lies inside the run's window.
 */
static void check_host_load(struct v *v, const char *f, json_t *j)
{
	static const char *const measured[] = { "source", "interval_ns", "cpus", "resolution_ns", "busy_ns",
						"steal_ns", "idle_ns", "iowait_ns", "recorder_cpu_ns" };
	json_t *h = json_object_get(j, "host_load");
	const char *st = json_string_value(json_object_get(h, "status"));
	bool ok;

	if (!h || !st)
		return; /* before 1.4, or reported as SCHEMA-FIELD */
	ok = !strcmp(st, "ok");
	if (!ok && strcmp(st, "unavailable")) {
		/* the host is read or it is not: nothing is requested or failed */
		report(v, PMU_CHECK_SCHEMA_FIELD, f, 0, "run.host_load: status '%s'; it is 'ok' or 'unavailable'", st);
		return;
	}
	eval(v, PMU_CHECK_FIELD_STATUS);
	for (size_t i = 0; i < sizeof(measured) / sizeof(*measured); i++)
		if (ok != (json_object_get(h, measured[i]) != NULL))
			report(v, PMU_CHECK_FIELD_STATUS, f, 0, "run.host_load: status '%s' but '%s' is %s", st,
			       measured[i], ok ? "absent" : "present");
	if (ok && json_integer_value(json_object_get(h, "cpus")) < 1)
		report(v, PMU_CHECK_FIELD_STATUS, f, 0, "run.host_load: status 'ok' over %lld CPUs",
		       (long long)json_integer_value(json_object_get(h, "cpus")));
	eval(v, PMU_CHECK_TIME_WINDOW);
	if (ok && json_object_get(h, "interval_ns") &&
	    ju(h, "interval_ns") > ju(j, "end_ns") - ju(j, "start_ns"))
		report(v, PMU_CHECK_TIME_WINDOW, f, 0, "run.host_load: interval_ns %llu is longer than the run window "
		       "(%llu ns)", (unsigned long long)ju(h, "interval_ns"),
		       (unsigned long long)(ju(j, "end_ns") - ju(j, "start_ns")));
}

/* A campaign of variants (1.4) names them, and this bundle's among them;
 * one of modes names none. */
static void check_campaign(struct v *v, const char *f, json_t *j)
{
	json_t *c = json_object_get(j, "campaign"), *names = json_object_get(c, "variants");
	const char *kind = json_string_value(json_object_get(c, "kind"));
	const char *mine = json_string_value(json_object_get(c, "variant"));
	bool variants = kind && !strcmp(kind, "variants"), found = false;

	if (!c)
		return;
	if (!variants) {
		if (names || mine)
			report(v, PMU_CHECK_SCHEMA_FIELD, f, 0, "run.campaign: '%s' belongs to a campaign of kind "
			       "'variants', this one is of kind '%s'", names ? "variants" : "variant", kind ? kind : "modes");
		return;
	}
	if (!names || !mine) {
		report(v, PMU_CHECK_SCHEMA_FIELD, f, 0, "run.campaign: a campaign of kind 'variants' needs '%s'",
		       !names ? "variants" : "variant");
		return;
	}
	for (size_t i = 0; i < json_array_size(names); i++) {
		const char *n = json_string_value(json_array_get(names, i));

		found |= !strcmp(n, mine);
		for (size_t k = 0; k < i; k++)
			if (!strcmp(n, json_string_value(json_array_get(names, k))))
				report(v, PMU_CHECK_SCHEMA_FIELD, f, 0, "run.campaign: variant '%s' is named twice", n);
	}
	if (!found)
		report(v, PMU_CHECK_SCHEMA_FIELD, f, 0, "run.campaign: variant '%s' is not one of variants", mine);
}

void pmu_v_check_run(struct v *v, json_t *j)
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
	check_campaign(v, f, j);
	eval(v, PMU_CHECK_TIME_ORDER);
	if (v->run_end < v->run_start) {
		report(v, PMU_CHECK_TIME_ORDER, f, 0, "end_ns %llu is before start_ns %llu",
		       (unsigned long long)v->run_end, (unsigned long long)v->run_start);
		return;
	}
	check_host_load(v, f, j);
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

