/*
 * The document and stream writer (lib/bagw.h): records built in place give
 * the bytes jansson gives for the same members (adversarial strings: C0
 * controls, quotes, backslashes, DEL, invalid UTF-8 that pmu_json_text()
 * replaces; integer extremes), across chunk boundaries and for a record
 * larger than the buffer; counts and the header line; the first error
 * sticks; documents get their header members first; repetitions their scope.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "bag.h"
#include "bagw.h"
#include "error.h"
#include "spec.h"
#include "spec_json.h"
#include "tap.h"
#include "util.h"

static char dir[] = "/tmp/t-bagw.XXXXXX";

/* What the recorder wrote with jansson before lib/bagw: pmu_json_text() of
 * s, dumped compact. */
static char *jansson_quote(const char *s)
{
	json_t *j = pmu_json_text(s);
	char *d = j ? json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

	json_decref(j);
	return d;
}

static int quote_matches(const char *s, size_t n, const char *what)
{
	char *want = jansson_quote(s), *got = malloc(PMU_BAGW_QUOTE_MAX(n) + 1);
	size_t k = pmu_bagw_quote(got, s, n);
	int same;

	got[k] = '\0';
	same = want && !strcmp(want, got) && k <= PMU_BAGW_QUOTE_MAX(n);
	if (!same && what)
		printf("#   %s: got %s, want %s\n", what, got, want ? want : "(null)");
	free(want);
	free(got);
	return same;
}

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ull;
}

static void test_quote(void)
{
	char s[16];
	int bad = 0;
	/* the bytes that matter: controls, specials, UTF-8 leads and tails */
	static const unsigned char pick[] = { 0x01, 0x08, 0x09, 0x0a, 0x0c, 0x0d, 0x1f, '"', '\\', '/', 'a', 0x7f,
					      0x80, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4,
					      0xf5, 0xff, 0xa0, 0x9f, 0x8f, 0x90 };

	for (int c = 1; c < 256; c++) {
		s[0] = (char)c;
		s[1] = '\0';
		bad += !quote_matches(s, 1, bad < 3 ? "one byte" : NULL);
	}
	ok(!bad, "each single byte is quoted as jansson dumps pmu_json_text() (%d differ)", bad);
	bad = 0;
	for (int a = 1; a < 256; a++)
		for (int b = 1; b < 256; b++) {
			s[0] = (char)a;
			s[1] = (char)b;
			s[2] = '\0';
			bad += !quote_matches(s, 2, bad < 3 ? "two bytes" : NULL);
		}
	ok(!bad, "every pair of bytes is quoted as jansson does (%d differ)", bad);
	bad = 0;
	for (int i = 0; i < 200000; i++) {
		size_t n = 1 + rnd() % 15;

		for (size_t k = 0; k < n; k++)
			s[k] = (char)(rnd() % 4 ? pick[rnd() % sizeof(pick)] : 1 + rnd() % 255);
		s[n] = '\0';
		bad += !quote_matches(s, n, bad < 3 ? "random" : NULL);
	}
	ok(!bad, "200,000 strings of UTF-8 pieces, controls and specials are quoted as jansson does (%d differ)", bad);
	/* the word-at-a-time scan: a special byte at every offset of a long run */
	bad = 0;
	for (int at = 0; at < 40; at++)
		for (size_t i = 0; i < sizeof(pick); i++) {
			char l[48];

			memset(l, 'x', sizeof(l));
			l[at] = (char)pick[i];
			l[41] = '\0';
			bad += !quote_matches(l, 41, bad < 3 ? "offset" : NULL);
		}
	ok(!bad, "a special byte at each offset of a 41-byte string (%d differ)", bad);
	{
		static const char edges[] = "\xf0\x9f\x98\x80 \xe2\x80\xa8 \xed\xa0\x80 \xf4\x90\x80\x80 \xe0\x80\xaf \xc3";

		ok(quote_matches(edges, strlen(edges), "edges"),
		   "4-byte, U+2028, a surrogate, past U+10FFFF, overlong, truncated");
	}
}

/* The cohort's records both ways: built in place (a) and as jansson
 * objects (b), over adversarial strings. */
static const char *const texts[] = {
	"plain", "", "sp ace", "quo\"te", "back\\slash", "sl/ash", "\x01\x1f\x7f", "tab\tnl\ncr\rff\fbs\b",
	"caf\xc3\xa9", "bad\xff\xfe", "trunc\xe2\x82", "sur\xed\xa0\x80rogate", "over\xc0\xaflong", "\xf4\x90\x80\x80",
	"emoji\xf0\x9f\x98\x80", "/usr/lib/x86_64-linux-gnu/libc.so.6",
};

