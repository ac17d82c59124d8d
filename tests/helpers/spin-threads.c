/*
 * spin-threads N MS: start N threads that each burn MS milliseconds of CPU
 * (by their own thread CPU clock), join them, and exit 0.  A multi-threaded
 * target for the counting tests.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long ms;

static void *spin(void *arg)
{
	struct timespec t;
	volatile unsigned long x = 0;
	long long end;

	(void)arg;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	end = (long long)t.tv_sec * 1000000000ll + t.tv_nsec + ms * 1000000ll;
	do {
		for (int i = 0; i < 10000; i++)
			x += (unsigned long)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((long long)t.tv_sec * 1000000000ll + t.tv_nsec < end);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[64];
	int n;

	if (argc != 3 || (n = atoi(argv[1])) < 1 || n > 64 || (ms = atol(argv[2])) < 0) {
		fprintf(stderr, "usage: spin-threads N(1-64) MS\n");
		return 2;
	}
	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, spin, NULL)) {
			perror("spin-threads: pthread_create");
			return 1;
		}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}
