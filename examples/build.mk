# examples: small real verbs programs (plain rdma-core API, linked against the system libibverbs;
# LD_LIBRARY_PATH=$(B)/softnic runs them on the software test NIC).
EXAMPLE_BINS := $(B)/examples/verbs_pingpong $(B)/examples/ring_allreduce
$(B)/examples/%: examples/%.c examples/ex_common.c examples/ex_common.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< examples/ex_common.c $(LDFLAGS_ALL) -libverbs -lpthread
EXTRA_TARGETS += $(EXAMPLE_BINS)