static void both(struct pmu_bagw_stream *a, struct pmu_bagw_stream *b, size_t i)
{
	const char *t = texts[i % PMU_ARRAY_SIZE(texts)], *u = texts[(i * 7 + 3) % PMU_ARRAY_SIZE(texts)];
	int64_t big = i % 3 == 0 ? INT64_MAX : i % 3 == 1 ? INT64_MIN : -(int64_t)i;

	pmu_bagw_rec(a);
	pmu_bagw_str(a, "type", "exec");
	pmu_bagw_str(a, "inc", t);
	pmu_bagw_int(a, "t_ns", big);
	pmu_bagw_str(a, "path", u);
	pmu_bagw_bool(a, "preexisting", i & 1);
	pmu_bagw_int(a, "zero", 0);
	pmu_bagw_rec_end(a);
	pmu_bagw_put(b, json_pack("{s:s,s:o,s:I,s:o,s:b,s:i}", "type", "exec", "inc", pmu_json_text(t), "t_ns",
				  (json_int_t)big, "path", pmu_json_text(u), "preexisting", (int)(i & 1), "zero", 0));
}

static char *slurp(const char *rel, size_t *n)
{
	char p[512], *s = NULL;

	snprintf(p, sizeof(p), "%s/b.bundle/data/%s", dir, rel);
	*n = 0;
	if (pmu_read_file(AT_FDCWD, p, 64 << 20, &s, n))
		return NULL;
	return s;
}

static void test_streams(void)
{
	struct pmu_bag_opts o = { .agent = "t-bagw", .spec = PMU_SPEC_VERSION, .date = 0 };
	struct pmu_bagw w, w2;
	struct pmu_bagw_stream a, b, e = { 0 };
	struct pmu_bag *bag;
	char path[256], *big, *sa, *sb, *hdr;
	size_t na, nb, n = 0;
	int err;

	snprintf(path, sizeof(path), "%s/b.bundle", dir);
	if (!ok(pmu_bag_open(&bag, path, &o) == 0, "a bag to write in"))
		return;
	pmu_bagw_init(&w, bag, 1, PMU_SPEC_VERSION, PMU_SPEC_MINOR);
	pmu_bagw_init(&w2, bag, 2, PMU_SPEC_VERSION, PMU_SPEC_MINOR);
	is_str(w2.scope, "repeats/2/", "repetition 2 is scoped to repeats/2/");
	ok(pmu_bagw_open(&w, &a, "a.jsonl", "cohort") == 0 && pmu_bagw_open(&w, &b, "b.jsonl", "cohort") == 0,
	   "two streams open");
	/* well past several chunks */
	for (size_t i = 0; i < 20000; i++)
		both(&a, &b, i);
	/* a record larger than the buffer (two chunks): the buffer grows */
	big = malloc(3 * PMU_BAGW_CHUNK + 1);
	for (size_t i = 0; i < 3 * PMU_BAGW_CHUNK; i++)
		big[i] = "ab\"\\\x01\xc3\xa9/"[i % 8];
	big[3 * PMU_BAGW_CHUNK] = '\0';
	pmu_bagw_rec(&a);
	pmu_bagw_str(&a, "type", "exec");
	pmu_bagw_str(&a, "path", big);
	pmu_bagw_rec_end(&a);
	pmu_bagw_put(&b, json_pack("{s:s,s:o}", "type", "exec", "path", pmu_json_text(big)));
	pmu_bagw_batch(&a);
	both(&a, &b, 1);
	both(&a, &b, 2);
	pmu_bagw_batch_end(&a);
	free(big);
	is_int((long long)a.records, 20004, "records counted, the header included");
	ok(a.records == b.records && a.bytes == b.bytes, "both ways count the same records and bytes");
	ok(a.ns > 0, "the time spent writing is measured");
	ok(pmu_bagw_close(&a) == 0 && pmu_bagw_close(&b) == 0, "both streams close");
	ok(pmu_bagw_close(&a) == 0, "closing again is harmless");
	/* the first error sticks and the close reports it */
	err = pmu_bagw_open(&w, &e, "../escape.jsonl", "cohort");
	ok(err < 0, "a name outside the bag is refused");
	ok(pmu_bagw_put(&e, json_pack("{s:s}", "type", "x")) == err, "a record after the error gets the error");
	pmu_bagw_rec(&e);
	pmu_bagw_str(&e, "type", "x");
	ok(pmu_bagw_rec_end(&e) == err && e.records == 0, "a built record too, and nothing is counted");
	ok(pmu_bagw_close(&e) == err, "the close returns the first error");
	/* documents: header members first, then the body's, in order */
	ok(pmu_bagw_put_doc(&w2, "run.json", pmu_bagw_doc(&w2, "run", json_pack("{s:s,s:i}", "zeta", "z", "alpha",
										1))) == 0,
	   "a document written at repeats/2/");
	{
		struct pmu_bagw_stream s2;

		ok(pmu_bagw_open(&w, &s2, "plain.txt", NULL) == 0 && pmu_bagw_write(&s2, "raw", 3) == 0 &&
		   pmu_bagw_printf(&s2, "%d", 42) == 0 && pmu_bagw_close(&s2) == 0 && s2.records == 1 && s2.bytes == 6,
		   "a plain file: raw bytes (no header) and a formatted line");
	}
	ok(pmu_bag_finalize(bag) == 0, "the bag finalizes");

	sa = slurp("a.jsonl", &na);
	sb = slurp("b.jsonl", &nb);
	ok(sa && sb && na == nb && !memcmp(sa, sb, na), "built in place and through jansson: the same %zu bytes", na);
	ok(sa && na == a.bytes, "the bytes counted are the file's");
	hdr = pmu_spec_stream_header("cohort", PMU_SPEC_VERSION, PMU_SPEC_MINOR);
	ok(sa && hdr && !strncmp(sa, hdr, strlen(hdr)) && sa[strlen(hdr)] == '\n', "the stream starts with its header line");
	for (size_t i = 0; sa && i < na; i++)
		n += sa[i] == '\n';
	is_int((long long)n, 20004, "one line per record");
	free(hdr);
	free(sa);
	free(sb);
	sa = slurp("repeats/2/run.json", &na);
	ok(sa && strstr(sa, "\"spec\": \"" PMU_SPEC_VERSION "\",\n  \"type\": \"run\",\n  \"units\": {") == sa + 4,
	   "a document begins with spec, type and units");
	ok(sa && strstr(sa, "\"zeta\"") && strstr(sa, "\"alpha\"") && strstr(sa, "\"zeta\"") < strstr(sa, "\"alpha\""),
	   "then the body's members, in the body's order");
	free(sa);
	sa = slurp("plain.txt", &na);
	ok(sa && na == 6 && !memcmp(sa, "raw42\n", 6), "the plain file holds exactly what was written");
	free(sa);
}

