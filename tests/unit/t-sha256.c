/* SHA-256 through EVP: FIPS 180-2 vectors, and file == buffer digests. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "sha256.h"
#include "tap.h"

int main(void)
{
	char hex[PMU_SHA256_HEX], hex2[PMU_SHA256_HEX], path[] = "/tmp/t-sha256.XXXXXX";
	uint64_t size = 0;
	size_t big = (3u << 20) + 12345; /* crosses the 1 MiB read blocks */
	char *buf = malloc(big);
	int fd;

	is_int(pmu_sha256_buf("", 0, hex), 0, "empty input");
	is_str(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "SHA-256('')");
	pmu_sha256_buf("abc", 3, hex);
	is_str(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "SHA-256('abc')");
	for (size_t i = 0; i < big; i++)
		buf[i] = (char)(i * 2654435761u >> 13);
	fd = mkstemp(path);
	ok(fd >= 0 && write(fd, buf, big) == (ssize_t)big, "temporary file written");
	close(fd);
	is_int(pmu_sha256_file(AT_FDCWD, path, hex, &size), 0, "file digest");
	is_int((long long)size, (long long)big, "file size reported");
	pmu_sha256_buf(buf, big, hex2);
	is_str(hex, hex2, "file digest equals buffer digest");
	ok(pmu_sha256_file(AT_FDCWD, "/nonexistent/x", hex, NULL) < 0, "missing file is an error");
	unlink(path);
	free(buf);
	return done_testing();
}
