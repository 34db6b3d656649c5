# The HTML report's edge-case test: renders hand-built models through analyzer/report_html.c (CLI objects).
HTML_EDGE := $(B)/tests/html/html_edge
HTML_EDGE_OBJS := $(B)/cli/analyzer/report_html.o $(EXPORT_OBJS)
$(HTML_EDGE): tests/html/html_edge.c $(HTML_EDGE_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ tests/html/html_edge.c $(HTML_EDGE_OBJS) $(LDFLAGS_ALL) -lzstd -lm
TEST_BINS += $(HTML_EDGE)
