# Hardening test programs (tests/hardening/*.t use them) and the long campaigns behind `make soak`.
PROGRAMS += tests/hardening/hv_errno tests/hardening/killat tests/hardening/sec_writer tests/hardening/sec_dlopen
tests/hardening/sec_writer.srcs := tests/hardening/sec_writer.c $(B)/lib/tracer/writer.o $(B)/lib/formats/rtrace_tables.o
tests/hardening/sec_writer.libs := -lzstd
tests/hardening/sec_dlopen.srcs := tests/hardening/sec_dlopen.c
tests/hardening/sec_dlopen.libs := -ldl
# Multithreaded verbs workload for the kill / thread-storm / fork-storm campaigns (plain rdma-core API;
# runs on the software test NIC through LD_LIBRARY_PATH=$(B)/softnic).
PROGRAMS += $(if $(wildcard tests/hardening/hv_storm.c),tests/hardening/hv_storm)
tests/hardening/hv_storm.srcs := tests/hardening/hv_storm.c
tests/hardening/hv_storm.libs := -libverbs -lpthread
tests/hardening/hv_errno.srcs := tests/hardening/hv_errno.c
tests/hardening/hv_errno.libs := -libverbs
tests/hardening/killat.srcs := tests/hardening/killat.c

# make soak: the long versions (fuzzing >= 10 M executions, 100-run kill campaign, full suite under
# ASan/UBSan and TSan). SOAK_FUZZ_SECS per fuzz target, SOAK_JOBS workers each.
SOAK_FUZZ_SECS ?= 600
SOAK_JOBS ?= 2
soak: all fuzz
	RS_BUILD=$(abspath $(B)) RS_TOP=$(CURDIR) RS_SOAK=1 SOAK_FUZZ_SECS=$(SOAK_FUZZ_SECS) SOAK_JOBS=$(SOAK_JOBS) \
	    tests/hardening/soak.sh
.PHONY: soak
