# mkhostile: crafted trace files for the CLI tests (tests/cli/*.t), generated at test time (nothing large
# is checked in). Compiles the reader's tables itself, like the fuzz replays.
PROGRAMS += tests/cli/mkhostile
tests/cli/mkhostile.srcs := tests/cli/mkhostile.c formats/reader.c formats/rtrace_tables.c
tests/cli/mkhostile.deps := tests/fuzz/fuzz_common.h formats/reader.h formats/rtrace.h
tests/cli/mkhostile.cflags := -Itests/fuzz
tests/cli/mkhostile.libs := -lzstd
