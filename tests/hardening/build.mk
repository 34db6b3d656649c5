# Hardening test programs (tests/hardening/*.t use them) and the long campaigns behind `make soak`.
HARD_DIR := $(B)/tests/hardening
$(HARD_DIR)/sec_writer: tests/hardening/sec_writer.c $(B)/lib/tracer/writer.o $(B)/lib/formats/rtrace_tables.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(B)/lib/tracer/writer.o $(B)/lib/formats/rtrace_tables.o $(LDFLAGS_ALL) -lzstd
$(HARD_DIR)/sec_dlopen: tests/hardening/sec_dlopen.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL) -ldl
# Multithreaded verbs workload for the kill / thread-storm / fork-storm campaigns (plain rdma-core API;
# runs on the software test NIC through LD_LIBRARY_PATH=$(B)/softnic).
$(HARD_DIR)/hv_storm: tests/hardening/hv_storm.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL) -libverbs -lpthread
$(HARD_DIR)/hv_errno: tests/hardening/hv_errno.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL) -libverbs
$(HARD_DIR)/killat: tests/hardening/killat.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL)
TEST_BINS += $(HARD_DIR)/hv_errno $(HARD_DIR)/killat $(HARD_DIR)/sec_writer $(HARD_DIR)/sec_dlopen $(if $(wildcard tests/hardening/hv_storm.c),$(HARD_DIR)/hv_storm)

# make soak: the long versions (fuzzing >= 10 M executions, 100-run kill campaign, full suite under
# ASan/UBSan and TSan). SOAK_FUZZ_SECS per fuzz target, SOAK_JOBS workers each.
SOAK_FUZZ_SECS ?= 600
SOAK_JOBS ?= 2
soak: all fuzz
	RS_BUILD=$(abspath $(B)) RS_TOP=$(CURDIR) RS_SOAK=1 SOAK_FUZZ_SECS=$(SOAK_FUZZ_SECS) SOAK_JOBS=$(SOAK_JOBS) \
	    tests/hardening/soak.sh
.PHONY: soak
