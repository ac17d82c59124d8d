/*
 * analyze/symbolize.c against real binaries: the test workload (build/hot,
 * build/hot-nofp, build/libhot.so, built -g -O2) running as real processes,
 * their /proc/PID/maps written as a bundle's maps stream, and binutils'
 * addr2line as the independent oracle for functions, file:line and inline
 * chains.  Then the lookup order: the bundle's retained copy, the host's
 * /usr/lib/debug (PMU_DEBUG_ROOT), a rebuilt binary (stale, never named),
 * a missing one; kernel addresses; a C++ binary (demangling); and DWARF
 * unwinding of a stopped hot-nofp from its registers and stack copy.
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bundle.h"
#include "symbolize.h"
#include "tap.h"

static const char *build;
static char tmp[64];
static FILE *maps;

static int sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static bool build_id_of(const char *path, char *out, size_t len)
{
	int fd = open(path, O_RDONLY);
	Elf *e;
	const void *p;
	ssize_t n;

	if (fd < 0)
		return false;
	e = elf_begin(fd, ELF_C_READ, NULL);
	n = e ? dwelf_elf_gnu_build_id(e, &p) : -1;
	if (n > 0 && (size_t)n * 2 < len)
		for (ssize_t i = 0; i < n; i++)
			sprintf(out + 2 * i, "%02x", ((const unsigned char *)p)[i]);
	if (e)
		elf_end(e);
	close(fd);
	return n > 0;
}

/* the value and size of symbol name in path's .symtab; the file offset to
 * p_vaddr delta of the executable segment */
static bool elf_sym(const char *path, const char *name, uint64_t *value, uint64_t *size)
{
	int fd = open(path, O_RDONLY);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	Elf_Scn *scn = NULL;
	bool found = false;

	while (e && !found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (gelf_getsym(d, (int)i, &s) && (n = elf_strptr(e, sh.sh_link, s.st_name)) &&
			    !strcmp(n, name) && GELF_ST_TYPE(s.st_info) == STT_FUNC) {
				*value = s.st_value;
				*size = s.st_size;
				found = true;
				break;
			}
		}
	}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return found;
}

/* the p_vaddr of file offset off (its PT_LOAD) */
static uint64_t off_vaddr(const char *path, uint64_t off)
{
	int fd = open(path, O_RDONLY);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	size_t n = 0;
	uint64_t v = off;

	if (e && elf_getphdrnum(e, &n) == 0)
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && off >= (ph.p_offset & ~0xfffull) &&
			    off < ph.p_offset + ph.p_filesz) {
				v = off - ph.p_offset + ph.p_vaddr;
				break;
			}
		}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return v;
}

/* the file offset of ELF address v */
static uint64_t vaddr_off(const char *path, uint64_t v)
{
	int fd = open(path, O_RDONLY);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	size_t n = 0;
	uint64_t off = v;

	if (e && elf_getphdrnum(e, &n) == 0)
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && v >= ph.p_vaddr &&
			    v < ph.p_vaddr + ph.p_filesz) {
				off = v - ph.p_vaddr + ph.p_offset;
				break;
			}
		}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return off;
}

struct xmap {
	uint64_t start, end, pgoff;
	char path[512];
};

/* the executable file maps of pid, written as map records of inc */
static int record_maps(pid_t pid, const char *inc, struct xmap *xm, int max)
{
	char p[64], line[1024];
	FILE *f;
	int n = 0;

	snprintf(p, sizeof(p), "/proc/%d/maps", (int)pid);
	f = fopen(p, "r");
	while (f && fgets(line, sizeof(line), f) && n < max) {
		unsigned long long s, e, off;
		char perm[8], path[512] = "", bid[128] = "";
		int pos = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s%n", &s, &e, perm, &off, &pos) < 4 || perm[2] != 'x')
			continue;
		if (sscanf(line + pos, " %511s", path) != 1 || path[0] != '/')
			continue;
		xm[n] = (struct xmap){ s, e, off, "" };
		snprintf(xm[n].path, sizeof(xm[n].path), "%s", path);
		n++;
		if (build_id_of(path, bid, sizeof(bid)))
			fprintf(maps, "{\"type\":\"map\",\"t_ns\":1000,\"inc\":\"%s\",\"pid\":%d,\"tid\":%d,\"start\":\"0x%llx\","
				      "\"end\":\"0x%llx\",\"pgoff\":\"0x%llx\",\"path\":\"%s\",\"build_id\":\"%s\","
				      "\"build_id_source\":\"file\",\"origin\":\"proc-maps\"}\n",
				inc, (int)pid, (int)pid, s, e, off, path, bid);
	}
	if (f)
		fclose(f);
	return n;
}

