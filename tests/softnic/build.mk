# softnic: the software RDMA test NIC, a replacement libibverbs.so.1 used through LD_LIBRARY_PATH.
SOFTNIC_SRCS := $(wildcard tests/softnic/sn_*.c)
SOFTNIC_OBJS := $(patsubst tests/softnic/%.c,$(B)/softnic/obj/%.o,$(SOFTNIC_SRCS))
SOFTNIC_LIB := $(B)/softnic/libibverbs.so.1

$(B)/softnic/obj/%.o: tests/softnic/%.c tests/softnic/sn.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -fvisibility=hidden -MMD -MP -c $< -o $@

$(SOFTNIC_LIB): $(SOFTNIC_OBJS) tests/softnic/libibverbs.map
	$(CC) -shared -o $@ $(SOFTNIC_OBJS) -Wl,-soname,libibverbs.so.1 \
	    -Wl,--version-script=tests/softnic/libibverbs.map $(LDFLAGS_ALL) -lpthread
	ln -sf libibverbs.so.1 $(B)/softnic/libibverbs.so

# test programs that drive the NIC (plain rdma-core API, linked against the system libibverbs)
SOFTNIC_TEST_SRCS := $(wildcard tests/softnic/t_*.c)
SOFTNIC_TEST_BINS := $(patsubst tests/softnic/%.c,$(B)/softnic/%,$(SOFTNIC_TEST_SRCS))
$(B)/softnic/t_%: tests/softnic/t_%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL) -libverbs -lpthread -lm -ldl

EXTRA_TARGETS += $(SOFTNIC_LIB)
TEST_BINS += $(SOFTNIC_TEST_BINS)
-include $(SOFTNIC_OBJS:.o=.d)
