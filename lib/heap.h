#ifndef PMU_HEAP_H
#define PMU_HEAP_H

/*
 * A binary min-heap of fixed-size items in a growing array, ordered by the
 * caller's less(): the recorder's reorder queues (records from rings that
 * are roughly, not exactly, in time order) keep one each.  Items are moved
 * with memcpy; keep them small (a time, a sequence number, a pointer).
 */
#include <stdbool.h>
#include <stddef.h>

struct pmu_heap {
	void *v;                 /* n items of size bytes */
	size_t n, cap, size;
	bool (*less)(const void *a, const void *b);
};

#define PMU_HEAP_INIT(type, lessfn) { NULL, 0, 0, sizeof(type), (lessfn) }

/* Add a copy of item: 0, or PMU_ERR_NOMEM (the heap unchanged). */
int pmu_heap_push(struct pmu_heap *h, const void *item);
/* The least item (n > 0), or NULL. */
static inline const void *pmu_heap_top(const struct pmu_heap *h)
{
	return h->n ? h->v : NULL;
}
/* Remove the least item, copied to out when out is not NULL (n > 0). */
void pmu_heap_pop(struct pmu_heap *h, void *out);
void pmu_heap_free(struct pmu_heap *h);

#endif
