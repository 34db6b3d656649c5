#!/bin/bash
# The file writer under random workloads (tests/core/writer_random.c): feed slices from none to 8 MiB,
# runs handed over in pieces like a ring drain, rs_emit_as markers, events of up to 65528 bytes, feeds,
# flushes, strings; every event read back with its thread, kind, size, timestamp and payload.
. "$(dirname "$0")/../lib.sh"
need_build tests/core/writer_random
SEEDS=${RS_WRITER_SEEDS:-8}
plan "$SEEDS"
for s in $(seq "$SEEDS"); do
    out=$(run_timeout 60 "$RS_BUILD/tests/core/writer_random" "$T/w$s.rtrace" "$s")
    like "$out" "^ok events=[1-9]" "seed $s: every event back as written ($out)"
done
