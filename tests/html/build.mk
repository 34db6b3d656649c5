# The HTML report's edge-case test: renders hand-built models through analyzer/report_html.c (CLI objects).
PROGRAMS += tests/html/html_edge
tests/html/html_edge.srcs := tests/html/html_edge.c $(B)/cli/analyzer/report_html.o $(EXPORT_OBJS)
tests/html/html_edge.libs := -lzstd -lm
