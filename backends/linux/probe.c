/*
 * Capability probe: what this host lets pmu measure, and why not.  Every
 * entry is read or tried, never assumed: perf_event_open(2) is called for
 * the events that matter, sysctls are read from /proc/sys, mounts from
 * statfs(2), privileges from /proc/self/status CapEff.
 */
#include <errno.h>
#include <fcntl.h>
#include <elfutils/libdwfl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <dlfcn.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "backend.h"
#include "corepmu.h"
#include "error.h"
#include "util.h"

#define TRACEFS_MAGIC_ 0x74726163

static void cap(json_t *caps, const char *name, const char *status, const char *value, const char *reason,
		const char *remedy)
{
	json_t *o = json_pack("{s:s,s:s}", "name", name, "status", status);

	if (value && *value)
		json_object_set_new(o, "value", json_string(value));
	if (reason)
		json_object_set_new(o, "reason", json_string(reason));
	if (remedy)
		json_object_set_new(o, "remedy", json_string(remedy));
	json_array_append_new(caps, o);
}

/* First line of a small file, trimmed; NULL when unreadable. */
static char *line_of(const char *path)
{
	char *s = NULL;
	size_t n = 0;

	if (pmu_read_file(AT_FDCWD, path, 1 << 16, &s, &n))
		return NULL;
	s[strcspn(s, "\n")] = '\0';
	return s;
}

static long long num_of(const char *path)
{
	char *s = line_of(path);
	long long v = s ? atoll(s) : -1;

	free(s);
	return v;
}

/* The effective capabilities, read once per probe: they do not change
 * while it runs. */
static unsigned long long cap_eff(void)
{
	char *s = NULL, *p;
	unsigned long long v = 0;

	if (pmu_read_file(AT_FDCWD, "/proc/self/status", 1 << 16, &s, NULL) == 0 && (p = strstr(s, "CapEff:")))
		v = strtoull(p + 7, NULL, 16);
	free(s);
	return v;
}

static bool has_cap(unsigned long long eff, int bit)
{
	return (eff >> bit) & 1;
}

/* Open one event on this process (disabled, close-on-exec); the fd, or -1
 * with errno. */
static int open_event(unsigned type, unsigned long long config, bool user_only)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.disabled = 1;
	a.exclude_kernel = user_only;
	a.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Try to open one event on this process; returns 0 or errno. */
static int try_event(unsigned type, unsigned long long config, bool user_only)
{
	int fd = open_event(type, config, user_only);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* The first value of key in the text of /proc/cpuinfo, s (read once by
 * the caller: each read of it interrupts every CPU for its "cpu MHz"). */
static char *cpuinfo_field(const char *s, const char *key)
{
	const char *p;
	char *out = NULL;
	size_t kl = strlen(key);

	if (!s)
		return NULL;
	for (p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, key, kl) && (p[kl] == '\t' || p[kl] == ' ' || p[kl] == ':')) {
			char *c = strchr(p, ':');

			if (c) {
				c += 2;
				out = strndup(c, strcspn(c, "\n"));
			}
			break;
		}
	return out;
}

/*
 * What differs per architecture, one row per uname -m, sorted.  identity:
 * how the CPU names itself in /proc/cpuinfo.  hypervisor_flag: whether
 * cpuinfo's "flags" can say "hypervisor" (x86's CPUID leaf 1 ECX bit 31;
 * nothing like it on arm64).  rdpmc_term: the core PMU's format term that
 * asks for user-space counter reads (arm64: "rdpmc" = attr.config1 bit 1,
 * Linux 5.17 and later), NULL where the counter needs no asking (x86).
 * rdpmc_gate: the sysctl that allows them, or NULL: the core PMU's sysfs
 * file rdpmc (x86: 0 never, 1 for mmapped events, 2 always);
 * rdpmc_remedy: how to allow them, NULL: write 2 to that file.
 */
struct probe_arch {
	const char *machine;
	void (*identity)(json_t *host, json_t *caps, const char *cpuinfo);
	bool hypervisor_flag;
	const char *rdpmc_term, *rdpmc_gate, *rdpmc_remedy;
};

static void identity_midr(json_t *host, json_t *caps, const char *cpuinfo);
static void identity_x86(json_t *host, json_t *caps, const char *cpuinfo);

static const struct probe_arch arches[] = {
	{ "aarch64", identity_midr, false, "rdpmc", "/proc/sys/kernel/perf_user_access",
	  "allow it: sysctl -w kernel.perf_user_access=1 (as root); the counter must also ask for it with the "
	  "core PMU's format term rdpmc (attr.config1 bit 1), as pmu does" },
	{ "i686", identity_x86, true, NULL, NULL, NULL },
	{ "x86_64", identity_x86, true, NULL, NULL, NULL },
};

