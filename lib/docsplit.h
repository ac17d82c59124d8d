#ifndef PMU_DOCSPLIT_H
#define PMU_DOCSPLIT_H

#include <stddef.h>

#include <jansson.h>

/*
 * A JSON document read in bounded memory, one large array member split
 * off: the document of spec 1.0-1.2 whose size grows with the workload is
 * cohort.json, whose "incarnations" array holds one object per process.
 *
 * The bytes are fed in any chunks.  The members of the top-level object are
 * kept, with the array of the member named `member` (written without
 * escapes in its name) emptied to [], and parsed at the end; each element
 * of that array is parsed on its own as it is complete and handed to fn.
 * So memory holds the top level (at most PMU_DOCSPLIT_TOP_MAX bytes), one
 * element's text (at most max_elem bytes) and its tree, never the whole
 * document.
 *
 * The verdict is jansson's (json_loadb, JSON_REJECT_DUPLICATES) on the whole
 * document, with two differences: a NUL byte anywhere is an error (jansson
 * drops one after a number or literal), and an element nested more than
 * 2046 levels deep is parsed (jansson's depth limit counts from the
 * element, not the document).  Elements are handed over before the end of
 * the document is seen: one that comes after an error is never handed
 * over, but a caller that acts on elements must be ready for a syntax
 * error after some of them.  tests/fuzz/fuzz-docsplit.c checks this
 * against jansson.
 */

#define PMU_DOCSPLIT_TOP_MAX (1u << 20)

/* fn owns nothing: elem is borrowed for the call.  A non-zero return
 * stops the split and is returned by pmu_docsplit_feed()/_end(). */
typedef int (*pmu_docsplit_fn)(void *ctx, json_t *elem, size_t index);

struct pmu_docsplit;

/* *out is the caller's, to free with pmu_docsplit_free().  max_doc bounds
 * the whole document's size in bytes. */
int pmu_docsplit_new(struct pmu_docsplit **out, const char *member, size_t max_elem, size_t max_doc,
		     pmu_docsplit_fn fn, void *ctx);
/* 0, fn's non-zero result, or PMU_ERR_CORRUPT (a syntax error: the detail
 * says where) or PMU_ERR_LIMIT (a bound); after an error every later call
 * returns it again. */
int pmu_docsplit_feed(struct pmu_docsplit *d, const char *buf, size_t n);
/* The end of the document: *top is the top-level value with the member's
 * array emptied (the caller owns it: json_decref), or NULL on error. */
int pmu_docsplit_end(struct pmu_docsplit *d, json_t **top);
void pmu_docsplit_free(struct pmu_docsplit *d);

/* All of it over the file fd, read in 64 KiB pieces (the fd stays open). */
int pmu_docsplit_fd(int fd, const char *member, size_t max_elem, size_t max_doc, pmu_docsplit_fn fn,
		    void *ctx, json_t **top);

#endif
