/*
 * fuzz-docsplit: differential fuzzing of the streaming document splitter
 * (lib/docsplit.c) against jansson's json_loadb(..., JSON_REJECT_DUPLICATES)
 * of the whole input.
 *
 * The input is fed in pieces whose size its first byte picks (1 to 64
 * bytes, so that every cut falls everywhere), member "incarnations".
 * Rules checked (abort() on a breach):
 *   1. jansson accepts  =>  the splitter accepts, and its top level with
 *      the handed-over elements put back into "incarnations" equals
 *      jansson's document (json_equal); elements come with indexes 0, 1, ...
 *   2. jansson rejects  =>  the splitter rejects (at an element or at the
 *      end).
 * Known, intended differences, not compared:
 *   (a) a NUL byte: the splitter always rejects it (jansson drops one
 *       after a number or literal); checked: the splitter rejects;
 *   (b) nesting deeper than jansson's 2048 levels: an element is parsed on
 *       its own, so its depth counts from the element.  Inputs with more
 *       than 1000 opening brackets are not compared (a crash still counts).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "docsplit.h"
#include "error.h"

struct got {
	json_t *elems;
	size_t next;
};

static int on_elem(void *ctx, json_t *e, size_t index)
{
	struct got *g = ctx;

	if (index != g->next++)
		abort();
	json_array_append(g->elems, e);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct got g = { NULL, 0 };
	struct pmu_docsplit *d;
	json_error_t je;
	json_t *whole, *top = NULL;
	size_t step, opens = 0;
	int err;

	if (size < 1 || !(g.elems = json_array()))
		return 0;
	step = 1 + data[0] % 64;
	data++;
	size--;
	if (pmu_docsplit_new(&d, "incarnations", 1u << 20, 1u << 20, on_elem, &g))
		abort();
	err = 0;
	for (size_t at = 0; !err && at < size; at += step)
		err = pmu_docsplit_feed(d, (const char *)data + at, size - at < step ? size - at : step);
	if (!err)
		err = pmu_docsplit_end(d, &top);
	pmu_docsplit_free(d);

	for (size_t i = 0; i < size; i++)
		opens += data[i] == '{' || data[i] == '[';
	if (memchr(data, '\0', size)) {
		if (!err)
			abort(); /* (a) */
	} else if (opens <= 1000) {
		whole = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
		if (whole && err)
			abort(); /* 1 */
		if (!whole && !err)
			abort(); /* 2 */
		if (whole) {
			json_t *arr = json_object_get(top, "incarnations");

			if (json_array_size(g.elems)) {
				if (!json_is_array(arr) || json_array_size(arr))
					abort();
				json_object_set(top, "incarnations", g.elems);
			}
			if (!json_equal(whole, top))
				abort(); /* 1 */
		}
		json_decref(whole);
	}
	json_decref(top);
	json_decref(g.elems);
	return 0;
}
