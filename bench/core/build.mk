# Benchmarks of the recording core: linked statically with the core's objects (see tests/core/build.mk).
PROGRAMS += bench/core/bench_core bench/core/ring_model
bench/core/bench_core.srcs := bench/core/bench_core.c $(CORE_OBJS)
bench/core/bench_core.libs := -lzstd -ldl -lpthread
bench/core/ring_model.srcs := bench/core/ring_model.c
bench/core/ring_model.libs := -lpthread
PROGRAMS += bench/core/forklat
bench/core/forklat.srcs := bench/core/forklat.c
PROGRAMS += bench/core/execlat bench/core/exectiny
bench/core/execlat.srcs := bench/core/execlat.c
bench/core/exectiny.srcs := bench/core/exectiny.c
