# rs-fmtcheck: the report's fast "%.9g" (analyzer/fmt_num.c) against printf, for tests/analyzer/fmt.t.
PROGRAMS += tests/analyzer/rs-fmtcheck
tests/analyzer/rs-fmtcheck.srcs := tests/analyzer/fmtcheck.c $(B)/cli/analyzer/fmt_num.o
tests/analyzer/rs-fmtcheck.deps := analyzer/analyze_int.h
tests/analyzer/rs-fmtcheck.libs := -lm
# Verbs programs with planted truth for the analyzer's software-NIC tests: a ring AllReduce with a late rank
# (late_ring), a program with a known number of verbs failures (verbs_faults) and request/response traffic with
# step marks (answer_chain).
AN_VERBS := late_ring verbs_faults answer_chain
PROGRAMS += $(addprefix tests/analyzer/,$(AN_VERBS))
$(foreach p,$(AN_VERBS),$(eval tests/analyzer/$(p).srcs := tests/analyzer/$(p).c examples/ex_common.c))
$(foreach p,$(AN_VERBS),$(eval tests/analyzer/$(p).deps := examples/ex_common.h))
$(foreach p,$(AN_VERBS),$(eval tests/analyzer/$(p).libs := -libverbs -lpthread -ldl))
# rs-mkcraft: crafted traces (a queue of unmatched completions, communicators of different membership) through
# the real writer, for the analyzer's robustness and accuracy tests (tests/analyzer/wc_lookup.t ...).
PROGRAMS += tests/analyzer/rs-mkcraft
tests/analyzer/rs-mkcraft.srcs := tests/analyzer/mkcraft.c $(B)/lib/tracer/writer.o $(B)/lib/formats/rtrace_tables.o
tests/analyzer/rs-mkcraft.deps := tracer/writer.h formats/rtrace.h tests/analyzer/craft.h
tests/analyzer/rs-mkcraft.libs := -lzstd -lpthread
# rs-mkgd: crafted traces with planted GPUDirect cases (device memory registered or posted, bounce copies, verbs
# not captured) and H2D copies from pageable and pinned memory (tests/analyzer/gd_report.t, h2d_share.t).
PROGRAMS += tests/analyzer/rs-mkgd
tests/analyzer/rs-mkgd.srcs := tests/analyzer/mkgd.c $(B)/lib/tracer/writer.o $(B)/lib/formats/rtrace_tables.o
tests/analyzer/rs-mkgd.deps := tests/analyzer/craft.h tracer/writer.h formats/rtrace.h formats/events_verbs.h
tests/analyzer/rs-mkgd.libs := -lzstd -lpthread
# rs-retrace: a real recorded trace edited as another recording would have made it (events of some kinds left out,
# host facts added), for the analyzer's tests on the GPU fixtures (tests/analyzer/nccl_masked.t).
PROGRAMS += tests/analyzer/rs-retrace
tests/analyzer/rs-retrace.srcs := tests/analyzer/retrace.c $(B)/cli/formats/reader.o $(B)/lib/tracer/writer.o \
    $(B)/lib/formats/rtrace_tables.o
tests/analyzer/rs-retrace.deps := formats/reader.h tracer/writer.h formats/rtrace.h
tests/analyzer/rs-retrace.libs := -lzstd -lpthread
