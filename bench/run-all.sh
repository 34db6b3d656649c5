#!/bin/bash
# Run every bench/*/run.sh (each prints its own numbers and ratios), one after the other, and say which
# failed. Usage: RS_BUILD=build ./bench/run-all.sh [AREA...]   (`make bench` does this)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
export RS_BUILD=${RS_BUILD:-$top/build} RS_TOP=${RS_TOP:-$top}
areas=("$@")
if [ ${#areas[@]} -eq 0 ]; then
    for d in "$top"/bench/*/; do [ -x "$d/run.sh" ] && areas+=("$(basename "$d")"); done
fi
failed=()
for a in "${areas[@]}"; do
    echo "=== bench/$a ($(date -u +%H:%M:%S), $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg))"
    if ! "$top/bench/$a/run.sh"; then failed+=("$a"); fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "=== failed: ${failed[*]}"
    exit 1
fi
echo "=== all benchmarks ran"
