#ifndef PMU_PERFEV_H
#define PMU_PERFEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The counting collector's event list: `pmurec -e LIST` parsed and resolved
 * into perf_event_attr fields, one struct pmu_evspec per item.  An item is
 *   NAME[:MOD]          a perf generic event from perfev.def (or an alias)
 *   r<hex>[:MOD]        a raw selector: PERF_TYPE_RAW, config = hex
 *   PMU/TERMS/[MOD]     TERMS is term[=value],... placed through the PMU's
 *                       sysfs format files; config, config1 and config2 are
 *                       always terms; a term naming a sysfs event
 *                       (PMU/events/NAME) stands for that event's terms
 *   pfm:NAME            libpfm4's name for an event, encoded by libpfm4
 * MOD is letters from u (user), k (kernel), h (hypervisor): the privilege
 * levels counted; the others are excluded.  For pfm: events libpfm4 takes
 * its own :u/:k modifiers.
 *
 * Two kinds of failure.  An item that is malformed (syntax, an unknown
 * generic name, a bad modifier, a term the PMU's format does not have, a
 * value wider than its bits, a repeated event) fails the whole list with
 * PMU_ERR_INVAL and a pmu_error_detail() saying what, with a suggestion where
 * one is close.  A well-formed item this host cannot resolve (no such PMU, no
 * libpfm4, libpfm4 does not know the name) is returned with available false
 * and a reason and remedy, so the recorder can write it down and go on.
 *
 * Not thread-safe: pfm: items load libpfm4, whose state is process-global,
 * and may set and restore LIBPFM_FORCE_PMU in the environment.
 */

enum pmu_evkind { PMU_EV_SOFTWARE, PMU_EV_HARDWARE, PMU_EV_RAW, PMU_EV_PMU, PMU_EV_PFM };

#define PMU_EVLIST_MAX 64

struct pmu_evspec {
	char given[256];        /* the item as written */
	char name[256];         /* display name: canonical generic name (+":mod"), r<hex>(+":mod"),
				   the PMU/TERMS/ item as written, or pfm:<libpfm4's full name> */
	enum pmu_evkind kind;
	uint32_t type;          /* perf_event_attr fields */
	uint64_t config, config1, config2;
	bool exclude_user, exclude_kernel, exclude_hv;
	bool modifier;          /* the item chose privilege levels itself (:u, :k, :h ...) */
	bool on_pmu;            /* counts on a hardware PMU (type is not PERF_TYPE_SOFTWARE):
				   multiplexing and suspect zeros apply */
	const char *unit;       /* "ns" or "count"; static */
	bool available;         /* false: reason and remedy say why, attr fields are not meaningful */
	char reason[320];
	char remedy[200];
	char note[256];         /* how it was resolved, when worth recording (libpfm4's table chosen
				   from CPUID, a sysfs event's scale left unapplied); "" if nothing */
};

/*
 * Where resolution looks.  NULL fields (or a NULL env) take the defaults:
 * sysfs /sys/bus/event_source/devices; libpfm the environment variable
 * PMU_LIBPFM when set (PMU_LIBPFM=/nonexistent makes libpfm4 absent, for
 * tests), else "libpfm.so.4" through the dynamic loader's search.
 */
struct pmu_evenv {
	const char *sysfs;
	const char *libpfm;
};

/*
 * Parse and resolve a comma-separated event list (commas inside PMU/.../ do
 * not split; at most PMU_EVLIST_MAX items).  On success *out is a malloc'd
 * array of *n specs that the caller frees with free(); on error *out is NULL,
 * *n is 0 and the result is PMU_ERR_INVAL (bad list) or PMU_ERR_NOMEM.
 */
int pmu_evlist_parse(const char *list, const struct pmu_evenv *env, struct pmu_evspec **out, size_t *n);

/* The default event set (the DEFAULT rows of perfev.def, in table order);
 * *out is malloc'd and the caller frees it with free(). */
int pmu_evlist_defaults(struct pmu_evspec **out, size_t *n);

/* "software", "hardware", "raw", "pmu", "pfm"; static. */
const char *pmu_evkind_name(enum pmu_evkind kind);

/* The generic event table, for --list-events and the tests. */
struct pmu_evdef {
	const char *name;
	const char *aliases;    /* space separated, "" if none */
	uint32_t type;          /* PERF_TYPE_SOFTWARE or PERF_TYPE_HARDWARE */
	uint64_t config;
	const char *unit;
	bool in_default;        /* part of the default event set */
	const char *description;
};

size_t pmu_evtable_count(void);
/* Row i in table order, or NULL past the end; static. */
const struct pmu_evdef *pmu_evtable_get(size_t i);
/* The row whose name or alias is name, or NULL; static. */
const struct pmu_evdef *pmu_evtable_find(const char *name);

/*
 * CPUID, for choosing libpfm4's core-PMU table when libpfm4 detects none.
 * pmu_cpuid_decode() turns leaf 1's EAX into the display family and model
 * (extended family added when the base family is 0xf, extended model
 * prepended when it is 6 or 0xf) and the stepping.
 * pmu_cpuid_pfm_table() maps vendor/family/model/stepping through
 * perfev-cpu.def to libpfm4's table name, static, or NULL when unknown; the
 * stepping is needed because Skylake-SP and Cascade Lake share model 0x55.
 * pmu_cpuid_host() reads this CPU's; PMU_ERR_UNSUPPORTED off x86.
 */
void pmu_cpuid_decode(uint32_t eax, unsigned *family, unsigned *model, unsigned *stepping);
const char *pmu_cpuid_pfm_table(const char *vendor, unsigned family, unsigned model, unsigned stepping);
int pmu_cpuid_host(char vendor[13], unsigned *family, unsigned *model, unsigned *stepping);

#endif
