/*
 * pmu-example: a small multi-threaded program that tells pmurec what it is
 * doing through the pmu provider's probes (include/pmu/probe.h).
 *
 *   pmu-example [--requests N] [--workers T] [--quiet]
 *
 * Startup builds a table (startup-end mark), a warm-up runs a tenth of the
 * requests (warmup-end mark), then the steady state runs the rest.  Each
 * request is a span begun by the main thread and handed to a worker thread,
 * which begins a child span (parent: the request, begun on another thread),
 * does some arithmetic and allocates: 16 blocks of 4096 bytes (alloc_blocks,
 * freed at the request's end) and one of 256 bytes kept in a list
 * (keep_small), and ends both spans.  Every 50th request the main thread
 * "collects": a pause (PMU_GC_BEGIN/END "young") that frees the kept list
 * and sleeps 2 ms.  The last 100 kept blocks are never freed: they are live
 * at exit.
 *
 * At the end it prints what it allocated, exactly, so that tests can hold
 * an allocation profile against it:
 *   pmu-example: requests=N allocations=A bytes=B live_bytes=L
 *
 * Built twice: with the header (pmu-example), and with the macros defined
 * empty instead (pmu-example-nohdr, PMU_EXAMPLE_NO_HEADER), for bench/probe.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef PMU_EXAMPLE_NO_HEADER
#include "pmu/probe.h"
#else
#define PMU_RUNTIME(n) ((void)0)
#define PMU_MARK(n) ((void)0)
#define PMU_SPAN_BEGIN(i, p, n) ((void)(i), (void)(p))
#define PMU_SPAN_END(i) ((void)(i))
#define PMU_GC_BEGIN(k) ((void)0)
#define PMU_GC_END(k) ((void)0)
#define PMU_ALLOC(b) ((void)(b))
#endif

#define BLOCKS 16
#define BLOCK 4096
#define SMALL 256
#define QMAX 64

struct small {
	struct small *next;
	char pad[SMALL - sizeof(struct small *)];
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;
static uint64_t queue[QMAX];
static unsigned qhead, qtail, outstanding;
static int stopping;
static struct small *kept;
static unsigned long long n_alloc, n_bytes;
static volatile uint64_t sink;
static uint64_t table[4096];

static void count_alloc(size_t n)
{
	__atomic_add_fetch(&n_alloc, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&n_bytes, n, __ATOMIC_RELAXED);
	PMU_ALLOC(n);
}

/* two allocation sites, kept out of line so that profiles name them */
__attribute__((noinline)) static void *alloc_blocks(size_t n)
{
	void *p = malloc(n);

	if (!p)
		abort();
	memset(p, 1, n);
	count_alloc(n);
	return p;
}

__attribute__((noinline)) static void keep_small(void)
{
	struct small *s = malloc(sizeof(*s));

	if (!s)
		abort();
	count_alloc(sizeof(*s));
	pthread_mutex_lock(&mu);
	s->next = kept;
	kept = s;
	pthread_mutex_unlock(&mu);
}

__attribute__((noinline)) static uint64_t compute(uint64_t x, int rounds)
{
	for (int i = 0; i < rounds; i++)
		x = x * 6364136223846793005ull + table[x % 4096];
	return x;
}

static void handle(uint64_t req)
{
	void *b[BLOCKS];
	uint64_t child = req | (1ull << 62);

	PMU_SPAN_BEGIN(child, req, "work");
	for (int i = 0; i < BLOCKS; i++)
		b[i] = alloc_blocks(BLOCK);
	sink += compute(req, 20000);
	keep_small();
	for (int i = 0; i < BLOCKS; i++)
		free(b[i]);
	PMU_SPAN_END(child);
	PMU_SPAN_END(req); /* begun by the main thread, ended here */
}

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		uint64_t req;

		pthread_mutex_lock(&mu);
		while (qhead == qtail && !stopping)
			pthread_cond_wait(&cv, &mu);
		if (qhead == qtail) {
			pthread_mutex_unlock(&mu);
			return NULL;
		}
		req = queue[qhead++ % QMAX];
		pthread_mutex_unlock(&mu);
		handle(req);
		pthread_mutex_lock(&mu);
		outstanding--;
		pthread_cond_signal(&done_cv);
		pthread_mutex_unlock(&mu);
	}
}

/* the program's own "collector": a stop-the-world pause freeing the kept
 * list but its newest 100 blocks (those stay live to the end) */
static void collect(void)
{
	struct timespec ts = { 0, 2000000 };
	struct small *s, *next;
	int keep = 100;

	PMU_GC_BEGIN("young");
	pthread_mutex_lock(&mu);
	while (outstanding)
		pthread_cond_wait(&done_cv, &mu);
	for (s = kept; s && --keep > 0; s = s->next)
		;
	if (s) {
		next = s->next;
		s->next = NULL;
		for (s = next; s; s = next) {
			next = s->next;
			free(s);
		}
	}
	pthread_mutex_unlock(&mu);
	nanosleep(&ts, NULL);
	PMU_GC_END("young");
}

int main(int argc, char **argv)
{
	unsigned long requests = 1000;
	int workers = 3, quiet = 0;
	pthread_t th[16];
	unsigned long long live = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--requests") && i + 1 < argc)
			requests = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--workers") && i + 1 < argc)
			workers = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--quiet"))
			quiet = 1;
		else {
			fprintf(stderr, "usage: pmu-example [--requests N] [--workers T] [--quiet]\n");
			return 2;
		}
	}
	if (requests < 10 || workers < 1 || workers > 16) {
		fprintf(stderr, "pmu-example: --requests at least 10, --workers 1 to 16\n");
		return 2;
	}
	PMU_RUNTIME("pmu-example");
	for (int i = 0; i < 4096; i++) /* startup */
		table[i] = compute((uint64_t)i, 200);
	PMU_MARK("startup-end");
	for (int i = 0; i < workers; i++)
		if (pthread_create(&th[i], NULL, worker, NULL)) {
			fprintf(stderr, "pmu-example: cannot start a thread\n");
			return 1;
		}
	for (unsigned long r = 1; r <= requests; r++) {
		if (r == requests / 10 + 1)
			PMU_MARK("warmup-end");
		pthread_mutex_lock(&mu);
		while (qtail - qhead == QMAX)
			pthread_cond_wait(&done_cv, &mu);
		PMU_SPAN_BEGIN(r, 0, "request");
		queue[qtail++ % QMAX] = r;
		outstanding++;
		pthread_cond_signal(&cv);
		pthread_mutex_unlock(&mu);
		if (r % 50 == 0)
			collect();
	}
	pthread_mutex_lock(&mu);
	stopping = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < workers; i++)
		pthread_join(th[i], NULL);
	for (struct small *s = kept; s; s = s->next)
		live += sizeof(*s);
	if (!quiet)
		fprintf(stderr, "pmu-example: requests=%lu allocations=%llu bytes=%llu live_bytes=%llu\n", requests,
			n_alloc, n_bytes, live);
	return 0;
}
