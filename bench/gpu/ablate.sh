#!/bin/bash
# Build railscope and the minimal CUPTI injection on the GPU host, then run bench/gpu/ablate.py with the arguments
# given (see its docstring). One device call:
#   run(command="bench/gpu/ablate.sh --workload transformer --rounds 3 --modes untraced,default,full,min-full")
# Several workloads in one call: separate them with `--` (each part is one ablate.py invocation).
set -u -o pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/rs-ablate-out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/ablate.log") 2>&1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
B=build/gpu
T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if ! make -j16 BUILD=$B $B/librailscope.so $B/railscope >/tmp/rs-ablate-build.log 2>&1; then
    tail -30 /tmp/rs-ablate-build.log; exit 1
fi
gcc -O2 -shared -fPIC -I/usr/local/cuda/include -o $B/mincupti.so bench/gpu/mincupti.c -ldl || exit 1
echo "built in $(($(date +%s) - T0)) s"
args=()
for x in "$@" --; do
    if [ "$x" = "--" ]; then
        [ ${#args[@]} -gt 0 ] && python3 bench/gpu/ablate.py --out "$OUT" "${args[@]}"
        args=()
    else
        args+=("$x")
    fi
done
echo "done in $(($(date +%s) - T0)) s"