/* This machine's row, or NULL: pmu has none for it. */
static const struct probe_arch *arch_of(const char *machine)
{
	for (size_t i = 0; i < sizeof(arches) / sizeof(*arches); i++)
		if (!strcmp(arches[i].machine, machine))
			return &arches[i];
	return NULL;
}

/* x86: vendor, family, model and stepping as /proc/cpuinfo prints them
 * (decoded from CPUID by the kernel). */
static void identity_x86(json_t *host, json_t *caps, const char *cpuinfo)
{
	char v[512];
	char *vendor = cpuinfo_field(cpuinfo, "vendor_id"), *family = cpuinfo_field(cpuinfo, "cpu family"),
	     *model = cpuinfo_field(cpuinfo, "model"), *stepping = cpuinfo_field(cpuinfo, "stepping");

	(void)host;
	if (vendor) {
		snprintf(v, sizeof(v), "%s family %s model %s stepping %s", vendor, family ? family : "?",
			 model ? model : "?", stepping ? stepping : "?");
		cap(caps, "cpu-identity", "ok", v, NULL, NULL);
	} else {
		cap(caps, "cpu-identity", "unavailable", NULL, "/proc/cpuinfo has no vendor_id",
		    "none needed: counting uses the PMUs listed under pmu-devices");
	}
	free(vendor);
	free(family);
	free(model);
	free(stepping);
}

/* MIDR_EL1's implementer codes (Arm ARM, D19.2 "MIDR_EL1"), sorted. */
static const struct { unsigned code; const char *name; } implementers[] = {
	{ 0x00, "reserved for software use: an emulator or simulator, e.g. QEMU" },
	{ 0x41, "Arm Limited" },
	{ 0x42, "Broadcom" },
	{ 0x43, "Cavium" },
	{ 0x46, "Fujitsu" },
	{ 0x48, "HiSilicon" },
	{ 0x4e, "NVIDIA" },
	{ 0x50, "Applied Micro" },
	{ 0x51, "Qualcomm" },
	{ 0x61, "Apple" },
	{ 0x6d, "Microsoft" },
	{ 0xc0, "Ampere Computing" },
};

/* arm64: the fields of MIDR_EL1 as /proc/cpuinfo prints them for the
 * first CPU listed (arch/arm64/kernel/cpuinfo.c: "CPU implementer",
 * "CPU variant", "CPU part", "CPU revision"), and the register itself
 * from sysfs where the kernel exports it.  /proc/cpuinfo has no model
 * name on arm64: host.cpu says the implementer and part. */
static void identity_midr(json_t *host, json_t *caps, const char *cpuinfo)
{
	char v[512], name[160];
	char *impl = cpuinfo_field(cpuinfo, "CPU implementer"), *var = cpuinfo_field(cpuinfo, "CPU variant"),
	     *part = cpuinfo_field(cpuinfo, "CPU part"), *rev = cpuinfo_field(cpuinfo, "CPU revision"),
	     *midr = line_of("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1");

	if (impl && part) {
		unsigned code = (unsigned)strtoul(impl, NULL, 0);
		const char *who = NULL;

		for (size_t i = 0; i < sizeof(implementers) / sizeof(*implementers); i++)
			if (implementers[i].code == code)
				who = implementers[i].name;
		snprintf(v, sizeof(v), "implementer %s (%s) part %s variant %s revision %s%s%s", impl,
			 who ? who : "not in pmu's table", part, var ? var : "?", rev ? rev : "?",
			 midr ? "; MIDR_EL1 " : "", midr ? midr : "");
		cap(caps, "cpu-identity", "ok", v, NULL, NULL);
		if (!json_object_get(host, "cpu")) {
			snprintf(name, sizeof(name), "%s%simplementer %s part %s", who && code ? who : "",
				 who && code ? " " : "", impl, part);
			json_object_set_new(host, "cpu", json_string(name));
		}
	} else {
		cap(caps, "cpu-identity", "unavailable", NULL, "/proc/cpuinfo has no \"CPU implementer\" and \"CPU part\"",
		    "none needed: counting uses the PMUs listed under pmu-devices");
	}
	free(impl);
	free(var);
	free(part);
	free(rev);
	free(midr);
}

/* The bit of attr.config1 that a core PMU's format term names
 * ("config1:1" in <sysfs>/<pmu>/format/<term>); -1 when it has none. */
