/*
 * thread-exec [-n N] CMD [ARG...]: start a thread that waits, and exec CMD
 * from a second thread, not the leader: the kernel gives the exec'ing
 * thread the process id and ends the others (execve(2), ptrace(2) "execve
 * under ptrace").  A workload for the counting and follower tests.
 *
 * -n N (N >= 1, default 1): N such execs in a row in the one process: the
 * first N-1 exec thread-exec itself again (/proc/self/exe) with -n one
 * less, the last one CMD.  Each swaps the exec'ing thread's tid with the
 * old leader's while that leader is still exiting (fs/exec.c de_thread(),
 * exchange_tids()): a race a follower must survive, repeated.
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char **cmd;
static long more; /* execs of thread-exec itself still to come before CMD */

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void *run(void *arg)
{
	(void)arg;
	if (more > 0) {
		char n[24];
		int argc = 0;

		while (cmd[argc])
			argc++;
		char **av = calloc((size_t)argc + 4, sizeof(*av));
		if (!av) {
			perror("thread-exec: calloc");
			_exit(127);
		}
		snprintf(n, sizeof(n), "%ld", more);
		av[0] = "thread-exec";
		av[1] = "-n";
		av[2] = n;
		memcpy(av + 3, cmd, ((size_t)argc + 1) * sizeof(*av));
		execv("/proc/self/exe", av);
		perror("thread-exec: execv /proc/self/exe");
		_exit(127);
	}
	execvp(cmd[0], cmd);
	perror("thread-exec: execvp");
	_exit(127);
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	int first = 1;
	long n = 1;

	if (argc > 2 && !strcmp(argv[1], "-n")) {
		char *end;

		n = strtol(argv[2], &end, 10);
		if (*end || n < 1 || n > INT_MAX) {
			fprintf(stderr, "thread-exec: -n: '%s' is not a count from 1\n", argv[2]);
			return 2;
		}
		first = 3;
	}
	if (argc <= first) {
		fprintf(stderr, "usage: thread-exec [-n N] CMD [ARG...]\n");
		return 2;
	}
	cmd = argv + first;
	more = n - 1;
	if (pthread_create(&a, NULL, idle, NULL) || pthread_create(&b, NULL, run, NULL)) {
		perror("thread-exec: pthread_create");
		return 1;
	}
	pthread_join(b, NULL);
	return 1;
}
