/*
 * thread-exec CMD [ARG...]: start a thread that waits, and exec CMD from a
 * second thread, not the leader: the kernel gives the exec'ing thread the
 * process id and ends the others (execve(2), ptrace(2) "execve under
 * ptrace").  A workload for the counting tests.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static char **cmd;

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
	execvp(cmd[0], cmd);
	perror("thread-exec: execvp");
	_exit(127);
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	if (argc < 2) {
		fprintf(stderr, "usage: thread-exec CMD [ARG...]\n");
		return 2;
	}
	cmd = argv + 1;
	if (pthread_create(&a, NULL, idle, NULL) || pthread_create(&b, NULL, run, NULL)) {
		perror("thread-exec: pthread_create");
		return 1;
	}
	pthread_join(b, NULL);
	return 1;
}
