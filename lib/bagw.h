#ifndef PMU_BAGW_H
#define PMU_BAGW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/*
 * The one writer of bundle documents and streams (pmurec, mkfixture,
 * bench-genbundle): where one repetition's files go, documents with their
 * header (spec, type, units), and JSON Lines streams with their header
 * line, written record by record.
 *
 * Repetition k's files go under data/repeats/<k>/ (k >= 2), the first
 * repetition's and the bundle's own documents (capabilities.json,
 * provenance.json) at data/.  A writer is a value: make one per
 * repetition with pmu_bagw_init(), it holds no resource of its own.
 *
 * A stream buffers its records and hands them to the bag (which hashes
 * and writes) in chunks of PMU_BAGW_CHUNK bytes or more: SHA-256 and
 * write(2) run on large buffers, not once per record.  The first error
 * sticks: later records are not written, and pmu_bagw_close() returns it,
 * so a short stream is never taken for a whole one.
 *
 * Records come two ways: a jansson object (pmu_bagw_put(), for records
 * that exist as objects anyway), or built in place member by member
 * (pmu_bagw_rec() ... pmu_bagw_rec_end(), for fixed-shape records written
 * by the thousand, such as the cohort's).  Both give the same bytes:
 * compact JSON, members in the order given, strings escaped as jansson
 * escapes them (JSON_COMPACT | JSON_PRESERVE_ORDER), one record a line.
 */

struct pmu_bag;

#define PMU_BAGW_CHUNK (64u << 10)

/* One repetition's destination; embedded, filled by pmu_bagw_init(). */
struct pmu_bagw {
	struct pmu_bag *bag;    /* not owned */
	char scope[32];         /* "" or "repeats/<k>/" */
	const char *spec;       /* the "spec" of headers, e.g. PMU_SPEC_VERSION */
	int minor;              /* whose units the headers carry */
};

/* w writes repetition (1-based) of bag, headers of spec version spec (a
 * static string such as PMU_SPEC_VERSION) with the units of spec 1.<minor>. */
void pmu_bagw_init(struct pmu_bagw *w, struct pmu_bag *bag, int repetition, const char *spec, int minor);

/*
 * A document of type: its header members (spec, type, units) and then the
 * members of body, in body's order.  Takes body's reference (NULL: the
 * header alone).  The caller owns the result (json_decref), NULL when out
 * of memory.
 */
json_t *pmu_bagw_doc(const struct pmu_bagw *w, const char *type, json_t *body);

/* Write document doc (taken) at w's scope + rel the way every pmu document
 * is written (pmu_bag_put_json()): indented by 2, one trailing newline,
 * refused with PMU_ERR_LIMIT when readers would refuse it. */
int pmu_bagw_put_doc(const struct pmu_bagw *w, const char *rel, json_t *doc);

/*
 * A stream being written; embedded, all zero before pmu_bagw_open().
 * records, bytes: written so far, the header line included; ns: the time
 * spent in the calls that formatted and wrote them (evidence for
 * bench/record).
 */
struct pmu_bagw_stream {
	struct pmu_bag_file *f;
	int err;
	uint64_t records, bytes, ns;
	char *buf;              /* records not yet handed to the bag */
	size_t len, cap;
	size_t rec_at;          /* where the record being built starts */
	uint64_t rec_t0, batch_t0;
	bool first;             /* no member yet in the record being built */
	bool batch;
};

/*
 * Open the stream at w's scope + rel and write its header line of kind
 * (type header, spec, stream, units).  kind NULL: a plain file, no header,
 * for bytes given by pmu_bagw_write().  However it ends, s must be closed
 * with pmu_bagw_close(), which releases it.
 */
int pmu_bagw_open(const struct pmu_bagw *w, struct pmu_bagw_stream *s, const char *rel, const char *kind);

/* Append rec (taken, NULL counts as out of memory) as one line. */
int pmu_bagw_put(struct pmu_bagw_stream *s, json_t *rec);

/* One line formatted (the newline is added); the caller vouches for JSON. */
int pmu_bagw_printf(struct pmu_bagw_stream *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Raw bytes (a document streamed out piece by piece); not a record. */
int pmu_bagw_write(struct pmu_bagw_stream *s, const void *p, size_t n);

/*
 * A record built in place: pmu_bagw_rec() opens it, each member call adds
 * "key":value in the order of the calls, pmu_bagw_rec_end() ends the line
 * and returns the stream's error.  Keys are the program's own member names
 * (plain ASCII), copied as they are; string values are UTF-8 from the
 * program or the system, escaped by pmu_bagw_quote(): invalid sequences
 * become U+FFFD, as pmu_json_text() keeps them (spec_json.h); a NULL value
 * is written "?".
 */
void pmu_bagw_rec(struct pmu_bagw_stream *s);
void pmu_bagw_str(struct pmu_bagw_stream *s, const char *key, const char *v);
void pmu_bagw_int(struct pmu_bagw_stream *s, const char *key, int64_t v);
void pmu_bagw_bool(struct pmu_bagw_stream *s, const char *key, bool v);
int pmu_bagw_rec_end(struct pmu_bagw_stream *s);

/*
 * The member "argv" of a cohort exec record (spec 1.4, 12.6): the strings of
 * blob[0..len), each ended by a NUL (the last may lack it), escaped as
 * pmu_bagw_str() does, within the spec's bounds (PMU_ARGV_MAX_ARGS strings,
 * PMU_ARGV_MAX_BYTES bytes counting each string's UTF-8 bytes as written
 * and its NUL), the string at the bound cut to fit; then
 * "argv_truncated":true when it was cut here or truncated is set.
 */
void pmu_bagw_argv(struct pmu_bagw_stream *s, const char *blob, size_t len, bool truncated);

/* Records written together (an incarnation's end records) are timed as one
 * span from pmu_bagw_batch() to pmu_bagw_batch_end(), not one by one. */
void pmu_bagw_batch(struct pmu_bagw_stream *s);
void pmu_bagw_batch_end(struct pmu_bagw_stream *s);

/* Hand what is buffered to the bag and close the file (if open); 0 only when
 * every record was written and the file is durable.  Safe to call again. */
int pmu_bagw_close(struct pmu_bagw_stream *s);

/* A whole stream in one call: header, then the records of the JSON array
 * records (taken), one per line. */
int pmu_bagw_stream(const struct pmu_bagw *w, const char *rel, const char *kind, json_t *records);

/*
 * s[0..n) as a quoted JSON string at out, as jansson dumps pmu_json_text(s)
 * when s holds no NUL: '"' '\\' and the C0 controls escaped (\b \t \n \f \r,
 * others \u00XX in upper case), '/' and DEL as they are, and each byte that
 * does not begin a valid UTF-8 sequence (pmu_utf8_len()) as U+FFFD.  out
 * must hold PMU_BAGW_QUOTE_MAX(n) bytes; returns the bytes written (no NUL
 * added).
 */
#define PMU_BAGW_QUOTE_MAX(n) (6 * (size_t)(n) + 2)
size_t pmu_bagw_quote(char *out, const char *s, size_t n);

#endif
