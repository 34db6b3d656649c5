# railscope build. `make` builds the library, the CLI, the software NIC and the test programs;
# `make test` runs the suite (TAP via prove); `make SAN=asan|ubsan|tsan` builds into build-$(SAN)/.
# Each area may add rules in its own fragment (tracer/build.mk, tests/*/build.mk, ...), included below.

CC ?= gcc
PREFIX ?= /usr/local
CUDA_HOME ?= /usr/local/cuda
SAN ?=
BUILD ?= build$(if $(SAN),-$(SAN))
# One spelling per build directory: BUILD=$(CURDIR)/build-asan (the sanitizer tests) and BUILD=build-asan must
# name the same targets, or the dependency files of one are not seen by the other and a header change leaves
# stale objects behind.
B := $(patsubst $(CURDIR)/%,%,$(abspath $(BUILD)))
# ... and a goal spelt with the absolute path (RS_BUILD in the tests is absolute) is the same file.
ifneq ($(B),$(abspath $(B)))
$(CURDIR)/$(B)/%: $(B)/% ;
endif

WARN := -Wall -Wextra -Werror
# Ubuntu's gcc defines _FORTIFY_SOURCE by default, and with it glibc marks setresuid(), write() & co.
# warn_unused_result: the same warnings here on Debian, so -Werror fails on neither (tests/core/cred_fork.c broke the
# build on the GPU host, session 30). Not under the sanitizers, which intercept those functions themselves.
FORTIFY := $(if $(SAN),,-U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2)
BASE_CFLAGS := -std=gnu11 -O2 -g -fPIC -D_GNU_SOURCE -fno-omit-frame-pointer $(FORTIFY) $(WARN) -I. -Iformats -Itracer
ifeq ($(SAN),asan)
  SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all
endif
ifeq ($(SAN),ubsan)
  SAN_FLAGS := -fsanitize=undefined -fno-sanitize-recover=all
endif
ifeq ($(SAN),tsan)
  SAN_FLAGS := -fsanitize=thread
endif
CFLAGS_ALL := $(BASE_CFLAGS) $(SAN_FLAGS) $(CFLAGS)
# DT_RPATH, not DT_RUNPATH, for the test programs that find their fake libraries beside them (-rpath $ORIGIN): the
# loader searches RUNPATH after LD_LIBRARY_PATH, and a GPU host's LD_LIBRARY_PATH holds the real libcuda.so.1
# (tests/nccl/cuda_detach.t's probe loaded it: "undefined symbol: fake_cuda_called", session 30).
LDFLAGS_ALL := $(SAN_FLAGS) -Wl,--disable-new-dtags $(LDFLAGS)

# CUDA headers decide whether the CUDA/CUPTI/NCCL/NVTX capture is compiled in (no link-time dependency
# either way: everything is dlopen'ed at run time).
HAVE_CUDA := $(shell test -f $(CUDA_HOME)/include/cupti.h && test -f $(CUDA_HOME)/include/cuda.h && echo 1)
ifeq ($(HAVE_CUDA),1)
  CUDA_CFLAGS := -DRS_HAVE_CUDA=1 -isystem $(CUDA_HOME)/include
else
  $(info railscope: no CUDA headers under CUDA_HOME=$(CUDA_HOME): building without CUDA/CUPTI/NCCL/NVTX capture)
endif

