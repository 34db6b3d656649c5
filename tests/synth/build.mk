# The synthetic cluster generator (ground truth for the analyzer's tests and the report benchmark).
# It writes through the real trace writer, linked statically from the library's objects.
SYNTH := $(B)/tests/synth/rs-synth
SYNTH_OBJS := $(B)/lib/tracer/writer.o $(B)/lib/formats/rtrace_tables.o
$(SYNTH): tests/synth/synth.c $(SYNTH_OBJS) tracer/writer.h formats/rtrace.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ tests/synth/synth.c $(SYNTH_OBJS) $(LDFLAGS_ALL) -lzstd -lpthread -lm
TEST_BINS += $(SYNTH)
