#!/bin/bash
# Looks for a crash of a traced workload under CPU contention (session 13: one ResNet-50 default-mode process of
# a lock-step group on 3 CPUs died of SIGSEGV during its warm-up). Rounds of N processes started together on one
# small CPU set, each `railscope record` (default mode) of tests/gpu/train.py, with bench/gpu/segvbt.so (native
# backtrace of a fatal signal), Python's faulthandler and the tracer's debug log (a line per CUPTI arm, finalize
# and re-attach as they happen); until CH_BUDGET seconds are spent. A process that ends other than 0 has its
# stderr and trace kept ($OUT/crash.tgz: a call returns few files). Called by overhead.sh's `crashhunt` part:
#   [CH_ENV="VAR=VALUE ..."] crashhunt.sh [N=8] [CPUS=2-4] [WARMUP=25] [STEPS=15]   (CH_ENV: extra environment, e.g. more windows)
# CH_PHASES: train.py's --phases instead of bench:STEPS, e.g. bench:5,idle:700,bench:5,idle:450 (quiet gaps: the
# detach's cancel path, session 14's review). CH_TIMEOUT: seconds before a process is killed (exit 137, said as a
# possible hang; session 14 lost a device call to a deadlock that nothing timed out).
set -u -o pipefail
N=${1:-8} CPUS=${2:-2-4} WARMUP=${3:-25} STEPS=${4:-15}
W=/tmp/rs-crash
OUT=${OUT:-/tmp/rs-overhead-out}
rm -rf "$W" && mkdir -p "$W" "$OUT"
gcc -O2 -shared -fPIC -o "$W/segvbt.so" bench/gpu/segvbt.c || exit 1
t0=$(date +%s) r=0 runs=0 bad=0 kept=()
while :; do # at least one round; no new round after CH_BUDGET seconds
    r=$((r + 1))
    pids=()
    for ((i = 0; i < N; i++)); do
        tag=r$r-p$i
        # shellcheck disable=SC2086 # CH_ENV: VAR=VALUE words, split on purpose
        LD_PRELOAD=$W/segvbt.so PYTHONFAULTHANDLER=1 RAILSCOPE_LOG=debug timeout -s KILL "${CH_TIMEOUT:-600}" \
            env ${CH_ENV:-} taskset -c "$CPUS" \
            "$RS_BUILD/railscope" record \
            -o "$W/$tag" -- python3 tests/gpu/train.py --phases "${CH_PHASES:-bench:$STEPS}" --warmup "$WARMUP" \
            --out "$W/$tag.json" >"$W/$tag.out" 2>"$W/$tag.err" &
        pids+=($!)
    done
    rcs=""
    for ((i = 0; i < N; i++)); do
        wait "${pids[$i]}"
        rc=$?
        rcs+=" $rc"
        runs=$((runs + 1))
        if [ "$rc" != 0 ]; then
            bad=$((bad + 1))
            kept+=("r$r-p$i" "r$r-p$i.err")
            [ "$rc" = 137 ] && echo "round $r process $i: killed after CH_TIMEOUT=${CH_TIMEOUT:-600} s (a hang?)"
            echo "round $r process $i: exit $rc; its stderr's end:"
            tail -40 "$W/r$r-p$i.err"
        fi
    done
    echo "round $r ($(($(date +%s) - t0)) s): exits$rcs"
    [ $(($(date +%s) - t0)) -lt "${CH_BUDGET:-300}" ] || break
done
[ ${#kept[@]} = 0 ] || tar czf "$OUT/crash.tgz" -C "$W" "${kept[@]}" 2>/dev/null
nfin=$(cat "$W"/*.err 2>/dev/null | grep -c "CUPTI: finalized at")
echo "crashhunt: $bad of $runs processes ended other than 0 ($r rounds of $N on CPUs $CPUS, ${CH_ENV:-default mode}; $nfin finalizes in all)"
# arms cancelled (the exit summaries of the processes that ended): unsubscribes outside a callback, the review's path
cat "$W"/*.err 2>/dev/null | grep -o "[0-9]* cancelled by a window, [0-9]* by a graph or another client, [0-9]* at exit" |
    awk '{w += $1; g += $6; e += $13} END {printf "cancelled arms: %d by a window, %d by a graph or client, %d at exit\n", w, g, e}'
echo "finalizes by the CUDA call that carried them (debug line, session 14):"
cat "$W"/*.err 2>/dev/null | grep -o "at the exit of [A-Za-z0-9_]*" | sort | uniq -c | sort -rn | head -8
grep -l "CUPTI" "$W"/*.err 2>/dev/null | head -3 | while read -r f; do echo "$f:"; grep -h "CUPTI" "$f" | tail -3; done
