#ifndef PMU_PERFEV_H
#define PMU_PERFEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The counting collector's event list, the platform-free half: the
 * grammar of `pmurec -e LIST` and the table of generic events.  An item is
 *   NAME[:MOD]          a generic event from perfev.def (or an alias)
 *   r<hex>[:MOD]        a raw selector
 *   PMU/TERMS/[MOD]     TERMS is term[=value],... for the PMU named
 *   pfm:NAME            libpfm4's name for an event
 * MOD is letters from u (user), k (kernel), h (hypervisor): the privilege
 * levels counted; the others are excluded.  For pfm: events libpfm4 takes
 * its own :u/:k modifiers.
 *
 * This file parses; a platform resolves.  pmu_evlist_parse_with() splits
 * the list, checks each item's syntax, hands each well-formed item to the
 * platform's resolver (backends/<os>/: on Linux perf_event_attr fields
 * from sysfs PMU format files and libpfm4; see backends/events.h, the call
 * the recorder makes) and refuses repeats.
 *
 * Two kinds of failure.  An item that is malformed (syntax, an unknown
 * generic name, a bad modifier, a repeated event, or what only the
 * platform can see: a term the PMU's format does not have, a value wider
 * than its bits) fails the whole list with PMU_ERR_INVAL and a
 * pmu_error_detail() saying what, with a suggestion where one is close.  A
 * well-formed item the host cannot resolve is returned with available
 * false and a reason and remedy, so the recorder can write it down and go
 * on.
 */

enum pmu_evkind { PMU_EV_SOFTWARE, PMU_EV_HARDWARE, PMU_EV_RAW, PMU_EV_PMU, PMU_EV_PFM };

#define PMU_EVLIST_MAX 64

/* The generic event table, for --list-events and the tests. */
struct pmu_evdef {
	const char *name;
	const char *aliases;    /* space separated, "" if none */
	enum pmu_evkind kind;   /* PMU_EV_SOFTWARE or PMU_EV_HARDWARE */
	const char *unit;
	bool in_default;        /* part of the default event set */
	const char *description;
};

struct pmu_evspec {
	char given[256];        /* the item as written */
	char name[256];         /* display name: canonical generic name (+":mod"), r<hex>(+":mod"),
				   the PMU/TERMS/ item as written, or pfm:<libpfm4's full name> */
	enum pmu_evkind kind;
	/* what the grammar found: the generic row (NULL for other kinds), and
	 * for PMU/TERMS/ the PMU's name and its terms as written (their syntax
	 * checked; pmu_evterms_split() gives them) */
	const struct pmu_evdef *generic;
	char pmu[64];
	char terms[256];
	/* The platform's encoding, set by its resolver (Linux: the
	 * perf_event_attr fields).  For r<hex> the grammar puts the selector
	 * in config. */
	uint32_t type;
	uint64_t config, config1, config2;
	bool exclude_user, exclude_kernel, exclude_hv;
	bool modifier;          /* the item chose privilege levels itself (:u, :k, :h ...) */
	bool on_pmu;            /* counts on a hardware PMU, not a software counter:
				   multiplexing and suspect zeros apply */
	const char *unit;       /* "ns" or "count"; static */
	bool available;         /* false: reason and remedy say why, the encoding is not meaningful */
	char reason[320];
	char remedy[200];
	char note[256];         /* how it was resolved, when worth recording (libpfm4's table chosen
				   from CPUID, a sysfs event's scale left unapplied); "" if nothing */
};

/*
 * A platform's resolver: given an item the grammar accepted (kind, given,
 * name, generic, pmu/terms, modifiers, unit and on_pmu set as the grammar
 * sees them, available true), set its encoding, or mark it unavailable
 * (pmu_evspec_unavailable) and return 0.  Returns PMU_ERR_INVAL with a
 * pmu_error_detail() for an item malformed in a way only the platform can
 * see, or PMU_ERR_NOMEM.
 */
typedef int pmu_evresolve_fn(void *ctx, struct pmu_evspec *s);

/*
 * Parse a comma-separated event list (commas inside PMU/.../ do not split;
 * at most PMU_EVLIST_MAX items), resolving each item with resolve.  On
 * success *out is a malloc'd array of *n specs that the caller frees with
 * free(); on error *out is NULL, *n is 0 and the result is PMU_ERR_INVAL
 * (bad list) or PMU_ERR_NOMEM.
 */
int pmu_evlist_parse_with(const char *list, pmu_evresolve_fn *resolve, void *ctx, struct pmu_evspec **out,
			  size_t *n);

/* The default event set (the DEFAULT rows of perfev.def, in table order),
 * each resolved with resolve; *out is malloc'd and the caller frees it
 * with free(). */
int pmu_evlist_defaults_with(pmu_evresolve_fn *resolve, void *ctx, struct pmu_evspec **out, size_t *n);

/* Mark s as well formed but not resolvable here, with the reason (a
 * printf format) and remedy.  Returns 0: this is not an error of the list. */
__attribute__((format(printf, 3, 4)))
int pmu_evspec_unavailable(struct pmu_evspec *s, const char *remedy, const char *fmt, ...);

/* One term of PMU/TERMS/ or of a PMU's event file: name[=value]. */
#define PMU_EVTERMS_MAX 32

struct pmu_evterm {
	char name[64];
	uint64_t value;         /* 1 for a bare term: a flag, on */
	bool has_value;
	bool done;              /* for the resolver: consumed */
};

/*
 * Split "term[=value],..." (values decimal or 0x hex, at most 64 bits;
 * trailing blanks ignored) into t, at most PMU_EVTERMS_MAX.  Returns 0, or
 * PMU_ERR_INVAL with why saying what is wrong (and no pmu_error_detail():
 * the caller decides whether that is the user's mistake or the host's).
 */
int pmu_evterms_split(const char *text, struct pmu_evterm *t, size_t *nt, char *why, size_t why_size);

/* "software", "hardware", "raw", "pmu", "pfm"; static. */
const char *pmu_evkind_name(enum pmu_evkind kind);

size_t pmu_evtable_count(void);
/* Row i in table order, or NULL past the end; static. */
const struct pmu_evdef *pmu_evtable_get(size_t i);
/* The row whose name or alias is name, or NULL; static. */
const struct pmu_evdef *pmu_evtable_find(const char *name);

#endif
