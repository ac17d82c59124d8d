/*
 * writer: workloads for the OS-event collectors (syscalls, sched).
 *
 *   writer FILE            fork a child that opens FILE, writes 3 x 4096
 *                          bytes, fsyncs and closes it; the parent waits.
 *                          The child prints its pid on stdout.
 *   writer --loop N        N times: openat /etc/hostname, read, close (the
 *                          syscall-bound loop of the benchmarks).
 *   writer --null N        N times: getppid() (the cheapest call).
 *   writer --fdatasync FILE N
 *                          N times: pwrite 512 bytes at 0 and fdatasync.
 *   writer --fds           fd identity cases: dup2 onto stdout, a pipe
 *                          between two children (cat), an fd kept across
 *                          exec and one closed by O_CLOEXEC, ENOENT, a
 *                          file renamed while open, then written.  Uses
 *                          $TMPDIR (default /tmp).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int die(const char *what)
{
	perror(what);
	return 1;
}

static int child_write(const char *path)
{
	char buf[4096];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		return die(path);
	memset(buf, 'w', sizeof(buf));
	for (int i = 0; i < 3; i++)
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return die("write");
	if (fsync(fd))
		return die("fsync");
	return close(fd) ? die("close") : 0;
}

static int wait_ok(pid_t p)
{
	int st;

	if (waitpid(p, &st, 0) != p)
		return die("waitpid");
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

static int fds(void)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char a[4096], b[4096];
	int p[2], fd, keep, cloexec;
	pid_t c1, c2;

	/* ENOENT, counted as an error */
	if (open("/nonexistent/pmu-writer", O_RDONLY) >= 0 || errno != ENOENT)
		return die("open of a missing file succeeded");
	/* a file renamed while open keeps its identity */
	snprintf(a, sizeof(a), "%s/pmu-writer-a.%d", tmp, (int)getpid());
	snprintf(b, sizeof(b), "%s/pmu-writer-b.%d", tmp, (int)getpid());
	fd = open(a, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return die(a);
	if (rename(a, b))
		return die("rename");
	if (write(fd, "renamed\n", 8) != 8)
		return die("write");
	/* dup2 onto stdout: the write goes to the file */
	fflush(stdout);
	int saved = dup(1);
	if (saved < 0 || dup2(fd, 1) != 1)
		return die("dup2");
	if (write(1, "via-stdout\n", 11) != 11)
		return die("write");
	if (dup2(saved, 1) != 1 || close(saved))
		return die("dup2 back");
	/* an fd kept across exec, one closed by O_CLOEXEC */
	keep = open(b, O_RDONLY);
	cloexec = open(b, O_RDONLY | O_CLOEXEC);
	if (keep < 0 || cloexec < 0)
		return die("open");
	if ((c1 = fork()) == 0) {
		char arg[64];

		snprintf(arg, sizeof(arg), "/proc/self/fd/%d", keep);
		execl("/bin/cat", "cat", arg, (char *)NULL);
		_exit(127);
	}
	if (c1 < 0 || wait_ok(c1))
		return die("cat of the kept fd");
	close(keep);
	close(cloexec);
	/* a pipe between two children */
	if (pipe(p))
		return die("pipe");
	if ((c1 = fork()) == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execl("/bin/echo", "echo", "through-the-pipe", (char *)NULL);
		_exit(127);
	}
	if ((c2 = fork()) == 0) {
		dup2(p[0], 0);
		close(p[0]);
		close(p[1]);
		execl("/bin/cat", "cat", (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	close(p[1]);
	if (c1 < 0 || c2 < 0 || wait_ok(c1) || wait_ok(c2))
		return die("pipe children");
	close(fd);
	unlink(b);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--loop")) {
		long n = strtol(argv[2], NULL, 10);
		char buf[256];

		for (long i = 0; i < n; i++) {
			int fd = open("/etc/hostname", O_RDONLY);

			if (fd < 0)
				return die("/etc/hostname");
			if (read(fd, buf, sizeof(buf)) < 0)
				return die("read");
			close(fd);
		}
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--null")) {
		long n = strtol(argv[2], NULL, 10);

		for (long i = 0; i < n; i++)
			(void)getppid();
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "--fdatasync")) {
		long n = strtol(argv[3], NULL, 10);
		char buf[512];
		int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd < 0)
			return die(argv[2]);
		memset(buf, 's', sizeof(buf));
		for (long i = 0; i < n; i++)
			if (pwrite(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf) || fdatasync(fd))
				return die("pwrite/fdatasync");
		return close(fd) ? die("close") : 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--fds"))
		return fds();
	if (argc == 2 && argv[1][0] != '-') {
		pid_t c = fork();

		if (c < 0)
			return die("fork");
		if (c == 0)
			_exit(child_write(argv[1]));
		printf("%d\n", (int)c);
		return wait_ok(c);
	}
	fprintf(stderr, "usage: writer FILE | --loop N | --null N | --fdatasync FILE N | --fds\n");
	return 2;
}
