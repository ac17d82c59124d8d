/* The event list's grammar (lib/perfev.c), platform-free: the generic
 * table, modifiers, raw selectors, PMU/TERMS/ syntax, list splitting and
 * repeats, through a resolver of the test's own.  What Linux makes of the
 * items is tests/unit/linux/t-perfev.c's. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "perfev.h"
#include "tap.h"
#include "util.h"

/* The test's platform: counts its calls and encodes an item as type 100 +
 * its kind (config as the grammar left it); "nothing" makes every item
 * unavailable (as the stub backend does), "refuse" fails items named
 * "cpu/bad=1/" as a platform refuses a term its PMU lacks. */
struct fake {
	int calls;
	bool nothing;
	char last_pmu[64], last_terms[256];
};

static int fake_resolve(void *ctx, struct pmu_evspec *s)
{
	struct fake *f = ctx;

	f->calls++;
	if (s->kind == PMU_EV_PMU) {
		snprintf(f->last_pmu, sizeof(f->last_pmu), "%s", s->pmu);
		snprintf(f->last_terms, sizeof(f->last_terms), "%s", s->terms);
		if (!strcmp(s->given, "cpu/bad=1/"))
			return pmu_error(PMU_ERR_INVAL, "unknown term 'bad' in '%s'", s->given);
	}
	if (f->nothing)
		return pmu_evspec_unavailable(s, "a remedy", "no platform for '%s'", s->given);
	s->type = 100 + s->kind;
	return 0;
}

static struct fake fk;
static struct pmu_evspec one;

static int parse1(const char *item)
{
	struct pmu_evspec *v = NULL;
	size_t n = 0;
	int err = pmu_evlist_parse_with(item, fake_resolve, &fk, &v, &n);

	memset(&one, 0, sizeof(one));
	if (!err && n == 1)
		one = v[0];
	else if (!err)
		err = 1;
	free(v);
	return err;
}

static void refused(const char *list, const char *want)
{
	struct pmu_evspec *v = (struct pmu_evspec *)1;
	size_t n = 99;
	int err = pmu_evlist_parse_with(list, fake_resolve, &fk, &v, &n);

	if (!ok(err == PMU_ERR_INVAL && !v && !n && strstr(pmu_error_detail(), want), "'%s' refused: %s", list, want))
		printf("#   got %s, detail '%s'\n", pmu_errname(err), pmu_error_detail());
}

static void test_table(void)
{
	size_t n = pmu_evtable_count(), ndef = 0, nsw = 0;
	struct pmu_evspec *v;
	size_t nv;

	ok(n >= 19 && pmu_evtable_get(n) == NULL, "the table has its rows, and past the end is NULL");
	for (size_t i = 0; i < n; i++) {
		const struct pmu_evdef *d = pmu_evtable_get(i);

		ok(strlen(d->description) > 10 && (!strcmp(d->unit, "ns") || !strcmp(d->unit, "count")) &&
		   (d->kind == PMU_EV_SOFTWARE || d->kind == PMU_EV_HARDWARE) && pmu_evtable_find(d->name) == d,
		   "row %zu '%s' is described, has a unit and a class, and is found by its name", i, d->name);
		/* software first: the class never goes back */
		if (d->kind == PMU_EV_SOFTWARE && nsw++ != i)
			ok(0, "software row '%s' after a hardware row", d->name);
		ndef += d->in_default;
	}
	ok(pmu_evtable_find("cs") == pmu_evtable_find("context-switches") && pmu_evtable_find("cyclez") == NULL,
	   "aliases find their row, an unknown name nothing");
	is_str(pmu_evkind_name(PMU_EV_SOFTWARE), "software", "kind name");
	is_str(pmu_evkind_name(PMU_EV_PMU), "pmu", "kind name");

	fk.calls = 0;
	is_int(pmu_evlist_defaults_with(fake_resolve, &fk, &v, &nv), 0, "defaults");
	ok(nv == ndef && fk.calls == (int)ndef, "one default per DEFAULT row (%zu), each resolved once", ndef);
	for (size_t i = 0; i < nv; i++)
		ok(v[i].generic && v[i].generic->in_default && !strcmp(v[i].name, v[i].generic->name) &&
		   !strcmp(v[i].given, v[i].name) && v[i].type == 100 + v[i].kind && v[i].available &&
		   v[i].on_pmu == (v[i].kind == PMU_EV_HARDWARE), "default '%s' is its row, resolved", v[i].name);
	free(v);
}

