# The exporter's test generator: small deterministic traces through the real writer (static link of the
# library's writer object, as tools/synth does).
PROGRAMS += tests/export/rs-export-gen
tests/export/rs-export-gen.srcs := tests/export/gen.c $(B)/lib/tracer/writer.o $(B)/lib/formats/rtrace_tables.o
tests/export/rs-export-gen.deps := tracer/writer.h formats/rtrace.h
tests/export/rs-export-gen.libs := -lzstd -lpthread -lm
# rs-export-rowgen: crafted one-rank traces for the row guard and the verbs waits (tests/export/rows.t)
PROGRAMS += tests/export/rs-export-rowgen
tests/export/rs-export-rowgen.srcs := tests/export/rowgen.c $(B)/lib/tracer/writer.o $(B)/lib/formats/rtrace_tables.o
tests/export/rs-export-rowgen.deps := tracer/writer.h formats/rtrace.h tests/analyzer/craft.h
tests/export/rs-export-rowgen.libs := -lzstd -lpthread -lm
