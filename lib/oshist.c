#include "oshist.h"

unsigned pmu_oshist_bucket(uint64_t d)
{
	unsigned e;

	if (d < 16)
		return (unsigned)d;
	if (d >> 41)
		return PMU_OSHIST_BUCKETS - 1;
	e = 63u - (unsigned)__builtin_clzll(d);
	return 16 + (e - 4) * 8 + (unsigned)((d >> (e - 3)) & 7);
}

void pmu_oshist_bounds(unsigned b, uint64_t *lo, uint64_t *hi)
{
	unsigned e, s;

	if (b < 16) {
		*lo = b;
		*hi = (uint64_t)b + 1;
		return;
	}
	e = 4 + (b - 16) / 8;
	s = (b - 16) % 8;
	*lo = (1ull << e) + (uint64_t)s * (1ull << (e - 3));
	*hi = b >= PMU_OSHIST_BUCKETS - 1 ? UINT64_MAX : *lo + (1ull << (e - 3));
}

/* A decimal without sign or leading zero, below 2^63; advances *at. */
static bool dec(const char *s, size_t len, size_t *at, uint64_t *out)
{
	size_t i = *at;
	uint64_t v = 0;

	if (i >= len || s[i] < '0' || s[i] > '9' || (s[i] == '0' && i + 1 < len && s[i + 1] >= '0' && s[i + 1] <= '9'))
		return false;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		if (v > (UINT64_MAX >> 1) / 10)
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*at = i;
	*out = v;
	return true;
}

int pmu_oshist_next(const char *s, size_t len, size_t *at, unsigned *b, uint64_t *n)
{
	uint64_t bv;

	if (*at >= len)
		return 0;
	if (*at > 0) {
		if (s[*at] != ' ' || *at + 1 >= len)
			return -1;
		(*at)++;
	}
	if (!dec(s, len, at, &bv) || bv >= PMU_OSHIST_BUCKETS || *at >= len || s[*at] != ':')
		return -1;
	(*at)++;
	if (!dec(s, len, at, n) || *n == 0)
		return -1;
	*b = (unsigned)bv;
	return 1;
}