# Sources are chosen by directory (HACKING.md has the map):
#   the library   tracer/ (recording core) + preload/ (interposers) + the format's name tables
#   the CLI       cli/ (one file per command) + analyzer/ + doctor/ + formats/ (reader) + formats/export/ + util/
#                 + tracer/safedir.c (record -o opens its directory as the library does)
#   both          hostfacts/ (snapshotted by the tracer, checked by doctor)
# preload/cuda/ holds the parts that need the CUDA headers.
LIB_SRCS := $(wildcard tracer/*.c preload/*.c) formats/rtrace_tables.c
ifeq ($(HAVE_CUDA),1)
  LIB_SRCS += $(wildcard preload/cuda/*.c)
endif
CLI_SRCS := $(wildcard cli/*.c analyzer/*.c doctor/*.c formats/*.c formats/export/*.c util/*.c) tracer/safedir.c
SHARED_SRCS := $(wildcard hostfacts/*.c)

LIB_OBJS := $(patsubst %.c,$(B)/lib/%.o,$(LIB_SRCS) $(SHARED_SRCS))
CLI_OBJS := $(patsubst %.c,$(B)/cli/%.o,$(CLI_SRCS) $(SHARED_SRCS))
# The recording core alone (no interposers), for test and bench programs that link it statically.
CORE_OBJS := $(patsubst %.c,$(B)/lib/%.o,$(wildcard tracer/*.c) formats/rtrace_tables.c $(SHARED_SRCS))
# The exporters with the reader they run on.
EXPORT_OBJS := $(patsubst %.c,$(B)/cli/%.o,$(wildcard formats/export/*.c) formats/reader.c formats/rtrace_tables.c util/xalloc.c)
# The CLI without its main() and the record launcher, for programs that call cmd_<name>() in-process.
CLI_LIB_OBJS := $(filter-out $(B)/cli/cli/main.o $(B)/cli/cli/record.o,$(CLI_OBJS))

LIB := $(B)/librailscope.so
CLI := $(B)/railscope

all: $(LIB) $(CLI)

$(B)/lib/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(CUDA_CFLAGS) -fvisibility=hidden -MMD -MP -c $< -o $@

$(B)/cli/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

# The object lists, rewritten only when they change: a source removed (or added with an old timestamp) relinks.
$(B)/lib.objs: FORCE
	@mkdir -p $(@D); echo '$(LIB_OBJS)' | cmp -s - $@ || echo '$(LIB_OBJS)' >$@
$(B)/cli.objs: FORCE
	@mkdir -p $(@D); echo '$(CLI_OBJS)' | cmp -s - $@ || echo '$(CLI_OBJS)' >$@

$(LIB): $(LIB_OBJS) preload/librailscope.map $(B)/lib.objs
	$(CC) -shared -o $@ $(LIB_OBJS) -Wl,--version-script=preload/librailscope.map -Wl,-z,nodelete \
	    $(LDFLAGS_ALL) -lzstd -ldl -lpthread

$(CLI): $(CLI_OBJS) $(B)/cli.objs
	$(CC) -o $@ $(CLI_OBJS) $(LDFLAGS_ALL) -lzstd -lpthread -lm

# Fragments: each declares its programs (PROGRAMS += name, name.srcs, name.libs ...: mk/rules.mk, included
# after them, writes the rules); the few rules that are not "compile and link one program" stay explicit.
TEST_BINS :=
EXTRA_TARGETS :=
PROGRAMS :=
ON_DEMAND_PROGRAMS :=
-include $(wildcard */build.mk */*/build.mk)
include mk/rules.mk
all: $(EXTRA_TARGETS) $(TEST_BINS)

# Tests: every tests/**/*.t is a TAP program. They find the build through RS_BUILD.
# prove -j runs the files in the order given: the longest first (each 1-5 min here), so that the last minutes
# are not one long file beside an idle slot; then the rest by name. (Per-file times: docs/dev/journal/
# hardening.md, session 10. A file missing from TESTS_ALL is left out of TESTS_FIRST.)
# python3 runs as its interpreter when PATH's python3 is a version manager's shim: pyenv's starts bash and ~60
# processes a call (0.4 s idle, 2.5 s at load 8 on the 2-core dev VM; the suite calls python3 ~200 times),
# and prepends the same directory for the program it starts.
PROVE_JOBS ?= 2
TESTS_ALL := $(sort $(wildcard tests/*/*.t))
TESTS_FIRST := $(filter $(TESTS_ALL),tests/hardening/sanitizers.t tests/hardening/sanitizers_preload.t \
    tests/cli/budget.t tests/analyzer/budget_run.t tests/corpus/corpus.t tests/nccl/cuda_detach.t \
    tests/gpu/lockstep.t tests/gpu/fixtures.t tests/softnic/busyhost.t tests/core/reader.t)
# A failed file leaves a digest in $(B)/test-failures (the TAP helpers: its failed checks, its last diagnostics),
# printed after prove's summary: CI's log keeps only the end of the output. (tests/harness/digest.t runs this
# recipe on a planted file with its own FAIL_DIGEST.)
FAIL_DIGEST ?= $(abspath $(B))/test-failures
test: all
	@py=$$(python3 -c 'import os, sys; print(os.path.dirname(sys.executable))' 2>/dev/null); \
	[ "$$(command -v python3)" = "$$py/python3" ] && py=; \
	dig=$(FAIL_DIGEST); rm -rf "$$dig" && mkdir -p "$$dig" || exit 1; \
	set -x; PATH=$${py:+$$py:}$$PATH RS_BUILD=$(abspath $(B)) RS_TOP=$(CURDIR) RS_FAIL_DIGEST=$$dig \
	    prove -j$(PROVE_JOBS) --timer $(TESTS_FIRST) $(filter-out $(TESTS_FIRST),$(TESTS_ALL)) && exit 0; \
	rc=$$?; set +x; echo "Why they failed (the TAP helpers' digests, $$dig; nested runs under a sanitizer too):"; \
	cat "$$dig"/* 2>/dev/null | head -100; exit $$rc

bench: all
	RS_BUILD=$(abspath $(B)) RS_TOP=$(CURDIR) ./bench/run-all.sh

demo: all
	RS_BUILD=$(abspath $(B)) RS_TOP=$(CURDIR) ./scripts/demo.sh

deps:
	./scripts/install-deps.sh

# The C format (.clang-format, clang-format 14): `make format` applies it, `make format-check` is CI's check.
format:
	./scripts/check-format.sh --fix
format-check:
	./scripts/check-format.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/railscope $(DESTDIR)$(PREFIX)/include
	install -m 0755 $(CLI) $(DESTDIR)$(PREFIX)/bin/railscope
	install -m 0755 $(LIB) $(DESTDIR)$(PREFIX)/lib/railscope/librailscope.so
	install -m 0644 include/railscope.h $(DESTDIR)$(PREFIX)/include/railscope.h

clean:
	rm -rf build build-*

.PHONY: all test bench demo deps install clean format format-check FORCE
FORCE:
-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d)
