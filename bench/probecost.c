/*
 * bench/probecost: the cost of one pmu span pair (PMU_SPAN_BEGIN +
 * PMU_SPAN_END), measured inside the process around a loop of N pairs, so
 * that start-up and the recorder's own set-up are left out.
 *
 *   bench-probecost N        (built with include/pmu/probe.h)
 *   bench-probecost-nohdr N  (the same loop with the macros empty)
 *
 * Prints "ns_per_pair X" on stdout.  Unlistened, the header's pair is two
 * nops and the control channel's test; under pmurec --mode full the probes
 * collector listens and each probe is a uprobe trap into the eBPF program.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef PMU_BENCH_NO_HEADER
#include "pmu/probe.h"
#else
#define PMU_RUNTIME(n) ((void)0)
#define PMU_SPAN_BEGIN(i, p, n) ((void)(i), (void)(p))
#define PMU_SPAN_END(i) ((void)(i))
#endif

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 0;
	uint64_t t0, t1;

	if (n < 1) {
		fprintf(stderr, "usage: bench-probecost N\n");
		return 2;
	}
	PMU_RUNTIME("bench-probecost");
	t0 = now();
	for (long i = 1; i <= n; i++) {
		PMU_SPAN_BEGIN(i, 0, "pair");
		PMU_SPAN_END(i);
	}
	t1 = now();
	printf("ns_per_pair %.2f\n", (double)(t1 - t0) / (double)n);
	return 0;
}
