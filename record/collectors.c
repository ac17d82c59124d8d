/*
 * The collector table, and the recorder's driver of it (collectors.h).
 *
 * A new collector is one file with its ops table and one row here; the
 * driver below never knows which collector it drives.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors.h"
#include "error.h"
#include "lifecycle.h"
#include "spec.h"
#include "util.h"

extern const struct pmu_collector_ops pmu_cohort_collector, pmu_control_collector, pmu_counting_collector,
	pmu_sampling_collector, pmu_syscalls_collector, pmu_sched_collector, pmu_probes_collector, pmu_alloc_collector;

const struct pmu_collector_ops *const pmu_collectors[] = {
	&pmu_cohort_collector,
	&pmu_control_collector,
	&pmu_counting_collector,
	&pmu_sampling_collector,
	&pmu_syscalls_collector,
	&pmu_sched_collector,
	&pmu_probes_collector,
	&pmu_alloc_collector,
	NULL,
};

struct coll {
	const struct pmu_collector_ops *ops;
	void *st;
	struct pmu_collector_env env;
	bool requested, usable;
	bool open_failed;       /* its open failed: the bundle is invalid */
	char open_why[300];
};

struct pmurec_colls {
	struct coll *c;
	size_t n;
	const struct pmu_run_config *cfg;
	struct pmu_task_listener listener;
};

static void dispatch(struct pmurec_colls *cs, const struct pmu_task_event *ev)
{
	for (size_t i = 0; i < cs->n; i++)
		if (cs->c[i].usable && cs->c[i].ops->task)
			cs->c[i].ops->task(cs->c[i].st, ev);
}

static void on_joined(void *ctx, int inc, pid_t pid, pid_t tid, unsigned flags, uint64_t t)
{
	dispatch(ctx, &(struct pmu_task_event){ PMU_TASK_JOINED, inc, pid, tid, flags, t, NULL });
}

static void on_exec(void *ctx, int inc, pid_t pid, pid_t former_tid, uint64_t t)
{
	dispatch(ctx, &(struct pmu_task_event){ PMU_TASK_EXEC, inc, pid, former_tid, 0, t, NULL });
}

static void on_ended(void *ctx, int inc, pid_t tid, uint64_t t, const struct pmu_task_counts *counts)
{
	dispatch(ctx, &(struct pmu_task_event){ PMU_TASK_ENDED, inc, 0, tid, 0, t, counts });
}

static void on_inc_ended(void *ctx, int inc, uint64_t end_ns)
{
	dispatch(ctx, &(struct pmu_task_event){ PMU_TASK_INC_ENDED, inc, 0, 0, 0, end_ns, NULL });
}

int pmurec_colls_new(const struct pmu_collector_ops *const *table, const struct pmu_run_config *cfg,
		     struct pmu_cohort *co, struct pmu_out *out, void **args, size_t nargs, json_t *caps,
		     struct pmurec_colls **csp)
{
	struct pmurec_colls *cs = calloc(1, sizeof(*cs));
	size_t nt = 0;
	int err = 0;

	*csp = NULL;
	if (!table)
		table = pmu_collectors;
	while (table[nt])
		nt++;
	if (!cs || !(cs->c = calloc(nt + nargs, sizeof(*cs->c)))) {
		free(cs);
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	}
	cs->cfg = cfg;
	cs->listener = (struct pmu_task_listener){ on_joined, on_exec, on_ended, on_inc_ended, cs };
	for (size_t i = 0; i < nt + nargs; i++) {
		struct coll *c = &cs->c[cs->n];

		c->ops = i < nt ? table[i] : &pmu_external_collector;
		c->env = (struct pmu_collector_env){ .cfg = cfg, .cohort = co, .out = out,
						     .arg = i < nt ? NULL : args[i - nt] };
		if (!(c->env.lc = pmu_lc_new())) {
			err = pmu_error(PMU_ERR_NOMEM, "out of memory");
			break;
		}
		cs->n++;
		c->requested = (c->ops->modes & (1u << cfg->mode)) && (!c->ops->wanted || c->ops->wanted(cfg));
		if (!c->requested)
			continue;
		pmu_lc_step(c->env.lc, "requested", pmu_now_mono_ns());
		if ((err = c->ops->probe(&c->env, caps, &c->st)))
			break;
		c->usable = c->st && (!c->ops->usable || c->ops->usable(c->st)) && !pmu_lc_status(c->env.lc);
	}
	*csp = cs;
	return err;
}

void pmurec_colls_followed(struct pmurec_colls *cs, const struct pmu_launch_result *lr, bool stops)
{
	for (size_t i = 0; i < cs->n; i++) {
		struct pmu_collector_env *e = &cs->c[i].env;

		e->followed = lr->follow_ok;
		e->follow_reason = lr->follow_reason;
		e->follow_remedy = lr->follow_remedy;
		e->follower = lr->follower ? lr->follower : "none";
		e->follower_why = lr->follower_why;
		e->follower_evidence = lr->follower_evidence;
		e->stops = stops ? PMU_STOPS_BEFORE_RUN : PMU_STOPS_NONE;
	}
}

void pmurec_colls_cgroup(struct pmurec_colls *cs, const struct pmu_cohort_cgroup *g, const char *why,
			 const char *remedy)
{
	for (size_t i = 0; i < cs->n; i++) {
		cs->c[i].env.cohort_cgroup = g;
		cs->c[i].env.cgroup_why = why;
		cs->c[i].env.cgroup_remedy = remedy;
	}
}

