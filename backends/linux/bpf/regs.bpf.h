/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The saved user registers of a task (struct pt_regs), read through CO-RE
 * "flavors": a struct named pt_regs___<anything> with
 * preserve_access_index is relocated by libbpf against the running
 * kernel's struct pt_regs, field by field, anonymous unions searched.  So
 * an object built against another architecture's vmlinux.h (the arm64
 * guest's cross build on an x86-64 host) still compiles, and reads the
 * target's own layout at load.
 *
 * arm64: arch/arm64/include/asm/ptrace.h: struct pt_regs begins with a
 * union of struct user_pt_regs and { u64 regs[31]; u64 sp; u64 pc;
 * u64 pstate; }, then orig_x0 and syscallno (NO_SYSCALL, -1, outside a
 * call).  The first argument is orig_x0 (x0 is the return value by exit).
 */
#ifndef PMU_BPF_REGS_H
#define PMU_BPF_REGS_H

struct pt_regs___pmu_arm64 {
	__u64 regs[31];
	__u64 sp;
	__u64 pc;
	__u64 pstate;
	__u64 orig_x0;
	__s32 syscallno;
} __attribute__((preserve_access_index));

#define PMU_ARM64_REGS(r) ((const struct pt_regs___pmu_arm64 *)(r))

/*
 * A cross build compiles against the build host's vmlinux.h (the Makefile
 * defines PMU_BPF_FOREIGN_VMLINUX then): bpf_tracing.h's PT_REGS_* macros,
 * which uprobe and USDT programs use (BPF_KPROBE, <bpf/usdt.bpf.h>), cast
 * the context to arm64's struct user_pt_regs, which x86-64's vmlinux.h does
 * not have.  Declared here with preserve_access_index, its fields are
 * relocated by libbpf against the running (arm64) kernel's.  Include this
 * before <bpf/bpf_tracing.h>'s macros are used.
 */
#if defined(PMU_BPF_FOREIGN_VMLINUX) && defined(__TARGET_ARCH_arm64)
struct user_pt_regs {
	__u64 regs[31];
	__u64 sp;
	__u64 pc;
	__u64 pstate;
} __attribute__((preserve_access_index));
#endif

#endif
