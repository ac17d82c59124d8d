/*
 * The streaming document splitter (lib/docsplit.c): the same verdict and
 * the same document as jansson's whole parse, whatever the pieces it is fed
 * in; its bounds; and a large cohort.json split in flat memory (peak RSS of
 * a child, by wait4).
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "docsplit.h"
#include "error.h"
#include "tap.h"

struct got {
	json_t *elems;
};

static int keep(void *ctx, json_t *e, size_t index)
{
	struct got *g = ctx;

	(void)index;
	return json_array_append(g->elems, e);
}

static int keep_none(void *ctx, json_t *e, size_t index)
{
	size_t *n = ctx;

	(void)e;
	return index == (*n)++ ? 0 : -1;
}

/* Split s fed in pieces of step bytes; 0 and *doc (elements put back), or
 * the error. */
static int split(const char *s, size_t n, size_t step, size_t max_elem, json_t **doc)
{
	struct got g = { json_array() };
	struct pmu_docsplit *d;
	json_t *top = NULL;
	int err = pmu_docsplit_new(&d, "incarnations", max_elem, 1u << 20, keep, &g);

	for (size_t at = 0; !err && at < n; at += step)
		err = pmu_docsplit_feed(d, s + at, n - at < step ? n - at : step);
	if (!err)
		err = pmu_docsplit_end(d, &top);
	pmu_docsplit_free(d);
	if (!err && json_array_size(g.elems))
		json_object_set(top, "incarnations", g.elems);
	json_decref(g.elems);
	*doc = top;
	return err;
}

static void same_as_jansson(const char *s, const char *what)
{
	json_error_t je;
	json_t *want = json_loadb(s, strlen(s), JSON_REJECT_DUPLICATES, &je), *got;
	bool all = true;

	for (size_t step = 1; step <= strlen(s) + 1; step++) {
		int err = split(s, strlen(s), step, 1u << 20, &got);

		if (want ? err || !json_equal(want, got) : !err)
			all = false;
		json_decref(got);
	}
	ok(all, "%s: %s, as jansson says, in pieces of every size", what, want ? "accepted, same document" : "refused");
	json_decref(want);
}

int main(void)
{
	json_t *doc;
	int err;

	same_as_jansson("{\"spec\":\"1.2\",\"incarnations\":[{\"id\":\"i1\",\"tids\":[1,2]},{\"id\":\"i2\"}],\"root\":\"i1\"}",
			"a small cohort");
	same_as_jansson("{\"incarnations\":[]}", "an empty array");
	same_as_jansson("{ \"incarnations\" : [ 1 , \"],[\" , [ ] , { \"a\" : \"\\\"]\" } ] }", "brackets in strings, spaces");
	same_as_jansson("{\"units\":{\"incarnations\":[1]},\"incarnations\":[2]}", "the name deeper down is not split");
	same_as_jansson("{\"incarn\\u0061tions\":[1,2]}", "an escaped name is kept whole");
	same_as_jansson("{\"incarnations\":[1,]}", "a trailing comma");
	same_as_jansson("{\"incarnations\":[,1]}", "a leading comma");
	same_as_jansson("{\"incarnations\":[1 2]}", "two values in one element");
	same_as_jansson("{\"incarnations\":[{\"a\":1,\"a\":2}]}", "a duplicate member in an element");
	same_as_jansson("{\"incarnations\":[],\"incarnations\":[]}", "the member twice");
	same_as_jansson("{\"incarnations\":[1]", "the document ends early");
	same_as_jansson("{\"incarnations\":[{]}]}", "a bracket that closes nothing");
	same_as_jansson("{\"incarnations\":[1]} {}", "text after the document");
	same_as_jansson("[{\"incarnations\":[1]}]", "an array at the top");

	err = split("{\"incarnations\":[1,\0 2]}", 23, 4, 1u << 20, &doc);
	ok(err == PMU_ERR_CORRUPT && strstr(pmu_error_detail(), "NUL byte at offset 19"), "a NUL byte is refused: %s",
	   pmu_error_detail());
	json_decref(doc);
	err = split("{\"incarnations\":[\"0123456789\",1]}", 33, 5, 8, &doc);
	ok(err == PMU_ERR_LIMIT && strstr(pmu_error_detail(), "incarnations[0] is over 8 bytes"),
	   "an element over its bound is refused: %s", pmu_error_detail());
	json_decref(doc);

	/* a cohort.json of 150,000 incarnations (about 33 MB) split in a child
	 * that stays small: the document is never whole */
	{
		char path[] = "/tmp/t-docsplit.XXXXXX";
		int fd = mkstemp(path);
		FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
		size_t n = 150000, got = 0;
		struct rusage ru;
		int st = -1;
		pid_t pid;

		fprintf(f, "{\n  \"spec\": \"1.2\",\n  \"type\": \"cohort\",\n  \"root\": \"i1\",\n  \"incarnations\": [\n");
		for (size_t i = 1; i <= n; i++)
			fprintf(f, "    {\n      \"id\": \"i%zu\",\n      \"pid\": %zu,\n      \"start_ns\": 1000001000,\n"
				   "      \"end_ns\": 1009000000,\n%s      \"preexisting\": false,\n      \"comm\": \"worker\",\n"
				   "      \"tids\": [\n        %zu\n      ],\n      \"exec\": [],\n      \"exit\": {\n"
				   "        \"kind\": \"exited\",\n        \"code\": 0\n      }\n    }%s\n",
				i, 1000 + i, i > 1 ? "      \"parent\": \"i1\",\n" : "", 1000 + i, i < n ? "," : "");
		fprintf(f, "  ]\n}\n");
		fclose(f);
		pid = fork();
		if (pid == 0) {
			json_t *top;
			int in = open(path, O_RDONLY);

			/* keep nothing: count only */
			err = pmu_docsplit_fd(in, "incarnations", 1u << 20, 64u << 20, keep_none, &got, &top);
			_exit(err || !json_is_array(json_object_get(top, "incarnations")) || got != n ? 1 : 0);
		}
		if (pid > 0)
			wait4(pid, &st, 0, &ru);
		unlink(path);
		ok(pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "a 150,000-incarnation document is split, every element handed over");
#if defined(__SANITIZE_ADDRESS__)
		/* ASan keeps freed memory in quarantine and adds shadow memory:
		 * peak RSS says nothing about the code's own use there */
		skip("peak RSS (%ld KiB) is not held to a bound in an AddressSanitizer build", ru.ru_maxrss);
#else
		ok(ru.ru_maxrss < 16 * 1024, "...in flat memory: peak RSS %ld KiB (the document is about 33 MB)", ru.ru_maxrss);
#endif
	}
	return done_testing();
}
