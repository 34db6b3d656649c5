# Test programs of the recording core. They link the core's objects statically (no LD_PRELOAD needed),
# and the reader's objects for checking what was written.
CORE_LIB_OBJS := $(CORE_OBJS)
CORE_READER_OBJS := $(B)/cli/formats/reader.o $(B)/cli/formats/rtrace_tables.o

$(B)/tests/core/emitter: tests/core/emitter.c $(CORE_LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(CORE_LIB_OBJS) $(LDFLAGS_ALL) -lzstd -ldl -lpthread

$(B)/tests/core/check: tests/core/check.c $(CORE_READER_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(CORE_READER_OBJS) $(LDFLAGS_ALL) -lzstd

$(B)/tests/core/clockcheck: tests/core/clockcheck.c $(CORE_LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(CORE_LIB_OBJS) $(LDFLAGS_ALL) -lzstd -ldl -lpthread

TEST_BINS += $(B)/tests/core/emitter $(B)/tests/core/check $(B)/tests/core/clockcheck

$(B)/tests/core/offline: tests/core/offline.c $(B)/lib/tracer/writer.o $(CORE_READER_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(B)/lib/tracer/writer.o $(CORE_READER_OBJS) $(LDFLAGS_ALL) -lzstd

TEST_BINS += $(B)/tests/core/offline

$(B)/tests/core/writer_random: tests/core/writer_random.c $(B)/lib/tracer/writer.o $(CORE_READER_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(B)/lib/tracer/writer.o $(CORE_READER_OBJS) $(LDFLAGS_ALL) -lzstd

TEST_BINS += $(B)/tests/core/writer_random
