# Benchmarks of the recording core: linked statically with the core's objects (see tests/core/build.mk).
BENCH_CORE_OBJS := $(CORE_OBJS)

$(B)/bench/core/bench_core: bench/core/bench_core.c $(BENCH_CORE_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BENCH_CORE_OBJS) $(LDFLAGS_ALL) -lzstd -ldl -lpthread

EXTRA_TARGETS += $(B)/bench/core/bench_core

$(B)/bench/core/ring_model: bench/core/ring_model.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL) -lpthread

EXTRA_TARGETS += $(B)/bench/core/ring_model
