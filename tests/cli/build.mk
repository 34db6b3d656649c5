# mkhostile: crafted trace files for the CLI tests (tests/cli/*.t), generated at test time (nothing large
# is checked in). Compiles the reader's tables itself, like the fuzz replays.
MKHOSTILE := $(B)/tests/cli/mkhostile
$(MKHOSTILE): tests/cli/mkhostile.c tests/fuzz/fuzz_common.h formats/reader.c formats/rtrace_tables.c formats/reader.h formats/rtrace.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests/fuzz -o $@ tests/cli/mkhostile.c formats/reader.c formats/rtrace_tables.c $(LDFLAGS_ALL) -lzstd
TEST_BINS += $(MKHOSTILE)
