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
 *
 * The work is spread over the files that lib/validate_int.h lists; this
 * one drives them: findings, the repetitions and the files of each, the
 * spec version, pmu_validate_path().
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bag.h"
#include "bundle.h"
#include "error.h"
#include "spec.h"
#include "util.h"
#include "validate.h"
#include "validate_int.h"

/* ---- findings ----------------------------------------------------------- */

__attribute__((format(printf, 6, 7)))
void pmu_v_report_sev(struct v *v, enum pmu_check c, enum pmu_severity sev, const char *file,
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

/* ---- files of the payload ---------------------------------------------- */

/*
 * Stream kinds that one collector alone writes (spec 1.6: the sampling
 * collector's samples and maps, section 22; spec 1.7: the syscalls
 * collector's syscalls and syscall-stats, the sched collector's sched,
 * section 23; spec 1.8: the probes collector's probes, the alloc
 * collector's alloc, section 24); the others are any collector's.  A samples.jsonl under another collector is no stream the
 * spec defines (FILE-UNKNOWN).
 */
static const struct {
	const char *kind, *collector;
} stream_owner[] = {
	{ "samples", "sampling" },
	{ "maps", "sampling" },
	/* spec 1.7: the OS-event collectors' (section 23) */
	{ "syscalls", "syscalls" },
	{ "syscall-stats", "syscalls" },
	{ "sched", "sched" },
	/* spec 1.8: the runtime-evidence collectors' (section 24) */
	{ "probes", "probes" },
	{ "alloc", "alloc" },
};

static bool stream_owned_by(const struct pmu_streamdef *sd, const char *coll, size_t len)
{
	for (size_t i = 0; i < PMU_ARRAY_SIZE(stream_owner); i++)
		if (!strcmp(sd->kind, stream_owner[i].kind))
			return strlen(stream_owner[i].collector) == len && !memcmp(stream_owner[i].collector, coll, len);
	return true;
}

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
		if (!rest || strcmp(rest + 1, sd->file) || (size_t)(rest - (rel + 11)) >= collsz ||
		    !stream_owned_by(sd, rel + 11, (size_t)(rest - (rel + 11))))
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
	v->nspans = v->capspans = v->spans_dropped = 0;
	v->run_ok = v->cohort_ok = false;
	v->maps_kmap = -1;
	pmu_v_os_reset(v);
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
		    !pmu_v_find_file(v, p))
			report(v, PMU_CHECK_FILE_REQUIRED, p, 0, "required stream is missing");
	}
	/* documents, in dependency order: run (window), cohort (attribution) */
	for (size_t i = 0; i < pmu_ndocs; i++) {
		json_t *doc;

		if (!pmu_docs[i].per_repetition || !pmu_docdef_in(&pmu_docs[i], v->minor))
			continue;
		snprintf(p, sizeof(p), "%s%s", v->scope, pmu_docs[i].file);
		if (!pmu_v_find_file(v, p)) {
			report(v, PMU_CHECK_FILE_REQUIRED, p, 0, "required document is missing");
			continue;
		}
		if (!strcmp(pmu_docs[i].type, "cohort")) {
			pmu_v_check_cohort_doc(v, &pmu_docs[i], p); /* grows with the workload: never whole */
			continue;
		}
		doc = pmu_v_load_doc(v, p);
		if (doc && pmu_v_check_doc(v, &pmu_docs[i], p, doc) && !strcmp(pmu_docs[i].type, "run"))
			pmu_v_check_run(v, doc);
		json_decref(doc);
	}
	/* the cohort stream (1.3): the cohort, before the streams that name it */
	for (size_t i = 0; i < pmu_nstreams; i++) {
		if (strcmp(pmu_streams[i].kind, "cohort") || pmu_streams[i].since > v->minor)
			continue;
		snprintf(p, sizeof(p), "%s%s", v->scope, pmu_streams[i].file);
		if (pmu_v_find_file(v, p) && pmu_bag_name_ok(p))
			pmu_v_check_cohort_stream(v, &pmu_streams[i], p);
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
			struct collector *c = sd->per_collector && v->run_ok ? pmu_v_find_coll(v, coll) : NULL;

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
				pmu_v_check_stream(v, sd, v->files[i].path, sd->per_collector ? coll : NULL);
			}
		}
	}
	pmu_v_run_jobs(v, jobs, njobs);
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
		if (!pmu_v_find_file(v, p)) {
			if (pmu_docs[i].required)
				report(v, PMU_CHECK_FILE_REQUIRED, p, 0, "required document is missing");
			continue;
		}
		doc = pmu_v_load_doc(v, p);
		if (doc)
			pmu_v_check_doc(v, &pmu_docs[i], p, doc);
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
		/* the sampling collector's other files (1.6) */
		known |= k && v->minor >= 6 && pmu_v_sampling_file(rel, k) && pmu_bag_name_ok(p);
		if (!k || k > v->repeat || !known)
			report(v, PMU_CHECK_FILE_UNKNOWN, p, 0, "file is not defined by spec %s%s", v->spec,
			       k > v->repeat ? " (a repetition beyond data/run.json's repeat)"
			       : sd && sd->since > v->minor ? " (its stream kind was added in a later version)"
			       : earlier ? " (a document of earlier versions only)" : "");
	}
	for (int k = 2; k <= v->repeat; k++)
		check_scope(v, k);
	pmu_v_check_sampling_files(v);
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
	for (size_t i = 0; i < v->nretained; i++)
		free(v->retained[i]);
	free(v->retained);
	pmu_jrec_release(&v->rec);
}

static int validate_dir(struct v *v)
{
	pthread_t th;
	bool threaded = false;
	int err;

	v->structure_ok = true;
	eval(v, PMU_CHECK_BAG_STRUCTURE);
	err = pmu_v_walk(v, v->rootfd, "", 0);
	if (err)
		return err;
	qsort(v->files, v->nfiles, sizeof(*v->files), pmu_v_cmp_vfile);
	pmu_v_check_bagit(v);
	pmu_v_check_baginfo(v);
	pmu_v_check_manifests(v);
	if (v->opts->hash_thread && pthread_create(&th, NULL, pmu_v_hash_other, v) == 0)
		threaded = true;
	else
		pmu_v_hash_files(v, false);
	if (v->info_ok)
		check_spec_version(v);
	if (v->spec_ok)
		check_payload(v);
	if (threaded)
		pthread_join(th, NULL);
	pmu_v_hash_files(v, true);
	pmu_v_report_hashes(v);
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
