#ifndef PMU_TAP_H
#define PMU_TAP_H
/*
 * Minimal TAP producer for the C unit tests: each ok()/is_*() is one test
 * point; done_testing() prints the plan and returns the exit status.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

__attribute__((format(printf, 2, 3), unused))
static int ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond)
		tap_failed++;
	fflush(stdout);
	return cond;
}

__attribute__((unused))
static int is_int(long long got, long long want, const char *what)
{
	int r = ok(got == want, "%s", what);

	if (!r)
		printf("#   got %lld, want %lld\n", got, want);
	return r;
}

__attribute__((unused))
static int is_str(const char *got, const char *want, const char *what)
{
	int r = ok(got && want && !strcmp(got, want), "%s", what);

	if (!r)
		printf("#   got '%s', want '%s'\n", got ? got : "(null)", want ? want : "(null)");
	return r;
}

__attribute__((format(printf, 1, 2), unused))
static void skip(const char *fmt, ...)
{
	va_list ap;

	printf("ok %d # SKIP ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

__attribute__((unused))
static int done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