static int config1_bit(const char *pmu, const char *term)
{
	char path[512], *s;
	unsigned bit;
	int r = -1;

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/format/%s", pmu, term);
	if ((s = line_of(path)) && sscanf(s, "config1:%u", &bit) == 1 && bit < 64)
		r = (int)bit;
	free(s);
	return r;
}

/* The group read of a counting group: PERF_FORMAT_GROUP with both times
 * (perf_event_open(2), "Reading results"). */
struct group_read {
	uint64_t nr, enabled, running, v[33];
};

/* Whether a group of k hardware events (cycles, then k-1 instructions),
 * user space only, is counted on this thread for all of its enabled time.
 * 0: yes; otherwise errno of the open that failed, or -1: it opened but
 * the PMU did not schedule it whole. */
static int group_fits(int k)
{
	int fds[33], n = 0, r = 0;
	struct group_read g;
	volatile unsigned long sink = 0;

	for (; n < k; n++) {
		struct perf_event_attr a;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_HARDWARE;
		a.config = n ? PERF_COUNT_HW_INSTRUCTIONS : PERF_COUNT_HW_CPU_CYCLES;
		a.disabled = !n;
		a.exclude_kernel = 1;
		a.exclude_hv = 1;
		a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		fds[n] = (int)syscall(SYS_perf_event_open, &a, 0, -1, n ? fds[0] : -1, PERF_FLAG_FD_CLOEXEC);
		if (fds[n] < 0) {
			r = errno;
			break;
		}
	}
	if (!r) {
		ioctl(fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
		for (unsigned long i = 0; i < 20000; i++)
			sink += i;
		ioctl(fds[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
		if (read(fds[0], &g, sizeof(g)) < (ssize_t)(3 + k) * 8 || g.nr != (uint64_t)k || !g.running ||
		    g.running != g.enabled)
			r = -1;
	}
	while (n--)
		close(fds[n]);
	return r;
}

/* The PMU: which core PMU counts, how many counters it gives this thread
 * at once (measured: the largest group that is scheduled whole), which
 * generic hardware events it implements, and whether it samples and
 * records branches. */
static void probe_pmu(json_t *caps, const char *core, int hw_err)
{
	static const struct { const char *name; unsigned long long config; } generic[] = {
		{ "cycles", PERF_COUNT_HW_CPU_CYCLES },
		{ "instructions", PERF_COUNT_HW_INSTRUCTIONS },
		{ "cache-references", PERF_COUNT_HW_CACHE_REFERENCES },
		{ "cache-misses", PERF_COUNT_HW_CACHE_MISSES },
		{ "branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
		{ "branch-misses", PERF_COUNT_HW_BRANCH_MISSES },
		{ "bus-cycles", PERF_COUNT_HW_BUS_CYCLES },
		{ "stalled-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
		{ "stalled-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
		{ "ref-cycles", PERF_COUNT_HW_REF_CPU_CYCLES },
	};
	char v[1024], why[512], no[512] = "";
	const char *what = core[0] ? core : "the hardware PMU";
	int k, e = 0, fd;
	struct perf_event_attr a;

	if (hw_err) {
		snprintf(why, sizeof(why), "no hardware event opens (cycles: %s)", strerror(hw_err));
		cap(caps, "pmu-counters", "unavailable", NULL, why, "see hardware-events");
		cap(caps, "pmu-events", "unavailable", NULL, why, "see hardware-events");
		cap(caps, "pmu-sampling", "unavailable", NULL, why, "see hardware-events");
		cap(caps, "pmu-branch-stack", "unavailable", NULL, why, "see hardware-events");
		return;
	}
	for (k = 1; k <= 32 && !(e = group_fits(k)); k++)
		;
	k--;
	if (e > 0)
		snprintf(why, sizeof(why), "a group of %d is refused: %s", k + 1, strerror(e));
	else
		snprintf(why, sizeof(why), "a group of %d opens but is not scheduled whole", k + 1);
	if (k) {
		snprintf(v, sizeof(v), "%d: the largest group of hardware events (cycles and %d instructions, user "
			 "space) %s counted at once on one thread for all of its enabled time; %s; counters another user "
			 "holds (e.g. the NMI watchdog) are not in the number", k, k - 1, what,
			 e || k < 32 ? why : "32 is as far as the probe tries");
		cap(caps, "pmu-counters", "ok", v, NULL, NULL);
	} else {
		cap(caps, "pmu-counters", "unavailable", NULL, why,
		    "free the counters (another perf user, the NMI watchdog: sysctl kernel.nmi_watchdog=0)");
	}

	snprintf(v, sizeof(v), "%s counts:", what);
	for (size_t i = 0; i < sizeof(generic) / sizeof(*generic); i++) {
		int err = try_event(PERF_TYPE_HARDWARE, generic[i].config, true);
		char *t = err ? no : v;
		size_t n = err ? sizeof(no) : sizeof(v), l = strlen(t);

		if (err)
			snprintf(t + l, n - l, "%s%s (%s)", l ? ", " : "", generic[i].name,
				 err == ENOENT || err == EOPNOTSUPP ? "not implemented by this PMU" : strerror(err));
		else
			snprintf(t + l, n - l, " %s", generic[i].name);
	}
	if (no[0] && strlen(v) + strlen(no) + 16 < sizeof(v))
		snprintf(v + strlen(v), sizeof(v) - strlen(v), "; not: %s", no);
	cap(caps, "pmu-events", "ok", v, NULL, NULL);

	/* sampling: the PMU raises an overflow interrupt (the kernel refuses a
	 * sampling event with EOPNOTSUPP on PMUs flagged
	 * PERF_PMU_CAP_NO_INTERRUPT) */
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.sample_period = 1000000;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		snprintf(v, sizeof(v), "a cycles sampling event opens on %s (overflow interrupts)", what);
		cap(caps, "pmu-sampling", "ok", v, NULL, NULL);
	} else {
		snprintf(why, sizeof(why), "perf_event_open(cycles, sample_period): %s%s", strerror(errno),
			 errno == EOPNOTSUPP ? ": the PMU raises no overflow interrupt" : "");
		cap(caps, "pmu-sampling", "unavailable", NULL, why,
		    "count instead of sampling, or record where the PMU has its overflow interrupt");
	}
	/* a branch stack (x86 LBR, Arm BRBE): PERF_SAMPLE_BRANCH_STACK */
	a.sample_type |= PERF_SAMPLE_BRANCH_STACK;
	a.branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_USER;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		snprintf(v, sizeof(v), "%s samples a branch stack (PERF_SAMPLE_BRANCH_STACK)", what);
		cap(caps, "pmu-branch-stack", "ok", v, NULL, NULL);
	} else {
		snprintf(why, sizeof(why), "perf_event_open(cycles, PERF_SAMPLE_BRANCH_STACK): %s", strerror(errno));
		cap(caps, "pmu-branch-stack", "unavailable", NULL, why,
		    "record on a CPU with a branch record buffer the kernel drives (x86 LBR; Arm BRBE)");
	}
}

/* rdpmc self-monitoring: a hardware counter's mmap page must allow it
 * (cap_user_rdpmc).  Per architecture: what the counter asks with, and
 * which setting allows it. */
static void probe_rdpmc(json_t *caps, const struct probe_arch *arch, const char *core)
{
	char why[1024], gate[512] = "", remedy[512], *gv = NULL;
	struct perf_event_attr a;
	int fd, bit = -1;

	if (!arch) {
		struct utsname u;

		uname(&u);
		snprintf(why, sizeof(why), "pmu knows how to read counters from user space on x86-64 and aarch64, not "
			 "on %s", u.machine);
		cap(caps, "rdpmc", "unavailable", NULL, why, "read the counters with read(2) (what pmurec does)");
		return;
	}
	if (arch->rdpmc_gate)
		snprintf(gate, sizeof(gate), "%s", arch->rdpmc_gate);
	else
		snprintf(gate, sizeof(gate), "/sys/bus/event_source/devices/%s/rdpmc", core[0] ? core : "cpu");
	if (arch->rdpmc_remedy)
		snprintf(remedy, sizeof(remedy), "%s", arch->rdpmc_remedy);
	else
		snprintf(remedy, sizeof(remedy), "allow it: echo 2 > %s (as root)", gate);
	if (arch->rdpmc_term && (bit = config1_bit(core, arch->rdpmc_term)) < 0) {
		snprintf(why, sizeof(why), "the core PMU %s has no format term %s (user-space counter reads need Linux "
			 "5.17 or later on arm64)", core[0] ? core : "(none)", arch->rdpmc_term);
		cap(caps, "rdpmc", "unavailable", NULL, why, "use a newer kernel");
		return;
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_INSTRUCTIONS;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	if (bit >= 0)
		a.config1 = 1ull << bit;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		snprintf(why, sizeof(why), "no hardware counter opens (instructions: %s): rdpmc reads hardware counters",
			 strerror(errno));
		cap(caps, "rdpmc", "unavailable", NULL, why,
		    "record on hardware with a PMU the kernel exposes (bare metal, or a VM with a virtual PMU)");
		return;
	}
	struct perf_event_mmap_page *pg = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd, 0);

	gv = line_of(gate);
	if (pg == MAP_FAILED) {
		snprintf(why, sizeof(why), "mmap of the counter page: %s", strerror(errno));
		cap(caps, "rdpmc", "unavailable", NULL, why, "see perf_event_open(2)");
	} else {
		uint32_t index;

		/* the page's index is the counter's number + 1 while it runs on
		 * this CPU, 0 when user space may not read it: arm64 sets
		 * cap_user_rdpmc for a counter that asked, and gives index 0
		 * while kernel.perf_user_access is 0 */
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		index = pg->index;
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		if (pg->cap_user_rdpmc && index) {
			snprintf(why, sizeof(why), "cap_user_rdpmc and counter index %u on %s", index,
				 core[0] ? core : "the core PMU");
			if (bit >= 0)
				snprintf(why + strlen(why), sizeof(why) - strlen(why), ", asked with attr.config1 bit %d",
					 bit);
			snprintf(why + strlen(why), sizeof(why) - strlen(why), " (%s: %s)", gate, gv ? gv : "unreadable");
			cap(caps, "rdpmc", "ok", why, NULL, NULL);
		} else if (pg->cap_user_rdpmc) {
			snprintf(why, sizeof(why), "cap_user_rdpmc is 1 but the page's counter index is 0 while it counts: "
				 "the kernel lends user space no counter (%s: %s)", gate, gv ? gv : "unreadable");
			cap(caps, "rdpmc", "unavailable", NULL, why, remedy);
		} else {
			snprintf(why, sizeof(why), "cap_user_rdpmc is 0 in the counter's mmap page (%s: %s)", gate,
				 gv ? gv : "unreadable");
			cap(caps, "rdpmc", "unavailable", NULL, why, remedy);
		}
		munmap(pg, (size_t)sysconf(_SC_PAGESIZE));
	}
	free(gv);
	close(fd);
}

static void probe_perf(json_t *caps, long long paranoid, bool privileged, const struct probe_arch *arch)
{
	char v[256], why[512], core[256];
	int e;
	bool user_only = !privileged && paranoid >= 2;

	pmu_core_pmus(NULL, core, sizeof(core));
	if (core[0])
		cap(caps, "core-pmu", "ok", core, NULL, NULL);
	else
		cap(caps, "core-pmu", "unavailable", NULL,
		    "no core PMU under /sys/bus/event_source/devices (none named cpu, none with a cpus file)",
		    "record on bare metal, or enable the hypervisor's virtual PMU (vPMU)");
	/* the first core PMU names the files below; hybrid x86 has two */
	core[strcspn(core, " ")] = '\0';

	e = try_event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, user_only);
	if (!e)
		cap(caps, "software-events", "ok", user_only ? "task-clock opened (user space only)" : "task-clock opened",
		    NULL, NULL);
	else {
		snprintf(why, sizeof(why), "perf_event_open(task-clock): %s", strerror(e));
		cap(caps, "software-events", "unavailable", NULL, why,
		    e == EACCES || e == EPERM ? "run as root or set kernel.perf_event_paranoid=2 or lower"
					      : "use a kernel built with CONFIG_PERF_EVENTS");
	}
	e = try_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true);
	if (!e) {
		cap(caps, "hardware-events", "ok", "cycles opened", NULL, NULL);
	} else {
		/* ENOENT with a core PMU present: the PMU is there and does not
		 * implement the event; without one, there is no PMU */
		if ((e == ENOENT || e == EOPNOTSUPP || e == ENODEV) && core[0])
			snprintf(why, sizeof(why), "perf_event_open(cycles): %s: the core PMU %s does not count cycles",
				 strerror(e), core);
		else
			snprintf(why, sizeof(why), "perf_event_open(cycles): %s: %s", strerror(e),
				 e == ENOENT || e == EOPNOTSUPP || e == ENODEV
					 ? "no hardware PMU is exposed to this system (virtual machine without a virtual PMU?)"
					 : "refused");
		cap(caps, "hardware-events", "unavailable", NULL, why,
		    e == EACCES || e == EPERM ? "run as root or lower kernel.perf_event_paranoid"
					      : "record on bare metal, or enable the hypervisor's virtual PMU (vPMU)");
	}
	probe_pmu(caps, core, e);
	probe_rdpmc(caps, arch, core);
	if (privileged || paranoid <= 1) {
		snprintf(v, sizeof(v), "perf_event_paranoid=%lld%s", paranoid, privileged ? ", privileged" : "");
		cap(caps, "kernel-counting", "ok", v, NULL, NULL);
	} else {
		snprintf(why, sizeof(why), "perf_event_paranoid=%lld: kernel-mode events are refused to unprivileged users; "
			 "counting user space only", paranoid);
		cap(caps, "kernel-counting", "unavailable", NULL, why,
		    "run as root, grant CAP_PERFMON, or set kernel.perf_event_paranoid=1");
	}
	if (privileged || paranoid <= 0) {
		cap(caps, "cpu-wide-events", "ok", NULL, NULL, NULL);
	} else {
		snprintf(why, sizeof(why), "perf_event_paranoid=%lld: CPU-wide (cgroup) events need paranoid<=0 or privilege",
			 paranoid);
		cap(caps, "cpu-wide-events", "unavailable", NULL, why,
		    "run as root, grant CAP_PERFMON, or set kernel.perf_event_paranoid=0");
	}
}

int pmu_backend_probe(json_t *host, json_t *caps)
{
	struct utsname u;
	struct statfs sf;
	char v[1024], why[1200], *s, *flags, *dt, *hv, *cpuinfo = NULL;
	const struct probe_arch *arch;
	long long paranoid;
	unsigned long long eff = cap_eff();
	bool root = geteuid() == 0, perfmon = has_cap(eff, 38) || has_cap(eff, 21),
	     bpfcap = has_cap(eff, 39) || has_cap(eff, 21);
	DIR *d;

	uname(&u);
	json_object_set_new(host, "os", json_string("linux"));
	json_object_set_new(host, "arch", json_string(u.machine));
	json_object_set_new(host, "kernel", json_string(u.release));
	if (pmu_read_file(AT_FDCWD, "/proc/cpuinfo", 8 << 20, &cpuinfo, NULL))
		cpuinfo = NULL;
	s = cpuinfo_field(cpuinfo, "model name");
	if (s)
		json_object_set_new(host, "cpu", json_string(s));
	free(s);

	arch = arch_of(u.machine);
	if (arch)
		arch->identity(host, caps, cpuinfo);
	else {
		snprintf(why, sizeof(why), "pmu has no CPU identification for %s", u.machine);
		cap(caps, "cpu-identity", "unavailable", NULL, why,
		    "none needed: counting uses the PMUs listed under pmu-devices");
	}
	flags = cpuinfo_field(cpuinfo, "flags");
	s = line_of("/sys/class/dmi/id/sys_vendor");
	dt = line_of("/sys/firmware/devicetree/base/compatible");
	hv = line_of("/sys/hypervisor/type");
	/* x86 says it in a CPU flag; elsewhere only the firmware's names
	 * (DMI, the device tree: QEMU's virt machine is linux,dummy-virt) and
	 * Xen's /sys/hypervisor hint at it */
	if (arch && arch->hypervisor_flag)
		snprintf(v, sizeof(v), "%s", flags && strstr(flags, " hypervisor") ? "guest of a hypervisor" : "no hypervisor flag");
	else
		snprintf(v, sizeof(v), "no CPU flag tells it on %s", u.machine);
	snprintf(v + strlen(v), sizeof(v) - strlen(v), "%s%s%s%s%s%s", s ? "; DMI vendor " : "", s ? s : "",
		 dt ? "; device tree " : "", dt ? dt : "", hv ? "; hypervisor " : "", hv ? hv : "");
	cap(caps, "virtualization", "ok", v, NULL, NULL);
	free(flags);
	free(cpuinfo);
	free(s);
	free(dt);
	free(hv);

	v[0] = '\0';
	d = opendir("/sys/bus/event_source/devices");
	for (struct dirent *e; d && (e = readdir(d));)
		if (e->d_name[0] != '.' && strlen(v) + strlen(e->d_name) + 2 < sizeof(v))
			snprintf(v + strlen(v), sizeof(v) - strlen(v), "%s%s", v[0] ? " " : "", e->d_name);
	if (d)
		closedir(d);
	cap(caps, "pmu-devices", v[0] ? "ok" : "unavailable", v, v[0] ? NULL : "/sys/bus/event_source/devices is empty or absent",
	    v[0] ? NULL : "use a kernel with perf events");

	paranoid = num_of("/proc/sys/kernel/perf_event_paranoid");
	snprintf(v, sizeof(v), "%lld", paranoid);
	cap(caps, "perf_event_paranoid", paranoid == -1 && access("/proc/sys/kernel/perf_event_paranoid", R_OK) ? "unavailable" : "ok",
	    v, paranoid == -1 && access("/proc/sys/kernel/perf_event_paranoid", R_OK) ? "not readable" : NULL,
	    paranoid == -1 && access("/proc/sys/kernel/perf_event_paranoid", R_OK) ? "mount /proc" : NULL);
	probe_perf(caps, paranoid, root || perfmon, arch);

	static const struct { const char *name, *path; } sysctls[] = {
		{ "kptr_restrict", "/proc/sys/kernel/kptr_restrict" },
		{ "perf_event_max_sample_rate", "/proc/sys/kernel/perf_event_max_sample_rate" },
		{ "perf_event_mlock_kb", "/proc/sys/kernel/perf_event_mlock_kb" },
		{ "nmi_watchdog", "/proc/sys/kernel/nmi_watchdog" },
		{ "ptrace_scope", "/proc/sys/kernel/yama/ptrace_scope" },
		{ "unprivileged_bpf_disabled", "/proc/sys/kernel/unprivileged_bpf_disabled" },
	};
	for (size_t i = 0; i < sizeof(sysctls) / sizeof(*sysctls); i++) {
		s = line_of(sysctls[i].path);
		if (s)
			cap(caps, sysctls[i].name, "ok", s, NULL, NULL);
		else {
			snprintf(why, sizeof(why), "%s: %s", sysctls[i].path, pmu_error_detail());
			cap(caps, sysctls[i].name, "unavailable", NULL, why, "none: the kernel lacks this setting");
		}
		free(s);
	}

	if (statfs("/sys/kernel/tracing", &sf) == 0 && sf.f_type == TRACEFS_MAGIC_) {
		if (access("/sys/kernel/tracing/events", R_OK | X_OK) == 0)
			cap(caps, "tracefs", "ok", "/sys/kernel/tracing", NULL, NULL);
		else
			cap(caps, "tracefs", "unavailable", NULL, "/sys/kernel/tracing is mounted but not readable by this user",
			    "run as root, or grant read access to tracefs");
	} else {
		cap(caps, "tracefs", "unavailable", NULL, "tracefs is not mounted at /sys/kernel/tracing",
		    "mount -t tracefs nodev /sys/kernel/tracing (as root)");
	}

	{
		/* the cgroup v2 mount: /sys/fs/cgroup on unified hosts, elsewhere
		 * on hybrid ones (/sys/fs/cgroup/unified) */
		char mnt[256] = "", *m = NULL, *cg = NULL, path[1024];

		if (pmu_read_file(AT_FDCWD, "/proc/self/mounts", 1 << 20, &m, NULL) == 0) {
			for (char *line = strtok(m, "\n"); line; line = strtok(NULL, "\n")) {
				char dev[64], dir[256], type[32];

				if (sscanf(line, "%63s %255s %31s", dev, dir, type) == 3 && !strcmp(type, "cgroup2")) {
					snprintf(mnt, sizeof(mnt), "%s", dir);
					break;
				}
			}
		}
		free(m);
		if (!mnt[0]) {
			cap(caps, "cgroup-v2", "unavailable", NULL, "no cgroup2 file system is mounted",
			    "boot with systemd.unified_cgroup_hierarchy=1, or mount -t cgroup2 none /sys/fs/cgroup");
			cap(caps, "cgroup-delegation", "unavailable", NULL, "no cgroup v2 hierarchy",
			    "boot with systemd.unified_cgroup_hierarchy=1");
		} else {
			cap(caps, "cgroup-v2", "ok", mnt, NULL, NULL);
			if (pmu_read_file(AT_FDCWD, "/proc/self/cgroup", 4096, &cg, NULL) == 0 && (m = strstr(cg, "0::"))) {
				m[strcspn(m, "\n")] = '\0';
				snprintf(path, sizeof(path), "%s%s/cgroup.procs", mnt, strcmp(m + 3, "/") ? m + 3 : "");
				if (access(path, W_OK) == 0)
					cap(caps, "cgroup-delegation", "ok", path, NULL, NULL);
				else {
					snprintf(why, sizeof(why), "cannot write %s: %s", path, strerror(errno));
					cap(caps, "cgroup-delegation", "unavailable", NULL, why,
					    "run under a delegated cgroup: systemd-run --user --scope -p Delegate=yes pmurec ...");
				}
			} else {
				cap(caps, "cgroup-delegation", "unavailable", NULL, "/proc/self/cgroup names no cgroup v2 path",
				    "run on a cgroup v2 (unified) hierarchy");
			}
			free(cg);
		}
	}

	{
		/* tried: load the smallest socket filter ("r0 = 0; exit") */
		long long ub = num_of("/proc/sys/kernel/unprivileged_bpf_disabled");
		struct bpf_insn prog[2] = { { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
					    { .code = BPF_JMP | BPF_EXIT } };
		union bpf_attr a;
		int fd;

		memset(&a, 0, sizeof(a));
		a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
		a.insns = (uint64_t)(uintptr_t)prog;
		a.insn_cnt = 2;
		a.license = (uint64_t)(uintptr_t)"GPL";
		fd = (int)syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a));
		if (fd >= 0) {
			close(fd);
			snprintf(v, sizeof(v), "BPF_PROG_LOAD of a socket filter succeeded (%s)", root ? "root"
												 : bpfcap ? "CAP_BPF" : "unprivileged");
			cap(caps, "bpf", "ok", v, NULL, NULL);
		} else {
			int e = errno;

			snprintf(why, sizeof(why), "BPF_PROG_LOAD: %s (unprivileged_bpf_disabled=%lld%s)", strerror(e), ub,
				 bpfcap ? ", CAP_BPF held" : ", no CAP_BPF");
			cap(caps, "bpf", "unavailable", NULL, why,
			    e == EPERM || e == EACCES ? "run as root or grant CAP_BPF and CAP_PERFMON"
						      : "use a kernel built with CONFIG_BPF_SYSCALL");
		}
	}
	{
		/* presence and version, without linking it: the counting
		 * collector loads it the same way for pfm:NAME events */
		void *h = dlopen("libpfm.so.4", RTLD_LAZY | RTLD_LOCAL);
		int (*ver)(void) = h ? (int (*)(void))dlsym(h, "pfm_get_version") : NULL;

		if (ver) {
			int vv = ver();

			snprintf(v, sizeof(v), "libpfm.so.4 present, API %d.%d; resolves pfm:NAME events", vv >> 16,
				 vv & 0xffff);
			cap(caps, "libpfm4", "ok", v, NULL, NULL);
		} else {
			snprintf(why, sizeof(why), "libpfm.so.4 cannot be loaded: %s", dlerror());
			cap(caps, "libpfm4", "unavailable", NULL, why,
			    "install libpfm4 (Debian: apt-get install libpfm4) for pfm:NAME events; r<hex> and pmu/.../ selectors need none");
		}
		if (h)
			dlclose(h);
	}
	snprintf(v, sizeof(v), "elfutils %s (DW_AT_producer of images; symbolization comes with sampling)",
		 dwfl_version(NULL));
	cap(caps, "libdw", "ok", v, NULL, NULL);
	snprintf(v, sizeof(v), "euid %d%s%s%s", (int)geteuid(), has_cap(eff, 38) ? ", CAP_PERFMON" : "",
		 has_cap(eff, 39) ? ", CAP_BPF" : "", has_cap(eff, 19) ? ", CAP_SYS_PTRACE" : "");
	cap(caps, "privileges", "ok", v, NULL, NULL);
	return 0;
}