static pid_t start(const char *exe)
{
	pid_t pid = fork();
	char p[64], line[1024];

	if (pid == 0) {
		execl(exe, exe, "1000000", (char *)NULL);
		_exit(127);
	}
	/* until the dynamic linker has mapped libhot.so */
	snprintf(p, sizeof(p), "/proc/%d/maps", (int)pid);
	for (int i = 0; i < 200; i++) {
		FILE *f = fopen(p, "r");
		bool lib = false;

		while (f && fgets(line, sizeof(line), f))
			lib |= strstr(line, "libhot.so") && strstr(line, "r-xp");
		if (f)
			fclose(f);
		if (lib)
			break;
		usleep(10000);
	}
	usleep(50000);
	return pid;
}

/* the runtime address of ELF address v of path in the maps */
static uint64_t runtime(const struct xmap *xm, int n, const char *path, uint64_t v)
{
	for (int i = 0; i < n; i++) {
		uint64_t base;

		if (strcmp(xm[i].path, path))
			continue;
		base = off_vaddr(path, xm[i].pgoff);
		if (v >= base && v - base < xm[i].end - xm[i].start)
			return xm[i].start + (v - base);
	}
	return 0;
}

/* addr2line's inline chain of ELF address v: funcs/lines, innermost first */
struct oracle {
	int n;
	char func[8][512];
	int line[8];
};

static void addr2line(const char *path, uint64_t v, struct oracle *o)
{
	char cmd[1024], buf[512];
	FILE *p;

	o->n = 0;
	snprintf(cmd, sizeof(cmd), "addr2line -f -i -e '%s' 0x%llx", path, (unsigned long long)v);
	p = popen(cmd, "r");
	while (p && o->n < 8 && fgets(buf, sizeof(buf), p)) {
		char *colon;

		buf[strcspn(buf, "\n")] = '\0';
		snprintf(o->func[o->n], sizeof(o->func[0]), "%s", buf);
		if (!fgets(buf, sizeof(buf), p))
			break;
		colon = strrchr(buf, ':');
		o->line[o->n] = colon ? atoi(colon + 1) : 0;
		o->n++;
	}
	if (p)
		pclose(p);
}

/* Our frames of runtime address a equal addr2line's of ELF address v. */
static bool same_as_oracle(struct pmu_sym *s, const char *inc, const char *path, uint64_t a, uint64_t v, bool ra,
			   bool verbose)
{
	struct pmu_frame f[8];
	struct oracle o;
	size_t n = pmu_sym_frames(s, inc, 2000, a, ra, false, f, 8);
	bool same;

	addr2line(path, ra ? v - 1 : v, &o);
	same = (int)n == o.n;
	for (int i = 0; same && i < o.n; i++)
		same = f[i].status == PMU_FRAME_OK && f[i].func && !strcmp(f[i].func, o.func[i]) &&
		       f[i].line == o.line[i] && f[i].inlined == (i + 1 < o.n);
	if (!same && verbose) {
		printf("#   0x%llx: ours", (unsigned long long)v);
		for (size_t i = 0; i < n; i++)
			printf(" %s:%d%s", f[i].func ? f[i].func : f[i].why, f[i].line, f[i].inlined ? "(i)" : "");
		printf("; addr2line");
		for (int i = 0; i < o.n; i++)
			printf(" %s:%d", o.func[i], o.line[i]);
		printf("\n");
	}
	return same;
}

static struct pmu_sym *sym_open(struct pmu_bundle *b)
{
	struct pmu_sym *s = NULL;
	int r = pmu_sym_new(&s, b, 1);

	if (r)
		printf("# pmu_sym_new: %d\n", r);
	return s;
}

static void one_frame(struct pmu_sym *s, const char *inc, uint64_t a, struct pmu_frame *f)
{
	struct pmu_frame fr[8];
	size_t n = pmu_sym_frames(s, inc, 2000, a, false, false, fr, 8);

	*f = fr[n - 1];
}

/* base64 of len bytes */
static char *b64(const unsigned char *p, size_t len)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *o = malloc(len / 3 * 4 + 5), *q = o;

	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < len ? (uint32_t)p[i + 1] << 8 : 0) |
			     (i + 2 < len ? p[i + 2] : 0);

		*q++ = t[v >> 18 & 63];
		*q++ = t[v >> 12 & 63];
		*q++ = i + 1 < len ? t[v >> 6 & 63] : '=';
		*q++ = i + 2 < len ? t[v & 63] : '=';
	}
	*q = '\0';
	return o;
}