/* One exec record's argv member written by pmu_bagw_argv(blob, len,
 * truncated) and read back: the array as JSON text (compact), and whether
 * argv_truncated came with it. */
struct argv_case {
	const char *what, *blob;
	size_t len;
	bool truncated;
};

static void argv_bytes(json_t *a, size_t *n, size_t *bytes)
{
	size_t i;
	json_t *e;

	*n = json_array_size(a);
	*bytes = 0;
	json_array_foreach(a, i, e)
		*bytes += json_string_length(e) + 1;
}

static void test_argv(void)
{
	struct pmu_bag_opts o = { .agent = "t-bagw", .spec = PMU_SPEC_VERSION, .date = 0 };
	char path[256], many[400], *big = malloc(9000), *odd = malloc(6000), *line, *sa, *save = NULL;
	struct pmu_bagw w;
	struct pmu_bagw_stream s;
	struct pmu_bag *bag;
	size_t k = 0, na;
	json_t *r[8] = { 0 };

	for (int i = 0; i < 70; i++)
		k += (size_t)snprintf(many + k, sizeof(many) - k, "%d", i) + 1;
	memset(big, 'b', 9000);
	memcpy(big, "tr\0", 3);
	/* U+00E9 (2 bytes) 2500 times after "x" and an invalid byte (3 when written) */
	memcpy(odd, "x\0\xff\0", 4);
	for (int i = 0; i < 2500; i++)
		memcpy(odd + 4 + 2 * i, "\xc3\xa9", 2);
	const struct argv_case cases[] = {
		{ "plain", "sh\0-c\0echo a b\0", 15, false },
		{ "empty strings and no final NUL", "\0a\0\0b", 5, false },
		{ "70 strings", many, k, false },
		{ "a string past the byte bound", big, 9000, false },
		{ "invalid UTF-8, and a cut between characters", odd, 5004, false },
		{ "the follower's capture cut it", "a\0b", 3, true },
		{ "nothing", "", 0, false },
	};
	snprintf(path, sizeof(path), "%s/c.bundle", dir);
	if (!ok(pmu_bag_open(&bag, path, &o) == 0, "a bag for argv records")) {
		free(big);
		free(odd);
		return;
	}
	pmu_bagw_init(&w, bag, 1, PMU_SPEC_VERSION, PMU_SPEC_MINOR);
	ok(pmu_bagw_open(&w, &s, "argv.jsonl", "cohort") == 0, "a stream");
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		pmu_bagw_rec(&s);
		pmu_bagw_str(&s, "type", "exec");
		pmu_bagw_argv(&s, cases[i].blob, cases[i].len, cases[i].truncated);
		pmu_bagw_rec_end(&s);
	}
	ok(pmu_bagw_close(&s) == 0 && pmu_bag_finalize(bag) == 0, "written");
	snprintf(path, sizeof(path), "%s/c.bundle/data/argv.jsonl", dir);
	sa = NULL;
	if (pmu_read_file(AT_FDCWD, path, 1 << 20, &sa, &na) || !sa) {
		ok(0, "read back");
		free(big);
		free(odd);
		return;
	}
	line = strtok_r(sa, "\n", &save); /* the header */
	for (size_t i = 0; i < 7 && (line = strtok_r(NULL, "\n", &save)); i++)
		r[i] = json_loads(line, JSON_REJECT_DUPLICATES, NULL);
	{
		size_t n, bytes;
		char *t = json_dumps(json_object_get(r[0], "argv"), JSON_COMPACT);

		is_str(t, "[\"sh\",\"-c\",\"echo a b\"]", "plain: the strings");
		free(t);
		ok(!json_object_get(r[0], "argv_truncated"), "plain: no truncation mark");
		t = json_dumps(json_object_get(r[1], "argv"), JSON_COMPACT);
		is_str(t, "[\"\",\"a\",\"\",\"b\"]", "empty strings kept, a last string without its NUL taken");
		free(t);
		argv_bytes(json_object_get(r[2], "argv"), &n, &bytes);
		is_int((long long)n, PMU_ARGV_MAX_ARGS, "70 strings: the first 64 kept");
		is_str(json_string_value(json_array_get(json_object_get(r[2], "argv"), 63)), "63", "in order");
		ok(json_is_true(json_object_get(r[2], "argv_truncated")), "and marked");
		argv_bytes(json_object_get(r[3], "argv"), &n, &bytes);
		ok(n == 2 && bytes == PMU_ARGV_MAX_BYTES, "past the byte bound: the second string cut to fill 4096 bytes");
		ok(json_is_true(json_object_get(r[3], "argv_truncated")), "and marked");
		argv_bytes(json_object_get(r[4], "argv"), &n, &bytes);
		is_str(json_string_value(json_array_get(json_object_get(r[4], "argv"), 1)), "\xef\xbf\xbd",
		       "an invalid byte is U+FFFD");
		ok(n == 3 && bytes <= PMU_ARGV_MAX_BYTES && bytes >= PMU_ARGV_MAX_BYTES - 1 &&
			   (json_string_length(json_array_get(json_object_get(r[4], "argv"), 2)) & 1) == 0,
		   "U+FFFD counted as 3 bytes, the cut between two-byte characters (%zu bytes)", bytes);
		ok(json_is_true(json_object_get(r[4], "argv_truncated")), "and marked");
		t = json_dumps(json_object_get(r[5], "argv"), JSON_COMPACT);
		is_str(t, "[\"a\",\"b\"]", "a capture cut by the follower: what it has");
		free(t);
		ok(json_is_true(json_object_get(r[5], "argv_truncated")), "marked as the follower said");
		ok(json_is_array(json_object_get(r[6], "argv")) && json_array_size(json_object_get(r[6], "argv")) == 0 &&
			   !json_object_get(r[6], "argv_truncated"),
		   "nothing: an empty array");
	}
	for (size_t i = 0; i < 8; i++)
		json_decref(r[i]);
	free(sa);
	free(big);
	free(odd);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_quote();
	test_streams();
	test_argv();
	pmu_rm_rf(AT_FDCWD, dir);
	return done_testing();
}
