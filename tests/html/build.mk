# The HTML report's edge-case test: renders hand-built models through analyzer/report_html.c (CLI objects).
HTML_EDGE := $(B)/tests/html/html_edge
HTML_EDGE_OBJS := $(B)/cli/analyzer/report_html.o $(B)/cli/formats/export_xlate.o $(B)/cli/formats/export_verbs.o $(B)/cli/formats/export_cuda.o $(B)/cli/formats/export_nccl.o $(B)/cli/formats/export_out.o \
    $(B)/cli/formats/export_pb.o $(B)/cli/formats/export_json.o $(B)/cli/formats/reader.o $(B)/cli/formats/rtrace_tables.o
$(HTML_EDGE): tests/html/html_edge.c $(HTML_EDGE_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ tests/html/html_edge.c $(HTML_EDGE_OBJS) $(LDFLAGS_ALL) -lzstd -lm
TEST_BINS += $(HTML_EDGE)
