#!/bin/bash
# Cost of call stacks per copy to/from pageable memory (CPU only: the fake libcudart of tests/nccl makes the
# copy itself free, so what is left is the wrapper, the pointer queries, the event and the unwind).
# Modes alternate inside each round (ROUNDS, default 5), N copies from one call site per run; prints the
# median ns per copy of each mode and the unwind's share. DEPTH (default 0) puts the call site that many
# frames deeper (a PyTorch site has 30+ native frames). Usage: RS_BUILD=build [DEPTH=26] bench/stacks/run.sh
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${RS_BUILD:-$top/build}
APP=$B/tests/stacks/stack_app
FAKE=$B/tests/nccl/fakecupti
N=${N:-100000}
ROUNDS=${ROUNDS:-5}
DEPTH=${DEPTH:-0}
if [ ! -x "$APP" ]; then echo "bench/stacks: $APP not built (needs the CUDA headers): skipped"; exit 0; fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
modes=(untraced off libunwind glibc)
declare -A res
for r in $(seq "$ROUNDS"); do
    for m in "${modes[@]}"; do
        case $m in
        untraced) v=$("$APP" "$FAKE" loop "$N" "$DEPTH") ;;
        off) v=$(RAILSCOPE_STACKS=off LD_PRELOAD=$B/librailscope.so RAILSCOPE_OUT=$T/o "$APP" "$FAKE" loop "$N" "$DEPTH") ;;
        libunwind) v=$(RAILSCOPE_STACKS=on LD_PRELOAD=$B/librailscope.so RAILSCOPE_OUT=$T/o "$APP" "$FAKE" loop "$N" "$DEPTH") ;;
        glibc) v=$(RAILSCOPE_STACKS=glibc LD_PRELOAD=$B/librailscope.so RAILSCOPE_OUT=$T/o "$APP" "$FAKE" loop "$((N / 10))" "$DEPTH") ;;
        esac
        res[$m]+="${v#ns_per_copy=} "
        rm -rf "$T/o"
    done
done
med() { tr ' ' '\n' | awk 'NF{print $1}' | sort -g | awk '{a[NR]=$1} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
printf '%-10s %12s   %s\n' mode "ns/copy" "runs"
for m in "${modes[@]}"; do
    printf '%-10s %12s   %s\n' "$m" "$(echo "${res[$m]}" | sed 's/ bad=0//g' | med)" "$(echo "${res[$m]}" | sed 's/ bad=0//g')"
done
off=$(echo "${res[off]}" | sed 's/ bad=0//g' | med)
for m in libunwind glibc; do
    v=$(echo "${res[$m]}" | sed 's/ bad=0//g' | med)
    awk -v m="$m" -v v="$v" -v o="$off" 'BEGIN{printf "unwind + hash + site look-up (%s): %.0f ns per pageable copy (%.2fx the recording without stacks)\n", m, v - o, v / o}'
done
