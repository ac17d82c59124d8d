/*
 * sym-dump BUNDLE [REP]: symbolize every sample of a recorded bundle with
 * analyze/symbolize.c alone (no profile aggregation), for the
 * symbolization tests (tests/cli/t3590-symbolize.bats) and for measuring
 * it.  The samples stream is read twice: its ksym records come after the
 * samples.  Prints, one per line:
 *   samples N                 sample records symbolized
 *   frames N                  addresses looked up (chains, unwound pcs)
 *   unwound N / failed N      call_graph dwarf samples unwound / not (why)
 *   self COUNT FUNC FILE:LINE the innermost frame's function (inlined
 *                             frames as FUNC@inline), or STATUS: why
 *   stack COUNT A;B;C         user stacks, outermost first, function names
 *   seconds S                 the time spent in pmu_sym_* calls
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bundle.h"
#include "jsonl.h"
#include "symbolize.h"

struct count {
	char *key;
	unsigned long n;
};

static struct count *counts;
static size_t ncounts, capcounts;

static void bump(const char *key)
{
	for (size_t i = 0; i < ncounts; i++)
		if (!strcmp(counts[i].key, key)) {
			counts[i].n++;
			return;
		}
	if (ncounts == capcounts) {
		capcounts = capcounts ? capcounts * 2 : 64;
		counts = realloc(counts, capcounts * sizeof(*counts));
		if (!counts)
			exit(1);
	}
	counts[ncounts].key = strdup(key);
	counts[ncounts++].n = 1;
}

static int by_count(const void *a, const void *b)
{
	const struct count *x = a, *y = b;

	return x->n < y->n ? 1 : x->n > y->n ? -1 : strcmp(x->key, y->key);
}

static char *str(const struct pmu_jrec *r, const char *k)
{
	const struct pmu_jfield *f = pmu_jrec_get(r, k);

	return f && f->type == PMU_JV_STR ? strndup(f->s, f->slen) : NULL;
}

static int64_t num(const struct pmu_jrec *r, const char *k)
{
	const struct pmu_jfield *f = pmu_jrec_get(r, k);

	return f && f->type == PMU_JV_INT ? f->i : -1;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static const char *status_name(enum pmu_frame_status s)
{
	switch (s) {
	case PMU_FRAME_OK: return "ok";
	case PMU_FRAME_NOSYM: return "nosym";
	case PMU_FRAME_STALE: return "stale";
	case PMU_FRAME_NOTFOUND: return "notfound";
	case PMU_FRAME_UNMAPPED: return "unmapped";
	case PMU_FRAME_KERNEL: return "kernel";
	}
	return "?";
}

int main(int argc, char **argv)
{
	struct pmu_bundle b;
	struct pmu_sym *s;
	struct pmu_jrec r;
	char rel[128], *line = NULL, *arch = NULL, *cg = NULL, stackkey[8192];
	size_t cap = 0;
	ssize_t len;
	int check, rep = argc > 2 ? atoi(argv[2]) : 1, err;
	uint64_t regs_mask = 0;
	unsigned long samples = 0, frames = 0, unwound = 0, failed = 0;
	double spent = 0;
	FILE *f;

	if (argc < 2) {
		fprintf(stderr, "usage: sym-dump BUNDLE [REP]\n");
		return 2;
	}
	if ((err = pmu_bundle_open(&b, argv[1], NULL, NULL, &check))) {
		fprintf(stderr, "sym-dump: cannot open '%s': %d\n", argv[1], err);
		return 1;
	}
	if ((err = pmu_sym_new(&s, &b, rep))) {
		fprintf(stderr, "sym-dump: pmu_sym_new: %d\n", err);
		return 1;
	}
	if (rep >= 2)
		snprintf(rel, sizeof(rel), "data/repeats/%d/collectors/sampling/samples.jsonl", rep);
	else
		snprintf(rel, sizeof(rel), "data/collectors/sampling/samples.jsonl");
	pmu_jrec_init(&r);
	for (int pass = 0; pass < 2; pass++) {
		int fd = openat(b.rootfd, rel, O_RDONLY);

		if (fd < 0 || !(f = fdopen(fd, "r"))) {
			fprintf(stderr, "sym-dump: no %s\n", rel);
			return 1;
		}
		while ((len = getline(&line, &cap, f)) > 0) {
			const char *why;
			size_t at;
			char *type;

			if (line[len - 1] == '\n')
				line[--len] = '\0';
			if (pass == 0 && !strstr(line, "\"ksym\"") && !strstr(line, "\"config\""))
				continue;
			if (pmu_jrec_parse(&r, line, (size_t)len, &why, &at))
				continue;
			type = str(&r, "type");
			if (!type)
				continue;
			if (pass == 0 && !strcmp(type, "ksym")) {
				char *a = str(&r, "addr"), *n = str(&r, "name");

				if (a && n)
					pmu_sym_ksym(s, strtoull(a, NULL, 16), n);
				free(a);
				free(n);
			} else if (pass == 0 && !strcmp(type, "config")) {
				char *m = str(&r, "regs_mask");

				arch = str(&r, "arch");
				cg = str(&r, "call_graph");
				regs_mask = m ? strtoull(m, NULL, 16) : 0;
				free(m);
			} else if (pass == 1 && !strcmp(type, "sample")) {
				char *inc = str(&r, "inc"), *ip = str(&r, "ip"), *chain = str(&r, "chain");
				char *regs = str(&r, "regs"), *stack = str(&r, "stack");
				const struct pmu_jfield *kip = pmu_jrec_get(&r, "kernel_ip");
				int64_t t = num(&r, "t_ns"), kf = num(&r, "kframes");
				uint64_t pcs[256];
				size_t np = 0, k = 0;
				struct pmu_frame fr[16];
				double t0 = now();

				/* the chain as recorded; a dwarf sample's user part unwound */
				if (chain) {
					for (char *p = chain, *e; *p && np < 256; p = e) {
						pcs[np++] = strtoull(p, &e, 16);
						while (*e == ' ')
							e++;
					}
				} else if (ip) {
					pcs[np++] = strtoull(ip, NULL, 16);
				}
				k = kf > 0 ? (size_t)kf : (kip && kip->b ? 1 : 0);
				if (k > np)
					k = np;
				if (cg && !strcmp(cg, "dwarf") && regs && stack) {
					char whyu[256];
					size_t nu = pmu_sym_unwind(s, inc, (uint64_t)t, arch, regs_mask, regs, stack, pcs + k,
								   256 - k, whyu, sizeof(whyu));

					if (nu) {
						np = k + nu;
						unwound += nu > 1;
						failed += nu == 1;
					} else {
						failed++;
						bump(whyu);
					}
				}
				stackkey[0] = '\0';
				for (size_t i = np; i-- > 0;) {
					size_t n = pmu_sym_frames(s, inc, (uint64_t)t, pcs[i], i > 0 && i != k, i < k, fr,
								  16);
					char self[1024];

					frames++;
					for (size_t j = n; j-- > 0;) {
						const char *fn = fr[j].func ? fr[j].func : status_name(fr[j].status);

						if (i >= k && strlen(stackkey) + strlen(fn) + 2 < sizeof(stackkey)) {
							if (stackkey[0])
								strcat(stackkey, ";");
							strcat(stackkey, fn);
						}
					}
					if (i == 0) {
						if (fr[0].status == PMU_FRAME_OK)
							snprintf(self, sizeof(self), "self %s%s %s:%d", fr[n - 1].func,
								 n > 1 ? "" : "", fr[0].file ? fr[0].file : "?", fr[0].line);
						else
							snprintf(self, sizeof(self), "self %s%s%s: %s", status_name(fr[0].status),
								 fr[0].func ? " " : "", fr[0].func ? fr[0].func : "", fr[0].why);
						if (n > 1) {
							size_t l = strlen(self);

							snprintf(self + l, sizeof(self) - l, " (%s inlined)", fr[0].func);
						}
						bump(self);
					}
				}
				spent += now() - t0;
				if (stackkey[0]) {
					char sk[8300];

					snprintf(sk, sizeof(sk), "stack %s", stackkey);
					bump(sk);
				}
				samples++;
				free(inc), free(ip), free(chain), free(regs), free(stack);
			}
			free(type);
		}
		fclose(f);
	}
	printf("samples %lu\nframes %lu\nunwound %lu\nfailed %lu\n", samples, frames, unwound, failed);
	qsort(counts, ncounts, sizeof(*counts), by_count);
	for (size_t i = 0; i < ncounts; i++) {
		char *sp = strchr(counts[i].key, ' ');

		if (sp && (!strncmp(counts[i].key, "self ", 5) || !strncmp(counts[i].key, "stack ", 6)))
			printf("%.*s %lu %s\n", (int)(sp - counts[i].key), counts[i].key, counts[i].n, sp + 1);
		else
			printf("unwind-failure %lu %s\n", counts[i].n, counts[i].key);
	}
	printf("seconds %.3f\n", spent);
	pmu_jrec_release(&r);
	pmu_sym_free(s);
	pmu_bundle_close(&b);
	free(line), free(arch), free(cg);
	return 0;
}
