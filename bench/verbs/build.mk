# Verbs capture benchmark (runs on the null provider from tests/verbs/build.mk).
$(B)/verbs/vb_bench: bench/verbs/vb_bench.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL) -libverbs -ldl
TEST_BINS += $(B)/verbs/vb_bench

# The floor measurement (vb_bench -F): a bench-only copy of the library with vb_floor_run() added, which
# loops over the core's rs_now()/rs_emit() alone. Same objects as $(LIB) plus one.
$(B)/verbs/floor/vb_floor.o: bench/verbs/vb_floor.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -fvisibility=hidden -c $< -o $@
$(B)/verbs/floor/librailscope.so: $(LIB_OBJS) $(B)/verbs/floor/vb_floor.o preload/librailscope.map
	$(CC) -shared -o $@ $(LIB_OBJS) $(B)/verbs/floor/vb_floor.o -Wl,--version-script=preload/librailscope.map \
	    -Wl,-z,nodelete $(LDFLAGS_ALL) -lzstd -ldl -lpthread
TEST_BINS += $(B)/verbs/floor/librailscope.so
