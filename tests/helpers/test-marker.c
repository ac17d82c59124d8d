/*
 * Uses include/pmu/mark.h: two threads, each with a span and a nested
 * child span, and marks; with "open" it leaves one span open.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pmu/mark.h"

static void *work(void *arg)
{
	const char *who = arg;
	char id[32], child[32];

	snprintf(id, sizeof(id), "work-%s", who);
	snprintf(child, sizeof(child), "inner-%s", who);
	pmu_span_begin(id, "work", NULL);
	pmu_span_begin(child, "inner", id);
	usleep(2000);
	pmu_span_end(child);
	pmu_span_end(id);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	pmu_mark("start");
	pthread_create(&a, NULL, work, "a");
	pthread_create(&b, NULL, work, "b");
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	if (argc > 1 && !strcmp(argv[1], "open"))
		pmu_span_begin("dangling", "never-ended", NULL);
	pmu_mark("warmup-end");
	usleep(20000);
	return 0;
}
