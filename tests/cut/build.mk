# Traces cut inside a frame (tests/cut/cut_frame.t): cutsweep reads a trace cut at many offsets and compares
# what the reader recovers with the whole file; libkillwrite.so, preloaded into a traced program, writes part
# of one frame and SIGKILLs the process there (a kill in the middle of the writer's write, made deterministic).
PROGRAMS += tests/cut/cutsweep tests/cut/libkillwrite.so
tests/cut/cutsweep.srcs := tests/cut/cutsweep.c $(B)/cli/formats/reader.o $(B)/cli/formats/rtrace_tables.o
tests/cut/cutsweep.libs := -lzstd
tests/cut/libkillwrite.so.srcs := tests/cut/killwrite.c
tests/cut/libkillwrite.so.ldflags := -shared
tests/cut/libkillwrite.so.libs := -ldl
