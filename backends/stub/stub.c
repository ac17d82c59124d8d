/*
 * The stub backend: the honest absence of a platform.  It needs nothing
 * but POSIX and jansson, and defines everything backends/backend.h and
 * backends/events.h declare, so that pmurec links and pmuvalidate,
 * pmuanalyze and the platform-free tests run on a system pmu has no
 * backend for.  `make BACKEND=stub` selects it.
 *
 * What it does:
 * - probe: the host's os/arch/kernel from uname(2); every capability and
 *   every timing setting unavailable, with the reason and a remedy.
 * - events: lib/perfev.c's grammar refuses a malformed list as it does
 *   anywhere; every well-formed item is unavailable, with the reason.
 * - counting: the collector (collector.h) is unavailable, with the reason.
 * - the cohort's cgroup: none, with the reason.
 * - the host's CPU time: unavailable, with the reason (run.json's
 *   host_load says so).
 * - run: nothing is run.  pmurec's guarantees (the command held behind a
 *   barrier until it is followed, nothing it started outlives it) need the
 *   platform's process control, so even mode none, which only waits for
 *   the command, is refused rather than half kept: pmu_follow_start()
 *   returns PMU_ERR_UNSUPPORTED with the reason, and pmurec writes no
 *   bundle.  A port starts here: replace this file by backends/<os>/.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "backend.h"
#include "collector.h"
#include "lifecycle.h"
#include "util.h"
#include "error.h"
#include "events.h"
#include "spec_json.h"
/* the recorder includes this declaration from the Linux backend today */
#include "linux/provenance.h"

#define STUB_REASON "pmu has no backend for this platform (built with BACKEND=stub)"
#define STUB_REMEDY "record on Linux with the default build (BACKEND=linux), or port pmu: see backends/README.md"

/* ---- capability probe --------------------------------------------------- */

/* The capabilities the Linux backend probes, less the settings and facts
 * it only reads (sysctls, virtualization, privileges): what pmu would
 * measure with, each unavailable here. */
static const char *const caps_known[] = {
	"cpu-identity", "pmu-devices", "core-pmu", "software-events", "hardware-events", "pmu-counters",
	"pmu-events", "pmu-sampling", "pmu-branch-stack", "rdpmc", "kernel-counting",
	"cpu-wide-events", "tracefs", "cgroup-v2", "cgroup-delegation", "bpf", "libpfm4", "libdw",
};

static const char *const settings_known[] = { "cpufreq-governor", "smt-active", "turbo-disabled", "clocksource" };

static void unavailable_rows(json_t *arr, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:s}", "name", names[i], "status", "unavailable",
						     "reason", STUB_REASON, "remedy", STUB_REMEDY));
}

int pmu_backend_probe(json_t *host, json_t *caps)
{
	struct utsname u;
	char os[sizeof(u.sysname)];

	if (uname(&u) < 0) {
		snprintf(u.sysname, sizeof(u.sysname), "unknown");
		snprintf(u.release, sizeof(u.release), "unknown");
		snprintf(u.machine, sizeof(u.machine), "unknown");
	}
	/* lowercase, as the Linux backend names its os */
	for (size_t i = 0; i < sizeof(os); i++)
		os[i] = (char)tolower((unsigned char)u.sysname[i]);
	os[sizeof(os) - 1] = '\0';
	json_object_set_new(host, "os", json_string(os));
	json_object_set_new(host, "arch", json_string(u.machine));
	json_object_set_new(host, "kernel", json_string(u.release));
	unavailable_rows(caps, caps_known, sizeof(caps_known) / sizeof(*caps_known));
	return 0;
}

bool pmu_backend_usdt_attach(char *why, size_t n, const char **remedy)
{
	snprintf(why, n, "this pmurec was built with BACKEND=stub, which records nothing");
	*remedy = "build pmu with its platform's backend (make; on Linux BACKEND=linux)";
	return false;
}

int pmu_backend_settings(json_t *settings)
{
	unavailable_rows(settings, settings_known, sizeof(settings_known) / sizeof(*settings_known));
	return 0;
}

/* ---- events ------------------------------------------------------------- */

static int resolve_none(void *ctx, struct pmu_evspec *s)
{
	(void)ctx;
	return pmu_evspec_unavailable(s, STUB_REMEDY, "%s", STUB_REASON);
}

int pmu_evlist_parse(const char *list, const struct pmu_evenv *env, struct pmu_evspec **out, size_t *n)
{
	(void)env;
	return pmu_evlist_parse_with(list, resolve_none, NULL, out, n);
}

int pmu_evlist_defaults(struct pmu_evspec **out, size_t *n)
{
	return pmu_evlist_defaults_with(resolve_none, NULL, out, n);
}

/* ---- launch and follow -------------------------------------------------- */

volatile int pmu_backend_stop_signal;
volatile int pmu_backend_abort;

