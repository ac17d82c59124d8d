/*
 * Events streams are checked in parallel, one stream per job: each job
 * runs on a private copy of the validator state whose shared parts (the
 * cohort, the run window, the collectors) are read-only by then, with its
 * own parser, pairing stacks and result, and its findings buffered.  The
 * buffers are replayed in stream order afterwards, so the report is the
 * same whatever the scheduling.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonl.h"
#include "validate_int.h"

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
	pmu_v_check_stream(&w, j->sd, j->path, j->coll);
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

void pmu_v_run_jobs(struct v *v, struct job *jobs, size_t n)
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
			pmu_v_report_sev(v, (enum pmu_check)j->f[k].check, j->f[k].sev, j->f[k].file, j->f[k].record, "%s",
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

