# Exporter benchmark: in-memory events through the exporter (CLI objects), see bench/export/run.sh.
PROGRAMS += bench/export/bench-export
bench/export/bench-export.srcs := bench/export/bench_export.c $(EXPORT_OBJS)
bench/export/bench-export.libs := -lzstd -lm
