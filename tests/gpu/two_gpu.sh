#!/bin/bash
# Issue 9: two-GPU validation, ONE device call on `nvidia-h200-x2` (or larger):
#   run(command="tests/gpu/two_gpu.sh", kind="nvidia-h200-x2", timeout_s=600)
# With fewer GPUs than NPROC it says so and runs at world size 1 (that is how it has been exercised so far).
# 1. D: torchrun --nproc-per-node NPROC DDP training under `railscope record` (NVLink/P2P path):
#    check.py correct per rank + check.py join (Coll events joined across ranks by (comm hash, func, seq),
#    API calls = Coll events, NCCL kernels), then `railscope report` (attribution, AllReduce phases per rank,
#    clock alignment residual) saved to the output;
# 2. N: the same forced through the network path between the local ranks (NCCL_P2P_DISABLE=1
#    NCCL_SHM_DISABLE=1, socket transport): ProxyOp/ProxyStep events with wait states must appear;
# 3. I: NCCL_NET=IB over the software NIC (tools/softnic's libibverbs.so.1), when it builds there: NCCL's
#    own ibv_post_send/poll_cq through dlopen+dlvsym, proxy steps, the GPUDirect verdict in the report;
# 4. overhead on the 2-rank run: untraced vs railscope default, alternating, ROUNDS rounds.
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0), as the device README requires.
set -u -o pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/rs-gpu2-out}
NPROC=${NPROC:-2} ROUNDS=${ROUNDS:-2} STEPS=${STEPS:-100} WARMUP=${WARMUP:-20}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/run.log") 2>&1
T0=$(date +%s)
el() { echo $(($(date +%s) - T0)); }
B=build/gpu
W=/tmp/rsgpu2
rm -rf "$W" && mkdir -p "$W"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
FAIL=0
GPUS=$(python3 -c 'import torch; print(torch.cuda.device_count())')
echo "== host: $GPUS GPU(s) ($(el)s)"
nvidia-smi topo -m 2>/dev/null | head -8
if [ "$GPUS" -lt "$NPROC" ]; then
    echo "only $GPUS GPU(s): running at world size $GPUS instead of $NPROC (issue 9 needs nvidia-h200-x2)"
    NPROC=$GPUS
fi
make -j16 BUILD=$B $B/librailscope.so $B/railscope >"$W/build.log" 2>&1 || { tail -40 "$W/build.log"; exit 1; }
RS=$PWD/$B/railscope
export RS_CLI=$RS
run_train() { # NAME EXTRA_ENV... -- train args
    local name=$1; shift
    env "$@" RAILSCOPE_CUDA_KERNEL_WINDOW=500/3000 timeout 240 "$RS" record -o "$W/$name" -- \
        python3 -m torch.distributed.run --standalone --nproc-per-node "$NPROC" tests/gpu/train.py \
        --phases pinned:20,pageable:20 --out "$W/$name.json" 2>"$W/$name.err"
    echo "$name: exit status $?"
}

echo "== D: $NPROC ranks, default transports ($(el)s)"
run_train D NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET
python3 tests/gpu/check.py correct "$W/D" "$W"/D*.json | tee "$W/checkD.txt" || FAIL=1
if [ "$NPROC" -ge 2 ]; then python3 tests/gpu/check.py join "$W/D" "$W"/D*.json | tee -a "$W/checkD.txt" || FAIL=1; fi
"$RS" report "$W/D" > "$W/reportD.txt" 2>&1; head -60 "$W/reportD.txt"

echo "== N: network path (P2P and SHM off, sockets) ($(el)s)"
run_train N NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NET=Socket
if [ "$NPROC" -ge 2 ]; then
    RS_EXPECT_PROXY=1 python3 tests/gpu/check.py join "$W/N" "$W"/N*.json | tee "$W/checkN.txt" || FAIL=1
fi
"$RS" report "$W/N" > "$W/reportN.txt" 2>&1; head -40 "$W/reportN.txt"

echo "== I: NCCL_NET=IB over the software NIC ($(el)s)"
if make -j16 BUILD=$B $B/softnic/libibverbs.so.1 >"$W/softnic.log" 2>&1 && [ -e "$B/softnic/libibverbs.so.1" ] &&
    cc -O2 -shared -fPIC -o "$B/softnic/libsn_pcishim.so" tools/softnic/pcishim.c -ldl; then
    # pcishim: a PCI path for softnic0; NCCL_GIN_TYPE=0: NCCL 2.28.9's GIN auto-selection crashes without a
    # GDAKI device (docs/dev/journal/softnic.md, session 5)
    run_train I NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NET=IB LD_LIBRARY_PATH="$PWD/$B/softnic" \
        LD_PRELOAD="$PWD/$B/softnic/libsn_pcishim.so" NCCL_GIN_TYPE=0 NCCL_IB_MERGE_VFS=0
    grep -i "NET/IB\|GPU Direct" "$W/I.err" | head -5
    if [ "$NPROC" -ge 2 ]; then
        RS_EXPECT_PROXY=1 python3 tests/gpu/check.py join "$W/I" "$W"/I*.json | tee "$W/checkI.txt" || FAIL=1
    fi
    "$RS" report "$W/I" > "$W/reportI.txt" 2>&1; grep -i -A3 "gpudirect" "$W/reportI.txt" | head -10
else
    echo "software NIC not built here (see $W/softnic.log): part I not run"
fi

echo "== overhead, $NPROC ranks ($(el)s)"
for r in $(seq 1 "$ROUNDS"); do
    for m in untraced default; do
        J="$W/O-$m-$r.json"
        cmd=(python3 -m torch.distributed.run --standalone --nproc-per-node "$NPROC" tests/gpu/train.py
             --phases "bench:$STEPS" --warmup "$WARMUP" --out "$J")
        if [ $m = untraced ]; then timeout 200 "${cmd[@]}"; else timeout 200 "$RS" record -q -o "$W/O-$r" -- "${cmd[@]}"; fi
    done
done
python3 - "$W" <<'PY'
import glob, json, os, statistics, sys
w = sys.argv[1]
ms = {}
for p in glob.glob(os.path.join(w, "O-*-*.json")) + glob.glob(os.path.join(w, "O-*-*.rank0.json")):
    b = os.path.basename(p).split("-")
    r = json.load(open(p))
    if r.get("step_ms"):
        ms.setdefault(b[1], []).append(r["step_ms"][0])
if "untraced" in ms and "default" in ms:
    u, d = statistics.median(ms["untraced"]), statistics.median(ms["default"])
    print(f"2-rank step ms: untraced {ms['untraced']} railscope {ms['default']} ratio {d / u:.4f}")
PY
tar czf "$OUT/traces.tgz" -C "$W" D N $(ls -d "$W"/I 2>/dev/null | xargs -r -n1 basename) 2>/dev/null
cat "$W"/check*.txt "$W"/report*.txt > "$OUT/summary.txt" 2>/dev/null
echo "== done in $(el)s, failures: $FAIL"
exit $FAIL
