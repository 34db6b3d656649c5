#!/bin/bash
# NVTX ranges whose messages differ in every call ("step N", emit_nvtx's "aten::mul, seq = S, op_id = N"), as
# tests/nccl/nvtx_app's `many` mode pushes them: untraced, traced by this build, and (RS_BASE_BUILD=dir: a build
# of another commit, e.g. before session 23's message numbers) traced by that one, alternating in each round
# (ROUNDS, default 5; N steps, default 200000 = 400000 distinct messages). Prints per mode the medians of ns per
# range (push + pop), the process's peak resident set, its growth over the second half, and the trace's bytes;
# then the ratios. Usage: RS_BUILD=build [RS_BASE_BUILD=/tmp/base/build] bench/nvtx/run.sh
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${RS_BUILD:-$top/build}
APP=$B/tests/nccl/nvtx_app
N=${N:-200000}
ROUNDS=${ROUNDS:-5}
if [ ! -x "$APP" ]; then echo "bench/nvtx: $APP not built (needs the CUDA toolkit's nvtx3 headers): skipped"; exit 0; fi
modes=(untraced traced)
[ -n "${RS_BASE_BUILD:-}" ] && modes+=(base)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
declare -A ns peak grew bytes
for r in $(seq "$ROUNDS"); do
    for m in "${modes[@]}"; do
        rm -rf "$T/o"
        case $m in
        untraced) out=$("$APP" many "$N") ;;
        traced) out=$(LD_PRELOAD=$B/librailscope.so NVTX_INJECTION64_PATH=$B/librailscope.so RAILSCOPE_OUT=$T/o \
            "$APP" many "$N") ;;
        base) out=$(LD_PRELOAD=$RS_BASE_BUILD/librailscope.so NVTX_INJECTION64_PATH=$RS_BASE_BUILD/librailscope.so \
            RAILSCOPE_OUT=$T/o "$APP" many "$N") ;;
        esac
        ns[$m]+="$(sed -n 's/.*ns_per_range=\([0-9.]*\).*/\1/p' <<<"$out") "
        peak[$m]+="$(sed -n 's/.*peak_kib=\([0-9]*\).*/\1/p' <<<"$out") "
        grew[$m]+="$(sed -n 's/.*rss grew \([-0-9]*\) KiB.*/\1/p' <<<"$out") "
        bytes[$m]+="$(cat "$T"/o/*.rtrace 2>/dev/null | wc -c) "
    done
done
med() { tr ' ' '\n' | awk 'NF{print $1}' | sort -g | awk '{a[NR]=$1} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
echo "nvtx: $N steps x 2 ranges, every message distinct; medians of $ROUNDS alternating rounds"
printf '%-9s %10s %12s %14s %12s\n' mode ns/range "peak KiB" "grew KiB (2nd half)" "trace bytes"
declare -A m_ns m_peak m_bytes
for m in "${modes[@]}"; do
    m_ns[$m]=$(med <<<"${ns[$m]}")
    m_peak[$m]=$(med <<<"${peak[$m]}")
    m_bytes[$m]=$(med <<<"${bytes[$m]}")
    printf '%-9s %10s %12s %14s %12s\n' "$m" "${m_ns[$m]}" "${m_peak[$m]}" "$(med <<<"${grew[$m]}")" "${m_bytes[$m]}"
done
awk -v t="${m_ns[traced]}" -v u="${m_ns[untraced]}" 'BEGIN{printf "traced - untraced: %.1f ns per range\n", t - u}'
if [ -n "${RS_BASE_BUILD:-}" ]; then
    awk -v t="${m_ns[traced]}" -v b="${m_ns[base]}" -v tp="${m_peak[traced]}" -v bp="${m_peak[base]}" \
        -v tb="${m_bytes[traced]}" -v bb="${m_bytes[base]}" \
        'BEGIN{printf "this build / base: time %.2fx, peak resident set %.2fx, trace bytes %.2fx\n", t / b, tp / bp, tb / bb}'
fi
