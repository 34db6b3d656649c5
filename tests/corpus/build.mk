# The tricky-file corpus: tests/corpus/files/*.rtrace (checked in) with tests/corpus/EXPECT.
# rs-readcheck drains files with the reader and prints status/events per file (corpus.t compares).
# `make corpus-regen` rebuilds the files with mkcorpus (the real writer makes the base trace).
READCHECK := $(B)/tests/corpus/rs-readcheck
MKCORPUS := $(B)/tests/corpus/mkcorpus
$(READCHECK): tests/corpus/readcheck.c formats/reader.c formats/rtrace_tables.c formats/reader.h formats/rtrace.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ tests/corpus/readcheck.c formats/reader.c formats/rtrace_tables.c $(LDFLAGS_ALL) -lzstd
$(MKCORPUS): tests/corpus/mkcorpus.c tests/fuzz/fuzz_common.h $(B)/lib/tracer/writer.o $(B)/lib/formats/rtrace_tables.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests/fuzz -o $@ tests/corpus/mkcorpus.c formats/reader.c $(B)/lib/tracer/writer.o \
	    $(B)/lib/formats/rtrace_tables.o $(LDFLAGS_ALL) -lzstd
TEST_BINS += $(READCHECK)
corpus-regen: $(MKCORPUS)
	rm -rf tests/corpus/files && $(MKCORPUS) tests/corpus/files tests/corpus/EXPECT
.PHONY: corpus-regen
