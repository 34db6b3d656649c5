# Test programs that drive the software NIC (tools/softnic): plain rdma-core API, linked against the system
# libibverbs and run with LD_LIBRARY_PATH=$(B)/softnic.
SOFTNIC_TEST_SRCS := $(wildcard tests/softnic/t_*.c)
SOFTNIC_TEST_BINS := $(patsubst tests/softnic/%.c,$(B)/softnic/%,$(SOFTNIC_TEST_SRCS))
$(B)/softnic/t_%: tests/softnic/t_%.c tests/softnic/t_util.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL) -libverbs -lpthread -lm -ldl

TEST_BINS += $(SOFTNIC_TEST_BINS)
