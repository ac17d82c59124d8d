/*
 * hw-loop N [THREADS]: run N iterations of a fixed loop body (a dependent
 * add and a branch) in each of THREADS threads (default 1), then exit 0.
 * A workload whose instruction count is fixed by N, for the hardware
 * counting tests (tests/cli/t*-hw-*.bats) in the emulated arm64 guest:
 * small enough to run in seconds under TCG, and no shell loop whose cost
 * depends on the shell.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long n;

static void *loop(void *arg)
{
	volatile unsigned long x = 0;

	(void)arg;
	for (unsigned long i = 0; i < n; i++)
		x += i;
	return NULL;
}

int main(int argc, char **argv)
{
	char *end;
	long t = 1;

	if (argc < 2 || argc > 3)
		goto usage;
	n = strtoul(argv[1], &end, 10);
	if (*end)
		goto usage;
	if (argc == 3 && ((t = strtol(argv[2], &end, 10)) < 1 || t > 64 || *end))
		goto usage;
	pthread_t th[64];
	for (long i = 1; i < t; i++)
		if (pthread_create(&th[i], NULL, loop, NULL)) {
			perror("hw-loop: pthread_create");
			return 1;
		}
	loop(NULL);
	for (long i = 1; i < t; i++)
		pthread_join(th[i], NULL);
	return 0;
usage:
	fprintf(stderr, "usage: hw-loop ITERATIONS [THREADS]\n");
	return 2;
}
