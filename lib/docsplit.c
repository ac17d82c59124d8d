#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "docsplit.h"
#include "error.h"

/*
 * A scanner that knows just enough JSON to tell where things are: strings
 * (with their escapes), nesting, the keys of the top-level object and the
 * elements of one array.  It decides nothing about syntax itself: every
 * byte goes either to the top-level text or to an element's text, and
 * jansson parses both.  What the scanner must get right is only the cut:
 * an element ends at a ',' or ']' outside strings at its own level.
 */

enum mode {
	M_TOP,     /* the top-level text */
	M_COLON,   /* after the split member's ':', before its value */
	M_ARR,     /* in the array, before an element or its ']' */
	M_ELEM,    /* in an element */
};

struct pmu_docsplit {
	char *member;
	size_t mlen, max_elem, max_doc;
	pmu_docsplit_fn fn;
	void *ctx;

	char *top;
	size_t ntop, captop;
	char *el;
	size_t nel, capel;

	enum mode mode;
	int depth, edepth;     /* nesting of the top level, of an element */
	bool in_str, esc;
	bool expect_key, in_key, key_match, key_long, done_top, need_elem, split_done;
	size_t klen, index, off;
	int err;
};

int pmu_docsplit_new(struct pmu_docsplit **out, const char *member, size_t max_elem, size_t max_doc,
		     pmu_docsplit_fn fn, void *ctx)
{
	struct pmu_docsplit *d = calloc(1, sizeof(*d));

	if (!d || !(d->member = strdup(member))) {
		free(d);
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	}
	d->mlen = strlen(member);
	d->max_elem = max_elem;
	d->max_doc = max_doc;
	d->fn = fn;
	d->ctx = ctx;
	*out = d;
	return 0;
}

void pmu_docsplit_free(struct pmu_docsplit *d)
{
	if (!d)
		return;
	free(d->member);
	free(d->top);
	free(d->el);
	free(d);
}

static int put(char **buf, size_t *n, size_t *cap, size_t max, char c)
{
	if (*n == *cap) {
		size_t nc = *cap ? 2 * *cap : 4096;
		char *p;

		if (nc > max + 1)
			nc = max + 1;
		if (*n >= nc)
			return -1;
		if (!(p = realloc(*buf, nc)))
			return PMU_ERR_NOMEM;
		*buf = p;
		*cap = nc;
	}
	(*buf)[(*n)++] = c;
	return 0;
}

static int fail(struct pmu_docsplit *d, int err)
{
	d->err = err;
	return err;
}

static int top_put(struct pmu_docsplit *d, char c)
{
	int r = put(&d->top, &d->ntop, &d->captop, PMU_DOCSPLIT_TOP_MAX, c);

	if (r == PMU_ERR_NOMEM)
		return fail(d, pmu_error(PMU_ERR_NOMEM, "out of memory"));
	if (r || d->ntop > PMU_DOCSPLIT_TOP_MAX)
		return fail(d, pmu_error(PMU_ERR_LIMIT, "the document outside its '%s' array is over %u bytes",
					 d->member, PMU_DOCSPLIT_TOP_MAX));
	return 0;
}

