# pmu: one non-recursive Makefile.
#   make            build the tools into build/
#   make check      unit (TAP) + CLI (bats) tests, ends with "N passed, N failed"
#   make demo       validate and describe the built-in demo bundle
#   make bench      validation vs sha256sum (bench/validate), recorder cost vs true/perf (bench/record),
#                   pmurec -- true's fixed cost vs perf stat with the same events (bench/fixed),
#                   counting vs perf stat and in-process counter reads (bench/count),
#                   pmuanalyze vs perf report (bench/analyze), pmuvalidate on large cohorts (bench/cohort)
#   make fuzz       libFuzzer harnesses for a bounded time (clang)
#   make install    PREFIX=/usr/local DESTDIR=
# Options: SANITIZE=address,undefined  V=1  FUZZ_SECONDS=60

VERSION    := 0.1.0
PREFIX     ?= /usr/local
DESTDIR    ?=
BUILD      ?= build
CC         ?= cc
SANITIZE   ?=
FUZZ_SECONDS ?= 60

PKGS       := libarchive jansson libcrypto libelf libdw
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libarchive is loaded on first use (lib/archive_dl.h says why), not linked:
# the headers come from pkg-config, the soname from the library built against
PKG_LIBS   := $(shell pkg-config --libs $(filter-out libarchive,$(PKGS)) 2>/dev/null)
ARCHIVE_SONAME := $(shell objdump -p "$$(pkg-config --variable=libdir libarchive 2>/dev/null)/libarchive.so" 2>/dev/null | sed -n 's/^ *SONAME *//p')
REVISION   := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)

WARN       := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wno-missing-field-initializers
CFLAGS     ?= -O2 -g
BASE_CFLAGS := -std=gnu11 -D_GNU_SOURCE $(WARN) -Ilib -Ibackends -Iinclude $(PKG_CFLAGS) -pthread \
	-DPMU_VERSION='"$(VERSION)"' -DPMU_REVISION='"$(REVISION)"' \
	$(if $(ARCHIVE_SONAME),-DPMU_LIBARCHIVE_SONAME='"$(ARCHIVE_SONAME)"') \
	-DPMU_BUILD_FLAGS='"$(strip $(CFLAGS) $(if $(SANITIZE),-fsanitize=$(SANITIZE)))"'
ifneq ($(SANITIZE),)
BASE_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS     += -fsanitize=$(SANITIZE)
endif
ALL_CFLAGS := $(BASE_CFLAGS) $(CFLAGS)
LIBS       := $(PKG_LIBS) -pthread -ldl -lm

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-7s %s\n' $(1) $(2)
endif

.DELETE_ON_ERROR:
.PHONY: all check units demo bench fuzz install clean deps fixtures


LIB_SRC  := $(sort $(wildcard lib/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
LIB_A    := $(BUILD)/libpmu.a
BACKEND  ?= linux
BE_SRC   := $(sort $(wildcard backends/$(BACKEND)/*.c))
BE_OBJ   := $(BE_SRC:%.c=$(BUILD)/%.o)
BE_A     := $(BUILD)/libbackend-$(BACKEND).a

TOOLS    := $(BUILD)/pmurec $(BUILD)/pmuvalidate $(BUILD)/pmuanalyze
HELPERS  := $(BUILD)/mkfixture $(BUILD)/failing-collector $(BUILD)/specgen $(BUILD)/test-collector $(BUILD)/test-marker $(BUILD)/spin-threads $(BUILD)/thread-exec $(BUILD)/cg-smoke $(BUILD)/bench-sideband
UNIT_SRC := $(sort $(wildcard tests/unit/t-*.c))
UNITS    := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz-*.c))

all: $(TOOLS) $(HELPERS)

units: $(UNITS)

$(BUILD)/%.o: %.c
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(LIB_A): $(LIB_OBJ)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BE_A): $(BE_OBJ)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/pmurec: $(BUILD)/record/pmurec.o $(BUILD)/record/external.o $(BUILD)/record/control.o $(BUILD)/record/bounds.o $(BE_A) $(LIB_A)
$(BUILD)/pmuvalidate: $(BUILD)/validate/pmuvalidate.o $(LIB_A)
$(BUILD)/pmuanalyze: $(BUILD)/analyze/pmuanalyze.o $(BUILD)/analyze/model.o $(BUILD)/analyze/compare.o \
	$(BUILD)/analyze/trace.o $(BUILD)/analyze/html.o $(LIB_A)
$(BUILD)/mkfixture: $(BUILD)/fixtures/mkfixture.o $(LIB_A)
$(BUILD)/failing-collector: $(BUILD)/fixtures/failing-collector/failing-collector.o
$(BUILD)/specgen: $(BUILD)/bundle-spec/gen.o $(LIB_A)
$(BUILD)/test-collector: $(BUILD)/tests/helpers/test-collector.o
$(BUILD)/test-marker: $(BUILD)/tests/helpers/test-marker.o
$(BUILD)/cg-smoke: $(BUILD)/tests/helpers/cg-smoke.o $(BE_A) $(LIB_A)
$(BUILD)/bench-sideband: $(BUILD)/bench/sideband.o

# a workload, not pmu code: never sanitized (LeakSanitizer cannot run under
# the recorder's ptrace)
$(BUILD)/spin-threads $(BUILD)/thread-exec: $(BUILD)/%: tests/helpers/%.c
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 $(WARN) -O2 -pthread -o $@ $<

$(filter-out $(BUILD)/spin-threads $(BUILD)/thread-exec,$(TOOLS) $(HELPERS)):
	$(call msg,LD,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

$(UNITS): $(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(LIB_A)
	$(call msg,LD,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

deps:
	@scripts/deps

# deps first, then a sub-make: pkg-config flags are read after the install.
check: deps
	@$(MAKE) --no-print-directory all units
	@tests/run $(BUILD)

demo: deps
	@$(MAKE) --no-print-directory all
	@scripts/demo $(BUILD)

bench: deps
	@scripts/deps bench
	@$(MAKE) --no-print-directory all
	@bench/validate $(BUILD)
	@bench/record $(BUILD)
	@bench/fixed $(BUILD)
	@bench/count $(BUILD)
	@bench/analyze $(BUILD)
	@bench/cohort $(BUILD)

fixtures: all
	@fixtures/regen $(BUILD)

# Fuzzing: each harness links the library sources directly under clang's
# libFuzzer with ASan/UBSan, seeded from the fixtures.
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)
$(BUILD)/fuzz/%: tests/fuzz/%.c $(LIB_SRC) $(wildcard lib/*.h lib/*.def)
	$(call msg,FUZZ,$@)
	@mkdir -p $(dir $@)
	$(Q)clang -std=gnu11 -D_GNU_SOURCE -g -O1 -Ilib $(PKG_CFLAGS) -DPMU_VERSION='"$(VERSION)"' \
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
	install -m 644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 man/*.5 $(DESTDIR)$(PREFIX)/share/man/man5/
	install -m 644 include/pmu/mark.h $(DESTDIR)$(PREFIX)/include/pmu/

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
