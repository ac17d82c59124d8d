# pmu: one non-recursive Makefile.
#   make            build the tools into build/
#   make check      unit (TAP) + CLI (bats) tests, ends with "N passed, N failed"
#   make check-pmu  pmu built for aarch64 and its hardware tests run in an emulated arm64
#                   guest with QEMU's PMUv3 (tests/pmu/check); ends with the same line
#   make demo       validate and describe the built-in demo bundle
#   make bench      validation vs sha256sum (bench/validate), recorder cost vs true/perf (bench/record),
#                   following the cohort vs perf stat (bench/follower),
#                   pmurec -- true's fixed cost vs perf stat with the same events (bench/fixed),
#                   counting vs perf stat and in-process counter reads (bench/count),
#                   pmuanalyze vs perf report (bench/analyze, events and ~1M call-chain samples),
#                   pmuvalidate on large cohorts (bench/cohort),
#                   sampling overhead at 1/10 kHz vs perf record (bench/sample),
#                   ns added per system call vs perf trace, strace and perf record,
#                   dd's loss and make -j2's slowdown in full mode (bench/syscall)
#   make fuzz       libFuzzer harnesses for a bounded time (clang)
#   make install    PREFIX=/usr/local DESTDIR=
# Options: SANITIZE=address,undefined  V=1  FUZZ_SECONDS=60
#          BACKEND=linux (default) or stub: the platform backend, backends/<name>/;
#          a build directory holds one backend's build (BACKEND=stub: build-stub/)

VERSION    := 0.1.0
PREFIX     ?= /usr/local
DESTDIR    ?=
BACKEND    ?= linux
BUILD      ?= $(if $(filter linux,$(BACKEND)),build,build-$(BACKEND))
CC         ?= cc
SANITIZE   ?=
FUZZ_SECONDS ?= 60

# the tools' libraries, and each backend's own (elfutils: the Linux probe
# and image provenance)
PKGS_linux :=
# libelf and libdw for every backend: pmuanalyze symbolizes with libdwfl
# (analyze/symbolize.c), and demangles with libiberty (no pkg-config file)
PKGS       := libarchive jansson libcrypto libelf libdw $(PKGS_$(BACKEND))
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libarchive is loaded on first use (lib/archive_dl.h says why), not linked:
# the headers come from pkg-config, the soname from the library built against
PKG_LIBS   := $(shell pkg-config --libs $(filter-out libarchive,$(PKGS)) 2>/dev/null)
OBJDUMP    ?= objdump
ARCHIVE_SONAME := $(shell $(OBJDUMP) -p "$$(pkg-config --variable=libdir libarchive 2>/dev/null)/libarchive.so" 2>/dev/null | sed -n 's/^ *SONAME *//p')
REVISION   := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)

# plain `make` builds the tools (the first rule below is a helper's)
.DEFAULT_GOAL := all
# Without the libraries' development packages, say which command installs
# them instead of failing on a missing header; make check, demo, bench and
# fuzz install them first (scripts/deps), and their sub-makes find them.
ifeq ($(filter deps check check-pmu demo bench fuzz clean,$(MAKECMDGOALS)),)
ifneq ($(shell pkg-config --exists $(PKGS) 2>/dev/null && echo ok),ok)
$(error the build needs Debian packages that are missing (pkg-config finds no $(PKGS)): `make check` or `make demo` installs them as root, or run scripts/deps, which prints the apt-get command)
endif
endif

WARN       := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wno-missing-field-initializers
CFLAGS     ?= -O2 -g
BASE_CFLAGS := -std=gnu11 -D_GNU_SOURCE $(WARN) -Ilib -Ibackends -Iinclude -I$(BUILD)/gen $(PKG_CFLAGS) $(CPPFLAGS) -pthread \
	-DPMU_VERSION='"$(VERSION)"' -DPMU_REVISION='"$(REVISION)"' \
	$(if $(ARCHIVE_SONAME),-DPMU_LIBARCHIVE_SONAME='"$(ARCHIVE_SONAME)"') \
	-DPMU_BUILD_FLAGS='"$(strip $(CFLAGS) $(if $(SANITIZE),-fsanitize=$(SANITIZE)))"'
