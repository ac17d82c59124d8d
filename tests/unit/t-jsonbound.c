/*
 * The bounded document parse (lib/jsonbound.c): the byte limits of each
 * spec version, the parse budget (jansson never holds more than it, and a
 * document within it parses as jansson alone would), NUL bytes and syntax
 * errors as before, a budget that stays with its thread, and a writer that
 * refuses what readers would.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <jansson.h>

#include "bag.h"
#include "error.h"
#include "jsonbound.h"
#include "spec.h"
#include "spec_json.h"
#include "tap.h"
#include "util.h"

static int memfd_of(const char *p, size_t n)
{
	int fd = memfd_create("doc", MFD_CLOEXEC);

	if (fd < 0 || pmu_write_all(fd, p, n, "doc") || lseek(fd, 0, SEEK_SET) < 0)
		return -1;
	return fd;
}

/* {"a":[0,0,...]}: n bytes of text (n odd), NUL-terminated */
static char *zeros(size_t n)
{
	char *s = malloc(n + 1);
	size_t o = 6;

	memcpy(s, "{\"a\":[", 6);
	for (; o + 5 <= n; o += 2)
		memcpy(s + o, "0,", 2);
	memcpy(s + o, "0]}", 4);
	return s;
}

static void *other_thread(void *arg)
{
	json_t *a = json_array();

	(void)arg;
	/* far past any budget: no bounded parse runs here */
	for (int i = 0; i < 1500000; i++)
		json_array_append_new(a, json_integer(i));
	return a;
}

