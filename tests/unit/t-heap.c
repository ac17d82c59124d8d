/*
 * lib/heap.c: pushes and pops in random order come out sorted, ties by the
 * caller's second key; the top; growth past the first allocation.
 */
#include <stdint.h>
#include <stdlib.h>

#include "heap.h"
#include "tap.h"

struct it {
	uint64_t t, seq;
};

static bool less(const void *a, const void *b)
{
	const struct it *x = a, *y = b;

	return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

int main(void)
{
	struct pmu_heap h = PMU_HEAP_INIT(struct it, less);
	struct it v, prev = { 0, 0 };
	size_t bad = 0, got = 0;

	srand(7);
	for (uint64_t i = 0; i < 5000; i++) {
		v = (struct it){ (uint64_t)(rand() % 700), i };
		if (pmu_heap_push(&h, &v))
			bad++;
	}
	ok(bad == 0 && h.n == 5000, "5000 pushes (the array grew past its first 1024)");
	ok(pmu_heap_top(&h) && ((const struct it *)pmu_heap_top(&h))->t == 0, "the top is a least item");
	while (h.n) {
		pmu_heap_pop(&h, &v);
		if (got && less(&v, &prev))
			bad++;
		prev = v;
		got++;
	}
	ok(got == 5000 && bad == 0, "popped in (t, seq) order: %zu items, %zu out of order", got, bad);
	ok(pmu_heap_top(&h) == NULL, "an empty heap has no top");
	/* interleaved: push 3, pop 1, as a reorder queue does */
	uint64_t seq = 0;
	for (int round = 0; round < 2000; round++) {
		for (int k = 0; k < 3; k++) {
			v = (struct it){ (uint64_t)round * 10 + (uint64_t)(rand() % 25), seq++ };
			pmu_heap_push(&h, &v);
		}
		pmu_heap_pop(&h, &v);
	}
	ok(h.n == 4000, "interleaved pushes and pops keep the count (%zu)", h.n);
	pmu_heap_free(&h);
	ok(h.v == NULL && h.n == 0, "freed");
	return done_testing();
}
