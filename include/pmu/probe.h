/*
 * pmu/probe.h: the pmu provider's USDT probes, ABI 1 (bundle-spec section 24.1).
 *
 * Header-only.  Each macro is one USDT probe of provider "pmu" (Debian's
 * systemtap-sdt-dev <sys/sdt.h>): a nop instruction and a .note.stapsdt
 * entry naming the probe and where its arguments live.  Nobody listening,
 * the nop is all the probe costs; its arguments are values already at hand
 * (integers, pointers to strings the program has), nothing is formatted.
 * pmurec's probes collector (root: uprobes through eBPF) attaches to them
 * and records what they carry in the bundle, attributed to the process
 * incarnation and thread.
 *
 *   PMU_RUNTIME("my-server");                 // once: who the program is
 *   PMU_MARK("warmup-end");                   // a moment: startup-end and warmup-end bound the phases
 *   PMU_SPAN_BEGIN(42, 0, "request");         // span 42, no parent
 *   PMU_SPAN_BEGIN(43, 42, "parse");          // on any thread: parent 42
 *   PMU_SPAN_END(43);                         // on any thread
 *   PMU_SPAN_END(42);
 *   PMU_GC_BEGIN("young");  ...  PMU_GC_END("young");   // a pause of the program's collector
 *   PMU_ALLOC(bytes);                         // bytes the program's own allocator handed out
 *
 * Span ids are the program's: nonzero, unique per process while the process
 * lives (0 is "no parent").  Strings are NUL-terminated and read at the probe
 * (at most 127 bytes kept); they must stay valid until the macro returns.
 *
 * The control channel stays the fallback for marks and spans: when the
 * program runs under pmurec and nobody attached to its pmu probes (no
 * privilege for uprobes, or a build without <sys/sdt.h>), PMUREC_CTL_FD names
 * pmurec's socket and PMU_MARK / PMU_SPAN_* also send there (include/pmu/
 * mark.h), so spans reach the bundle either way; the bundle says which path
 * delivered each (via).  pmurec sets PMUREC_PROBES=pmu in the command's
 * environment when its probes collector listens to this provider; then the
 * channel is not used for them.  Without PMUREC_CTL_FD the fallback costs a
 * load and a branch on a static variable.  GC, alloc and runtime probes have
 * no fallback.
 *
 * Define PMU_PROBE_NO_CTL before including to leave the fallback out.
 */
#ifndef PMU_PROBE_H
#define PMU_PROBE_H

#define PMU_PROBE_ABI 1

#include <stdint.h>

#if defined(__has_include)
#if __has_include(<sys/sdt.h>)
#include <sys/sdt.h>
#define PMU_PROBE_USDT 1
#endif
#endif

#ifndef PMU_PROBE_USDT
#define PMU_PROBE_USDT 0
#define PMU__SDT0(n) ((void)0)
#define PMU__SDT1(n, a) ((void)(a))
#define PMU__SDT2(n, a, b) ((void)(a), (void)(b))
#define PMU__SDT3(n, a, b, c) ((void)(a), (void)(b), (void)(c))
#else
#define PMU__SDT0(n) STAP_PROBE(pmu, n)
#define PMU__SDT1(n, a) STAP_PROBE1(pmu, n, a)
#define PMU__SDT2(n, a, b) STAP_PROBE2(pmu, n, a, b)
#define PMU__SDT3(n, a, b, c) STAP_PROBE3(pmu, n, a, b, c)
#endif

#ifndef PMU_PROBE_NO_CTL
#include <stdio.h>
#include <string.h>
#include "mark.h"

/* 1: send marks and spans over the control channel too (see above). */
static inline int pmu__probe_ctl(void)
{
	static int on = -1;

	if (__builtin_expect(on < 0, 0)) {
		const char *p = getenv("PMUREC_PROBES");

		on = pmu_ctl_fd() >= 0 && !(p && strstr(p, "pmu"));
	}
	return on;
}

__attribute__((cold, noinline)) static void pmu__probe_ctl_span_begin(uint64_t id, uint64_t parent, const char *name)
{
	char a[24], b[24];

	snprintf(a, sizeof(a), "%llu", (unsigned long long)id);
	snprintf(b, sizeof(b), "%llu", (unsigned long long)parent);
	pmu_span_begin(a, name, parent ? b : NULL);
}

__attribute__((cold, noinline)) static void pmu__probe_ctl_span_end(uint64_t id)
{
	char a[24];

	snprintf(a, sizeof(a), "%llu", (unsigned long long)id);
	pmu_span_end(a);
}

#define PMU__CTL(call) do { if (__builtin_expect(pmu__probe_ctl(), 0)) call; } while (0)
#else
#define PMU__CTL(call) do { } while (0)
#endif

#define PMU_RUNTIME(name) PMU__SDT2(runtime, (const char *)(name), (uint64_t)PMU_PROBE_ABI)
#define PMU_MARK(name) do { PMU__SDT1(mark, (const char *)(name)); PMU__CTL(pmu_mark(name)); } while (0)
#define PMU_SPAN_BEGIN(id, parent, name) do { \
	PMU__SDT3(span_begin, (uint64_t)(id), (uint64_t)(parent), (const char *)(name)); \
	PMU__CTL(pmu__probe_ctl_span_begin((uint64_t)(id), (uint64_t)(parent), (name))); } while (0)
#define PMU_SPAN_END(id) do { PMU__SDT1(span_end, (uint64_t)(id)); PMU__CTL(pmu__probe_ctl_span_end((uint64_t)(id))); } while (0)
#define PMU_GC_BEGIN(kind) PMU__SDT1(gc_begin, (const char *)(kind))
#define PMU_GC_END(kind) PMU__SDT1(gc_end, (const char *)(kind))
#define PMU_ALLOC(bytes) PMU__SDT1(alloc, (uint64_t)(bytes))

#endif
