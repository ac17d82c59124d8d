/*
 * sync-writes FILE N: write 512 bytes to FILE and fdatasync(2) it, N times,
 * then remove FILE and exit 0.  A workload that spends most of its wall
 * time off-CPU, blocked in the device's flush (on a disk-backed file
 * system: on tmpfs fdatasync returns at once), for the wall-time tests.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char buf[512];
	long n;
	int fd;

	if (argc != 3 || (n = strtol(argv[2], NULL, 10)) < 1) {
		fprintf(stderr, "usage: sync-writes FILE N\n");
		return 2;
	}
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	memset(buf, 'x', sizeof(buf));
	for (long i = 0; i < n; i++)
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf) || fdatasync(fd)) {
			perror(argv[1]);
			return 1;
		}
	close(fd);
	unlink(argv[1]);
	return 0;
}