int main(void)
{
	char hot[256], lib[256], nofp[256], bundle[256], bid[128], libbid[128], p[1024];
	struct xmap xm[32], xn[32];
	int nx, nn;
	pid_t pid, npid;
	uint64_t v, size, a, hl;
	struct pmu_bundle b = { .rootfd = -1 };
	struct pmu_sym *s;
	struct pmu_frame f[8];
	size_t n;
	char *regs = NULL, *stack = NULL, *arm_regs = NULL, *arm_stack = NULL;
	bool have_unwind = false;

	build = getenv("PMU_BUILD") ? getenv("PMU_BUILD") : "build";
	elf_version(EV_CURRENT);
	snprintf(tmp, sizeof(tmp), "/tmp/t-symbolize.XXXXXX");
	if (!mkdtemp(tmp) || sh("command -v addr2line >/dev/null && test -x %s/hot", build)) {
		skip("no temporary directory, no addr2line (binutils) or no %s/hot", build);
		return done_testing();
	}
	snprintf(hot, sizeof(hot), "%s/hot", tmp);
	snprintf(lib, sizeof(lib), "%s/libhot.so", tmp);
	snprintf(nofp, sizeof(nofp), "%s/hot-nofp", tmp);
	snprintf(bundle, sizeof(bundle), "%s/b", tmp);
	sh("cp %s/hot %s/hot-nofp %s/libhot.so %s/ && mkdir -p %s/data/collectors/sampling %s/data/build-id",
	   build, build, build, tmp, bundle, bundle);
	build_id_of(hot, bid, sizeof(bid));
	build_id_of(lib, libbid, sizeof(libbid));
	snprintf(p, sizeof(p), "%s/data/collectors/sampling/maps.jsonl", bundle);
	maps = fopen(p, "w");
	fprintf(maps, "{\"type\":\"kmap\",\"start\":\"0xffffffff81000000\",\"end\":\"0xffffffff82000000\"}\n");

	/* the workload, running: its maps as recorded at attach */
	pid = start(hot);
	nx = record_maps(pid, "hot", xm, 32);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);

	/* hot-nofp stopped in its loop: registers and stack copy, as a
	 * call_graph dwarf sample has them (perf's x86_64 register order) */
	npid = start(nofp);
	nn = record_maps(npid, "nofp", xn, 32);
	/* 70 more incarnations with that address space: more unwinders than
	 * the symbolizer keeps (it frees the least recently used) */
	for (int k = 0; k < 70; k++) {
		char inc[32];
		struct xmap tmpm[32];

		snprintf(inc, sizeof(inc), "nofp%d", k);
		record_maps(npid, inc, tmpm, 32);
	}
#ifdef __x86_64__
	if (ptrace(PTRACE_SEIZE, npid, 0, 0) == 0 && ptrace(PTRACE_INTERRUPT, npid, 0, 0) == 0 &&
	    waitpid(npid, NULL, __WALL) == npid) {
		struct user_regs_struct r;
		unsigned char buf[16384];
		ssize_t got = 0;
		int mfd;

		snprintf(p, sizeof(p), "/proc/%d/mem", (int)npid);
		mfd = open(p, O_RDONLY);
		if (ptrace(PTRACE_GETREGS, npid, 0, &r) == 0 && mfd >= 0) {
			/* up to the end of the stack mapping, as the kernel's
			 * copy for PERF_SAMPLE_STACK_USER is cut there */
			size_t want = sizeof(buf);
			char mp[64], ln[512];
			FILE *mf;

			snprintf(mp, sizeof(mp), "/proc/%d/maps", (int)npid);
			mf = fopen(mp, "r");
			while (mf && fgets(ln, sizeof(ln), mf)) {
				unsigned long long lo, hi;

				if (sscanf(ln, "%llx-%llx", &lo, &hi) == 2 && r.rsp >= lo && r.rsp < hi && hi - r.rsp < want)
					want = hi - r.rsp;
			}
			if (mf)
				fclose(mf);
			got = pread(mfd, buf, want, (off_t)r.rsp);
			regs = malloc(512);
			snprintf(regs, 512,
				 "0x%llx 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx "
				 "0x%llx 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx",
				 r.rax, r.rbx, r.rcx, r.rdx, r.rsi, r.rdi, r.rbp, r.rsp, r.rip, r.r8, r.r9, r.r10, r.r11,
				 r.r12, r.r13, r.r14, r.r15);
			stack = b64(buf, (size_t)got);
			have_unwind = got > 0;
		}
		if (mfd >= 0)
			close(mfd);
	}
