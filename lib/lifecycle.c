/*
 * Live collector lifecycles (lifecycle.h).  The steps are few (at most
 * seven, plus two counts), so a collector's lifecycle is a fixed table of
 * times; the records are made when the stream is written.
 */
#include <stdlib.h>
#include <string.h>

#include "lifecycle.h"
#include "spec_json.h"

enum { S_REQUESTED, S_PROBED, S_OPENED, S_ATTACHED, S_STOPPED, S_DETACHED, S_FINAL, S_COUNT_ };

static const char *const steps[S_COUNT_] = { "requested", "probed", "opened", "attached",
					      "stopped", "detached", "final" };

struct pmu_lifecycle {
	uint64_t t[S_COUNT_];
	bool have[S_COUNT_];
	int last;               /* the latest step recorded, -1 none */
	char *probed_status;    /* "ok", "unavailable" or NULL */
	char *reason, *remedy;  /* of probed (unavailable) and final */
	char *evidence;
	char *final_status, *final_reason;
	uint64_t drop, malformed, t_drop, t_malformed;
	char *why_drop, *why_malformed;
};

struct pmu_lifecycle *pmu_lc_new(void)
{
	struct pmu_lifecycle *lc = calloc(1, sizeof(*lc));

	if (lc)
		lc->last = -1;
	return lc;
}

void pmu_lc_free(struct pmu_lifecycle *lc)
{
	if (!lc)
		return;
	free(lc->probed_status);
	free(lc->reason);
	free(lc->remedy);
	free(lc->evidence);
	free(lc->final_status);
	free(lc->final_reason);
	free(lc->why_drop);
	free(lc->why_malformed);
	free(lc);
}

static int step_of(const char *event)
{
	for (int i = 0; i < S_COUNT_; i++)
		if (!strcmp(steps[i], event))
			return i;
	return -1;
}

/* Record step s at t unless it is recorded or would go back. */
static bool put(struct pmu_lifecycle *lc, int s, uint64_t t)
{
	if (!lc || s < 0 || lc->have[s] || s <= lc->last)
		return false;
	/* times never go back either: a step is no earlier than the one before */
	if (lc->last >= 0 && t < lc->t[lc->last])
		t = lc->t[lc->last];
	lc->have[s] = true;
	lc->t[s] = t;
	lc->last = s;
	return true;
}

static void set(char **dst, const char *s)
{
	free(*dst);
	*dst = s ? strdup(s) : NULL;
}

void pmu_lc_step(struct pmu_lifecycle *lc, const char *event, uint64_t t)
{
	put(lc, step_of(event), t);
}

void pmu_lc_probed_ok(struct pmu_lifecycle *lc, uint64_t t)
{
	if (put(lc, S_PROBED, t))
		set(&lc->probed_status, "ok");
}

void pmu_lc_attached(struct pmu_lifecycle *lc, uint64_t t, const char *evidence)
{
	if (put(lc, S_ATTACHED, t))
		set(&lc->evidence, evidence && evidence[0] ? evidence : "attached");
}

void pmu_lc_set_evidence(struct pmu_lifecycle *lc, const char *evidence)
{
	if (lc && lc->have[S_ATTACHED] && evidence)
		set(&lc->evidence, evidence);
}

void pmu_lc_lost(struct pmu_lifecycle *lc, const char *event, uint64_t t, uint64_t n, const char *reason)
{
	bool drop = !strcmp(event, "drop");
	char **why;

	if (!lc || !n || lc->have[S_FINAL])
		return;
	why = drop ? &lc->why_drop : &lc->why_malformed;
	if (drop ? !lc->drop : !lc->malformed)
		*(drop ? &lc->t_drop : &lc->t_malformed) = t;
	if (!*why && reason)
		set(why, reason);
	*(drop ? &lc->drop : &lc->malformed) += n;
}

void pmu_lc_unavailable_at(struct pmu_lifecycle *lc, uint64_t t, const char *reason, const char *remedy)
{
	if (!lc)
		return;
	put(lc, S_REQUESTED, t);
	if (put(lc, S_PROBED, t))
		set(&lc->probed_status, "unavailable");
	set(&lc->reason, reason);
	set(&lc->remedy, remedy);
	pmu_lc_final(lc, t, "unavailable", reason);
}

