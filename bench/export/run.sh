#!/bin/sh
# Exporter benchmark: Perfetto and Chrome JSON throughput (input events per second) and output bytes per
# input event, on a trace from tests/export's generator (2 ranks; verbs WRs with signaled/unsignaled
# completions, CUDA calls+kernels+copies with correlation flows, NVTX, NCCL plugin events, NVML).
#   1. export only: events preloaded in memory, best of REPS runs (bench-export);
#   2. the whole `railscope export` (read + zstd + translate + encode + write), best of REPS runs.
# Both by wall clock and by process CPU time: the dev machine is shared by several builds at once, and
# CPU time is what the exporter itself costs.
#     make BUILD=build-x build-x/railscope build-x/tests/export/rs-export-gen build-x/bench/export/bench-export
#     RS_BUILD=$PWD/build-x bench/export/run.sh [STEPS] [REPS]
set -eu
B=${RS_BUILD:-$(pwd)/build}
STEPS=${1:-40000}
REPS=${2:-5}
W=$(mktemp -d /tmp/rs-bench-export.XXXXXX)
trap 'rm -rf "$W"' EXIT
"$B/tests/export/rs-export-gen" "$W/tr" --ranks 2 --steps "$STEPS"
echo "trace: $(du -sh "$W/tr" | cut -f1) compressed, $STEPS steps x 2 ranks"
"$B/bench/export/bench-export" --reps "$REPS" "$W/tr"/*.rtrace
for f in perfetto chrome; do
    best=""
    for i in $(seq "$REPS"); do
        t=$( { /usr/bin/time -f "%e %U %S" "$B/railscope" export -q --format $f -o "$W/out.$f" "$W/tr" >/dev/null; } 2>&1 | tail -1)
        best=$(printf '%s\n%s\n' "$best" "$t" | awk 'NF==3' | sort -n | head -1)
    done
    ev=$("$B/railscope" export --format $f -o "$W/out.$f" "$W/tr" 2>&1 | sed -n 's/.*export: \([0-9]*\) events.*/\1/p')
    bytes=$(stat -c %s "$W/out.$f")
    echo "$best $ev $bytes" | awk -v f=$f '{ printf "%-9s railscope export: %6.2f M events/s wall, %6.2f M events/s cpu, %5.1f bytes/event (%.1f MB)\n", f, $4/$1/1e6, $4/($2+$3)/1e6, $5/$4, $5/1e6 }'
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
