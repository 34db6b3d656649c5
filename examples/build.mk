# examples: small real verbs programs (plain rdma-core API, linked against the system libibverbs;
# LD_LIBRARY_PATH=$(B)/softnic runs them on the software test NIC).
EXAMPLES := verbs_pingpong ring_allreduce
PROGRAMS += $(addprefix examples/,$(EXAMPLES))
$(foreach e,$(EXAMPLES),$(eval examples/$(e).srcs := examples/$(e).c examples/ex_common.c))
$(foreach e,$(EXAMPLES),$(eval examples/$(e).deps := examples/ex_common.h))
$(foreach e,$(EXAMPLES),$(eval examples/$(e).libs := -libverbs -lpthread))
