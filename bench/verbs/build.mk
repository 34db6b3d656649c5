# Verbs capture benchmark (runs on the null provider from tests/verbs/build.mk).
PROGRAMS += verbs/vb_bench
verbs/vb_bench.srcs := bench/verbs/vb_bench.c
verbs/vb_bench.libs := -libverbs -ldl

# The floor measurement (vb_bench -F): a bench-only copy of the library with vb_floor_run() added, which
# loops over the core's rs_now()/rs_emit() alone. Same objects as $(LIB) plus one.
PROGRAMS += verbs/floor/librailscope.so
verbs/floor/librailscope.so.srcs := bench/verbs/vb_floor.c $(LIB_OBJS)
verbs/floor/librailscope.so.deps := preload/librailscope.map
verbs/floor/librailscope.so.cflags := -fvisibility=hidden
verbs/floor/librailscope.so.ldflags := -shared -Wl,--version-script=preload/librailscope.map -Wl,-z,nodelete
verbs/floor/librailscope.so.libs := -lzstd -ldl -lpthread
