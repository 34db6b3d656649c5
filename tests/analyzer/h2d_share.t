#!/bin/bash
# The exposed-H2D finding's pageable share is of the H2D copy time, not only of the bytes (audit s18 by
# helper-50, item 5).
# rs-mkgd h2d plants per 10 ms step host->device copy calls from pageable and pinned memory with known durations.
# Before, the finding gave the pageable share of the bytes and advised pinning whenever any byte was pageable:
# "2 % of H2D bytes come from pageable memory" where pageable copies were all the copy time (one large
# asynchronous pinned copy returning at once), and "0 % of H2D bytes come from pageable memory ...: pin the host
# buffers" where a 20 KB pageable copy sat beside an 80 MB pinned one.
. "$(dirname "$0")/../lib.sh"
need_build tests/analyzer/rs-mkgd railscope
need_cmd jq
plan 12
MK=$RS_BUILD/tests/analyzer/rs-mkgd
rep() { # NAME PG_N PG_BYTES PG_US PIN_N PIN_BYTES PIN_US
    local n=$1
    shift
    mkdir -p "$T/$n" && "$MK" h2d "$T/$n" "$@" || bail "rs-mkgd h2d $* failed"
    "$RS_CLI" report --json "$T/$n" >"$T/$n.json" 2>/dev/null
}
h2d() { jq -r '.findings[] | select(.category == "h2d_exposed") | .text' "$T/$1.json"; }
P='copies from pageable memory take' # the share's words

# 8 pageable copies of 1 MB, 200 us each, and one asynchronous 400 MB pinned copy returning after 2 us
rep async 8 1000000 200 1 400000000 2
like "$(h2d async)" "$P >99 % of the H2D copy time and 2 % of the bytes \\(most on rank 0: 1\\.60 ms per step\\)" \
    "async: pageable copies are >99 % of the copy time, 2 % of the bytes"
like "$(h2d async)" 'pin the host buffers' "async: pinning advised"
# compared as numbers: jq 1.7 prints a number as the JSON wrote it (0.00002), jq 1.6 as a double (2e-05)
is "$(jq '.ranks[0] | [.h2d_pageable_s, .h2d_pinned_s] == [0.016, 0.00002]' "$T/async.json")" true \
    "async JSON: pageable and pinned copy time (10 steps x 8 x 200 us; 10 x 2 us)" ||
    diag "$(jq -c '.ranks[0] | [.h2d_pageable_s, .h2d_pinned_s]' "$T/async.json")"

# one 20 KB pageable copy of 10 us beside one 80 MB pinned copy of 3.2 ms
rep tiny 1 20000 10 1 80000000 3200
like "$(h2d tiny)" "$P <1 % of the H2D copy time and <1 % of the bytes \\(most on rank 0: 0\\.01 ms" \
    "tiny: <1 % of the time and bytes, never '0 %' of something there"
unlike "$(h2d tiny)" 'pin the host buffers' "tiny: no advice to pin for 0.3 % of the copy time"
unlike "$(h2d tiny)" '(^|[^<>0-9])0 %' "tiny: no '0 %'"

# 40 MB pageable in 8 ms, 40 MB pinned in 1.6 ms: half the bytes, 83 % of the time
rep mix 1 40000000 8000 1 40000000 1600
like "$(h2d mix)" "$P 83 % of the H2D copy time and 50 % of the bytes \\(most on rank 0: 8\\.00 ms per step\\)" \
    "mix: 83 % of the time, 50 % of the bytes"
like "$(h2d mix)" 'rank 0: 8\.00 ms per step\): pin the host buffers' "mix: pinning advised, rank 0 named"

# pinned only, pageable only
rep pin 0 0 0 1 80000000 3200
like "$(h2d pin)" 'every H2D copy is from pinned memory$' "pinned only: said so, nothing to pin"
unlike "$(h2d pin)" 'pageable' "pinned only: no pageable share"
rep pg 4 1000000 500 0 0 0
like "$(h2d pg)" "$P 100 % of the H2D copy time and 100 % of the bytes \\(most on rank 0: 2\\.00 ms per step\\): pin" \
    "pageable only: 100 %, pin"
is "$(jq -c '.findings[] | select(.category == "h2d_exposed") | .rank' "$T/pg.json")" 0 \
    "pageable only: the finding names rank 0"
exit 0
