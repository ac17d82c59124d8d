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
 * - counting: an object that counts nothing (usable() says why).
 * - run: nothing is run.  pmurec's guarantees (the command held behind a
 *   barrier until it is followed, nothing it started outlives it) need the
 *   platform's process control, so even mode none, which only waits for
 *   the command, is refused rather than half kept: pmu_backend_run()
 *   returns PMU_ERR_UNSUPPORTED with the reason, and pmurec writes no
 *   bundle.  A port starts here: replace this file by backends/<os>/.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "backend.h"
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
	"cpu-identity", "pmu-devices", "software-events", "hardware-events", "rdpmc", "kernel-counting",
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

const char *const pmu_res_names[PMU_RES_COUNT_] = {
	"cpu_user_ns", "cpu_system_ns", "max_rss_bytes", "minor_faults", "major_faults",
	"voluntary_switches", "involuntary_switches", "read_bytes", "write_bytes",
};

int pmu_backend_run(const struct pmu_launch *l, struct pmu_cohort *c, struct pmu_launch_result *res)
{
	(void)c;
	memset(res, 0, sizeof(*res));
	snprintf(res->follow_reason, sizeof(res->follow_reason), "%s", STUB_REASON);
	res->follow_remedy = STUB_REMEDY;
	if (l->attach_pid)
		return pmu_error(PMU_ERR_UNSUPPORTED, "cannot attach to process %d: %s", (int)l->attach_pid,
				 STUB_REASON);
	return pmu_error(PMU_ERR_UNSUPPORTED, "cannot run '%s': %s", l->argv && l->argv[0] ? l->argv[0] : "",
			 STUB_REASON);
}

/* The stub never fills a cohort: nothing to free, nothing to find. */
void pmu_cohort_release(struct pmu_cohort *c)
{
	memset(c, 0, sizeof(*c));
}

const struct pmu_incarnation *pmu_cohort_find(const struct pmu_cohort *c, pid_t pid, pid_t tid, uint64_t t0,
					      uint64_t t1)
{
	(void)c, (void)pid, (void)tid, (void)t0, (void)t1;
	return NULL;
}

json_t *pmu_image_describe(const char *path, const char *role)
{
	return json_pack("{s:o,s:s,s:s,s:s,s:s}", "path", pmu_json_text(path), "role", role, "status", "unavailable",
			 "reason", STUB_REASON, "remedy", STUB_REMEDY);
}

/* ---- counting collector ------------------------------------------------- */

/* Counts nothing; it exists so that the recorder's calls have an object. */
struct pmu_counting {
	size_t nev;
};

int pmu_counting_new(const struct pmu_counting_opts *o, struct pmu_counting **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return pmu_error(PMU_ERR_NOMEM, "cannot allocate the counting collector");
	(*out)->nev = o->nev;
	return 0;
}

void pmu_counting_free(struct pmu_counting *k)
{
	free(k);
}

void pmu_counting_before_release(struct pmu_counting *k, pid_t root, uint64_t t)
{
	(void)k, (void)root, (void)t;
}

void pmu_counting_task(struct pmu_counting *k, int inc, pid_t pid, pid_t tid, unsigned flags, uint64_t t)
{
	(void)k, (void)inc, (void)pid, (void)tid, (void)flags, (void)t;
}

void pmu_counting_task_end(struct pmu_counting *k, int inc, pid_t tid, uint64_t t)
{
	(void)k, (void)inc, (void)tid, (void)t;
}

void pmu_counting_task_exec(struct pmu_counting *k, int inc, pid_t pid, pid_t former_tid, uint64_t t)
{
	(void)k, (void)inc, (void)pid, (void)former_tid, (void)t;
}

void pmu_counting_stop(struct pmu_counting *k, uint64_t t)
{
	(void)k, (void)t;
}

const char *pmu_counting_cgroup_problem(const struct pmu_counting *k)
{
	return k ? STUB_REASON : NULL;
}

bool pmu_counting_usable(const struct pmu_counting *k, char *why, size_t n, const char **remedy)
{
	(void)k;
	snprintf(why, n, "%s", STUB_REASON);
	*remedy = STUB_REMEDY;
	return false;
}

void pmu_counting_set_output(struct pmu_counting *k, int (*emit)(void *ctx, json_t *rec), void *ctx,
			     uint64_t run_start)
{
	(void)k, (void)emit, (void)ctx, (void)run_start;
}

void pmu_counting_inc_end(struct pmu_counting *k, int inc, uint64_t end_ns)
{
	(void)k, (void)inc, (void)end_ns;
}

int pmu_counting_finish(struct pmu_counting *k, uint64_t run_end, char *evidence, size_t n)
{
	(void)k, (void)run_end;
	if (n)
		evidence[0] = '\0';
	return 0;
}