void pmu_lc_final(struct pmu_lifecycle *lc, uint64_t t, const char *status, const char *reason)
{
	if (!lc || !put(lc, S_FINAL, t))
		return;
	set(&lc->final_status, status);
	set(&lc->final_reason, reason);
}

bool pmu_lc_has(const struct pmu_lifecycle *lc, const char *event)
{
	int s = step_of(event);

	return lc && s >= 0 && lc->have[s];
}

const char *pmu_lc_status(const struct pmu_lifecycle *lc)
{
	return lc ? lc->final_status : NULL;
}

uint64_t pmu_lc_dropped(const struct pmu_lifecycle *lc)
{
	return lc ? lc->drop : 0;
}

uint64_t pmu_lc_time(const struct pmu_lifecycle *lc, const char *event)
{
	int s = step_of(event);

	return lc && s >= 0 && lc->have[s] ? lc->t[s] : 0;
}

static void add(json_t *a, json_t *r)
{
	json_array_append_new(a, r);
}

/* drop and malformed lie between opened and final, at their own times
 * clamped into that interval so that the stream stays in time order */
static void add_lost(json_t *a, const struct pmu_lifecycle *lc, uint64_t lo, uint64_t hi, bool *done_d,
		     bool *done_m, uint64_t before)
{
	for (int k = 0; k < 2; k++) {
		bool *done = k ? done_m : done_d;
		uint64_t n = k ? lc->malformed : lc->drop, t = k ? lc->t_malformed : lc->t_drop;
		json_t *r;

		if (*done || !n)
			continue;
		if (t < lo)
			t = lo;
		if (t > hi)
			t = hi;
		if (t > before)
			continue;
		r = pmu_lc_rec(t, k ? "malformed" : "drop");
		json_object_set_new(r, "count", json_integer((json_int_t)n));
		if (k ? lc->why_malformed : lc->why_drop)
			json_object_set_new(r, "reason", pmu_json_text(k ? lc->why_malformed : lc->why_drop));
		add(a, r);
		*done = true;
	}
}

json_t *pmu_lc_records(const struct pmu_lifecycle *lc)
{
	json_t *a = json_array();
	bool dd = false, dm = false;
	uint64_t lo = lc && lc->have[S_OPENED] ? lc->t[S_OPENED] : 0, hi = lc && lc->have[S_FINAL] ? lc->t[S_FINAL] : 0;

	if (!a || !lc)
		return a;
	for (int s = 0; s < S_COUNT_; s++) {
		json_t *r;

		if (!lc->have[s])
			continue;
		/* the counts go before the first step after them in time, once opened */
		if (s > S_OPENED && lc->have[S_OPENED])
			add_lost(a, lc, lo, hi ? hi : lc->t[s], &dd, &dm, lc->t[s]);
		if (s == S_FINAL && lc->have[S_OPENED])
			add_lost(a, lc, lo, hi, &dd, &dm, UINT64_MAX);
		r = pmu_lc_rec(lc->t[s], steps[s]);
		if (s == S_PROBED && lc->probed_status) {
			json_object_set_new(r, "status", json_string(lc->probed_status));
			if (!strcmp(lc->probed_status, "unavailable")) {
				json_object_set_new(r, "reason", pmu_json_text(lc->reason ? lc->reason : "unknown"));
				json_object_set_new(r, "remedy", pmu_json_text(lc->remedy ? lc->remedy : "none known"));
			}
		}
		if (s == S_ATTACHED)
			json_object_set_new(r, "evidence", pmu_json_text(lc->evidence));
		if (s == S_FINAL) {
			json_object_set_new(r, "status", json_string(lc->final_status));
			if (lc->final_reason && lc->final_reason[0])
				json_object_set_new(r, "reason", pmu_json_text(lc->final_reason));
			if (!strcmp(lc->final_status, "unavailable"))
				json_object_set_new(r, "remedy", pmu_json_text(lc->remedy ? lc->remedy : "none known"));
		}
		add(a, r);
	}
	return a;
}
