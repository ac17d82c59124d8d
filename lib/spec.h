#ifndef PMU_SPEC_H
#define PMU_SPEC_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The bundle spec as tables.  The validator's structural checks are driven by
 * them and the JSON Schemas in bundle-spec/schema/ are generated from them
 * (bundle-spec/gen.c), so the C checks and the JSON Schemas cannot drift: the
 * tests regenerate the schemas and compare, and check every fixture document
 * against the schemas with an independent validator (python3-jsonschema).
 */

#define PMU_SPEC_MAJOR 1
#ifndef PMU_WRITES_SPEC_1_2
#define PMU_SPEC_VERSION "1.8"
#define PMU_SPEC_MINOR 8     /* readers accept 1.0 .. 1.PMU_SPEC_MINOR */
#else
/* Transitional (issue 12): pmurec writes 1.2 (cohort.json) until it writes
 * the cohort stream; the Makefile builds record/ with PMU_WRITES_SPEC_1_2.
 * Nothing else may define it. */
#define PMU_SPEC_VERSION "1.2"
#define PMU_SPEC_MINOR 2
#endif

/*
 * The size of a cohort (spec 1.3, the cohort stream): at most this many
 * incarnations and threads per repetition.  One constant for writer and
 * validator: pmurec ends a run that reaches it as truncated, the validator
 * reports more as COHORT, so nothing pmurec writes is refused for its size.
 */
#define PMU_COHORT_MAX_INCARNATIONS 262144
#define PMU_COHORT_MAX_THREADS 1048576

/*
 * The argv of an exec (spec 1.4, the cohort stream's exec record): at most
 * this many strings, and this many bytes counting each string's UTF-8 bytes
 * as recorded plus one (its NUL).  Writer and validator share them: a
 * writer cuts what is longer and marks the record argv_truncated.
 */
#define PMU_ARGV_MAX_ARGS 64
#define PMU_ARGV_MAX_BYTES 4096
#define PMU_XSTR_(x) #x
#define PMU_XSTR(x) PMU_XSTR_(x)

enum pmu_ftype {
	PMU_FT_STR,     /* non-empty UTF-8 string */
	PMU_FT_INT,     /* integer 0 .. 2^63-1, with a unit */
	PMU_FT_BOOL,
	PMU_FT_ENUM,    /* string from enumv */
	PMU_FT_HEX64,   /* 64 lowercase hex digits (SHA-256) */
	PMU_FT_OBJ,     /* object described by sub */
	PMU_FT_ARR_STR,
	PMU_FT_ARR_INT, /* with a unit */
	PMU_FT_ARR_OBJ, /* of sub */
	PMU_FT_MAP_STR, /* object of string values, any keys */
	PMU_FT_UNITS,   /* the units map: numeric field name -> unit */
	PMU_FT_MAP_OBJ, /* object whose values are objects described by sub */
	PMU_FT_ARGV,    /* array of UTF-8 strings, empty ones allowed, within PMU_ARGV_MAX_ARGS / _BYTES */
};

struct pmu_objdef;

struct pmu_field {
	const char *key;
	enum pmu_ftype type;
	bool required;
	const char *unit;               /* PMU_FT_INT / PMU_FT_ARR_INT */
	const struct pmu_objdef *sub;   /* PMU_FT_OBJ / PMU_FT_ARR_OBJ */
	const char *const *enumv;       /* PMU_FT_ENUM, NULL-terminated */
	const char *doc;
	int since;                      /* minor version that added the field (1.<since>) */
};

struct pmu_objdef {
	const char *name;
	const struct pmu_field *fields;
	size_t nfields;
};

/* A JSON document of the bundle: data/<file>, whose "type" is type. */
struct pmu_docdef {
	const char *file;
	const char *type;
	const struct pmu_objdef *obj;
	bool required;
	bool per_repetition;            /* one per repetition (data/ and data/repeats/<k>/) */
	int until;                      /* last minor version that has it (0: every one since) */
};

/* Whether document d exists in spec 1.<minor>. */
static inline bool pmu_docdef_in(const struct pmu_docdef *d, int minor)
{
	return !d->until || minor <= d->until;
}

/* A record type of a JSON Lines stream (the header excluded). */
struct pmu_recdef {
	const char *type;
	const struct pmu_objdef *obj;
	int since;                      /* minor version that added the record type */
};

/* A JSON Lines stream kind, stored at data/<file> or
 * data/collectors/<name>/<file> when per_collector. */
struct pmu_streamdef {
	const char *kind;
	const char *file;
	bool per_collector;
	bool required;
	const struct pmu_recdef *recs;
	size_t nrecs;
	const struct pmu_objdef *header;
	int since;                      /* minor version that added the stream kind */
};

extern const char *const pmu_status_values[];     /* ok, not-requested, ... */
extern const char *const pmu_unit_values[];       /* ns, count, bytes, id */
extern const char *const pmu_resource_fields[];   /* the nine resource totals (12.5), NULL-terminated */
extern const struct pmu_docdef pmu_docs[];
extern const size_t pmu_ndocs;
extern const struct pmu_streamdef pmu_streams[];
extern const size_t pmu_nstreams;

const struct pmu_field *pmu_objdef_field(const struct pmu_objdef *o, const char *key, size_t klen);
const struct pmu_recdef *pmu_streamdef_rec(const struct pmu_streamdef *s, const char *type, size_t tlen);
bool pmu_enum_has(const char *const *enumv, const char *s, size_t len);

/* The unit of numeric field key anywhere under o (first definition wins; the
 * spec gives a name one unit everywhere), or NULL. */
const char *pmu_objdef_unit(const struct pmu_objdef *o, const char *key);

/* Call fn for each distinct numeric field name under o, with its unit. */
void pmu_objdef_units(const struct pmu_objdef *o, void (*fn)(void *ctx, const char *key, const char *unit),
		      void *ctx);
/* The same, for a bundle of spec 1.<minor>: fields added later are left out. */
void pmu_objdef_units_v(const struct pmu_objdef *o, int minor,
			void (*fn)(void *ctx, const char *key, const char *unit), void *ctx);

#endif
