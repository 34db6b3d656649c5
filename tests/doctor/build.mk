# The doctor tests' stand-alone binary: cmd_doctor + checks + host-facts collector (+ the trace reader for
# --trace), nothing else.
DOCTOR_T_SRCS := $(wildcard doctor/*.c) cli/doctor.c $(wildcard hostfacts/*.c) tests/doctor/doctor_main.c \
                 formats/reader.c formats/rtrace_tables.c
DOCTOR_T_HDRS := $(wildcard doctor/*.h) cli/cli.h $(wildcard hostfacts/*.h) formats/reader.h formats/rtrace.h

$(B)/tests/doctor/rs-doctor: $(DOCTOR_T_SRCS) $(DOCTOR_T_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $(DOCTOR_T_SRCS) $(LDFLAGS_ALL) -lzstd

TEST_BINS += $(B)/tests/doctor/rs-doctor

# Collector timing (not a test): hf-bench [SYSFS_ROOT]
$(B)/tests/doctor/hf-bench: tests/doctor/hf_bench.c $(wildcard hostfacts/*.c) $(wildcard hostfacts/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ tests/doctor/hf_bench.c $(wildcard hostfacts/*.c) $(LDFLAGS_ALL)

EXTRA_TARGETS += $(B)/tests/doctor/hf-bench
