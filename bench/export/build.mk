# Exporter benchmark: in-memory events through the exporter (CLI objects), see bench/export/run.sh.
BENCH_EXPORT := $(B)/bench/export/bench-export
BENCH_EXPORT_OBJS := $(B)/cli/formats/export_xlate.o $(B)/cli/formats/export_verbs.o $(B)/cli/formats/export_cuda.o $(B)/cli/formats/export_nccl.o $(B)/cli/formats/export_out.o $(B)/cli/formats/export_pb.o \
    $(B)/cli/formats/export_json.o $(B)/cli/formats/reader.o $(B)/cli/formats/rtrace_tables.o
$(BENCH_EXPORT): bench/export/bench_export.c $(BENCH_EXPORT_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ bench/export/bench_export.c $(BENCH_EXPORT_OBJS) $(LDFLAGS_ALL) -lzstd -lm
EXTRA_TARGETS += $(BENCH_EXPORT)
