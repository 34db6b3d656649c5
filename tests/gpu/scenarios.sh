#!/bin/bash
# Multi-rank NCCL scenarios on ONE GPU (issue 15 item 1), ONE device call on `nvidia-h200`:
#   run(command="tests/gpu/scenarios.sh", timeout_s=540)
# Every rank on cuda:0 with its own NCCL_HOSTID (so NCCL runs a real inter-"node" AllReduce through its
# network transport), each scenario recorded with `railscope record`, its truth planted and written by
# the training script itself (tests/gpu/scen_train.py: straggler rank + measured delay, step count and NVTX
# names, pinned/pageable per rank) and merged with the transport NCCL logged (tests/gpu/scen_truth.py).
# Output: $OUT/<group>.tgz (scenario dirs: trace/ = the .rtrace files, truth.json, nccl/ = NCCL's INFO log,
# report.json/report.txt = `railscope report` run there), $OUT/summary.txt. Run tests/gpu/check.py on the
# fetched traces (see tests/gpu/README.md). SCEN="name ..." runs a subset; STEPS (30) per scenario; IBPROBE=0
# skips the IB probes (they run whatever SCEN is).
set -u -o pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/rs-scen-out}
STEPS=${STEPS:-30}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/run.log") 2>&1
T0=$(date +%s)
el() { echo $(($(date +%s) - T0)); }
B=build/gpu
W=/tmp/rsscen
rm -rf "$W" && mkdir -p "$W"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export OMP_NUM_THREADS=2 TORCH_NCCL_ASYNC_ERROR_HANDLING=1
echo "== host ($(el)s)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'
echo "== build ($(el)s)"
if ! make -j16 BUILD=$B $B/librailscope.so $B/railscope $B/softnic/libibverbs.so.1 >"$W/build.log" 2>&1; then
    tail -30 "$W/build.log"; cp "$W/build.log" "$OUT/"; exit 1
fi
cc -O2 -shared -fPIC -o $B/softnic/libsn_pcishim.so tools/softnic/pcishim.c -ldl || echo "pcishim: not built"
RS=$PWD/$B/railscope
NCCLLIB=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib", "libnccl.so.2"))' 2>/dev/null)
echo "libnccl: $NCCLLIB; ncclDebugLog exported: $(nm -D "$NCCLLIB" 2>/dev/null | grep -c ' ncclDebugLog$')"

# scen NAME WORLD LAUNCH EXPECT_TRANSPORT "ENV..." -- scen_train.py args
scen() {
    local name=$1 world=$2 launch=$3 expect=$4 envs=$5
    shift 6
    if [ -n "${SCEN:-}" ] && ! echo " $SCEN " | grep -q " $name "; then return; fi
    local d=$W/$name
    mkdir -p "$d/nccl"
    local args=(tests/gpu/scen_train.py --name "$name" --steps "$STEPS" --out "$d" "$@")
    local cpu="" gpu="" form="iteration {i}" prev=""
    for a in "$@"; do
        case $prev in --cpu-straggler) cpu=$a ;; --gpu-straggler) gpu=$a ;; --nvtx) form=$a ;; esac
        prev=$a
    done
    local dbg=(NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET "NCCL_DEBUG_FILE=$d/nccl/nccl.%h.%p.log")
    [ "${NOLOG:-}" = "$name" ] && dbg=()
    echo "== $name: world $world, $launch, $envs ($(el)s)"
    local t=$(date +%s%N)
    case $launch in
    torchrun)
        env "${dbg[@]}" $envs timeout -k 5 "${TMO:-120}" "$RS" record -q -o "$d/trace" -- python3 -m torch.distributed.run \
            --standalone --nproc-per-node "$world" "${args[@]}" --launch torchrun >"$d/stdout" 2>"$d/stderr" ;;
    preload) # the by-hand launch: LD_PRELOAD alone, no `railscope record` (the library sets its other entries itself)
        env "${dbg[@]}" $envs LD_PRELOAD="$PWD/$B/librailscope.so" RAILSCOPE_OUT="$d/trace" timeout -k 5 "${TMO:-120}" \
            python3 -m torch.distributed.run --standalone --nproc-per-node "$world" "${args[@]}" --launch torchrun \
            >"$d/stdout" 2>"$d/stderr" ;;
    spawn)
        env "${dbg[@]}" $envs timeout -k 5 "${TMO:-120}" "$RS" record -q -o "$d/trace" -- python3 "${args[@]}" --launch spawn \
            --nproc "$world" >"$d/stdout" 2>"$d/stderr" ;;
    env)
        local port=$((20000 + RANDOM % 20000)) pids=()
        for r in $(seq 0 $((world - 1))); do
            env "${dbg[@]}" $envs RANK=$r WORLD_SIZE=$world LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
                timeout -k 5 "${TMO:-120}" "$RS" record -q -o "$d/trace" -- python3 "${args[@]}" --launch env \
                >"$d/stdout.$r" 2>"$d/stderr.$r" &
            pids+=($!)
        done
        local rc=0
        for p in "${pids[@]}"; do wait "$p" || rc=$?; done
        (exit $rc) ;;
    esac
    local rc=$?
    echo "$name: exit $rc in $((($(date +%s%N) - t) / 1000000)) ms"
    [ $rc -ne 0 ] && { tail -5 "$d"/stderr* | grep -v '^$' | tail -8; }
    SCEN_WORLD=$world python3 tests/gpu/scen_truth.py "$d" "$name" "$launch" "$form" "$cpu" "$gpu" "$expect" ||
        echo "$name: truth incomplete"
    echo "{\"launcher\": \"$launch\", \"env\": \"$envs\", \"exit\": $rc, \"argv\": \"$*\"}" >"$d/run.json"
    "$RS" report --json "$d/trace" >"$d/report.json" 2>"$d/report.err"
    "$RS" report "$d/trace" >"$d/report.txt" 2>&1
    grep -i -m3 "steps\|straggler" "$d/report.txt"
}

