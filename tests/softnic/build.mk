# Test programs that drive the software NIC (tools/softnic): plain rdma-core API, linked against the system
# libibverbs and run with LD_LIBRARY_PATH=$(B)/softnic.
SOFTNIC_TESTS := $(patsubst tests/softnic/%.c,softnic/%,$(wildcard tests/softnic/t_*.c))
PROGRAMS += $(SOFTNIC_TESTS)
$(foreach t,$(SOFTNIC_TESTS),$(eval $(t).srcs := tests/$(t).c))
$(foreach t,$(SOFTNIC_TESTS),$(eval $(t).deps := tests/softnic/t_util.h))
$(foreach t,$(SOFTNIC_TESTS),$(eval $(t).libs := -libverbs -lpthread -lm -ldl))
