# The doctor tests' stand-alone binary: cmd_doctor + checks + host-facts collector (+ the trace reader for
# --trace, and cli/args.c for the wording of usage errors), nothing else; and the collector's timing (not a
# test): hf-bench [SYSFS_ROOT].
PROGRAMS += tests/doctor/rs-doctor tests/doctor/hf-bench
tests/doctor/rs-doctor.srcs := $(wildcard doctor/*.c) cli/doctor.c $(wildcard hostfacts/*.c) \
    tests/doctor/doctor_main.c formats/reader.c formats/rtrace_tables.c util/xalloc.c \
    cli/args.c formats/export/export_out.c
tests/doctor/rs-doctor.deps := $(wildcard doctor/*.h) cli/cli.h util/xalloc.h $(wildcard hostfacts/*.h) formats/reader.h \
    formats/rtrace.h formats/export/export.h formats/export/export_int.h
tests/doctor/rs-doctor.libs := -lzstd
tests/doctor/hf-bench.srcs := tests/doctor/hf_bench.c $(wildcard hostfacts/*.c)
tests/doctor/hf-bench.deps := $(wildcard hostfacts/*.h)
