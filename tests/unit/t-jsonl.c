/* The flat JSON Lines record parser: RFC 8259 syntax, values, refusals. */
#include <string.h>

#include "error.h"
#include "jsonl.h"
#include "tap.h"

static struct pmu_jrec r;

static int parse(const char *s)
{
	const char *why;
	size_t at;

	return pmu_jrec_parse(&r, s, strlen(s), &why, &at);
}

static const char *const good[] = {
	"{}", " { } ", "{\"a\":1}", "{\"a\":-0}", "{\"a\":1.5e-3}", "{\"a\":\"\\u00e9\\ud83d\\ude00\"}",
	"{\"a\":[1,{\"b\":[]}],\"c\":null}", "{\"a\":true,\"b\":false}", "{\"a\":\"\xc3\xa9\xf0\x9f\x98\x80\"}",
	"\t{\"a\" : 0 }\r", "{\"a\":9223372036854775807}", "{\"a\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"}",
};
static const char *const bad[] = {
	"", "[]", "1", "{", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}",
	"{\"a\":1e}", "{\"a\":+1}", "{\"a\":tru}", "{\"a\":1}x", "{\"a\":1}{}", "{'a':1}",
	"{\"a\":\"\\x\"}", "{\"a\":\"\\ud800\"}", "{\"a\":\"\\udc00\"}", "{\"a\":\"\\u0000\"}",
	"{\"a\":\"\x01\"}", "{\"a\":\"\xc0\xaf\"}", "{\"a\":\"\xed\xa0\x80\"}", "{\"a\":\"\xf5\x80\x80\x80\"}",
	"{\"a\":\"unterminated}", "{\"a\":1,\"a\":2}", "{\"a\":[1,]}", "{\"a\":{\"b\"}}",
};

int main(void)
{
	const struct pmu_jfield *f;

	pmu_jrec_init(&r);
	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++)
		is_int(parse(good[i]), 0, good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		is_int(parse(bad[i]), PMU_ERR_CORRUPT, bad[i]);

	is_int(parse("{\"type\":\"event\",\"t_ns\":1000,\"name\":\"a\\nb\",\"ph\":\"B\",\"n\":-5,\"x\":[1]}"), 0,
	       "event record parses");
	is_int(r.n, 6, "six members");
	f = pmu_jrec_get(&r, "t_ns");
	ok(f && f->type == PMU_JV_INT && f->i == 1000, "integer value");
	f = pmu_jrec_get(&r, "name");
	ok(f && f->type == PMU_JV_STR && f->slen == 3 && !memcmp(f->s, "a\nb", 3), "escape unescaped");
	f = pmu_jrec_get(&r, "n");
	ok(f && f->i == -5, "negative integer");
	f = pmu_jrec_get(&r, "x");
	ok(f && f->type == PMU_JV_NESTED, "nested value flagged");
	ok(!pmu_jrec_get(&r, "missing"), "absent member");

	parse("{\"a\":9223372036854775808,\"b\":-9223372036854775809,\"c\":1e2}");
	ok(pmu_jrec_get(&r, "a")->overflow, "2^63 overflows");
	ok(pmu_jrec_get(&r, "b")->overflow, "-2^63-1 overflows");
	ok(pmu_jrec_get(&r, "c")->type == PMU_JV_REAL, "exponent makes a real");
	parse("{\"k\":\"\\ud83d\\ude00\"}");
	f = pmu_jrec_get(&r, "k");
	ok(f && f->slen == 4 && !memcmp(f->s, "\xf0\x9f\x98\x80", 4), "surrogate pair decodes to UTF-8");
	{
		char big[2048] = "{";
		size_t n = 1;

		for (int i = 0; i < 40; i++)
			n += (size_t)snprintf(big + n, sizeof(big) - n, "%s\"k%d\":%d", i ? "," : "", i, i);
		snprintf(big + n, sizeof(big) - n, "}");
		is_int(parse(big), 0, "40 members parse");
		ok(r.too_many && r.n == PMU_JREC_MAX, "members past the limit are flagged, not stored");
	}
	pmu_jrec_release(&r);
	{
		/* a nested member keeps its raw text, and an array of strings is counted */
		const struct pmu_jfield *a;
		size_t n = 9, bytes = 9;

		ok(!parse("{\"argv\":[\"sh\", \"-c\",\"\",\"\\u00e9\"],\"x\":1}") && (a = pmu_jrec_get(&r, "argv")) &&
			   a->type == PMU_JV_NESTED && a->slen == 24 && !memcmp(a->s, "[\"sh\", \"-c\",\"\",\"\\u00e9\"]", 24),
		   "a nested member's s is its raw text");
		a = pmu_jrec_get(&r, "argv");
		is_int(a ? pmu_json_strarr(a->s, a->slen, &n, &bytes) : -1, 0, "an array of strings reads");
		is_int((long long)n, 4, "four strings, the empty one included");
		is_int((long long)bytes, 3 + 3 + 1 + 3, "bytes: unescaped UTF-8 plus a NUL each");
		is_int(pmu_json_strarr("[]", 2, &n, &bytes), 0, "an empty array reads");
		is_int((long long)n, 0, "with no strings");
		is_int(pmu_json_strarr("[1]", 3, &n, &bytes), PMU_ERR_CORRUPT, "an array of a number is refused");
		is_int(pmu_json_strarr("[\"a\",[\"b\"]]", 11, &n, &bytes), PMU_ERR_CORRUPT, "a nested array is refused");
		is_int(pmu_json_strarr("{\"a\":\"b\"}", 9, &n, &bytes), PMU_ERR_CORRUPT, "an object is refused");
		is_int(pmu_json_strarr("[\"a\"", 4, &n, &bytes), PMU_ERR_CORRUPT, "an unterminated array is refused");
		is_int(pmu_json_strarr("[\"a\"]x", 6, &n, &bytes), PMU_ERR_CORRUPT, "bytes after the array are refused");
	}
	return done_testing();
}
