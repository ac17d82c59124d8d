/*
 * analyze/compare.c's sentences, decided from the 95% interval and never
 * from the point estimate: the verdict of a compared metric against the
 * minimum effect, and the observer overhead against the 5% level, each
 * case on made-up intervals so that the wording is tested deterministically.
 */
#include <stdbool.h>
#include <string.h>

#include "compare.h"
#include "tap.h"

static int has(const char *s, const char *part, const char *what)
{
	int r = ok(strstr(s, part) != NULL, "%s", what);

	if (!r)
		printf("#   '%s' lacks '%s'\n", s, part);
	return r;
}

static int lacks(const char *s, const char *part, const char *what)
{
	int r = ok(strstr(s, part) == NULL, "%s", what);

	if (!r)
		printf("#   '%s' has '%s'\n", s, part);
	return r;
}

static void test_overhead(void)
{
	char st[600];
	const char *v;

	/* the whole interval at most 5%: below it with 95% confidence */
	v = an_overhead_sentence("light", 1.2, -1.5, 4.0, 5.0, st, sizeof(st));
	is_str(v, "below", "an interval up to +4.0% is below the 5% level");
	has(st, "mode light adds below 5% wall time with 95% confidence", "...and says so");
	has(st, "95% CI -1.5% .. +4.0%", "...with the interval");
	/* exactly at the level: still at most 5% */
	v = an_overhead_sentence("light", 2.0, 0.5, 5.0, 5.0, st, sizeof(st));
	is_str(v, "below", "an interval ending at +5.0% is at most 5%");

	/* the self-contradiction: +2.6% (95% CI -28.0% .. +65.6%) */
	v = an_overhead_sentence("light", 2.6, -28.0, 65.6, 5.0, st, sizeof(st));
	is_str(v, "undetermined", "-28.0% .. +65.6% straddles 5%: undetermined");
	has(st, "cannot rule out more than 5%", "...it cannot rule out more than 5%");
	lacks(st, "adds +2.6%", "...and does not state the point as the overhead");
	lacks(st, "below 5%", "...nor claims below 5%");
	/* the second case: +38.7% (95% CI -1.5% .. +77.3%) is not a fact */
	v = an_overhead_sentence("full", 38.7, -1.5, 77.3, 5.0, st, sizeof(st));
	is_str(v, "undetermined", "-1.5% .. +77.3% straddles 5%: undetermined");
	lacks(st, "at least", "...and claims no lower bound");

	/* the whole interval above 5%: at least its lower end */
	v = an_overhead_sentence("full", 20.0, 12.0, 30.1, 5.0, st, sizeof(st));
	is_str(v, "above", "+12.0% .. +30.1% is above the 5% level");
	has(st, "mode full adds at least 12.0% wall time", "...at least the interval's lower end");
	has(st, "more than 5%", "...so more than 5%");
}

static void test_effect(void)
{
	char st[300];
	const char *v;

	/* inside +-2%, significant or not: no practical difference */
	v = an_effect_verdict(-1.5, 1.8, false, 2.0, st, sizeof(st));
	is_str(v, "no-practical-difference", "-1.5% .. +1.8% within +-2%: no practical difference");
	v = an_effect_verdict(0.3, 1.1, true, 2.0, st, sizeof(st));
	is_str(v, "no-practical-difference", "a significant +0.3% .. +1.1% is still no practical difference");
	has(st, "significant, but smaller than the minimum effect", "...and says it was significant");

	/* significant and wholly beyond the threshold: at least the near end */
	v = an_effect_verdict(7.2, 12.5, true, 2.0, st, sizeof(st));
	is_str(v, "higher", "+7.2% .. +12.5%, significant: higher");
	has(st, "higher in B by at least 7.2%", "...by at least the interval's lower end");
	v = an_effect_verdict(-9.0, -3.1, true, 2.0, st, sizeof(st));
	is_str(v, "lower", "-9.0% .. -3.1%, significant: lower");
	has(st, "lower in B by at least 3.1%", "...by at least the interval's upper end");

	/* significant, but the interval reaches into the band */
	v = an_effect_verdict(0.8, 6.0, true, 2.0, st, sizeof(st));
	is_str(v, "higher-maybe-below-min-effect", "+0.8% .. +6.0%, significant: may be below the minimum");
	has(st, "significant, but may be below the 2% minimum effect", "...in those words");
	v = an_effect_verdict(-6.0, -0.8, true, 2.0, st, sizeof(st));
	is_str(v, "lower-maybe-below-min-effect", "-6.0% .. -0.8%, significant: may be below the minimum");

	/* the interval holds 0: not significant, with what it cannot rule out */
	v = an_effect_verdict(-3.1, 4.5, false, 2.0, st, sizeof(st));
	is_str(v, "no-significant-difference", "-3.1% .. +4.5%: no significant difference");
	has(st, "cannot rule out -3.1% .. +4.5%", "...and what it cannot rule out");
	/* excluding 0 without the rank test's agreement is not significant */
	v = an_effect_verdict(3.0, 9.0, false, 2.0, st, sizeof(st));
	is_str(v, "no-significant-difference", "+3.0% .. +9.0% that the rank test does not confirm: not significant");

	/* a minimum effect of 0: significance alone decides */
	v = an_effect_verdict(0.1, 0.4, true, 0.0, st, sizeof(st));
	is_str(v, "higher", "with --min-effect 0 a significant +0.1% .. +0.4% is higher");
}

int main(void)
{
	test_overhead();
	test_effect();
	return done_testing();
}