static void test_items(void)
{
	static const struct { const char *item, *name; enum pmu_evkind kind; bool eu, ek, eh, mod; } m[] = {
		{ "cycles", "cycles", PMU_EV_HARDWARE, false, false, false, false },
		{ "cpu-cycles:ku", "cycles:uk", PMU_EV_HARDWARE, false, false, true, true },
		{ "instructions:hku", "instructions:ukh", PMU_EV_HARDWARE, false, false, false, true },
		{ "cs:k", "context-switches:k", PMU_EV_SOFTWARE, true, false, true, true },
		{ "r04c2:k", "r4c2:k", PMU_EV_RAW, true, false, true, true },
		{ "rFFFFFFFFFFFFFFFF", "rffffffffffffffff", PMU_EV_RAW, false, false, false, false },
		{ "cpu/event=0x3c/u", "cpu/event=0x3c/u", PMU_EV_PMU, false, true, true, true },
		{ "pfm:INST_RETIRED:ANY_P", "pfm:INST_RETIRED:ANY_P", PMU_EV_PFM, false, false, false, false },
	};

	for (size_t i = 0; i < PMU_ARRAY_SIZE(m); i++) {
		if (!is_int(parse1(m[i].item), 0, m[i].item))
			continue;
		is_str(one.name, m[i].name, "display name");
		ok(one.kind == m[i].kind && one.modifier == m[i].mod && one.exclude_user == m[i].eu &&
		   one.exclude_kernel == m[i].ek && one.exclude_hv == m[i].eh && one.type == 100 + m[i].kind,
		   "'%s': kind %s, excludes user=%d kernel=%d hv=%d, resolved", m[i].item, pmu_evkind_name(m[i].kind),
		   m[i].eu, m[i].ek, m[i].eh);
	}
	is_int(parse1("r00000000000000000001"), 0, "leading zeros of a raw selector");
	ok(one.config == 1 && one.on_pmu && !strcmp(one.unit, "count"), "the selector is in config");
	is_int(parse1("task-clock"), 0, "a clock");
	ok(!strcmp(one.unit, "ns") && !one.on_pmu, "counts ns, off the PMU");
	is_int(parse1("cpu/event=0xc2,umask=0x4/"), 0, "a PMU item");
	ok(!strcmp(fk.last_pmu, "cpu") && !strcmp(fk.last_terms, "event=0xc2,umask=0x4"),
	   "reaches the resolver as PMU '%s' and terms '%s'", fk.last_pmu, fk.last_terms);

	refused("cycles:", "empty modifier in 'cycles:'");
	refused("cycles:x", "unknown modifier 'x' in 'cycles:x'");
	refused("cycles:uu", "modifier 'u' repeated");
	refused("r", "empty raw selector 'r'");
	refused("r04g2", "raw selector 'r04g2' has 'g', which is not a hex digit");
	refused("r10000000000000000", "wider than 64 bits");
	refused("cyclez", "unknown event 'cyclez' (did you mean 'cycles'?)");
	refused("frobnicate", "unknown event 'frobnicate' (not a generic name");
	refused("pfm:", "empty libpfm4 event name");
	refused("cpu//", "no terms");
	refused("cpu/event=1,,umask=1/", "empty term");
	refused("cpu/=1/", "bad term name ''");
	refused("cpu/event=0xzz/", "bad value '0xzz'");
	refused("cpu/event=1,event=2/", "term 'event' given twice");
	refused("./event=1/", "bad PMU name '.'");
	refused("cpu/event=1", "no closing '/'");
	refused("a/b/c/d/", "unexpected '/'");
	refused("cpu/event=0x3c/x", "unknown modifier 'x'");
	refused("cpu/bad=1/", "unknown term 'bad' in 'cpu/bad=1/'");
}

