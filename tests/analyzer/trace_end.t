#!/bin/bash
# A rank's activity ends where its last copy or kernel ends, not where that record starts (audit s18: the last
# step lost its final copy: the run's copy time -3 %, a pinned-only run's step -9 %). A crafted one-rank trace of
# host-to-device copies (GPU times), no step marks (the whole trace is the step): 1-5 ms, then 6-46 ms, the
# last record. The step is 45 ms with 44 ms of H2D; ended at the last record's start it was 5 ms.
# Then the same copies after "step" marks at 0.1, 0.5 and 5.5 ms (a name repeats 3 times to be steps): the last
# step runs from 5.5 ms to the end of the 40 ms copy (ended at its start it was 0.5 ms).
. "$(dirname "$0")/../lib.sh"
need_build railscope
need_cmd cc
need_cmd jq
plan 5

cat >"$T/gen.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/analyzer/craft.h"
#include "tracer/writer.h"

CRAFT_GENERATOR
static void copy(uint64_t a, uint64_t b)
{
    struct rs_ev_CUDA_MEMCPY m;
    memset(&m, 0, sizeof m);
    RS_EV_INIT(&m, CUDA_MEMCPY, a);
    m.end = b;
    m.bytes = 1 << 20;
    m.copy_kind = 1; /* H2D */
    m.src_kind = 2;  /* pinned */
    m.dst_kind = 3;
    put(&m);
}
static void mark(uint64_t t)
{
    struct rs_ev_MARK m;
    memset(&m, 0, sizeof m);
    RS_EV_INIT(&m, MARK, t);
    m.name = rs_writer_intern(w, "step");
    put(&m);
}
/* gen DIR MARKS */
int main(int argc, char **argv)
{
    if (argc != 3) die("usage");
    const uint64_t ms = 1000000;
    if (!(w = craft_open(argv[1], 0, 1, 4242, "all", "trace_end", 7))) die("open");
    int marks = atoi(argv[2]);
    if (marks) mark(ms / 10);
    if (marks) mark(ms / 2);
    copy(1 * ms, 5 * ms);
    if (marks) mark(5 * ms + ms / 2);
    copy(6 * ms, 46 * ms);
    struct rs_ev_PROC_END p;
    memset(&p, 0, sizeof p);
    RS_EV_INIT(&p, PROC_END, 47 * ms);
    put(&p);
    if (rs_writer_close(w) != 0) die("close");
    return 0;
}
C
cc -std=gnu11 -O1 -D_GNU_SOURCE -I"$RS_TOP" -I"$RS_TOP/formats" -I"$RS_TOP/tracer" -o "$T/gen" "$T/gen.c" \
    "$RS_TOP/tracer/writer.c" "$RS_TOP/formats/rtrace_tables.c" -lzstd -lpthread || bail "cannot build the generator"

# within(VALUE LO HI)
within() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }'; }

mkdir -p "$T/whole" "$T/marks"
"$T/gen" "$T/whole" 0 || bail "gen whole"
"$RS_CLI" report --json "$T/whole" >"$T/whole.json" 2>"$T/whole.err"
d=$(jq -r '.ranks[0].steps[0].dur_s' "$T/whole.json")
ok "whole trace: the step ends where the last copy ends (45 ms; got $d s)" within "$d" 0.0449 0.0451
h=$(jq -r '.ranks[0].steps[0].attribution.h2d_exposed' "$T/whole.json")
ok "whole trace: all 44 ms of copy are in it (got $h s)" within "$h" 0.0439 0.0441

"$T/gen" "$T/marks" 1 || bail "gen marks"
"$RS_CLI" report --json "$T/marks" >"$T/marks.json" 2>"$T/marks.err"
is "$(jq -r '.ranks[0].nsteps' "$T/marks.json")" 3 "marks: three steps"
d=$(jq -r '.ranks[0].steps[2].dur_s' "$T/marks.json")
ok "marks: the last step runs to the end of its 40 ms copy (40.5 ms; got $d s)" within "$d" 0.0404 0.0406
h=$(jq -r '.ranks[0].steps[2].attribution.h2d_exposed' "$T/marks.json")
ok "marks: the last step holds the whole copy (40 ms; got $h s)" within "$h" 0.0399 0.0401
