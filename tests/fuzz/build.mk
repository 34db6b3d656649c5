# Fuzz targets (tests/fuzz/fuzz_*.c), two builds of each:
#  - $(B)/fuzz/<t>: libFuzzer + ASan + UBSan, built with clang when clang and its libFuzzer runtime
#    (Debian: libclang-rt-<ver>-dev) are installed and this is the plain build (SAN empty);
#  - $(B)/fuzz/<t>-replay: the same target with tests/fuzz/standalone.c as main(), built with $(CC) and
#    this build's flags, so the corpus replays under every SAN= build and without clang.
# The targets compile the reader sources themselves (no dependency on the library build's objects).
FUZZ_CC ?= clang
comma := ,
# fuzz_cli links the whole CLI and is built separately below.
FUZZ_TARGETS := $(filter-out fuzz_cli,$(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_READER := formats/reader.c formats/rtrace_tables.c
FUZZ_DEPS := tests/fuzz/fuzz_common.h formats/reader.h formats/rtrace.h $(wildcard formats/events_*.h) $(FUZZ_READER)
FUZZ_REPLAY := $(patsubst %,$(B)/fuzz/%-replay,$(FUZZ_TARGETS) fuzz_cli)
# -I. for cli.h-style includes; -w on the fuzz build: clang warns differently from gcc and the -Werror
# gate is the gcc build's job.
FUZZ_CFLAGS := -std=gnu11 -O1 -g -D_GNU_SOURCE -I. -Iformats -Itracer -Itests/fuzz -fno-omit-frame-pointer \
    -fsanitize=fuzzer,address,undefined -w
# UBSan findings halt through UBSAN_OPTIONS=halt_on_error=1 (tests/fuzz/campaign.sh), which also lets a
# campaign suppress a reported bug (tests/fuzz/known.supp) while it awaits its fix.
FUZZ_HAVE := $(if $(SAN),,$(shell printf 'int LLVMFuzzerTestOneInput(const char*d,unsigned long n){(void)d;(void)n;return 0;}' | \
    $(FUZZ_CC) -x c -fsanitize=fuzzer -o /dev/null - 2>/dev/null && echo 1))
FUZZ_BINS := $(if $(FUZZ_HAVE),$(patsubst %,$(B)/fuzz/%,$(FUZZ_TARGETS)))

# The replays: the canned recipe (mk/rules.mk).
PROGRAMS += $(patsubst %,fuzz/%-replay,$(FUZZ_TARGETS) fuzz_cli)
$(foreach t,$(FUZZ_TARGETS),$(eval fuzz/$(t)-replay.srcs := tests/fuzz/$(t).c tests/fuzz/standalone.c $(FUZZ_READER)))
$(foreach t,$(FUZZ_TARGETS),$(eval fuzz/$(t)-replay.deps := $(FUZZ_DEPS)))
$(foreach t,$(FUZZ_TARGETS) fuzz_cli,$(eval fuzz/$(t)-replay.cflags := -Itests/fuzz))
$(foreach t,$(FUZZ_TARGETS),$(eval fuzz/$(t)-replay.libs := -lzstd))

# The libFuzzer builds (clang, its own flags): not the canned recipe.
$(FUZZ_BINS): $(B)/fuzz/%: tests/fuzz/%.c $(FUZZ_DEPS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_READER) -lzstd

# The CLI target: the replay links this build's CLI objects (no main, no record); the libFuzzer build
# compiles the CLI sources again with clang (only for `make fuzz` / `make soak`: it takes a minute).
FUZZ_CLI_SRCS := $(filter-out cli/main.c cli/record.c,$(CLI_SRCS) $(SHARED_SRCS))
fuzz/fuzz_cli-replay.srcs := tests/fuzz/fuzz_cli.c tests/fuzz/standalone.c $(CLI_LIB_OBJS)
fuzz/fuzz_cli-replay.deps := tests/fuzz/fuzz_common.h
fuzz/fuzz_cli-replay.libs := -lzstd -lpthread -lm
FUZZ_CLI_FOBJS := $(patsubst %.c,$(B)/fuzz/obj/%.o,$(FUZZ_CLI_SRCS))
$(B)/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(subst =fuzzer$(comma),=fuzzer-no-link$(comma),$(FUZZ_CFLAGS)) -c $< -o $@
$(B)/fuzz/fuzz_cli: tests/fuzz/fuzz_cli.c tests/fuzz/fuzz_common.h $(FUZZ_CLI_FOBJS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ tests/fuzz/fuzz_cli.c $(FUZZ_CLI_FOBJS) -lzstd -lpthread -lm
fuzz: $(if $(FUZZ_HAVE),$(B)/fuzz/fuzz_cli)

EXTRA_TARGETS += $(FUZZ_BINS)
fuzz: $(FUZZ_BINS) $(FUZZ_REPLAY)
.PHONY: fuzz
