# Test programs of the recording core. They link the core's objects statically (no LD_PRELOAD needed),
# and the reader's objects for checking what was written.
CORE_READER_OBJS := $(B)/cli/formats/reader.o $(B)/cli/formats/rtrace_tables.o
PROGRAMS += tests/core/emitter tests/core/check tests/core/clockcheck tests/core/offline tests/core/writer_random
tests/core/emitter.srcs := tests/core/emitter.c $(CORE_OBJS)
tests/core/emitter.libs := -lzstd -ldl -lpthread
tests/core/check.srcs := tests/core/check.c $(CORE_READER_OBJS)
tests/core/check.libs := -lzstd
tests/core/clockcheck.srcs := tests/core/clockcheck.c $(CORE_OBJS)
tests/core/clockcheck.libs := -lzstd -ldl -lpthread
tests/core/offline.srcs := tests/core/offline.c $(B)/lib/tracer/writer.o $(CORE_READER_OBJS)
tests/core/offline.libs := -lzstd
tests/core/writer_random.srcs := tests/core/writer_random.c $(B)/lib/tracer/writer.o $(CORE_READER_OBJS)
tests/core/writer_random.libs := -lzstd
PROGRAMS += tests/core/nvtx_join
tests/core/nvtx_join.srcs := tests/core/nvtx_join.c $(B)/lib/tracer/writer.o $(CORE_READER_OBJS)
tests/core/nvtx_join.libs := -lzstd
PROGRAMS += tests/core/cred_fork
tests/core/cred_fork.srcs := tests/core/cred_fork.c $(CORE_OBJS)
tests/core/cred_fork.libs := -lzstd -ldl -lpthread
PROGRAMS += tests/core/fd_stale
tests/core/fd_stale.srcs := tests/core/fd_stale.c $(CORE_OBJS)
tests/core/fd_stale.libs := -lzstd -ldl -lpthread
PROGRAMS += tests/core/fd_race
tests/core/fd_race.srcs := tests/core/fd_race.c
tests/core/fd_race.libs := -lpthread -ldl
PROGRAMS += tests/core/no_close_range
tests/core/no_close_range.srcs := tests/core/no_close_range.c
