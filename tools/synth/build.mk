# rs-synth, the synthetic cluster generator (ground truth for the analyzer's tests, the report benchmark and
# the HTML/export tests). It writes through the real trace writer, linked statically from the library's objects.
SYNTH := $(B)/synth/rs-synth
SYNTH_OBJS := $(B)/lib/tracer/writer.o $(B)/lib/formats/rtrace_tables.o
$(SYNTH): tools/synth/synth.c $(SYNTH_OBJS) tracer/writer.h formats/rtrace.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ tools/synth/synth.c $(SYNTH_OBJS) $(LDFLAGS_ALL) -lzstd -lpthread -lm
EXTRA_TARGETS += $(SYNTH)
