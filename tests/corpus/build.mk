# The tricky-file corpus: tests/corpus/files/*.rtrace (checked in) with tests/corpus/EXPECT.
# rs-readcheck drains files with the reader and prints status/events per file (corpus.t compares).
# `make corpus-regen` rebuilds the files with mkcorpus (the real writer makes the base trace).
PROGRAMS += tests/corpus/rs-readcheck
tests/corpus/rs-readcheck.srcs := tests/corpus/readcheck.c formats/reader.c formats/rtrace_tables.c
tests/corpus/rs-readcheck.deps := formats/reader.h formats/rtrace.h
tests/corpus/rs-readcheck.libs := -lzstd
ON_DEMAND_PROGRAMS += tests/corpus/mkcorpus
tests/corpus/mkcorpus.srcs := tests/corpus/mkcorpus.c formats/reader.c $(B)/lib/tracer/writer.o \
    $(B)/lib/formats/rtrace_tables.o
tests/corpus/mkcorpus.deps := tests/fuzz/fuzz_common.h
tests/corpus/mkcorpus.cflags := -Itests/fuzz
tests/corpus/mkcorpus.libs := -lzstd
corpus-regen: $(B)/tests/corpus/mkcorpus
	rm -rf tests/corpus/files && $(B)/tests/corpus/mkcorpus tests/corpus/files tests/corpus/EXPECT
.PHONY: corpus-regen