mkdir -p "$W/softnic"

# NCCL's IB transport over the software NIC: a few variants of the plain probe (no tracer) first; the
# first that completes its AllReduce gives the environment of the s2_ib scenario below (IB_ENV).
# NCCL 2.28.9 crashes (SIGSEGV at address 0x7, ncclNetInit) when its GIN auto-selection finds no GDAKI
# device: ncclGin stays (ncclGin_t *)-1 (src/plugin/net.cc, fixed in 2.29.2); NCCL_GIN_TYPE=0 avoids it.
IB_ENV=${IB_ENV:-NCCL_GIN_TYPE=0 NCCL_IB_MERGE_VFS=0}
if [ "${IBPROBE:-1}" = 1 ]; then
    echo "== IB probes ($(el)s)"
    IB_OK=""
    i=0
    for v in "NCCL_GIN_TYPE=0 NCCL_IB_MERGE_VFS=0" "NCCL_IB_MERGE_VFS=0"; do
        i=$((i + 1))
        mkdir -p "$W/ibprobe$i"
        env $v BUILD=$B NCCL_DEBUG_SUBSYS=ALL NCCL_DEBUG_FILE="$W/ibprobe$i/nccl.%p.log" PROBE_TIMEOUT=40 \
            tools/softnic/nccl_ib_probe.sh 2 >"$W/ibprobe$i/out" 2>&1
        n=$(grep -o "allreduce OK" "$W/ibprobe$i/out" | wc -l) # two ranks may print on one line
        echo "probe $i ($v): $n of 2 ranks OK"
        if [ "$n" = 2 ]; then IB_OK=$v; break; fi
        grep -m3 "softnic-pcishim\|libnccl.so.2(+0x" "$W/ibprobe$i/out"
        for f in "$W/ibprobe$i"/nccl.*.log; do tail -4 "$f" | cut -c1-220; done
    done
    offs=$(grep -o 'libnccl.so.2(+0x[0-9a-f]*)' "$W"/ibprobe1/out | head -4 | grep -o '0x[0-9a-f]*' | tr '\n' ' ')
    if [ -n "$offs" ] && [ -n "$NCCLLIB" ]; then
        echo "crash frames in libnccl: $offs; symtab entries: $(nm "$NCCLLIB" 2>/dev/null | wc -l), dynamic: $(nm -D "$NCCLLIB" | wc -l)"
        { nm "$NCCLLIB" 2>/dev/null; nm -D --defined-only "$NCCLLIB"; } | python3 -c "
import sys
s = sorted({(int(l.split()[0], 16), l.split()[-1]) for l in sys.stdin if len(l.split()) >= 3 and l[:1].isalnum()})
for o in '$offs'.split():
    o = int(o, 16); c = [x for x in s if x[0] <= o]
    print(hex(o), '<-', (c[-1][1] + '+' + hex(o - c[-1][0])) if c else '?')" | c++filt
        off=${offs%% *}
        objdump -d --no-show-raw-insn -C --start-address=$((off - 64)) --stop-address=$((off + 16)) "$NCCLLIB" | tail -20
    fi
    [ -n "$IB_OK" ] && IB_ENV=$IB_OK
    tar czf "$OUT/ibprobe.tgz" -C "$W" $(cd "$W" && ls -d ibprobe*) 2>/dev/null
