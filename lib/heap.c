/*
 * The binary min-heap (heap.h).  The array has one spare slot past the
 * items, used to hold the item that moves while the others sift.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "heap.h"

#define AT(h, i) ((char *)(h)->v + (i) * (h)->size)

int pmu_heap_push(struct pmu_heap *h, const void *item)
{
	size_t i;

	if (h->n + 2 > h->cap) {
		size_t nc = h->cap ? 2 * h->cap : 1024;
		void *nv = realloc(h->v, nc * h->size);

		if (!nv)
			return pmu_error(PMU_ERR_NOMEM, "out of memory");
		h->v = nv;
		h->cap = nc;
	}
	memcpy(AT(h, h->cap - 1), item, h->size);
	for (i = h->n++; i > 0; i = (i - 1) / 2) {
		size_t p = (i - 1) / 2;

		if (!h->less(AT(h, h->cap - 1), AT(h, p)))
			break;
		memcpy(AT(h, i), AT(h, p), h->size);
	}
	memcpy(AT(h, i), AT(h, h->cap - 1), h->size);
	return 0;
}

void pmu_heap_pop(struct pmu_heap *h, void *out)
{
	size_t i = 0;
	char *last;

	if (!h->n)
		return;
	if (out)
		memcpy(out, h->v, h->size);
	last = AT(h, --h->n);
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		const void *best = last;

		if (l < h->n && h->less(AT(h, l), best))
			best = AT(h, m = l);
		if (r < h->n && h->less(AT(h, r), best))
			m = r;
		if (m == i)
			break;
		memcpy(AT(h, i), AT(h, m), h->size);
		i = m;
	}
	if (h->n)
		memcpy(AT(h, i), last, h->size);
}

void pmu_heap_free(struct pmu_heap *h)
{
	free(h->v);
	h->v = NULL;
	h->n = h->cap = 0;
}
