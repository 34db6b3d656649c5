# rs-synth, the synthetic cluster generator (ground truth for the analyzer's tests, the report benchmark and
# the HTML/export tests). It writes through the real trace writer, linked statically from the library's objects.
PROGRAMS += synth/rs-synth
synth/rs-synth.srcs := tools/synth/synth.c $(B)/lib/tracer/writer.o $(B)/lib/formats/rtrace_tables.o
synth/rs-synth.deps := tracer/writer.h formats/rtrace.h
synth/rs-synth.libs := -lzstd -lpthread -lm
