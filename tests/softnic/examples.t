#!/bin/bash
# softnic: our verbs examples over the software test NIC: verbs_pingpong (2 processes) and
# ring_allreduce with 2, 4 and 8 processes; every result element is checked by the programs.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/sn_env.sh"
need_build examples/verbs_pingpong examples/ring_allreduce
plan 7

out=$(run_timeout 30 "$RS_BUILD/examples/verbs_pingpong" -s 64K -n 200 2>&1)
rc=$?
if [ $rc -eq 124 ]; then
    # Open softnic bug: once in a clean-clone CI run (sanitizer builds beside it) this run hung until the
    # limit with no output (it takes ~2 s at load 5; ~70 runs under load here did not reproduce it). One retry,
    # said out loud; a second hang fails the test.
    diag "verbs_pingpong hung (30 s limit): retrying once (open softnic bug, see docs/dev/journal/softnic.md)"
    out=$(run_timeout 30 "$RS_BUILD/examples/verbs_pingpong" -s 64K -n 200 2>&1)
    rc=$?
fi
is "$rc" 0 "softnic: verbs_pingpong exits 0"
like "$out" 'rank 0: data OK' "softnic: verbs_pingpong: SEND/RECV, READ and WRITE data checked"

for n in 2 4 8; do
    size=1M; [ $n -eq 8 ] && size=512K
    out=$(run_timeout 60 "$RS_BUILD/examples/ring_allreduce" -n $n -s $size -i 3 2>&1)
    rc=$?
    oks=$(grep -c 'result OK' <<<"$out")
    is "$rc/$oks" "0/$n" "softnic: ring_allreduce -n $n: all $n ranks report a correct result"
    grep -E '^iter' <<<"$out" | sed "s/^/# n=$n /"
done

out=$(run_timeout 10 "$RS_BUILD/examples/ring_allreduce" -n 1 2>&1)
rc=$?
is "$rc" 2 "softnic: ring_allreduce -n 1 is a usage error"
nok "softnic: ring_allreduce exits non-zero when a rank fails (no device)" \
    env LD_LIBRARY_PATH=/nonexistent SOFTNIC_DEVICE=x run_timeout 20 "$RS_BUILD/examples/ring_allreduce" -n 2 -s 4K -i 1