static int elem_done(struct pmu_docsplit *d)
{
	json_error_t je;
	json_t *j;
	int r;

	if (!d->nel)
		return fail(d, pmu_error(PMU_ERR_CORRUPT, "%s[%zu]: no value before ',' or ']' (byte %zu)", d->member,
					 d->index, d->off + 1));
	j = json_loadb(d->el, d->nel, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
	if (!j)
		return fail(d, pmu_error(PMU_ERR_CORRUPT, "%s[%zu]: %s (column %d of the element)", d->member, d->index,
					 je.text, je.column));
	r = d->fn(d->ctx, j, d->index);
	json_decref(j);
	d->index++;
	d->nel = 0;
	if (d->capel > 65536) {
		/* one large element does not keep its buffer */
		free(d->el);
		d->el = NULL;
		d->capel = 0;
	}
	return r ? fail(d, r) : 0;
}

/* One byte of the top-level text. */
static int top_byte(struct pmu_docsplit *d, char c)
{
	if (top_put(d, c))
		return d->err;
	if (d->in_str) {
		if (d->esc) {
			d->esc = false;
		} else if (c == '\\') {
			d->esc = true;
			d->key_long = true; /* a name with an escape is not taken for the member's */
		} else if (c == '"') {
			d->in_str = false;
			if (d->in_key)
				d->key_match = !d->key_long && d->klen == d->mlen;
			d->in_key = false;
		} else if (d->in_key) {
			if (d->klen < d->mlen && d->member[d->klen] == c)
				d->klen++;
			else
				d->key_long = true;
		}
		return 0;
	}
	switch (c) {
	case '"':
		d->in_str = true;
		if (d->depth == 1 && d->expect_key && !d->done_top) {
			d->in_key = true;
			d->klen = 0;
			d->key_long = false;
		}
		d->key_match = false;
		break;
	case '{':
	case '[':
		d->depth++;
		d->expect_key = d->depth == 1 && c == '{';
		d->key_match = false;
		break;
	case '}':
	case ']':
		if (--d->depth == 0)
			d->done_top = true;
		d->key_match = false;
		break;
	case ',':
		d->expect_key = d->depth == 1;
		d->key_match = false;
		break;
	case ':':
		if (d->depth == 1 && d->key_match && !d->split_done)
			d->mode = M_COLON;
		d->expect_key = false;
		d->key_match = false;
		break;
	case ' ': case '\t': case '\n': case '\r':
		break;
	default:
		d->key_match = false;
		break;
	}
	return 0;
}

static int elem_byte(struct pmu_docsplit *d, char c)
{
	int r;

	if (!d->in_str && d->edepth == 0 && (c == ',' || c == ']')) {
		if (elem_done(d))
			return d->err;
		if (c == ',') {
			d->mode = M_ARR;
			d->need_elem = true;
			return 0;
		}
		d->mode = M_TOP;
		d->split_done = true;
		d->depth--; /* the array's ']' */
		return top_put(d, ']');
	}
	r = put(&d->el, &d->nel, &d->capel, d->max_elem, c);
	if (r == PMU_ERR_NOMEM)
		return fail(d, pmu_error(PMU_ERR_NOMEM, "out of memory"));
	if (r || d->nel > d->max_elem)
		return fail(d, pmu_error(PMU_ERR_LIMIT, "%s[%zu] is over %zu bytes", d->member, d->index, d->max_elem));
	if (d->in_str) {
		if (d->esc)
			d->esc = false;
		else if (c == '\\')
			d->esc = true;
		else if (c == '"')
			d->in_str = false;
		return 0;
	}
	if (c == '"')
		d->in_str = true;
	else if (c == '{' || c == '[')
		d->edepth++;
	else if ((c == '}' || c == ']') && --d->edepth < 0)
		return fail(d, pmu_error(PMU_ERR_CORRUPT, "%s[%zu]: '%c' closes nothing (byte %zu)", d->member,
					 d->index, c, d->off + 1));
	return 0;
}

int pmu_docsplit_feed(struct pmu_docsplit *d, const char *buf, size_t n)
{
	for (size_t i = 0; i < n && !d->err; i++, d->off++) {
		char c = buf[i];
		bool ws = c == ' ' || c == '\t' || c == '\n' || c == '\r';

		if (c == '\0')
			return fail(d, pmu_error(PMU_ERR_CORRUPT, "NUL byte at offset %zu", d->off));
		if (d->off >= d->max_doc)
			return fail(d, pmu_error(PMU_ERR_LIMIT, "the document is over the %zu-byte limit", d->max_doc));
		switch (d->mode) {
		case M_TOP:
			top_byte(d, c);
			break;
		case M_COLON:
			if (ws) {
				top_put(d, c);
			} else if (c == '[') {
				d->depth++;
				d->mode = M_ARR;
				d->need_elem = false;
				top_put(d, c);
			} else {
				d->mode = M_TOP;
				top_byte(d, c);
			}
			break;
		case M_ARR:
			if (ws)
				break;
			if (c == ']' && !d->need_elem) {
				d->mode = M_TOP;
				d->split_done = true;
				d->depth--;
				top_put(d, c);
				break;
			}
			d->mode = M_ELEM;
			d->edepth = 0;
			d->in_str = d->esc = false;
			elem_byte(d, c);
			break;
		case M_ELEM:
			elem_byte(d, c);
			break;
		}
	}
	return d->err;
}

int pmu_docsplit_end(struct pmu_docsplit *d, json_t **top)
{
	json_error_t je;

	*top = NULL;
	if (d->err)
		return d->err;
	if (d->mode != M_TOP)
		return fail(d, pmu_error(PMU_ERR_CORRUPT, "the document ends inside its '%s' array", d->member));
	*top = json_loadb(d->top ? d->top : "", d->ntop, JSON_REJECT_DUPLICATES, &je);
	if (!*top)
		return fail(d, pmu_error(PMU_ERR_CORRUPT, "%s (line %d, column %d, of the document without its '%s' "
					 "elements)", je.text, je.line, je.column, d->member));
	return 0;
}

int pmu_docsplit_fd(int fd, const char *member, size_t max_elem, size_t max_doc, pmu_docsplit_fn fn,
		    void *ctx, json_t **top)
{
	struct pmu_docsplit *d;
	char *buf = malloc(65536);
	int err = buf ? pmu_docsplit_new(&d, member, max_elem, max_doc, fn, ctx)
		      : pmu_error(PMU_ERR_NOMEM, "out of memory");

	*top = NULL;
	if (err) {
		free(buf);
		return err;
	}
	for (;;) {
		ssize_t n = read(fd, buf, 65536);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = pmu_error(PMU_ERR_IO, "read error: %s", strerror(errno));
			break;
		}
		if (n == 0) {
			err = pmu_docsplit_end(d, top);
			break;
		}
		if ((err = pmu_docsplit_feed(d, buf, (size_t)n)))
			break;
	}
	pmu_docsplit_free(d);
	free(buf);
	return err;
}
