#!/bin/bash
# Ranks whose steps come from different sources (audit s17: NVTX ranges or marks on rank 0 only, the others falling
# back to traffic periodicity or the whole trace) are joined step by step with steps of another meaning: the report
# must say so. Two host-only processes under one `railscope record`: both mark 20 steps (control: no warning), then
# only one marks (the warning names the other rank and its source).
. "$(dirname "$0")/../lib.sh"
need_build railscope librailscope.so
need_cmd cc
plan 4

cat >"$T/marks.c" <<'C'
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
void railscope_mark(const char *name, uint64_t value) __attribute__((weak));
int main(int argc, char **argv)
{
    int mark = argc > 1 && atoi(argv[1]);
    struct timespec ts = {0, 5 * 1000 * 1000};
    for (uint64_t i = 0; i < 20; i++) {
        if (mark && railscope_mark) railscope_mark("step", i);
        nanosleep(&ts, NULL);
    }
    return 0;
}
C
cc -O1 -o "$T/marks" "$T/marks.c" || bail "cannot build the marking program"

run() { # DIR MARK0 MARK1: two ranks (RANK=0/1), each marking or not
    RANK=0 WORLD_SIZE=2 "$RS_CLI" record -q -o "$T/$1" -- "$T/marks" "$2" &
    RANK=1 WORLD_SIZE=2 "$RS_CLI" record -q -o "$T/$1" -- "$T/marks" "$3"
    wait
    "$RS_CLI" report "$T/$1" 2>&1
}

out=$(run both 1 1)
like "$out" '[0-9]+ steps \(marks\)' "both ranks mark: steps from marks" || diag "$out"
unlike "$out" 'different sources' "same source on every rank: no warning"

out=$(run one 1 0)
like "$out" 'steps come from different sources on different ranks: marks on rank [01], but rank [01]: ' \
    "marks on one rank only: the report says the ranks' step sources differ" || diag "$out"
json=$("$RS_CLI" report --json "$T/one" 2>/dev/null)
like "$json" '"steps come from different sources' "and in the JSON report's warnings"
