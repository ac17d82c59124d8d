/*
 * A well-behaved external collector for the tests, with ways to misbehave:
 *   test-collector [ok|hang|nohello|malformed|nobye|stranger|failed|flood] ROOT_PID
 * ok: hello, one instant record for the root at the current CLOCK_MONOTONIC,
 * then, once its input closes, stats and bye.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[1] : "ok";
	long root = atol(argv[argc - 1]);
	char buf[256];

	if (strcmp(mode, "nohello"))
		printf("{\"type\":\"hello\",\"name\":\"test-collector\",\"version\":\"1\",\"schema\":\"events\"}\n");
	if (!strcmp(mode, "malformed"))
		printf("{\"type\":\"record\",\n");
	printf("{\"type\":\"record\",\"t_ns\":%llu,\"pid\":%ld,\"tid\":%ld,\"name\":\"seen\",\"ph\":\"i\",\"value\":1}\n",
	       now_ns(), !strcmp(mode, "stranger") ? 1L : root, !strcmp(mode, "stranger") ? 1L : root);
	fflush(stdout);
	/* flood: records about the root until the input closes */
	while (!strcmp(mode, "flood")) {
		struct pollfd p = { 0, POLLIN, 0 };

		for (int i = 0; i < 1000; i++)
			printf("{\"type\":\"record\",\"t_ns\":%llu,\"pid\":%ld,\"tid\":%ld,\"name\":\"tick\",\"ph\":\"i\"}\n",
			       now_ns(), root, root);
		fflush(stdout);
		if (poll(&p, 1, 0) > 0)
			break;
	}
	while (fgets(buf, sizeof(buf), stdin))
		;
	if (!strcmp(mode, "hang"))
		for (;;)
			pause();
	printf("{\"type\":\"stats\",\"dropped\":0}\n");
	if (strcmp(mode, "nobye"))
		printf("{\"type\":\"bye\",\"status\":\"%s\"%s}\n", !strcmp(mode, "failed") ? "failed" : "ok",
		       !strcmp(mode, "failed") ? ",\"reason\":\"asked to fail\"" : "");
	return 0;
}