int pmu_backend_settings(json_t *st)
{
	/* path, else alt: a second source of the same fact where drivers
	 * differ (intel_pstate's no_turbo on Intel; cpufreq's boost on
	 * acpi-cpufreq, amd-pstate and arm64's cppc-cpufreq, read inverted:
	 * boost 1 is turbo not disabled) */
	static const struct {
		const char *name, *path, *alt, *reason, *remedy;
		bool alt_inverted;
	} t[] = {
		{ "cpufreq-governor", "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", NULL,
		  "no cpufreq driver exposes a governor (virtual machine?)", "none: the host controls CPU frequency", false },
		{ "smt-active", "/sys/devices/system/cpu/smt/active", NULL, "the kernel does not report SMT state",
		  "none: a kernel without SMT control", false },
		{ "turbo-disabled", "/sys/devices/system/cpu/intel_pstate/no_turbo", "/sys/devices/system/cpu/cpufreq/boost",
		  "neither intel_pstate (no_turbo) nor cpufreq (boost) reports turbo state",
		  "none: the frequency driver does not expose it", true },
		{ "clocksource", "/sys/devices/system/clocksource/clocksource0/current_clocksource", NULL,
		  "the kernel does not report its clocksource", "none", false },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++) {
		char *s = line_of(t[i].path);

		if (!s && t[i].alt && (s = line_of(t[i].alt)) && t[i].alt_inverted && (!strcmp(s, "0") || !strcmp(s, "1")))
			s[0] = s[0] == '0' ? '1' : '0';
		if (s)
			cap(st, t[i].name, "ok", s, NULL, NULL);
		else
			cap(st, t[i].name, "unavailable", NULL, t[i].reason, t[i].remedy);
		free(s);
	}
	return 0;
}
