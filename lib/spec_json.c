#include <stdlib.h>
#include <string.h>

#include "bag.h"
#include "error.h"
#include "jsonbound.h"
#include "jsonl.h"
#include "spec.h"
#include "spec_json.h"

static void add_unit(void *ctx, const char *key, const char *unit)
{
	json_t *u = ctx;

	if (!json_object_get(u, key))
		json_object_set_new(u, key, json_string(unit));
}

json_t *pmu_spec_doc_units(const char *doc_type, int minor)
{
	json_t *u = json_object();

	for (size_t i = 0; i < pmu_ndocs; i++)
		if (!strcmp(pmu_docs[i].type, doc_type))
			pmu_objdef_units_v(pmu_docs[i].obj, minor, add_unit, u);
	return u;
}

json_t *pmu_spec_stream_units(const char *stream_kind, int minor)
{
	json_t *u = json_object();

	for (size_t i = 0; i < pmu_nstreams; i++)
		if (!strcmp(pmu_streams[i].kind, stream_kind))
			for (size_t r = 0; r < pmu_streams[i].nrecs; r++)
				if (pmu_streams[i].recs[r].since <= minor)
					pmu_objdef_units_v(pmu_streams[i].recs[r].obj, minor, add_unit, u);
	return u;
}

char *pmu_spec_stream_header(const char *stream_kind, const char *spec, int minor)
{
	json_t *h = json_pack("{s:s,s:s,s:s,s:o}", "type", "header", "spec", spec, "stream", stream_kind, "units",
			      pmu_spec_stream_units(stream_kind, minor));
	char *s = h ? json_dumps(h, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;

	json_decref(h);
	return s;
}

json_t *pmu_json_text(const char *s)
{
	size_t len = strlen(s), o = 0;
	char *buf;
	json_t *j;

	if ((j = json_string(s)))
		return j;
	buf = malloc(3 * len + 1);
	if (!buf)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = *p < 0x80 ? 1 : pmu_utf8_len(p, (const unsigned char *)s + len);

		if (n) {
			memcpy(buf + o, p, n);
			o += n;
			p += n;
		} else {
			memcpy(buf + o, "\xef\xbf\xbd", 3);
			o += 3;
			p++;
		}
	}
	buf[o] = '\0';
	j = json_string(buf);
	free(buf);
	return j;
}

int pmu_bag_put_json(struct pmu_bag *bag, const char *relpath, json_t *j)
{
	char *s = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	struct pmu_json_limits lim;
	json_t *back;
	size_t n;
	int err;

	json_decref(j);
	if (!s)
		return pmu_error(PMU_ERR_NOMEM, "cannot encode '%s'", relpath);
	n = strlen(s);
	char *t = realloc(s, n + 2);

	if (!t) {
		free(s);
		return pmu_error(PMU_ERR_NOMEM, "cannot encode '%s'", relpath);
	}
	t[n] = '\n';
	t[n + 1] = '\0';
	/* what pmuvalidate would refuse is never written: the same bounded
	 * parse, with the limits of the spec version this library writes */
	lim = pmu_doc_limits(PMU_SPEC_MINOR);
	err = pmu_json_load_buf(t, n + 1, &lim, &back, NULL);
	json_decref(back);
	if (err) {
		char why[512];

		snprintf(why, sizeof(why), "%s", pmu_error_detail());
		free(t);
		return pmu_error(err, "cannot write '%s', readers would refuse it: %s", relpath, why);
	}
	err = pmu_bag_put(bag, relpath, t, n + 1);
	free(t);
	return err;
}

json_t *pmu_lc_rec(uint64_t t, const char *event)
{
	return json_pack("{s:s,s:I,s:s}", "type", "lifecycle", "t_ns", (json_int_t)t, "event", event);
}

void pmu_lc_started(json_t *recs, uint64_t t, const char *evidence)
{
	json_t *r;

	json_array_append_new(recs, pmu_lc_rec(t, "requested"));
	r = pmu_lc_rec(t, "probed");
	json_object_set_new(r, "status", json_string("ok"));
	json_array_append_new(recs, r);
	json_array_append_new(recs, pmu_lc_rec(t, "opened"));
	r = pmu_lc_rec(t, "attached");
	json_object_set_new(r, "evidence", pmu_json_text(evidence));
	json_array_append_new(recs, r);
}

void pmu_lc_ended(json_t *recs, uint64_t t, const char *status)
{
	json_t *r;

	json_array_append_new(recs, pmu_lc_rec(t, "stopped"));
	json_array_append_new(recs, pmu_lc_rec(t, "detached"));
	r = pmu_lc_rec(t, "final");
	json_object_set_new(r, "status", json_string(status));
	json_array_append_new(recs, r);
}

void pmu_lc_unavailable(json_t *recs, uint64_t t, const char *reason, const char *remedy)
{
	json_t *r;

	json_array_append_new(recs, pmu_lc_rec(t, "requested"));
	r = pmu_lc_rec(t, "probed");
	json_object_set_new(r, "status", json_string("unavailable"));
	json_object_set_new(r, "reason", pmu_json_text(reason));
	json_object_set_new(r, "remedy", pmu_json_text(remedy));
	json_array_append_new(recs, r);
	r = json_deep_copy(r);
	json_object_set_new(r, "event", json_string("final"));
	json_array_append_new(recs, r);
}
