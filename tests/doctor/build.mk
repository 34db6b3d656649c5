# The doctor tests' stand-alone binary: cmd_doctor + checks + host-facts collector (+ the trace reader for
# --trace), nothing else.
DOCTOR_T_SRCS := $(wildcard analyzer/doctor*.c) analyzer/cli_doctor.c $(wildcard common/*.c) tests/doctor/doctor_main.c \
                 formats/reader.c formats/rtrace_tables.c
DOCTOR_T_HDRS := $(wildcard analyzer/doctor*.h) analyzer/cli.h $(wildcard common/*.h) formats/reader.h formats/rtrace.h

$(B)/tests/doctor/rs-doctor: $(DOCTOR_T_SRCS) $(DOCTOR_T_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $(DOCTOR_T_SRCS) $(LDFLAGS_ALL) -lzstd

TEST_BINS += $(B)/tests/doctor/rs-doctor

# Collector timing (not a test): hf-bench [SYSFS_ROOT]
$(B)/tests/doctor/hf-bench: tests/doctor/hf_bench.c $(wildcard common/*.c) $(wildcard common/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ tests/doctor/hf_bench.c $(wildcard common/*.c) $(LDFLAGS_ALL)

EXTRA_TARGETS += $(B)/tests/doctor/hf-bench
