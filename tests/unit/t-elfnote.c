/*
 * t-elfnote: the ELF build-id note reader (lib/elfnote.c) on real objects
 * built here by cc and ld, against what binutils' `readelf -n` reads in
 * the same files: every --build-id style (sha1, md5, uuid, 0xHEX), a
 * separate debug file (objcopy --only-keep-debug, notes in SHT_NOTE
 * sections), an object built without a build-id (PMU_ERR_NOTFOUND), a
 * file that is not ELF and one cut short (PMU_ERR_CORRUPT), and the
 * 32-bit form where the toolchain can build it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfnote.h"
#include "error.h"
#include "tap.h"

static char dir[] = "/tmp/t-elfnote.XXXXXX";

static long p_read(void *ctx, void *buf, size_t n, uint64_t off)
{
	ssize_t r = pread(*(int *)ctx, buf, n, (off_t)off);

	return r < 0 ? -1 : (long)r;
}

/* pmu_elf_build_id() of path as hex in out (or ""), its error */
static int bid_of(const char *path, char *out, size_t outsz)
{
	unsigned char b[PMU_ELF_BID_MAX];
	struct stat st;
	size_t n = 0;
	int fd = open(path, O_RDONLY), err;

	out[0] = '\0';
	if (fd < 0 || fstat(fd, &st))
		return PMU_ERR_IO;
	err = pmu_elf_build_id(p_read, &fd, (uint64_t)st.st_size, b, &n);
	close(fd);
	for (size_t i = 0; !err && i < n && 2 * i + 2 < outsz; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
	return err;
}

/* readelf -n's "Build ID: HEX" of path, or "" */
static void readelf_bid(const char *path, char *out, size_t outsz)
{
	char cmd[600], line[512];
	FILE *p;

	out[0] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return;
	while (fgets(line, sizeof(line), p)) {
		char *s = strstr(line, "Build ID: ");

		if (s && !out[0])
			snprintf(out, outsz, "%.*s", (int)strcspn(s + 10, "\r\n"), s + 10);
	}
	pclose(p);
}

/* cc m.c -o out with ld's --build-id=style (and extra flags), in dir */
static int build(const char *out, const char *style, const char *extra)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "cc %s -o '%s/%s' '%s/m.c' -Wl,--build-id=%s 2>'%s/cc.err'", extra, dir, out, dir,
		 style, dir);
	return system(cmd);
}

int main(void)
{
	static const char *const styles[] = { "sha1", "md5", "uuid", "0x0123456789abcdef0123", "0xbeef" };
	char p[512], got[2 * PMU_ELF_BID_MAX + 1], want[256];
	FILE *f;

	if (system("command -v cc >/dev/null && command -v readelf >/dev/null && command -v objcopy >/dev/null")) {
		printf("1..0 # SKIP cc, readelf or objcopy (binutils) is not installed\n");
		return 0;
	}
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp: cannot make a scratch directory\n");
		return 1;
	}
	snprintf(p, sizeof(p), "%s/m.c", dir);
	f = fopen(p, "w");
	if (!f || fputs("int main(void) { return 0; }\n", f) < 0 || fclose(f)) {
		printf("Bail out! cannot write %s\n", p);
		return 1;
	}
	for (size_t i = 0; i < sizeof(styles) / sizeof(*styles); i++) {
		snprintf(p, sizeof(p), "%s/a.out", dir);
		if (build("a.out", styles[i], "")) {
			ok(0, "cc -Wl,--build-id=%s builds", styles[i]);
			continue;
		}
		/* ld writes 0xHEX's bytes as given, in a note whose descriptor
		 * is not padded to 4 bytes at the section's end, which readelf
		 * 2.40 refuses to print ("invalid namesz and/or descsz"); the
		 * reader takes it, as debuggers do */
		if (!strncmp(styles[i], "0x", 2))
			snprintf(want, sizeof(want), "%s", styles[i] + 2);
		else
			readelf_bid(p, want, sizeof(want));
		ok(bid_of(p, got, sizeof(got)) == 0 && want[0] && !strcmp(got, want),
		   "--build-id=%s: '%s', %s '%s'", styles[i], got, strncmp(styles[i], "0x", 2) ? "readelf -n" : "ld's",
		   want);
	}

	/* a separate debug file: the note in a SHT_NOTE section, the code NOBITS */
	{
		char cmd[1024];

		snprintf(cmd, sizeof(cmd), "objcopy --only-keep-debug '%s/a.out' '%s/a.debug'", dir, dir);
		ok(!build("a.out", "sha1", "-g") && !system(cmd), "cc -g and objcopy --only-keep-debug make a debug file");
	}
	snprintf(p, sizeof(p), "%s/a.debug", dir);
	readelf_bid(p, want, sizeof(want));
	ok(bid_of(p, got, sizeof(got)) == 0 && want[0] && !strcmp(got, want), "debug file: '%s', readelf -n '%s'", got,
	   want);

	/* no build-id at all */
	snprintf(p, sizeof(p), "%s/a.out", dir);
	if (!build("a.out", "none", "")) {
		readelf_bid(p, want, sizeof(want));
		ok(!want[0] && bid_of(p, got, sizeof(got)) == PMU_ERR_NOTFOUND,
		   "--build-id=none: PMU_ERR_NOTFOUND (readelf finds none either)");
	} else {
		ok(0, "cc -Wl,--build-id=none builds");
	}

	/* not ELF, and ELF cut short */
	snprintf(p, sizeof(p), "%s/m.c", dir);
	ok(bid_of(p, got, sizeof(got)) == PMU_ERR_CORRUPT, "a C source is not ELF: PMU_ERR_CORRUPT (%s)",
	   pmu_error_detail());
	{
		char cut[512], cmd[1024];

		snprintf(cmd, sizeof(cmd), "head -c 200 '%s/a.out' >'%s/cut'", dir, dir);
		ok(!build("a.out", "sha1", "") && !system(cmd), "an ELF cut at 200 bytes is made");
		snprintf(cut, sizeof(cut), "%s/cut", dir);
		ok(bid_of(cut, got, sizeof(got)) == PMU_ERR_CORRUPT, "an ELF cut at 200 bytes: PMU_ERR_CORRUPT (%s)",
		   pmu_error_detail());
	}

	/* 32-bit, where a multilib toolchain exists */
	snprintf(p, sizeof(p), "%s/a32", dir);
	if (build("a32", "sha1", "-m32")) {
		printf("ok %d - # SKIP cc -m32 cannot build here (no 32-bit libc)\n", ++tap_n);
	} else {
		readelf_bid(p, want, sizeof(want));
		ok(bid_of(p, got, sizeof(got)) == 0 && !strcmp(got, want), "ELF32: '%s', readelf -n '%s'", got, want);
	}

	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			printf("# could not remove %s\n", dir);
	}
	return done_testing();
}
