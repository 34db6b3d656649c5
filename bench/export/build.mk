# Exporter benchmark: in-memory events through the exporter (CLI objects), see bench/export/run.sh.
BENCH_EXPORT := $(B)/bench/export/bench-export
BENCH_EXPORT_OBJS := $(EXPORT_OBJS)
$(BENCH_EXPORT): bench/export/bench_export.c $(BENCH_EXPORT_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ bench/export/bench_export.c $(BENCH_EXPORT_OBJS) $(LDFLAGS_ALL) -lzstd -lm
EXTRA_TARGETS += $(BENCH_EXPORT)