#endif
	kill(npid, SIGKILL);
	waitpid(npid, NULL, 0);

	/* a map without a build-id, a C++ binary at its link-time layout */
	fprintf(maps, "{\"type\":\"map\",\"t_ns\":1000,\"inc\":\"hot\",\"pid\":1,\"tid\":1,\"start\":\"0x10000\",\"end\":\"0x20000\","
		      "\"pgoff\":\"0x0\",\"path\":\"/nowhere/x\",\"build_id_reason\":\"test: the file has no build-id note\","
		      "\"origin\":\"proc-maps\"}\n");
	{
		char cxx[300], cbid[128];

		char src[300];
		FILE *cf;

		snprintf(cxx, sizeof(cxx), "%s/cxx", tmp);
		snprintf(src, sizeof(src), "%s/cxx.cc", tmp);
		cf = fopen(src, "w");
		/* a C++ method, and a function under a Rust (legacy) mangled name */
		fprintf(cf, "namespace ns { struct K { __attribute__((noinline)) static int f(int x) { return x * 3 + 1; } }; }\n"
			    "extern \"C\" __attribute__((noinline)) int rs(int x) __asm__(\"_ZN4core3fmt5write17h0123456789abcdefE\");\n"
			    "int rs(int x) { return x * 5 + 2; }\n"
			    "int main(int c, char **) { return ns::K::f(c) + rs(c); }\n");
		fclose(cf);
		if (!sh("command -v g++ >/dev/null && g++ -g -O1 -o %s %s", cxx, src) && build_id_of(cxx, cbid, sizeof(cbid)))
			fprintf(maps, "{\"type\":\"map\",\"t_ns\":1000,\"inc\":\"cxx\",\"pid\":2,\"tid\":2,\"start\":\"0x7f0000000000\","
				      "\"end\":\"0x7f0000100000\",\"pgoff\":\"0x0\",\"path\":\"%s\",\"build_id\":\"%s\","
				      "\"origin\":\"proc-maps\"}\n", cxx, cbid);
	}
	/* an aarch64 program stopped three calls deep, under qemu-aarch64:
	 * its registers, stack copy and maps (tests/helpers/unwind-arm64.c) */
	if (!sh("command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64 >/dev/null && aarch64-linux-gnu-gcc -std=gnu11 -g -O2 "
		"-fomit-frame-pointer -static -o %s/ua tests/helpers/unwind-arm64.c && qemu-aarch64 %s/ua >%s/ua.out",
		tmp, tmp, tmp)) {
		char ln[40000], path[512], abid[128];
		FILE *uo;

		snprintf(p, sizeof(p), "%s/ua.out", tmp);
		uo = fopen(p, "r");
		while (uo && fgets(ln, sizeof(ln), uo)) {
			unsigned long long st, en, off;

			ln[strcspn(ln, "\n")] = '\0';
			if (sscanf(ln, "map %llx %llx %llx %511s", &st, &en, &off, path) == 4 &&
			    build_id_of(path, abid, sizeof(abid)))
				fprintf(maps, "{\"type\":\"map\",\"t_ns\":1000,\"inc\":\"arm64\",\"pid\":3,\"tid\":3,\"start\":\"0x%llx\","
					      "\"end\":\"0x%llx\",\"pgoff\":\"0x%llx\",\"path\":\"%s\",\"build_id\":\"%s\","
					      "\"origin\":\"proc-maps\"}\n", st, en, off, path, abid);
			else if (!strncmp(ln, "regs ", 5))
				arm_regs = strdup(ln + 5);
			else if (!strncmp(ln, "stack ", 6)) {
				size_t nb = strlen(ln + 6) / 2;
				unsigned char *bytes = malloc(nb + 1);

				for (size_t i = 0; i < nb; i++) {
					unsigned x;

					sscanf(ln + 6 + 2 * i, "%2x", &x);
					bytes[i] = (unsigned char)x;
				}
				arm_stack = b64(bytes, nb);
				free(bytes);
			}
		}
		if (uo)
			fclose(uo);
	}
	/* the same range mapped twice (munmap, then another mmap): the map
	 * seen by the sample's time decides */
	fprintf(maps, "{\"type\":\"map\",\"t_ns\":1000,\"inc\":\"remap\",\"pid\":5,\"tid\":5,\"start\":\"0x50001000\","
		      "\"end\":\"0x50002000\",\"pgoff\":\"0x%llx\",\"path\":\"%s\",\"build_id\":\"%s\",\"origin\":\"mmap2\"}\n",
		(unsigned long long)vaddr_off(hot, 0x1000), hot, bid);
	fprintf(maps, "{\"type\":\"map\",\"t_ns\":5000,\"inc\":\"remap\",\"pid\":5,\"tid\":5,\"start\":\"0x50001000\","
		      "\"end\":\"0x50002000\",\"pgoff\":\"0x1000\",\"path\":\"%s\",\"build_id\":\"%s\",\"origin\":\"mmap2\"}\n",
		lib, libbid);
	/* an object that pmurec did not retain, and said why */
	fprintf(maps, "{\"type\":\"map\",\"t_ns\":1000,\"inc\":\"hot\",\"pid\":1,\"tid\":1,\"start\":\"0x30000\",\"end\":\"0x40000\","
		      "\"pgoff\":\"0x0\",\"path\":\"/nowhere/gone.so\",\"build_id\":\"00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff\","
		      "\"origin\":\"proc-maps\"}\n");
	fprintf(maps, "{\"type\":\"unretained\",\"build_id\":\"00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff\","
		      "\"path\":\"/nowhere/gone.so\",\"reason\":\"test: over the size limit\"}\n");
	/* untrusted names: a build-id that would climb out of data/build-id,
	 * a retained file that would climb out of data/ */
	fprintf(maps, "{\"type\":\"map\",\"t_ns\":1000,\"inc\":\"hot\",\"pid\":1,\"tid\":1,\"start\":\"0x60000\",\"end\":\"0x70000\","
		      "\"pgoff\":\"0x0\",\"path\":\"/nowhere/evil\",\"build_id\":\"../../../../../../proc/self/exe\","
		      "\"origin\":\"proc-maps\"}\n");
	fprintf(maps, "{\"type\":\"retained\",\"kind\":\"jit-map\",\"path\":\"/tmp/perf-4343.map\","
		      "\"file\":\"../../../../../../etc/passwd\"}\n");
	/* a JIT's /tmp/perf-PID.map, retained */
	fprintf(maps, "{\"type\":\"map\",\"t_ns\":1000,\"inc\":\"jit\",\"pid\":4242,\"tid\":4242,\"start\":\"0x10000\","
		      "\"end\":\"0x20000\",\"pgoff\":\"0x0\",\"path\":\"/nowhere/jit\",\"build_id_reason\":\"test\","
		      "\"origin\":\"proc-maps\"}\n");
	fprintf(maps, "{\"type\":\"retained\",\"kind\":\"jit-map\",\"path\":\"/tmp/perf-4242.map\","
		      "\"file\":\"collectors/sampling/perf-4242.map\"}\n");
	fclose(maps);
	sh("printf '7f1000001040 20 LazyCompile:foo bar.js:3\\n7f1000001000 40 jitted_add\\n' >%s/data/collectors/sampling/perf-4242.map",
	   bundle);
	b.rootfd = open(bundle, O_RDONLY | O_DIRECTORY);

	elf_sym(hot, "hot_loop", &v, &size);
	hl = runtime(xm, nx, hot, v);

	/* ---- the recorded binaries, found by path and build-id ---- */
	s = sym_open(&b);
	ok(s != NULL, "pmu_sym_new reads the maps stream");
	if (!s)
		return done_testing();
	{
		int same = 0, total = 0, inl = 0, named = 0;

		ok(elf_sym(hot, "hot_loop", &v, &size) && (a = runtime(xm, nx, hot, v)) != 0, "hot_loop is mapped");
		for (uint64_t o = 0; o < size; o++) {
			bool eq = same_as_oracle(s, "hot", hot, a + o, v + o, false, same == total);

			n = pmu_sym_frames(s, "hot", 2000, a + o, false, false, f, 8);
			same += eq;
			total++;
			named += f[n - 1].func && !strcmp(f[n - 1].func, "hot_loop");
			inl += n == 2 && f[0].func && !strcmp(f[0].func, "mix") && f[0].inlined;
		}
		is_int(named, total, "every address of hot_loop is in hot_loop");
		is_int(same, total, "function, file:line and inline chain equal addr2line's at every address of hot_loop");
		ok(inl > 0, "the inline chain mix <- hot_loop shows (%d of %d addresses)", inl, total);
		n = pmu_sym_frames(s, "hot", 2000, a + size / 2, false, false, f, 8);
		ok(f[0].file && strstr(f[0].file, "tests/helpers/hot.c") && f[0].build_id && !strcmp(f[0].build_id, bid) &&
			   f[0].object && !strcmp(f[0].object, hot) && f[0].addr == a + size / 2 && f[0].rel == v + size / 2,
		   "file, build-id, object, addr and rel");

		same = total = 0;
		ok(elf_sym(lib, "lib_work", &v, &size) && (a = runtime(xm, nx, lib, v)) != 0, "lib_work (libhot.so) is mapped");
		for (uint64_t o = 0; o < size; o += 3, total++)
			same += same_as_oracle(s, "hot", lib, a + o, v + o, false, same == total);
		is_int(same, total, "lib_work: the same as addr2line in the shared library");
	}
	/* pc - 1: the return address after the call of hot_loop in run */
	{
		char cmd[512], line[256];
		FILE *po;
		unsigned long long ret = 0;

		snprintf(cmd, sizeof(cmd), "objdump -d --no-show-raw-insn '%s' | grep -A1 'call.*<hot_loop>' | tail -1", hot);
		po = popen(cmd, "r");
		if (po && fgets(line, sizeof(line), po))
			ret = strtoull(line, NULL, 16);
		if (po)
			pclose(po);
		if (!ret) {
			skip("no call of hot_loop found by objdump");
		} else {
			struct oracle o1, o2;

			addr2line(hot, ret - 1, &o1);
			addr2line(hot, ret, &o2);
			a = runtime(xm, nx, hot, ret);
			ok(same_as_oracle(s, "hot", hot, a, ret, true, true), "a return address is looked up at pc - 1 (line %d)",
			   o1.line[0]);
			ok(same_as_oracle(s, "hot", hot, a, ret, false, true) && o1.line[0] != o2.line[0],
			   "and the same address as a sampled ip is not (line %d)", o2.line[0]);
		}
	}
	/* the other statuses */
	one_frame(s, "hot", 0x10800, &f[0]);
	ok(f[0].status == PMU_FRAME_NOTFOUND && f[0].why && !strcmp(f[0].why, "test: the file has no build-id note") &&
		   !f[0].func,
	   "a map without build-id: its build_id_reason");
	one_frame(s, "hot", 0x8, &f[0]);
	ok(f[0].status == PMU_FRAME_UNMAPPED && f[0].why && !f[0].func, "an address in no map: unmapped (%s)", f[0].why);
	one_frame(s, "hot", 0x30010, &f[0]);
	is_str(f[0].why, "binary not found (build-id 00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff; not retained: test: over the size limit)",
	       "an object not found and not retained: the unretained record's reason");
	one_frame(s, "hot", 0x60010, &f[0]);
	ok(f[0].status == PMU_FRAME_NOTFOUND && f[0].why && strstr(f[0].why, "not lowercase hex") && !f[0].build_id,
	   "a build-id that is not hex names no file (%s)", f[0].why);
	one_frame(s, "jit", 0x7f1000001010ull, &f[0]);
	ok(f[0].status == PMU_FRAME_OK && f[0].func && !strcmp(f[0].func, "jitted_add") && f[0].object &&
		   !strcmp(f[0].object, "/tmp/perf-4242.map"),
	   "a JIT address: named from the retained perf-PID.map");
	one_frame(s, "jit", 0x7f1000001050ull, &f[0]);
	is_str(f[0].func, "LazyCompile:foo bar.js:3", "a JIT name with spaces");
	one_frame(s, "jit", 0x7f1000001060ull, &f[0]);
	ok(f[0].status == PMU_FRAME_UNMAPPED, "past the JIT map's last symbol: unmapped");
	/* a return address just past jitted_add (a call as its last
	 * instruction) is jitted_add's: looked up at pc - 1 */
	n = pmu_sym_frames(s, "jit", 2000, 0x7f1000001040ull, true, false, f, 8);
	is_str(n ? f[0].func : NULL, "jitted_add", "a JIT return address at the next symbol's start: pc - 1 names the caller");
	elf_sym(hot, "hot_loop", &v, &size);
	n = pmu_sym_frames(s, "remap", 2000, 0x50001000 + (v - 0x1000), false, false, f, 8);
	ok(f[n - 1].func && !strcmp(f[n - 1].func, "hot_loop") && !strcmp(f[n - 1].object, hot),
	   "a range mapped twice: before the second mmap, the first map's object");
	n = pmu_sym_frames(s, "remap", 6000, 0x50001000 + (v - 0x1000), false, false, f, 8);
	ok(f[n - 1].object && !strcmp(f[n - 1].object, lib) && (!f[n - 1].func || strcmp(f[n - 1].func, "hot_loop")),
	   "after it, the second's (%s)", f[n - 1].func ? f[n - 1].func : f[n - 1].why);
	n = pmu_sym_frames(s, "remap", 500, 0x50001000 + (v - 0x1000), false, false, f, 8);
	ok(f[0].status == PMU_FRAME_UNMAPPED && strstr(f[0].why, "precedes"), "before both (mmap2 maps): unmapped, and why");
	one_frame(s, "nosuchinc", a, &f[0]);
	ok(f[0].status == PMU_FRAME_UNMAPPED, "an incarnation without maps: unmapped");
	n = pmu_sym_frames(s, "hot", 2000, 0xffffffff81000150ull, false, true, f, 8);
	ok(n == 1 && f[0].status == PMU_FRAME_KERNEL && !f[0].func && f[0].why &&
		   !strcmp(f[0].why, "[kernel] (kallsyms not recorded)"),
	   "a kernel address without ksym records: [kernel] with the reason");
	pmu_sym_ksym(s, 0xffffffff81000100ull, "do_work");
	pmu_sym_ksym(s, 0xffffffff81000000ull, "_stext");
	pmu_sym_frames(s, "hot", 2000, 0xffffffff81000150ull, false, true, f, 8);
	ok(f[0].status == PMU_FRAME_KERNEL && f[0].func && !strcmp(f[0].func, "do_work"),
	   "a kernel address: the ksym at or below it");
	pmu_sym_frames(s, "hot", 2000, 0xffffffffc0001000ull, false, true, f, 8);
	ok(f[0].status == PMU_FRAME_KERNEL && !f[0].func, "a module address past the kmap is not named by a core ksym");
	snprintf(p, sizeof(p), "%s/cxx", tmp);
	if (access(p, X_OK) == 0) {
		struct pmu_frame cf;

		ok(elf_sym(p, "_ZN2ns1K1fEi", &v, &size), "the C++ binary has ns::K::f");
		one_frame(s, "cxx", 0x7f0000000000ull + vaddr_off(p, v), &cf);
		is_str(cf.func, "ns::K::f(int)", "C++ names are demangled");
		ok(elf_sym(p, "_ZN4core3fmt5write17h0123456789abcdefE", &v, &size), "the binary has a Rust-mangled name");
		one_frame(s, "cxx", 0x7f0000000000ull + vaddr_off(p, v), &cf);
		is_str(cf.func, "core::fmt::write", "Rust names are demangled");
	} else {
		skip("no g++: C++ demangling not tested");
		skip("no g++");
		skip("no g++");
		skip("no g++");
	}

	/* ---- DWARF unwinding of the stopped hot-nofp ---- */
	if (have_unwind) {
		uint64_t pcs[64];
		char why[256] = "";
		size_t np = pmu_sym_unwind(s, "nofp", 2000, "x86_64", 0xff01ffull, regs, stack, pcs, 64, why, sizeof(why));
		bool run_seen = false, main_seen = false, top_ok = false;

		for (size_t i = 0; i < np; i++) {
			struct pmu_frame uf[8];
			size_t k = pmu_sym_frames(s, "nofp", 2000, pcs[i], i > 0, false, uf, 8);
			const char *fn = uf[k - 1].func;

			printf("#   unwound %zu: 0x%llx %s\n", i, (unsigned long long)pcs[i], fn ? fn : uf[k - 1].why);
			if (i == 0)
				top_ok = fn && (!strcmp(fn, "hot_loop") || !strcmp(fn, "lib_work"));
			run_seen |= fn && !strcmp(fn, "run");
			main_seen |= fn && !strcmp(fn, "main");
		}
		ok(np >= 3 && top_ok && run_seen && main_seen,
		   "hot-nofp (no frame pointers) unwinds by DWARF CFI: hot_loop or lib_work <- run <- main (%zu pcs%s%s)", np,
		   why[0] ? "; " : "", why);
		{
			int good = 0;

			for (int round = 0; round < 2; round++)
				for (int k = 0; k < 70; k++) {
					char inc[32];
					uint64_t pc2[64];

					snprintf(inc, sizeof(inc), "nofp%d", k);
					good += pmu_sym_unwind(s, inc, 2000, "x86_64", 0xff01ffull, regs, stack, pc2, 64, why,
							       sizeof(why)) == np;
				}
			is_int(good, 140, "70 incarnations unwound twice (unwinders evicted and rebuilt): the same pcs count");
		}
		np = pmu_sym_unwind(s, "nofp", 2000, "riscv64", 0xff01ffull, regs, stack, pcs, 64, why, sizeof(why));
		ok(np == 0 && strstr(why, "riscv64"), "another architecture: 0 with the reason (%s)", why);
		np = pmu_sym_unwind(s, "nofp", 2000, "x86_64", 0x1ffull, "0x1 0x2", stack, pcs, 64, why, sizeof(why));
		ok(np == 0 && why[0], "registers that do not match regs_mask: 0 with the reason (%s)", why);
	} else {
		skip("cannot stop hot-nofp with ptrace here (or not x86_64): DWARF unwinding not tested");
		skip("unwinding");
		skip("unwinding");
		skip("unwinding");
	}
	if (arm_regs && arm_stack) {
		uint64_t pcs[64];
		char why[256] = "", got[512] = "";
		size_t np = pmu_sym_unwind(s, "arm64", 2000, "aarch64", (1ull << 33) - 1, arm_regs, arm_stack, pcs, 64, why,
					   sizeof(why));

		for (size_t i = 0; i < np; i++) {
			struct pmu_frame uf[8];
			size_t k = pmu_sym_frames(s, "arm64", 2000, pcs[i], i > 0, false, uf, 8);
			size_t l = strlen(got);

			snprintf(got + l, sizeof(got) - l, "%s%s", i ? " <- " : "", uf[k - 1].func ? uf[k - 1].func : "?");
		}
		ok(!strncmp(got, "capture <- level2 <- level1 <- main", 35),
		   "aarch64 (qemu-aarch64, no frame pointers): %s%s%s", got, why[0] ? "; " : "", why);
	} else {
		skip("no aarch64-linux-gnu-gcc or qemu-aarch64: aarch64 unwinding not tested");
	}
	(void)xn, (void)nn;

	/* ---- numbers: distinct addresses resolved per second ---- */
	{
		struct timespec t0, t1;
		uint64_t base;
		size_t cnt = 0;
		double sec;
		FILE *st;
		char line[256];

		elf_sym(lib, "lib_work", &v, &size);
		base = runtime(xm, nx, hot, 0x1000);
		/* every byte of the first 0x800 of the text: distinct, cold */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (uint64_t o = 0; o < 0x800; o++, cnt++)
			pmu_sym_frames(s, "hot", 2000, base + o, o & 1, false, f, 8);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		sec = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		printf("# %zu distinct addresses resolved in %.4f s: %.0f/s\n", cnt, sec, (double)cnt / sec);
		/* the same again, a million times: cached */
		cnt = 0;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int i = 0; i < 500; i++)
			for (uint64_t o = 0; o < 0x800; o++, cnt++)
				pmu_sym_frames(s, "hot", 2000, base + o, o & 1, false, f, 8);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		sec = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		printf("# %zu cached lookups in %.4f s: %.0f/s\n", cnt, sec, (double)cnt / sec);
		st = fopen("/proc/self/status", "r");
		while (st && fgets(line, sizeof(line), st))
			if (!strncmp(line, "VmHWM", 5))
				printf("# %s", line);
		if (st)
			fclose(st);
	}
	pmu_sym_free(s);

	/* ---- retained in the bundle: the binary gone from the host ---- */
	sh("mkdir -p %s/data/build-id/%.2s && mv %s %s/data/build-id/%.2s/%s", bundle, bid, hot, bundle, bid, bid + 2);
	s = sym_open(&b);
	a = hl;
	one_frame(s, "hot", a + 16, &f[0]);
	ok(f[0].status == PMU_FRAME_OK && f[0].func && !strcmp(f[0].func, "hot_loop") && f[0].line > 0,
	   "the binary deleted, its copy in the bundle (data/build-id/xx/yyyy) names hot_loop with its line");
	pmu_sym_free(s);

	/* ---- a rebuilt binary at the recorded path: stale, never named ---- */
	sh("rm -f %s/data/build-id/%.2s/%s", bundle, bid, bid + 2);
	sh("cc -g -O2 -DPMU_REBUILT -Wl,--build-id=0x0123456789abcdef -o %s tests/helpers/hot.c -L%s -lhot", hot, tmp);
	s = sym_open(&b);
	one_frame(s, "hot", a + 16, &f[0]);
	ok(f[0].status == PMU_FRAME_STALE && !f[0].func && f[0].why && !strcmp(f[0].why, "stale binary (build-id mismatch)"),
	   "a rebuilt binary (another build-id) at the recorded path: stale, never named");
	pmu_sym_free(s);
	sh("rm -f %s", hot);
	s = sym_open(&b);
	one_frame(s, "hot", a + 16, &f[0]);
	snprintf(p, sizeof(p), "binary not found (build-id %s)", bid);
	ok(f[0].status == PMU_FRAME_NOTFOUND && !f[0].func && f[0].why && !strcmp(f[0].why, p),
	   "no file at all: not found, with the build-id");
	pmu_sym_free(s);

	/* ---- the host's debug file by build-id (PMU_DEBUG_ROOT) ---- */
	sh("mkdir -p %s/dbg/.build-id/%.2s && objcopy --only-keep-debug %s/hot %s/dbg/.build-id/%.2s/%s.debug && "
	   "strip -s -o %s %s/hot",
	   tmp, bid, build, tmp, bid, bid + 2, hot, build);
	snprintf(p, sizeof(p), "%s/dbg", tmp);
	setenv("PMU_DEBUG_ROOT", p, 1);
	s = sym_open(&b);
	n = pmu_sym_frames(s, "hot", 2000, a + 16, false, false, f, 8);
	ok(f[n - 1].status == PMU_FRAME_OK && f[n - 1].func && !strcmp(f[n - 1].func, "hot_loop") && f[n - 1].line > 0,
	   "a stripped binary and its debug file under PMU_DEBUG_ROOT/.build-id: hot_loop with its line");
	pmu_sym_free(s);
	sh("rm -f %s", hot);
	s = sym_open(&b);
	n = pmu_sym_frames(s, "hot", 2000, a + 16, false, false, f, 8);
	ok(f[n - 1].status == PMU_FRAME_OK && f[n - 1].func && !strcmp(f[n - 1].func, "hot_loop"),
	   "the debug file alone, the binary gone: still named");
	pmu_sym_free(s);
	unsetenv("PMU_DEBUG_ROOT");

	close(b.rootfd);
	free(regs);
	free(stack);
	free(arm_regs);
	free(arm_stack);
	sh("rm -rf %s", tmp);
	return done_testing();
}
