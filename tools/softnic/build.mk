# softnic: the software RDMA test NIC, a replacement libibverbs.so.1 used through LD_LIBRARY_PATH=$(B)/softnic.
SOFTNIC_SRCS := $(wildcard tools/softnic/sn_*.c)
SOFTNIC_OBJS := $(patsubst tools/softnic/%.c,$(B)/softnic/obj/%.o,$(SOFTNIC_SRCS))
SOFTNIC_LIB := $(B)/softnic/libibverbs.so.1

$(B)/softnic/obj/%.o: tools/softnic/%.c tools/softnic/sn.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -fvisibility=hidden -MMD -MP -c $< -o $@

$(SOFTNIC_LIB): $(SOFTNIC_OBJS) tools/softnic/libibverbs.map
	$(CC) -shared -o $@ $(SOFTNIC_OBJS) -Wl,-soname,libibverbs.so.1 \
	    -Wl,--version-script=tools/softnic/libibverbs.map $(LDFLAGS_ALL) -lpthread
	ln -sf libibverbs.so.1 $(B)/softnic/libibverbs.so

EXTRA_TARGETS += $(SOFTNIC_LIB)
-include $(SOFTNIC_OBJS:.o=.d)