static void test_lists(void)
{
	struct pmu_evspec *v = NULL;
	size_t n = 0, len = 0;
	char big[8192];

	fk.calls = 0;
	is_int(pmu_evlist_parse_with(" cycles , cpu/a=1,b=2/\t,r1a8", fake_resolve, &fk, &v, &n), 0,
	       "a list with blanks and commas inside PMU/.../");
	ok(n == 3 && fk.calls == 3 && !strcmp(v[0].given, "cycles") && !strcmp(v[1].given, "cpu/a=1,b=2/") &&
	   !strcmp(v[2].given, "r1a8"), "three items, each resolved once");
	free(v);
	refused("", "empty event list");
	refused("cycles,,instructions", "empty item");
	refused("cycles,", "empty item");
	refused("cyc les", "has a space");
	refused("cycles,cpu-cycles", "event 'cpu-cycles' repeats 'cycles'");
	refused("r4c2,r04c2", "event 'r04c2' repeats 'r4c2'");
	refused("cycles:uk,cycles:ku", "repeats");
	is_int(pmu_evlist_parse_with("cycles,cycles:u", fake_resolve, &fk, &v, &n), 0,
	       "other privilege levels are no repeat");
	free(v);

	/* where nothing resolves (the stub backend), repeats are still seen */
	fk.nothing = true;
	refused("cycles,cpu-cycles", "repeats");
	refused("r4c2,r04c2", "repeats");
	is_int(parse1("cycles"), 0, "an item the platform cannot resolve is no list error");
	ok(!one.available && !strcmp(one.reason, "no platform for 'cycles'") && !strcmp(one.remedy, "a remedy"),
	   "it is unavailable with the reason and remedy");
	fk.nothing = false;

	memset(big, 'a', 300);
	big[300] = '\0';
	refused(big, "is longer than 255 characters");
	for (int i = 1; i <= PMU_EVLIST_MAX; i++)
		len += (size_t)snprintf(big + len, sizeof(big) - len, "%sr%x", i > 1 ? "," : "", i);
	is_int(pmu_evlist_parse_with(big, fake_resolve, &fk, &v, &n), 0, "64 events are allowed");
	ok(n == PMU_EVLIST_MAX && v[63].config == 64, "all 64 parsed");
	free(v);
	snprintf(big + len, sizeof(big) - len, ",r%x", PMU_EVLIST_MAX + 1);
	refused(big, "more than 64 events");
}

static void test_terms(void)
{
	struct pmu_evterm t[PMU_EVTERMS_MAX];
	char why[200], many[400];
	size_t nt, len = 0;

	is_int(pmu_evterms_split("event=0x3c,any,ldlat=30\n", t, &nt, why, sizeof(why)), 0, "terms split");
	ok(nt == 3 && t[0].value == 0x3c && t[0].has_value && !t[1].has_value && t[1].value == 1 && t[2].value == 30,
	   "values decimal and hex, a bare term is a flag, the newline ignored");
	for (int i = 0; i <= PMU_EVTERMS_MAX; i++)
		len += (size_t)snprintf(many + len, sizeof(many) - len, "%st%d", i ? "," : "", i);
	ok(pmu_evterms_split(many, t, &nt, why, sizeof(why)) == PMU_ERR_INVAL && strstr(why, "more than 32 terms"),
	   "at most 32 terms: %s", why);
	ok(pmu_evterms_split("a=18446744073709551616", t, &nt, why, sizeof(why)) == PMU_ERR_INVAL &&
	   strstr(why, "bad value"), "a value over 64 bits: %s", why);
}

int main(void)
{
	test_table();
	test_items();
	test_lists();
	test_terms();
	return done_testing();
}
