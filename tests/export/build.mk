# The exporter's test generator: small deterministic traces through the real writer (static link of the
# library's writer object, as tools/synth does).
EXPORT_GEN := $(B)/tests/export/rs-export-gen
$(EXPORT_GEN): tests/export/gen.c $(B)/lib/tracer/writer.o $(B)/lib/formats/rtrace_tables.o tracer/writer.h formats/rtrace.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ tests/export/gen.c $(B)/lib/tracer/writer.o $(B)/lib/formats/rtrace_tables.o $(LDFLAGS_ALL) -lzstd -lpthread -lm
TEST_BINS += $(EXPORT_GEN)