void pmurec_colls_follow_losses(struct pmurec_colls *cs, uint64_t lost, const char *lost_why, uint64_t malformed,
				 const char *malformed_first)
{
	for (size_t i = 0; i < cs->n; i++) {
		cs->c[i].env.follow_lost = lost;
		cs->c[i].env.follow_lost_why = lost_why;
		cs->c[i].env.follow_malformed = malformed;
		cs->c[i].env.follow_malformed_first = malformed_first;
	}
}

int pmurec_colls_open(struct pmurec_colls *cs, pid_t root, uint64_t t)
{
	(void)t;
	for (size_t i = 0; i < cs->n; i++) {
		struct coll *c = &cs->c[i];

		/* each at its own time; one that cannot open has failed, and the
		 * others open all the same */
		if (c->usable && c->ops->open && c->ops->open(c->st, root, pmu_now_mono_ns())) {
			c->usable = false;
			c->open_failed = true;
			snprintf(c->open_why, sizeof(c->open_why), "it could not open: %s", pmu_error_detail());
			pmu_lc_final(c->env.lc, pmu_now_mono_ns(), "failed", c->open_why);
		}
	}
	return 0;
}

const struct pmu_task_listener *pmurec_colls_listener(struct pmurec_colls *cs)
{
	return &cs->listener;
}

int pmurec_colls_fds(void *ctx, int *fds, int max)
{
	struct pmurec_colls *cs = ctx;
	int n = 0;

	for (size_t i = 0; i < cs->n && n < max; i++)
		if (cs->c[i].usable && cs->c[i].ops->fds)
			n += cs->c[i].ops->fds(cs->c[i].st, fds + n, max - n);
	return n;
}

int pmurec_colls_drain(void *ctx, uint64_t now)
{
	struct pmurec_colls *cs = ctx;
	int err = 0;

	for (size_t i = 0; !err && i < cs->n; i++)
		if (cs->c[i].usable && cs->c[i].ops->drain)
			err = cs->c[i].ops->drain(cs->c[i].st, now);
	return err;
}

bool pmurec_colls_reaped(struct pmurec_colls *cs, pid_t pid, int status)
{
	for (size_t i = 0; i < cs->n; i++)
		if (cs->c[i].st && cs->c[i].ops->reaped && cs->c[i].ops->reaped(cs->c[i].st, pid, status))
			return true;
	return false;
}

void pmurec_colls_stop(struct pmurec_colls *cs)
{
	/* the externals first (they may still be sending), then the table
	 * backwards: counting, whose cohort cgroup must outlive the rest of
	 * the run, stops after everything but the follower's own */
	for (size_t k = cs->n; k-- > 0;) {
		struct coll *c = &cs->c[k];

		if (c->usable && c->ops->stop)
			c->ops->stop(c->st, pmu_now_mono_ns());
	}
}

/* The bundle name of c: the table's, or the instance's own. */
static const char *name_of(const struct coll *c)
{
	return c->st && c->ops->instance ? c->ops->instance(c->st) : c->ops->name;
}

/* Unique bundle names: the table's first, then the externals in order. */
static void unique_names(struct pmurec_colls *cs)
{
	for (size_t i = 0; i < cs->n; i++) {
		struct coll *c = &cs->c[i];
		char name[64];
		bool clash = true;

		if (!c->st || !c->ops->instance || !c->ops->rename)
			continue;
		snprintf(name, sizeof(name), "%s", name_of(c));
		for (int n = 1; clash; n++) {
			clash = false;
			for (size_t j = 0; j < i; j++)
				clash |= !strcmp(name_of(&cs->c[j]), name);
			if (clash)
				snprintf(name, sizeof(name), "%.40s-%d", name_of(c), n + 1);
		}
		c->ops->rename(c->st, name);
	}
}

int pmurec_colls_emit(struct pmurec_colls *cs, const struct pmu_run_window *win, const char *note, json_t *list,
		      bool *failed, char *why, size_t n)
{
	int err = 0;

	*failed = false;
	unique_names(cs);
	for (size_t i = 0; !err && i < cs->n; i++) {
		struct coll *c = &cs->c[i];
		struct pmu_out *o = c->env.out;
		const char *name;
		json_t *recs;
		char rel[128], w[600];

		c->env.cohort_note = note;
		err = c->ops->emit(c->st, &c->env, win);
		name = name_of(c);
		json_array_append_new(list, json_pack("{s:s,s:b}", "name", name, "requested", c->requested));
		if (!c->requested)
			pmu_lc_final(c->env.lc, win->end_ns, "not-requested", NULL);
		else if (!pmu_lc_status(c->env.lc))
			pmu_lc_final(c->env.lc, win->end_ns, "ok", NULL);
		if (c->open_failed) {
			fprintf(stderr, "pmurec: collector '%s' failed: %s\n", name, c->open_why);
			if (!*failed)
				snprintf(why, n, "collector '%s' failed", name);
			*failed = true;
		} else if (c->st && c->ops->failed && c->ops->failed(c->st, w, sizeof(w))) {
			fprintf(stderr, "pmurec: collector '%s' failed: %s\n", name, w);
			if (!*failed)
				snprintf(why, n, "collector '%s' failed", name);
			*failed = true;
		}
		if (err)
			break;
		snprintf(rel, sizeof(rel), "collectors/%s/lifecycle.jsonl", name);
		recs = pmu_lc_records(c->env.lc);
		err = recs ? pmu_out_stream(o, rel, "lifecycle", recs) : pmu_error(PMU_ERR_NOMEM, "out of memory");
	}
	return err;
}

void pmurec_colls_free(struct pmurec_colls *cs)
{
	if (!cs)
		return;
	for (size_t i = 0; i < cs->n; i++) {
		if (cs->c[i].ops->release)
			cs->c[i].ops->release(cs->c[i].st);
		pmu_lc_free(cs->c[i].env.lc);
	}
	free(cs->c);
	free(cs);
}
