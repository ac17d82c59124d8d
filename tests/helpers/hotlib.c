/*
 * libhot.so: the shared-library part of tests/helpers/hot.c's workload
 * (a hot function that lives in another object than the executable).
 */
#include <stdint.h>

__attribute__((noinline)) uint64_t lib_work(uint64_t n, uint64_t seed)
{
	uint64_t x = seed;

	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull + (x >> 29);
	return x;
}
