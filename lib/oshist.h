#ifndef PMU_OSHIST_H
#define PMU_OSHIST_H

/*
 * The log-linear duration histogram of the syscall-stats stream
 * (bundle-spec section 23.4): for a duration d ns, d < 16 is bucket d;
 * else with e = floor(log2 d), bucket 16 + (e - 4) * 8 + ((d >> (e - 3)) & 7):
 * 8 linear sub-buckets per power of two, each 1/8 of it wide (12.5%).
 * Durations of 2^41 ns or more count in the last bucket, 311.
 *
 * The hist member writes the buckets with a count as "B:N B:N ...",
 * ascending by bucket, one space apart; the bytes are untrusted:
 * pmu_oshist_next() is bounds-checked on (s, len).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PMU_OSHIST_BUCKETS 312

/* The bucket of a duration of d ns. */
unsigned pmu_oshist_bucket(uint64_t d);
/* The durations bucket b (< PMU_OSHIST_BUCKETS) holds: [*lo, *hi), *hi
 * UINT64_MAX for the last bucket (it holds everything above). */
void pmu_oshist_bounds(unsigned b, uint64_t *lo, uint64_t *hi);

/* Reading "B:N B:N ...": *at starts at 0; each call parses the next pair
 * into *b and *n and returns 1, returns 0 at the end, or -1 when the text
 * is not of that form (decimal without sign or leading zero, N >= 1, B
 * below PMU_OSHIST_BUCKETS, one space between pairs; ascending order is
 * the caller's to check). */
int pmu_oshist_next(const char *s, size_t len, size_t *at, unsigned *b, uint64_t *n);

#endif
