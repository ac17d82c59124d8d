#include <stdio.h>
#include <string.h>

#include "counts.h"

static const char remedy_mux[] =
	"count fewer hardware events at once, or pass --scaled to accept labelled estimates";
static const char remedy_none[] = "none: the kernel never scheduled the counter while the task ran";

void pmu_cnt_judge(const struct pmu_cnt_raw *r, bool scaled, struct pmu_cnt_val *v)
{
	memset(v, 0, sizeof(*v));
	if (r->running_ns > r->enabled_ns) {
		snprintf(v->reason, sizeof(v->reason),
			 "inconsistent read: running %llu ns exceeds enabled %llu ns",
			 (unsigned long long)r->running_ns, (unsigned long long)r->enabled_ns);
		v->remedy = "none: report this kernel's behaviour";
		return;
	}
	if (r->running_ns == 0) {
		v->not_counted = true;
		if (r->enabled_ns == 0)
			snprintf(v->reason, sizeof(v->reason),
				 "not counted: the counter was never enabled while the task ran");
		else
			snprintf(v->reason, sizeof(v->reason),
				 "not counted: enabled %llu ns, running 0 ns (the PMU never had room for it)",
				 (unsigned long long)r->enabled_ns);
		v->remedy = r->enabled_ns ? remedy_mux : remedy_none;
		return;
	}
	/* running / enabled, rounded down: an exact count is exactly 1000000 */
	v->running_ppm = (uint32_t)((unsigned __int128)r->running_ns * PMU_CNT_PPM / r->enabled_ns);
	if (r->running_ns == r->enabled_ns) {
		v->ok = true;
		v->value = r->raw;
		v->running_ppm = PMU_CNT_PPM;
		v->suspect_zero = r->on_pmu && r->raw == 0 && r->running_ns >= PMU_CNT_SUSPECT_NS;
		return;
	}
	if (!scaled) {
		snprintf(v->reason, sizeof(v->reason),
			 "multiplexed: counted %u.%u%% of its enabled time; exact-or-drop is the default",
			 v->running_ppm / 10000, v->running_ppm / 1000 % 10);
		v->remedy = remedy_mux;
		return;
	}
	if (r->running_ns < PMU_CNT_MIN_RUNNING_NS) {
		snprintf(v->reason, sizeof(v->reason),
			 "multiplexed and counted for only %llu ns (under 1 ms): too little to scale",
			 (unsigned long long)r->running_ns);
		v->remedy = remedy_mux;
		return;
	}
	unsigned __int128 est = ((unsigned __int128)r->raw * r->enabled_ns + r->running_ns / 2) / r->running_ns;

	if (est > INT64_MAX) {
		snprintf(v->reason, sizeof(v->reason), "the scaled estimate overflows 63 bits");
		v->remedy = remedy_mux;
		return;
	}
	v->ok = true;
	v->estimate = true;
	v->value = (uint64_t)est;
	v->suspect_zero = r->on_pmu && r->raw == 0 && r->running_ns >= PMU_CNT_SUSPECT_NS;
}

void pmu_cnt_sum_init(struct pmu_cnt_sum *s)
{
	memset(s, 0, sizeof(*s));
	s->v.ok = true;
	s->v.running_ppm = PMU_CNT_PPM;
}

void pmu_cnt_sum_add(struct pmu_cnt_sum *s, const struct pmu_cnt_val *p, const char *label)
{
	s->parts++;
	if (!p->ok) {
		if (!s->bad++)
			snprintf(s->v.reason, sizeof(s->v.reason), "%.40s: %.190s", label, p->reason);
		s->v.remedy = p->remedy;
		s->v.ok = false;
		return;
	}
	if (!s->v.ok)
		return;
	if (s->v.value > (uint64_t)INT64_MAX - p->value) {
		s->v.ok = false;
		s->bad++;
		snprintf(s->v.reason, sizeof(s->v.reason), "the sum overflows 63 bits");
		s->v.remedy = "none";
		return;
	}
	s->v.value += p->value;
	s->v.estimate |= p->estimate;
	s->v.suspect_zero |= p->suspect_zero;
	if (p->running_ppm < s->v.running_ppm)
		s->v.running_ppm = p->running_ppm;
}

void pmu_cnt_sum_done(struct pmu_cnt_sum *s)
{
	if (!s->parts) {
		memset(&s->v, 0, sizeof(s->v));
		snprintf(s->v.reason, sizeof(s->v.reason), "not counted: no part was read");
		s->v.remedy = "none";
		return;
	}
	if (!s->v.ok) {
		char first[sizeof(s->v.reason)];

		s->v.value = 0;
		s->v.estimate = false;
		s->v.suspect_zero = false;
		snprintf(first, sizeof(first), "%s", s->v.reason);
		snprintf(s->v.reason, sizeof(s->v.reason), "%zu of %zu parts not counted (first: %.160s)",
			 s->bad, s->parts, first);
		return;
	}
	if (s->v.value)
		s->v.suspect_zero = false;
}
