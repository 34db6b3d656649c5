#!/bin/bash
# Fuzz campaign: runs every libFuzzer target (built by `make fuzz`) for SECONDS, JOBS workers per target,
# all at once, starting from the checked-in corpus and seeds, with ASan+UBSan halting on error.
# Prints one line per target (executions, crashes) and a total; exit 1 if anything crashed.
# Crash reproducers land in OUT/artifacts/; copy one into tests/corpus/regress/<target>/ to keep it.
#     tests/fuzz/campaign.sh BUILD_DIR SECONDS [JOBS] [OUT]
# Known, reported bugs can be let through so a long run keeps looking for new ones:
#     RS_FUZZ_KNOWN=cmdline-len,partial-slot,ubsan tests/fuzz/campaign.sh build 600
# ("ubsan" applies tests/fuzz/known.supp). Default: nothing is let through.
set -u
B=$(cd "${1:?build dir}" && pwd)
SECS=${2:-60}
JOBS=${3:-1}
OUT=${4:-$(mktemp -d /tmp/rs-fuzz-campaign.XXXXXX)}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$OUT/artifacts"
OUT=$(cd "$OUT" && pwd)
export RS_FUZZ_KNOWN=${RS_FUZZ_KNOWN:-}
UB=halt_on_error=1:print_stacktrace=1
case $RS_FUZZ_KNOWN in *ubsan*) UB=$UB:suppressions=$TOP/tests/fuzz/known.supp ;; esac
export UBSAN_OPTIONS=$UB
total_exec=0
total_crash=0
# Every target's workers start at once (the run takes SECONDS of wall time whatever the number of targets).
targets=()
for bin in "$B"/fuzz/fuzz_*; do
    case $bin in *-replay) continue ;; esac
    [ -x "$bin" ] || continue
    t=$(basename "$bin")
    targets+=("$t")
    work="$OUT/corpus/$t"
    mkdir -p "$work"
    seeds=("$TOP/tests/corpus/files")
    [ -d "$TOP/tests/fuzz/seeds/$t" ] && seeds+=("$TOP/tests/fuzz/seeds/$t")
    [ -d "$TOP/tests/corpus/regress/$t" ] && seeds+=("$TOP/tests/corpus/regress/$t")
    [ "$t" = fuzz_file ] || seeds=("${seeds[@]:1}")   # whole-file seeds only suit the whole-file target
    # Inputs that take longer than the per-input timeout under the fuzzers' instrumentation stay out (listed in
    # tests/fuzz/slow-inputs; tests/corpus/corpus.t still replays them): one at start-up kills the worker at once.
    own="$OUT/seeds/$t"
    mkdir -p "$own"
    for d in "${seeds[@]}"; do
        for f in "$d"/*; do
            [ -f "$f" ] || continue
            grep -qxF "$t/$(basename "$f")" "$TOP/tests/fuzz/slow-inputs" 2>/dev/null && continue
            cp "$f" "$own/$(basename "$d")-$(basename "$f")"
        done
    done
    seeds=("$own")
    extra=()
    [ "$t" = fuzz_cli ] && extra=(-detect_leaks=0 -close_fd_mask=2 -max_len=512)
    for ((j = 0; j < JOBS; j++)); do
        timeout -k 10 $((SECS + 60)) "$bin" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2560 -max_len=65536 \
            -artifact_prefix="$OUT/artifacts/$t-" -print_final_stats=1 "${extra[@]}" "$work" "${seeds[@]}" \
            >"$OUT/$t.$j.log" 2>&1 &
    done
done
wait
for t in "${targets[@]}"; do
    execs=0
    crashes=0
    for ((j = 0; j < JOBS; j++)); do
        l="$OUT/$t.$j.log"
        e=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$l" | grep -o '[0-9]*$' | tail -1)
        execs=$((execs + ${e:-0}))
        if grep -qE '^==[0-9]+==ERROR|^SUMMARY:|fuzz invariant failed|deadly signal|Test unit written' "$l"; then
            crashes=$((crashes + 1))
            grep -m3 -E 'ERROR|SUMMARY|invariant|Test unit' "$l" | sed "s/^/#   $t: /"
        fi
    done
    printf '%-14s executions %10d  crashed workers %d\n' "$t" "$execs" "$crashes"
    total_exec=$((total_exec + execs))
    total_crash=$((total_crash + crashes))
done
printf 'TOTAL          executions %10d  crashed workers %d  (%ss x %s jobs per target; logs in %s)\n' \
    "$total_exec" "$total_crash" "$SECS" "$JOBS" "$OUT"
[ "$total_crash" -eq 0 ]