int pmu_follow_start(const struct pmu_launch *l, struct pmu_cohort *c, struct pmu_launch_result *res,
		     struct pmu_follow **f)
{
	(void)c;
	*f = NULL;
	memset(res, 0, sizeof(*res));
	snprintf(res->follow_reason, sizeof(res->follow_reason), "%s", STUB_REASON);
	res->follow_remedy = STUB_REMEDY;
	if (l->attach_pid)
		return pmu_error(PMU_ERR_UNSUPPORTED, "cannot attach to process %d: %s", (int)l->attach_pid,
				 STUB_REASON);
	return pmu_error(PMU_ERR_UNSUPPORTED, "cannot run '%s': %s", l->argv && l->argv[0] ? l->argv[0] : "",
			 STUB_REASON);
}

/* Never reached: no follow is ever started. */
int pmu_follow_fds(const struct pmu_follow *f, int *fds, int max)
{
	(void)f, (void)fds, (void)max;
	return 0;
}

int pmu_follow_drain(struct pmu_follow *f, bool *done)
{
	(void)f;
	*done = true;
	return 0;
}

void pmu_follow_kill(struct pmu_follow *f, int sig)
{
	(void)f, (void)sig;
}

void pmu_follow_detach(struct pmu_follow *f)
{
	(void)f;
}

bool pmu_follow_stops(const struct pmu_follow *f)
{
	(void)f;
	return false;
}

int pmu_follow_end(struct pmu_follow *f, int err)
{
	(void)f;
	return err;
}

/* ---- the cohort's cgroup: none here ------------------------------------- */

int pmu_cohort_cgroup_new(struct pmu_cohort_cgroup **out, char *why, size_t n, const char **remedy)
{
	*out = NULL;
	snprintf(why, n, "%s", STUB_REASON);
	*remedy = STUB_REMEDY;
	return PMU_ERR_UNSUPPORTED;
}

int pmu_cohort_cgroup_enter(struct pmu_cohort_cgroup *g, pid_t pid, char *why, size_t n)
{
	(void)g, (void)pid;
	snprintf(why, n, "%s", STUB_REASON);
	return PMU_ERR_UNSUPPORTED;
}

const char *pmu_cohort_cgroup_path(const struct pmu_cohort_cgroup *g)
{
	(void)g;
	return NULL;
}

uint64_t pmu_cohort_cgroup_id(const struct pmu_cohort_cgroup *g)
{
	(void)g;
	return 0;
}

int pmu_cohort_cgroup_end(struct pmu_cohort_cgroup *g)
{
	(void)g;
	return 0;
}

/* ---- the host's CPU time ------------------------------------------------ */

int pmu_host_cpu_read(struct pmu_host_cpu *s)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->reason, sizeof(s->reason), "%s", STUB_REASON);
	s->remedy = STUB_REMEDY;
	return PMU_ERR_UNSUPPORTED; /* pmu_error_detail() is the recorder's (backend.h) */
}

json_t *pmu_image_describe(const char *path, const char *role)
{
	return json_pack("{s:o,s:s,s:s,s:s,s:s}", "path", pmu_json_text(path), "role", role, "status", "unavailable",
			 "reason", STUB_REASON, "remedy", STUB_REMEDY);
}

/* ---- counting: the collector, unavailable -------------------------------- */

static int counting_probe(struct pmu_collector_env *env, json_t *caps, void **state)
{
	(void)caps;
	*state = NULL;
	pmu_lc_unavailable_at(env->lc, pmu_now_mono_ns(), STUB_REASON, STUB_REMEDY);
	return 0;
}

static int counting_emit(void *state, struct pmu_collector_env *env, const struct pmu_run_window *win)
{
	(void)state, (void)env, (void)win;
	return 0;
}

static void counting_release(void *state)
{
	(void)state;
}

const struct pmu_collector_ops pmu_counting_collector = {
	.name = "counting", .modes = 2 | 4, .probe = counting_probe, .emit = counting_emit,
	.release = counting_release,
};

/* ---- sampling: the collector, unavailable -------------------------------- */

const struct pmu_collector_ops pmu_sampling_collector = {
	.name = "sampling", .modes = 2 | 4, .probe = counting_probe, .emit = counting_emit,
	.release = counting_release,
};

/* ---- syscalls: the collector, unavailable -------------------------------- */

const struct pmu_collector_ops pmu_syscalls_collector = {
	.name = "syscalls", .modes = 4, .probe = counting_probe, .emit = counting_emit,
	.release = counting_release,
};

/* ---- sched: the collector, unavailable ------------------------------------ */

const struct pmu_collector_ops pmu_sched_collector = {
	.name = "sched", .modes = 4, .probe = counting_probe, .emit = counting_emit,
	.release = counting_release,
};

/* ---- probes and alloc: the collectors, unavailable ------------------------- */

static bool alloc_wanted(const struct pmu_run_config *cfg)
{
	return cfg->alloc_sample_bytes > 0;
}

const struct pmu_collector_ops pmu_probes_collector = {
	.name = "probes", .modes = 4, .probe = counting_probe, .emit = counting_emit,
	.release = counting_release,
};

const struct pmu_collector_ops pmu_alloc_collector = {
	.name = "alloc", .modes = 2 | 4, .wanted = alloc_wanted, .probe = counting_probe, .emit = counting_emit,
	.release = counting_release,
};