fi
SOCK="NCCL_NET=Socket"
# name world launcher transport env -- scen_train.py args
scen s2_base 2 torchrun NET/Socket "$SOCK" -- --nvtx "iteration {i}"
scen s2_cpu 2 torchrun NET/Socket "$SOCK" -- --nvtx "iteration {i}" --cpu-straggler 1:20 --pageable 1
scen s2_gpu 2 spawn NET/Socket "$SOCK" -- --nvtx "iter{i}" --gpu-straggler 0:100
scen s4_cpu 4 env NET/Socket "$SOCK" -- --nvtx "Step {i}" --cpu-straggler 2:15
scen s4_base 4 torchrun NET/Socket "$SOCK" -- --nvtx "step {i}" --pageable all
scen s2_trainstep 2 spawn NET/Socket "$SOCK" -- --nvtx train_step --cpu-straggler 0:10
scen s2_profstep 2 torchrun NET/Socket "$SOCK" -- --nvtx profstep --layers 3
scen s2_slownet 2 env NET/Socket "$SOCK NCCL_SOCKET_NTHREADS=1 NCCL_NSOCKS_PERTHREAD=1 NCCL_MIN_NCHANNELS=1 NCCL_MAX_NCHANNELS=1" \
    -- --nvtx "iteration {i}" --hidden 2048 --layers 4
NOLOG=s2_nolog scen s2_nolog 2 torchrun NET/Socket "$SOCK" -- --nvtx "iteration {i}" --cpu-straggler 1:8
# two late ranks (the straggler rule "late after the bulk", a Shapley split of the wait): 20 and 8 ms (rank 1
# named, rank 3 a late rank costing less), then two equal 12 ms sleeps (a tie of ranks 0 and 2); 2 untimed
# iterations first, so that NCCL's connection set-up and DDP's bucket rebuild fall outside the steps
scen s4_two 4 env NET/Socket "$SOCK" -- --nvtx "step {i}" --cpu-straggler 1:20,3:8 --warmup 2
scen s4_two_eq 4 torchrun NET/Socket "$SOCK" -- --nvtx "step {i}" --cpu-straggler 0:12,2:12 --warmup 2
# the by-hand launch (LD_PRELOAD alone; session 26): the profiler plugin, NVTX and CUPTI must be there as under record
scen s2_byhand 2 preload NET/Socket "$SOCK" -- --nvtx "iteration {i}" --cpu-straggler 1:15
# NCCL's profiler off (NCCL_PROFILER_PLUGIN=none, as an NCCL before 2.23 has none): collectives from the API calls,
# joined by railscope's own communicator keys (preload/nccl.c key_from_id)
scen s2_noplugin 2 preload NET/Socket "$SOCK NCCL_PROFILER_PLUGIN=none" -- --nvtx "iteration {i}" --cpu-straggler 1:15
# NCCL's IB transport over the software NIC (host memory; no GPUDirect): pcishim gives softnic0 a PCI path
TMO=60 scen s2_ib 2 torchrun NET/IB "$IB_ENV NCCL_NET=IB NCCL_IB_DISABLE=0 LD_LIBRARY_PATH=$PWD/$B/softnic LD_PRELOAD=$PWD/$B/softnic/libsn_pcishim.so SOFTNIC_DIR=$W/softnic SOFTNIC_PCI_DEBUG=1 SOFTNIC_DEBUG_SEGV=1" \
    -- --nvtx "iteration {i}" --cpu-straggler 1:10 --steps 20

echo "== pack ($(el)s)"
cd "$W"
for d in */; do
    d=${d%/}
    [ -f "$d/truth.json" ] || continue
    # the per-rank files (hook times) stay, so scen_truth.py can be run again on them (a few kB each)
    jq -c '{scenario, world, steps, straggler: .straggler.rank, stragglers: [.stragglers[]?.rank], transport: .transport.nccl_logged}' "$d/truth.json" 2>/dev/null ||
        python3 -c "import json,sys; t=json.load(open('$d/truth.json')); print(t['scenario'], t['world'], t['steps'], t['straggler'], [x['rank'] for x in t.get('stragglers') or []], t['transport']['nccl_logged'])"
    du -sh "$d/trace" | sed "s#^#$d: #"
done >"$OUT/summary.txt"
cat "$OUT/summary.txt"
tar czf "$OUT/scen_a.tgz" s2_base s2_cpu s2_gpu s4_cpu s4_base 2>/dev/null
tar czf "$OUT/scen_b.tgz" s2_trainstep s2_profstep s2_slownet s2_nolog 2>/dev/null
tar czf "$OUT/scen_ib.tgz" s2_ib 2>/dev/null
tar czf "$OUT/scen_two.tgz" s4_two s4_two_eq 2>/dev/null
tar czf "$OUT/scen_preload.tgz" s2_byhand s2_noplugin 2>/dev/null
cp "$W/build.log" "$OUT/" 2>/dev/null
ls -la "$OUT"
echo "== done in $(el)s"
