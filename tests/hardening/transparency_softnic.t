#!/bin/bash
# The traced application sees nothing (software test NIC, softnic): return values, errno and bad_wr of
# failing and succeeding verbs calls (hv_errno), the softnic error-path suite (t_errors: error
# completions, RNR, wrong states), the examples (verbs_pingpong, ring_allreduce) and rdma-core's own
# ibv_rc_pingpong: stdout, stderr and exit status identical with and without the tracer. Timing figures
# (seconds, usec, Mbit/s), ibv_rc_pingpong's random PSNs/QPNs, the amount a killed peer got through and
# the order in which processes print are normalised before comparing.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/hlib.sh"
need_build tests/hardening/hv_errno librailscope.so
use_softnic
plan 5
# Lines are sorted: the examples' ranks are processes that print in any order.
norm() { sed -E 's/[0-9]+\.[0-9]+/F/g; s/0x[0-9a-fA-F]+/H/g; s/\b(QPN|PSN|LID) [^,]*/\1 X/g; s/[0-9]+ writes done/N writes done/' | sort; }
# same NAME CMD...: run untraced then traced; compare exit status + normalised stdout + stderr
# A pair that differs is run once more before failing: the software NIC's timing-dependent error paths
# (RNR, a killed peer) can come out differently on a loaded 2-core host in either run. A difference the
# tracer causes shows up in both pairs.
same() {
    local name=$1 a b try
    shift
    for try in 1 2; do
        a=$(run_timeout 60 "$@" 2>&1 | norm; echo "exit=${PIPESTATUS[0]}")
        b=$(run_timeout 60 env LD_PRELOAD="$PRELOAD" RAILSCOPE_OUT="$T/tr" RAILSCOPE_FLUSH_MS=100 "$@" 2>&1 | norm
            echo "exit=${PIPESTATUS[0]}")
        { [ "$a" = "$b" ] && [[ $a == *exit=0 ]]; } && break
        [ $try = 1 ] && diag "$name: first pair differed, running it again: $(diff <(echo "$a") <(echo "$b") | head -4 | tr '\n' ' ')"
    done
    if [ "$a" = "$b" ] && [[ $a == *exit=0 ]]; then
        _tap_result 0 "$name: identical with and without the tracer"
    else
        _tap_result 1 "$name: identical with and without the tracer"
        diff <(echo "$a") <(echo "$b") | head -20 | sed 's/^/#   /' >&2
    fi
}
same "hv_errno (return values, errno, bad_wr)" "$HB/hv_errno"
if [ -x "$RS_BUILD/softnic/t_errors" ]; then
    same "softnic t_errors (error completions, RNR, states)" "$RS_BUILD/softnic/t_errors"
else
    skip "softnic t_errors not built"
fi
if [ -x "$RS_BUILD/examples/verbs_pingpong" ]; then
    same "examples/verbs_pingpong" "$RS_BUILD/examples/verbs_pingpong" -s 4K -n 200
    same "examples/ring_allreduce" "$RS_BUILD/examples/ring_allreduce" -n 3 -s 256K -i 3
else
    skip "examples not built" 2
fi
if command -v ibv_rc_pingpong >/dev/null; then
    rc_pair() { # traced|plain: server and client, outputs concatenated (server first)
        local port=$((20000 + RANDOM % 20000)) pre=() s c
        [ "$1" = traced ] && pre=(env LD_PRELOAD="$PRELOAD" RAILSCOPE_OUT="$T/tr-rc" RAILSCOPE_FLUSH_MS=100)
        run_timeout 30 "${pre[@]}" ibv_rc_pingpong -g 0 -p $port -n 200 >"$T/srv" 2>&1 &
        s=$!
        sleep 0.3
        run_timeout 30 "${pre[@]}" ibv_rc_pingpong -g 0 -p $port -n 200 localhost >"$T/cli" 2>&1
        c=$?
        wait $s
        echo "server exit=$? client exit=$c"
        norm <"$T/srv"
        norm <"$T/cli"
    }
    a=$(rc_pair plain)
    b=$(rc_pair traced)
    [ "$a" = "$b" ] && [[ $a == *"server exit=0 client exit=0"* ]]
    _tap_result $? "ibv_rc_pingpong (rdma-core, unmodified): identical with and without the tracer"
    [ "$a" != "$b" ] && diff <(echo "$a") <(echo "$b") | head -20 | sed 's/^/#   /' >&2
else
    skip "ibv_rc_pingpong not installed (Debian: ibverbs-utils)"
fi
exit 0
