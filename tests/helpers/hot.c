/*
 * hot [UNITS] [child]: a workload with known hot functions, for the
 * sampling and symbolization tests (issue 16).  Fixed work, no clock:
 *
 *   hot_loop    about 80% of the work: a noinline function whose loop body
 *               is mix(), a static always_inline helper, so a sample's
 *               inline chain reads mix <- hot_loop (hot.c)
 *   lib_work    about 20%: in libhot.so (tests/helpers/hotlib.c)
 *   child_loop  with "child": a forked child does as much work as
 *               hot_loop, in child_loop, and the parent waits for it
 *
 * UNITS (default 200) scales the work: one unit is under 1 ms of CPU on
 * this project's build machine.  Built with frame pointers (build/hot) and
 * without (build/hot-nofp); both link build/libhot.so.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

uint64_t lib_work(uint64_t n, uint64_t seed);

#define PER_UNIT 400000ull

static inline __attribute__((always_inline)) uint64_t mix(uint64_t x, uint64_t i)
{
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x + i;
}

__attribute__((noinline)) uint64_t hot_loop(uint64_t n, uint64_t seed)
{
	volatile uint64_t x = seed;

	for (uint64_t i = 0; i < n; i++)
		x = mix(x, i);
	return x;
}

__attribute__((noinline)) uint64_t child_loop(uint64_t n, uint64_t seed)
{
	volatile uint64_t x = seed;

	for (uint64_t i = 0; i < n; i++)
		x = x * 2862933555777941757ull + 3037000493ull;
	return x;
}

__attribute__((noinline)) static uint64_t run(long units)
{
	uint64_t r = 0;

	for (long u = 0; u < units; u++) {
		r += hot_loop(PER_UNIT * 4 / 5, r);
		r += lib_work(PER_UNIT / 5, r);
	}
	return r;
}

int main(int argc, char **argv)
{
	long units = argc > 1 ? strtol(argv[1], NULL, 10) : 200;
	int child = argc > 2 && !strcmp(argv[2], "child");
	pid_t pid = -1;
	int st = 0;
	uint64_t r;

	if (units <= 0 || units > 1000000 || (argc > 2 && !child) || argc > 3) {
		fprintf(stderr, "usage: hot [UNITS] [child]\n");
		return 2;
	}
	if (child && (pid = fork()) == 0) {
		r = 0;
		for (long u = 0; u < units; u++)
			r += child_loop(PER_UNIT * 4 / 5, r);
		_exit(r == 1 ? 3 : 0);
	}
	if (pid < 0 && child) {
		perror("hot: fork");
		return 1;
	}
	r = run(units);
	if (child && (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)))
		return 1;
	return r == 1 ? 3 : 0;
}