int main(void)
{
	struct pmu_json_limits l = pmu_doc_limits(PMU_DOC_MAX_BYTES_SINCE);
	json_t *j = NULL, *ref;
	uint64_t line = 0;
	char *s;
	int fd, err;

	is_int(pmu_doc_max_bytes(PMU_DOC_MAX_BYTES_SINCE), 4u << 20, "spec 1.3 documents: 4 MiB");
	is_int(pmu_doc_max_bytes(2), 64u << 20, "spec 1.2 documents: 64 MiB");
	is_int(pmu_doc_max_bytes(-1), 64u << 20, "a reader that does not know the version: the largest");
	is_int(pmu_doc_limits(0).budget, 32u << 20, "every version: a 32 MiB parse budget");

	/* the byte limit, with the size and the limit in the message */
	s = zeros((4u << 20) + 3);
	err = pmu_json_load_buf(s, strlen(s), &l, &j, NULL);
	is_int(err, PMU_ERR_LIMIT, "a spec 1.3 document of 4 MiB + 3 bytes is over the limit");
	ok(strstr(pmu_error_detail(), "4194307 bytes") && strstr(pmu_error_detail(), "4 MiB limit of spec 1.3"),
	   "the message gives the size and the limit: %s", pmu_error_detail());
	fd = memfd_of(s, strlen(s));
	is_int(pmu_json_load_fd(fd, &l, &j, NULL), PMU_ERR_LIMIT, "the same from a file");
	close(fd);
	free(s);

	/* the budget: 60 MiB of zeros under the 1.2 byte limit */
	l = pmu_doc_limits(2);
	s = zeros((60u << 20) + 1);
	fd = memfd_of(s, strlen(s));
	err = pmu_json_load_fd(fd, &l, &j, NULL);
	is_int(err, PMU_ERR_LIMIT, "60 MiB of {\"a\":[0,0,...]} is over the parse budget");
	ok(strstr(pmu_error_detail(), "32 MiB parse budget") != NULL, "the message names the budget: %s",
	   pmu_error_detail());
	ok(pmu_json_last_peak() <= l.budget && pmu_json_last_peak() > l.budget / 2,
	   "jansson held at most the budget (%zu bytes)", pmu_json_last_peak());
	ok(j == NULL && pmu_json_budget_used() == 0, "nothing returned, nothing left accounted");
	close(fd);
	free(s);

	/* within the budget: the same value as jansson alone */
	s = zeros((512u << 10) + 1);
	ref = json_loads(s, JSON_REJECT_DUPLICATES, NULL);
	err = pmu_json_load_buf(s, strlen(s), &l, &j, NULL);
	ok(!err && json_equal(j, ref), "512 KiB of zeros parses, as json_loads does");
	ok(pmu_json_last_peak() <= l.budget, "at %zu bytes of jansson memory", pmu_json_last_peak());
	json_decref(j);
	json_decref(ref);
	free(s);

	/* NUL bytes and syntax errors, as before */
	err = pmu_json_load_buf("{\"a\":1\0}", 8, &l, &j, &line);
	ok(err == PMU_ERR_CORRUPT && !strcmp(pmu_error_detail(), "NUL byte at offset 6"), "a NUL byte: %s",
	   pmu_error_detail());
	fd = memfd_of("{\"a\":\n[1,\n2 x]}", 15);
	err = pmu_json_load_fd(fd, &l, &j, &line);
	ok(err == PMU_ERR_CORRUPT && line == 3 && strstr(pmu_error_detail(), "(column "),
	   "a syntax error on line 3: %s", pmu_error_detail());
	close(fd);
	fd = memfd_of("{\"a\":[1,}\n\"\0\"", 13);
	err = pmu_json_load_fd(fd, &l, &j, &line);
	ok(err == PMU_ERR_CORRUPT && !strcmp(pmu_error_detail(), "NUL byte at offset 11"),
	   "a NUL byte after a syntax error still outranks it: %s", pmu_error_detail());
	close(fd);
	err = pmu_json_load_buf("{\"a\":1,\"a\":2}", 13, &l, &j, &line);
	ok(err == PMU_ERR_CORRUPT && strstr(pmu_error_detail(), "duplicate"), "a repeated member: %s",
	   pmu_error_detail());

	/* the budget is the parsing thread's: another thread allocates freely */
	{
		pthread_t th;
		void *big;

		s = zeros((60u << 20) + 1);
		pthread_create(&th, NULL, other_thread, NULL);
		err = pmu_json_load_buf(s, strlen(s), &l, &j, NULL);
		pthread_join(th, &big);
		ok(err == PMU_ERR_LIMIT && json_array_size(big) == 1500000,
		   "a bounded parse fails while another thread builds a larger value");
		json_decref(big);
		free(s);
	}

	/* the writer refuses what readers would */
	{
		char dir[] = "/tmp/t-jsonbound.XXXXXX", path[600];
		struct pmu_bag_opts o = { .agent = "t-jsonbound", .spec = PMU_SPEC_VERSION, .date = 0 };
		struct pmu_bag *b;
		json_t *doc = json_object(), *a = json_array();

		/* 400,000 empty objects: 3.2 MB as the writer prints them,
		 * within the 4 MiB byte limit of spec 1.3, but each costs jansson a
		 * hash table: only the parse budget stops it */
		for (int i = 0; i < 400000; i++)
			json_array_append_new(a, json_object());
		json_object_set_new(doc, "a", a);
		if (!mkdtemp(dir) || snprintf(path, sizeof(path), "%s/b.bundle", dir) < 0 ||
		    pmu_bag_open(&b, path, &o)) {
			skip("cannot open a bag under /tmp");
		} else {
			err = pmu_bag_put_json(b, "big.json", doc);
			ok(err == PMU_ERR_LIMIT && strstr(pmu_error_detail(), "'big.json'") &&
				   strstr(pmu_error_detail(), "parse budget"),
			   "pmu_bag_put_json refuses a document over the parse budget: %s", pmu_error_detail());
			is_int(pmu_bag_put_json(b, "small.json", json_pack("{s:i}", "a", 1)), 0,
			       "and writes a small one");
			pmu_bag_abort(b);
		}
		pmu_rm_rf(AT_FDCWD, dir);
	}
	return done_testing();
}