ifneq ($(SANITIZE),)
BASE_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS     += -fsanitize=$(SANITIZE)
endif
ALL_CFLAGS := $(BASE_CFLAGS) $(CFLAGS)
LIBS       := $(PKG_LIBS) -liberty -pthread -ldl -lm

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-7s %s\n' $(1) $(2)
endif

.DELETE_ON_ERROR:
.PHONY: all check check-pmu units demo bench fuzz install clean deps fixtures


LIB_SRC  := $(sort $(wildcard lib/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
LIB_A    := $(BUILD)/libpmu.a
ifeq ($(wildcard backends/$(BACKEND)/*.c),)
$(error BACKEND=$(BACKEND): no backends/$(BACKEND)/ (there are: $(patsubst backends/%/,%,$(wildcard backends/*/))))
endif
# One backend per build directory: objects of two backends never mix.
BUILT_BACKEND := $(shell cat $(BUILD)/backend 2>/dev/null)
ifneq ($(BUILT_BACKEND),)
ifneq ($(BUILT_BACKEND),$(BACKEND))
$(error $(BUILD)/ holds a BACKEND=$(BUILT_BACKEND) build; give another BUILD= for BACKEND=$(BACKEND), or make clean)
endif
endif
# (alloc-preload.c is the LD_PRELOAD interposer, a library of its own: below)
BE_SRC   := $(filter-out backends/linux/alloc-preload.c,$(sort $(wildcard backends/$(BACKEND)/*.c)))
BE_OBJ   := $(BE_SRC:%.c=$(BUILD)/%.o)
BE_A     := $(BUILD)/libbackend-$(BACKEND).a
# unit tests of one backend (tests/unit/<backend>/t-*.c), linked with it;
# tests/run counts another backend's as skipped, with the reason
BE_UNIT_SRC := $(sort $(wildcard tests/unit/$(BACKEND)/t-*.c))
BE_UNITS := $(BE_UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

# examples/ (issue 18): the probes' example, with the header and with its
# macros empty (bench/probe holds one against the other)
EXAMPLES := $(BUILD)/pmu-example $(BUILD)/pmu-example-nohdr $(BUILD)/bench-probecost $(BUILD)/bench-probecost-nohdr
TOOLS    := $(BUILD)/pmurec $(BUILD)/pmuvalidate $(BUILD)/pmuanalyze
HELPERS  := $(BUILD)/mkfixture $(BUILD)/failing-collector $(BUILD)/specgen $(BUILD)/test-collector $(BUILD)/test-marker $(BUILD)/spin-threads $(BUILD)/hw-loop $(BUILD)/thread-exec $(BUILD)/sync-writes $(BUILD)/writer $(BUILD)/bench-sideband $(BUILD)/bench-rdpmc \
	    $(BUILD)/libhot.so $(BUILD)/hot $(BUILD)/hot-nofp $(BUILD)/sym-dump $(EXAMPLES)
HELPERS_linux := $(BUILD)/cg-smoke
# the alloc collector's LD_PRELOAD interposer: next to pmurec in the build
# (pmurec looks there, in ../lib/pmu/ from it, and in $PMU_LIBDIR)
PRELOAD_linux := $(BUILD)/libpmu-alloc.so
PRELOAD  := $(PRELOAD_$(BACKEND))
HELPERS  += $(HELPERS_$(BACKEND))
UNIT_SRC := $(sort $(wildcard tests/unit/t-*.c))
UNITS    := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz-*.c))

# ---- eBPF follower (backends/linux/bpf/, follow_bpf.c; docs/ebpf-follower.md) ----
# Built when clang, bpftool, libbpf and the build host's BTF are all there:
# vmlinux.h from that BTF, the CO-RE object (clang -target bpf), its skeleton
# and a minimal BTF for it (bpftool), all under $(BUILD)/bpf.  Otherwise, or
# with BPF=0, bpf/follow_none.c stands in and opens as "unavailable" with the
# reason.  Either way decode.c is built (the record decoder and its fuzzer).
ifeq ($(BACKEND),linux)
BPF             ?= 1
BPF_DIR         := $(BUILD)/bpf
BPF_CLANG       ?= clang
BPF_VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
BPFTOOL         ?= $(firstword $(shell command -v bpftool 2>/dev/null) $(wildcard /usr/sbin/bpftool /sbin/bpftool))
# libbpf's __TARGET_ARCH_<name> (bpf/bpf_tracing.h) for the build host's
# uname -m, one row per architecture; a cross build gives BPF_ARCH=
BPF_ARCH_x86_64      := x86
BPF_ARCH_aarch64     := arm64
BPF_ARCH_riscv64     := riscv
BPF_ARCH_s390x       := s390
BPF_ARCH_ppc64le     := powerpc
BPF_ARCH_loongarch64 := loongarch
BPF_UNAME_M     := $(shell uname -m)
BPF_ARCH        := $(or $(BPF_ARCH_$(BPF_UNAME_M)),$(BPF_UNAME_M))
# a cross build's objects are compiled against the build host's vmlinux.h
# (regs.bpf.h declares what another architecture's registers need)
BPF_FOREIGN     := $(if $(filter $(BPF_ARCH),$(or $(BPF_ARCH_$(BPF_UNAME_M)),$(BPF_UNAME_M))),,-DPMU_BPF_FOREIGN_VMLINUX)
BPF_MISSING     := $(strip $(if $(filter 1,$(BPF)),,disabled with BPF=$(BPF);) \
	$(if $(shell command -v $(BPF_CLANG) 2>/dev/null),,'$(BPF_CLANG)' not found;) \
	$(if $(BPFTOOL),,bpftool not found;) \
	$(if $(shell pkg-config --exists libbpf 2>/dev/null && echo y),,libbpf not found by pkg-config;) \
	$(if $(wildcard $(BPF_VMLINUX_BTF)),,no '$(BPF_VMLINUX_BTF)' on the build host;))
BE_OBJ          += $(BUILD)/backends/linux/bpf/decode.o
HELPERS         += $(BUILD)/bpf-follow-dump
$(BUILD)/bpf-follow-dump: $(BUILD)/tests/helpers/bpf-follow-dump.o $(BE_A) $(LIB_A)
ifeq ($(BPF_MISSING),)
BE_OBJ          += $(BPF_DIR)/follow.min.btf.o
LIBS            += $(shell pkg-config --libs libbpf 2>/dev/null)
$(BUILD)/backends/linux/follow_bpf.o: ALL_CFLAGS += -I$(BPF_DIR)
$(BUILD)/backends/linux/follow_bpf.o: $(BPF_DIR)/follow.skel.h
$(BPF_DIR)/vmlinux.h: $(BPF_VMLINUX_BTF)
	$(call msg,BTF,$@)
	@mkdir -p $(dir $@)
	$(Q)$(BPFTOOL) btf dump file $< format c >$@
# bpftool gen object links the object: DWARF goes, BTF stays (the skeleton
# embeds the object, so this keeps the binaries small)
$(BPF_DIR)/follow.bpf.o: backends/linux/bpf/follow.bpf.c backends/linux/bpf/follow.h $(BPF_DIR)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)$(BPF_CLANG) -target bpf -O2 -g -D__TARGET_ARCH_$(BPF_ARCH) -I$(BPF_DIR) -Ibackends/linux/bpf \
		-Wall -Werror -c $< -o $@.tmp.o
	$(Q)$(BPFTOOL) gen object $@ $@.tmp.o && rm -f $@.tmp.o
$(BPF_DIR)/follow.skel.h: $(BPF_DIR)/follow.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name follow_bpf >$@
# The minimal BTF and the build host's /sys/kernel/notes (its build-id says
# which kernel the BTF fits), as C arrays.  If either cannot be made, an
# empty array: follow_bpf.c then parses the full BTF and says why.
$(BPF_DIR)/follow.min.btf.c: $(BPF_DIR)/follow.bpf.o
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) gen min_core_btf $(BPF_VMLINUX_BTF) $(BPF_DIR)/follow.min.btf $< 2>/dev/null || : >$(BPF_DIR)/follow.min.btf
	$(Q){ cat /sys/kernel/notes 2>/dev/null || :; } >$(BPF_DIR)/kernel.notes
	$(Q){ echo '#include <stddef.h>'; \
	  for v in min_btf:follow.min.btf build_notes:kernel.notes; do \
	    echo "const unsigned char pmu_bpf_$${v%%:*}[] = {"; od -An -v -tx1 $(BPF_DIR)/$${v#*:} | \
	      sed 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; echo '0};'; \
	    echo "const size_t pmu_bpf_$${v%%:*}_len = $$(wc -c <$(BPF_DIR)/$${v#*:});"; done; } >$@
$(BPF_DIR)/follow.min.btf.o: $(BPF_DIR)/follow.min.btf.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<
# The OS-event collectors' objects (issue 17): backends/linux/bpf/NAME.bpf.c
# with its record layout NAME.h and the shared cohort filter cohort.bpf.h;
# skeleton NAME.skel.h (struct NAME_bpf).  They load against the running
# kernel's BTF (libbpf's default), since both attach tp_btf/raw_tp programs
# that need the running kernel's types anyway.  The collector's C file is
# built with PMU_BPF_BUILT; without the toolchain, with PMU_BPF_UNBUILT (the
# reason) instead, and its probe says unavailable.
$(BPF_DIR)/%.bpf.o: backends/linux/bpf/%.bpf.c backends/linux/bpf/%.h backends/linux/bpf/cohort.bpf.h backends/linux/bpf/regs.bpf.h backends/linux/bpf/cohort.h $(BPF_DIR)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)$(BPF_CLANG) -target bpf -O2 -g -D__TARGET_ARCH_$(BPF_ARCH) $(BPF_FOREIGN) -I$(BPF_DIR) -Ibackends/linux/bpf $(BPF_CFLAGS_$*) \
		-Wall -Werror -c $< -o $@.tmp.o
	$(Q)$(BPFTOOL) gen object $@ $@.tmp.o && rm -f $@.tmp.o
$(BPF_DIR)/%.skel.h: $(BPF_DIR)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf >$@
$(BUILD)/backends/linux/syscalls.o: ALL_CFLAGS += -I$(BPF_DIR) -DPMU_BPF_BUILT=1
$(BUILD)/backends/linux/syscalls.o: $(BPF_DIR)/syscalls.skel.h
$(BUILD)/backends/linux/sched.o: ALL_CFLAGS += -I$(BPF_DIR) -DPMU_BPF_BUILT=1
$(BUILD)/backends/linux/sched.o: $(BPF_DIR)/sched.skel.h
# <bpf/usdt.bpf.h> includes <linux/errno.h>, whose <asm/errno.h> is under
# the host's multiarch directory
# (a cross compiler's own include directory in a cross build)
BPF_CFLAGS_probes := $(addprefix -I,$(patsubst %/asm/errno.h,%,$(firstword $(wildcard /usr/include/$(shell $(CC) -dumpmachine 2>/dev/null)/asm/errno.h \
	/usr/$(shell $(CC) -dumpmachine 2>/dev/null)/include/asm/errno.h))))
$(BUILD)/backends/linux/probes.o: ALL_CFLAGS += -I$(BPF_DIR) -DPMU_BPF_BUILT=1
$(BUILD)/backends/linux/probes.o: $(BPF_DIR)/probes.skel.h
$(BUILD)/backends/linux/alloc.o: ALL_CFLAGS += -I$(BPF_DIR) -DPMU_BPF_BUILT=1
$(BUILD)/backends/linux/alloc.o: $(BPF_DIR)/alloc.skel.h
else
$(BUILD)/backends/linux/syscalls.o $(BUILD)/backends/linux/sched.o $(BUILD)/backends/linux/probes.o $(BUILD)/backends/linux/alloc.o: ALL_CFLAGS += -DPMU_BPF_UNBUILT="\"$(BPF_MISSING)\""
BE_OBJ          := $(filter-out $(BUILD)/backends/linux/follow_bpf.o,$(BE_OBJ)) $(BUILD)/backends/linux/bpf/follow_none.o
$(BUILD)/backends/linux/bpf/follow_none.o: ALL_CFLAGS += -DPMU_BPF_UNBUILT="\"$(BPF_MISSING)\""
endif
$(BUILD)/fuzz/fuzz-bpfrec: tests/fuzz/fuzz-bpfrec.c backends/linux/bpf/decode.c $(LIB_SRC) $(wildcard lib/*.h lib/*.def) $(BUILD)/gen/sysnames.inc $(BUILD)/gen/ioctlnames.inc
	$(call msg,FUZZ,$@)
	@mkdir -p $(dir $@)
	$(Q)clang -std=gnu11 -D_GNU_SOURCE -g -O1 -Ilib -Ibackends -I$(BUILD)/gen $(PKG_CFLAGS) -DPMU_VERSION='"$(VERSION)"' \
		-DPMU_REVISION='"$(REVISION)"' -DPMU_BUILD_FLAGS='"fuzz"' \
		-fsanitize=fuzzer,address,undefined -o $@ $< backends/linux/bpf/decode.c $(LIB_SRC) $(LIBS)
endif
# ---- end of the eBPF follower ----

all: $(TOOLS) $(PRELOAD) $(HELPERS) $(BUILD)/backend

units: $(UNITS) $(BE_UNITS) $(BUILD)/backend

# which backend this directory holds, for the check above and tests/run
$(BUILD)/backend:
	@mkdir -p $(dir $@)
	$(Q)echo $(BACKEND) >$@

$(BUILD)/%.o: %.c
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

# The target's system call names (lib/sysname.c): every __NR_ macro of its
# C library's <sys/syscall.h>, as the compiler in use sees them
$(BUILD)/gen/sysnames.inc:
	$(call msg,GEN,$@)
	@mkdir -p $(dir $@)
	$(Q)echo '#include <sys/syscall.h>' | $(CC) -dM -E -x c - | \
		sed -n 's/^#define __NR_\([a-z0-9_]*\) .*/SYS(\1)/p' | grep -v '^SYS(syscalls)$$' | sort -u >$@.tmp && mv $@.tmp $@
$(BUILD)/lib/sysname.o: $(BUILD)/gen/sysnames.inc
# The target's ioctl request names (lib/ioctlname.c): the request macros of
# the uapi headers lib/ioctlhdrs.h lists, evaluated by the compiler in use
$(BUILD)/gen/ioctlnames.inc: lib/ioctlhdrs.h scripts/gen-ioctlnames
	$(call msg,GEN,$@)
	@mkdir -p $(dir $@)
	$(Q)scripts/gen-ioctlnames $@ $(CC) $(ALL_CFLAGS)
$(BUILD)/lib/ioctlname.o: $(BUILD)/gen/ioctlnames.inc

$(LIB_A): $(LIB_OBJ)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BE_A): $(BE_OBJ)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

REC_OBJ  := $(patsubst %.c,$(BUILD)/%.o,$(sort $(wildcard record/*.c)))
$(BUILD)/pmurec: $(REC_OBJ) $(BE_A) $(LIB_A)
$(BUILD)/pmuvalidate: $(BUILD)/validate/pmuvalidate.o $(LIB_A)
# The profile's exports (analyze/export.c): pprof's profile.proto compiled by
# protobuf-c's protoc-c into the build directory, gzip by zlib
AN_EXPORT_OBJ := $(BUILD)/analyze/export.o $(BUILD)/analyze/profile.pb-c.o
AN_EXPORT_LIBS := $(shell pkg-config --libs libprotobuf-c zlib 2>/dev/null || echo -lprotobuf-c -lz)
# (a pattern rule: one protoc-c run makes both files)
$(BUILD)/analyze/%.pb-c.c $(BUILD)/analyze/%.pb-c.h: analyze/%.proto
	$(call msg,PROTOC,$@)
	@mkdir -p $(BUILD)/analyze
	$(Q)protoc-c --c_out=$(BUILD)/analyze --proto_path=analyze $<
# generated code: the project's warnings are not its author's
$(BUILD)/analyze/profile.pb-c.o: $(BUILD)/analyze/profile.pb-c.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(BASE_CFLAGS) $(CFLAGS) -Wno-unused-parameter -Wno-shadow -I$(BUILD)/analyze -c -o $@ $<
$(BUILD)/analyze/export.o: ALL_CFLAGS += -I$(BUILD)/analyze
$(BUILD)/analyze/export.o: $(BUILD)/analyze/profile.pb-c.h
$(BUILD)/tests/unit/t-export.o: ALL_CFLAGS += -Ianalyze -I$(BUILD)/analyze
$(BUILD)/tests/unit/t-export.o: $(BUILD)/analyze/profile.pb-c.h
$(BUILD)/tests/t-export: $(BUILD)/tests/unit/t-export.o $(AN_EXPORT_OBJ) $(BUILD)/analyze/model.o \
	$(BUILD)/analyze/compare.o $(BUILD)/analyze/trace.o $(BUILD)/analyze/oscall.o $(BUILD)/analyze/runtime.o $(BUILD)/analyze/symbolize.o $(LIB_A)
	$(call msg,LD,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(AN_EXPORT_LIBS) $(LIBS)
# pmuanalyze writes the exports (the profile, analyze/profile.c, walked by
# export.c); listed before the archives so that they resolve its symbols
$(BUILD)/pmuanalyze: $(BUILD)/analyze/profile.o $(AN_EXPORT_OBJ)
$(BUILD)/pmuanalyze: LIBS += $(AN_EXPORT_LIBS)
$(BUILD)/pmuanalyze: $(BUILD)/analyze/pmuanalyze.o $(BUILD)/analyze/model.o $(BUILD)/analyze/compare.o \
	$(BUILD)/analyze/trace.o $(BUILD)/analyze/html.o $(BUILD)/analyze/symbolize.o $(BUILD)/analyze/profile.o $(BUILD)/analyze/oscall.o $(BUILD)/analyze/runtime.o $(LIB_A)
$(BUILD)/mkfixture: $(BUILD)/fixtures/mkfixture.o $(LIB_A)
$(BUILD)/tests/helpers/sym-dump.o: ALL_CFLAGS += -Ianalyze
$(BUILD)/sym-dump: $(BUILD)/tests/helpers/sym-dump.o $(BUILD)/analyze/symbolize.o $(LIB_A)
$(BUILD)/failing-collector: $(BUILD)/fixtures/failing-collector/failing-collector.o
$(BUILD)/specgen: $(BUILD)/bundle-spec/gen.o $(LIB_A)
$(BUILD)/test-collector: $(BUILD)/tests/helpers/test-collector.o
$(BUILD)/test-marker: $(BUILD)/tests/helpers/test-marker.o
$(BUILD)/cg-smoke: $(BUILD)/tests/helpers/cg-smoke.o $(BE_A) $(LIB_A)
$(BUILD)/bench-sideband: $(BUILD)/bench/sideband.o
$(BUILD)/bench-rdpmc: $(BUILD)/bench/rdpmc.o

# a workload, not pmu code: never sanitized (LeakSanitizer cannot run under
# the recorder's ptrace)
$(BUILD)/spin-threads $(BUILD)/hw-loop $(BUILD)/thread-exec $(BUILD)/sync-writes $(BUILD)/writer: $(BUILD)/%: tests/helpers/%.c
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 $(WARN) -O2 -pthread -o $@ $<

# the sampling tests' workload (tests/helpers/hot.c): known hot functions, one
# inlined, one in a shared library; with and without frame pointers; never
# sanitized, always with debug information
$(BUILD)/libhot.so: tests/helpers/hotlib.c
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 $(WARN) -g -O2 -fno-omit-frame-pointer -fPIC -shared -Wl,--build-id -o $@ $<
$(BUILD)/hot: tests/helpers/hot.c $(BUILD)/libhot.so
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 $(WARN) -g -O2 -fno-omit-frame-pointer -Wl,--build-id -o $@ $< -L$(BUILD) -lhot -Wl,-rpath,'$$ORIGIN'
$(BUILD)/hot-nofp: tests/helpers/hot.c $(BUILD)/libhot.so
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 $(WARN) -g -O2 -fomit-frame-pointer -Wl,--build-id -o $@ $< -L$(BUILD) -lhot -Wl,-rpath,'$$ORIGIN'

# the alloc collector's interposer (backends/linux/alloc-preload.c): loaded
# into any command, so never sanitized and linked with no pmu library; frame
# pointers, so that its chain walk starts at its own frame
$(BUILD)/libpmu-alloc.so: backends/linux/alloc-preload.c backends/linux/bpf/alloc.h
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE $(WARN) -Ibackends/linux -O2 -g -fno-omit-frame-pointer -fPIC -shared \
		-fvisibility=hidden -Wl,--build-id -Wl,-z,defs -o $@ $< -ldl -lm

# the example (examples/pmu-example.c): never sanitized, frame pointers and
# debug information for the profiles and allocation chains
$(BUILD)/pmu-example: examples/pmu-example.c include/pmu/probe.h include/pmu/mark.h
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 $(WARN) -g -O2 -fno-omit-frame-pointer -Iinclude -pthread -Wl,--build-id -o $@ $<
$(BUILD)/bench-probecost: bench/probecost.c include/pmu/probe.h include/pmu/mark.h
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 $(WARN) -O2 -Iinclude -o $@ $<
$(BUILD)/bench-probecost-nohdr: bench/probecost.c
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 $(WARN) -O2 -DPMU_BENCH_NO_HEADER -o $@ $<
$(BUILD)/pmu-example-nohdr: examples/pmu-example.c
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 $(WARN) -g -O2 -fno-omit-frame-pointer -DPMU_EXAMPLE_NO_HEADER -pthread -Wl,--build-id -o $@ $<

$(filter-out $(BUILD)/spin-threads $(BUILD)/hw-loop $(BUILD)/thread-exec $(BUILD)/sync-writes $(BUILD)/writer $(BUILD)/libhot.so $(BUILD)/hot $(BUILD)/hot-nofp $(EXAMPLES),$(TOOLS) $(HELPERS)):
	$(call msg,LD,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

# the collector contract's test drives the recorder's own driver and loop
$(BUILD)/tests/unit/t-collectors.o: ALL_CFLAGS += -Irecord
$(BUILD)/tests/t-collectors: $(BUILD)/tests/unit/t-collectors.o $(filter-out $(BUILD)/record/pmurec.o,$(REC_OBJ)) \
	$(BE_A) $(LIB_A)
	$(call msg,LD,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

# the comparison's verdict and overhead sentences, from pmuanalyze's own object
$(BUILD)/tests/unit/t-compare.o: ALL_CFLAGS += -Ianalyze
# (compare.c calls the OS-event section's comparison, which needs the rest
# of the analyzer's objects)
$(BUILD)/tests/t-compare: $(BUILD)/tests/unit/t-compare.o $(BUILD)/analyze/compare.o $(BUILD)/analyze/oscall.o $(BUILD)/analyze/runtime.o \
	$(BUILD)/analyze/symbolize.o $(BUILD)/analyze/model.o $(BUILD)/analyze/profile.o $(BUILD)/analyze/trace.o \
	$(AN_EXPORT_OBJ) $(LIB_A)
	$(call msg,LD,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(AN_EXPORT_LIBS) $(LIBS)

# the symbolizer (libdwfl, libiberty) against the test workload
$(BUILD)/tests/unit/t-symbolize.o: ALL_CFLAGS += -Ianalyze
$(BUILD)/tests/t-symbolize: $(BUILD)/tests/unit/t-symbolize.o $(BUILD)/analyze/symbolize.o $(LIB_A)
	$(call msg,LD,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

$(filter-out $(BUILD)/tests/t-collectors $(BUILD)/tests/t-compare $(BUILD)/tests/t-symbolize $(BUILD)/tests/t-export,$(UNITS)): $(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(LIB_A)
	$(call msg,LD,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BE_UNITS): $(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(BE_A) $(LIB_A)
	$(call msg,LD,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

deps:
	@scripts/deps

# deps first, then a sub-make: pkg-config flags are read after the install.
check: deps
	@$(MAKE) --no-print-directory all units
	@tests/run $(BUILD)

# the hardware paths against QEMU's emulated arm64 PMU (tests/pmu/check)
check-pmu: deps
	$(Q)scripts/deps pmu
	$(Q)$(MAKE) --no-print-directory all
	$(Q)BUILD=$(BUILD) tests/pmu/check

demo: deps
	@$(MAKE) --no-print-directory all
	@scripts/demo $(BUILD)

bench: deps
	@scripts/deps bench
	@$(MAKE) --no-print-directory all
	@bench/validate $(BUILD)
	@bench/validate-samples $(BUILD)
	@bench/record $(BUILD)
	@bench/follower $(BUILD)
	@bench/fixed $(BUILD)
	@bench/count $(BUILD)
	@bench/analyze $(BUILD)
	@bench/cohort $(BUILD)
	@bench/sample $(BUILD)
	@bench/syscall $(BUILD)
	@bench/probe $(BUILD)

fixtures: all
	@fixtures/regen $(BUILD)

# Fuzzing: each harness links the library sources directly under clang's
# libFuzzer with ASan/UBSan, seeded from the fixtures.
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)
$(BUILD)/fuzz/%: tests/fuzz/%.c $(LIB_SRC) $(wildcard lib/*.h lib/*.def) $(BUILD)/gen/sysnames.inc $(BUILD)/gen/ioctlnames.inc
	$(call msg,FUZZ,$@)
	@mkdir -p $(dir $@)
	$(Q)clang -std=gnu11 -D_GNU_SOURCE -g -O1 -Ilib -Ibackends -I$(BUILD)/gen $(PKG_CFLAGS) -DPMU_VERSION='"$(VERSION)"' \
		-DPMU_REVISION='"$(REVISION)"' -DPMU_BUILD_FLAGS='"fuzz"' \
		-fsanitize=fuzzer,address,undefined -o $@ $< $(LIB_SRC) $(LIBS)
fuzz: deps
	@scripts/deps fuzz
	@$(MAKE) --no-print-directory $(FUZZ_BIN)
	@tests/fuzz/run $(BUILD) $(FUZZ_SECONDS)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(PREFIX)/include/pmu
	install -m 755 $(TOOLS) $(DESTDIR)$(PREFIX)/bin/
	$(if $(PRELOAD),install -d $(DESTDIR)$(PREFIX)/lib/pmu && install -m 755 $(PRELOAD) $(DESTDIR)$(PREFIX)/lib/pmu/)
	install -m 644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 man/*.5 $(DESTDIR)$(PREFIX)/share/man/man5/
	install -m 644 include/pmu/mark.h $(DESTDIR)$(PREFIX)/include/pmu/

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -path $(BUILD)/arm64 -prune -o -type f -name '*.d' -print 2>/dev/null)
