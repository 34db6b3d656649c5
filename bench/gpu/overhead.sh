#!/bin/bash
# Issue 16's overhead measurement, one device call on `nvidia-h200`: build railscope and the minimal CUPTI
# injection there (or use prebuilt ones: RS_BUILD=dir holding librailscope.so, railscope, mincupti.so), then run
# each part given, parts separated by `--`:
#   lockstep ARGS...   bench/gpu/lockstep.py ARGS (two processes in turns: the ratios of issue 16)
#   ablate ARGS...     bench/gpu/ablate.py ARGS (separate processes, alternating; traces kept with --keep)
#   report DIR...      `railscope report --json` of kept traces (under /tmp/rs-ablate) into $OUT
#   hostcost ARGS...   bench/gpu/hostcost.py ARGS (process CPU time per timed step, by thread)
#   toggle ARGS...     bench/gpu/cuptitoggle.py ARGS (CUPTI attached/detached in one process: its cost per phase)
#   parttoggle [ARGS]  the tracer's parts switched inside one traced ResNet-50 process (bench/gpu/parttoggle.py ARGS,
#                      ~5.5 min with the build and JIT fill: run it alone in a call): full mode's all / consumer-off /
#                      rs-off / cupti-off (PT_FULL_S seconds of cycles, default 180), then the default with no window
#                      after CUDA's initial one, all / rs-off (PT_DEFAULT_S, default 60); reports in parttoggle.tgz
#   counts             CUPTI records (kernels; copies and memsets) per transformer step, from the minimal injection
#   detach ARGS...     tests/gpu/detach_check.py ARGS: CUPTI detached between windows, checked on a planted workload
#   netcost ARGS...    the default's cost on NCCL's network path: AllReduce between two ranks on cuda:0 with their
#                      own NCCL_HOSTID (NET/Socket, the proxy thread and its ProxyStep events), modes alternating job
#                      by job (bench/gpu/netcost.py ARGS; ~7 min at its defaults, RS_NO_JIT_WARM=1 saves the warm-up)
#   shares             default-vs-full report shares of the transformer and ResNet-50 (donewhen's step alone)
#   ncclsplit          ResNet-50 DDP's NCCL family by part (~8.5 min): mirrored lock-step groups of eight (DW_ROUNDS=7)
#                      of default, nonccl, default-nolog and nonvtx, pooled against the default (NS_GROUP=A:B:...:
#                      another group of eight, e.g. default:default-w240:kernels-off:untraced:... for the windows)
#   resnetcost         where ResNet-50 DDP's default cost sits (~5 min, ~6 with the JIT fill): lock-step groups of eight (DW_ROUNDS=3, mirrored
#                      orders alternating) of untraced, default, nonccl, kernels-off and nocuda, the default's traces
#                      kept; then the pooled ratios, the step bins and the excess by time since each process's own
#                      windows (bench/gpu/lockstep_windows.py); the kept traces come back as $OUT/resnetcost.tgz
#   crashhunt [N CPUS WARMUP STEPS]  rounds of N ResNet default-mode processes started together on a small CPU set,
#                      a native backtrace of any fatal signal (bench/gpu/crashhunt.sh; CH_BUDGET seconds, default 300)
#   tailcost           what a window and the detach tail after it cost, from the default reports themselves (~6 min):
#                      lone runs with a window every 5 s, the detach armed once the window's records are in (since
#                      session 32) against TC_OTHER (default default-w5s-tickarm: at the tick after the close;
#                      default-w5s-detach2: two ticks, before session 20); TC_WORKLOADS (default "resnet transformer")
#   fullfloor          full mode against CUPTI's floor on ResNet-50 DDP (~8.5 min): DW_ROUNDS=8 mirrored lock-step
#                      groups of min-full, full and full-notick (FF_GROUP=A:B:...: another group of eight), pooled
#                      against min-full and against full
#   donewhen           issue 16's whole "Done when" in this one call (~9.5 min with the JIT warm-up): lock-step groups of every mode
#                      (DW_ROUNDS=3 rounds, mirrored orders alternating) on the transformer and ResNet-50 DDP,
#                      default-vs-full report shares of both (from the groups' kept default and full traces;
#                      DW_SHARES=separate: from lone runs, as before session 12), then bench/gpu/done_when.py's verdicts
# e.g. run(command="bench/gpu/overhead.sh lockstep --workload transformer --pairs untraced:untraced,untraced:default")
# Everything printed goes to $OUT/overhead.log too; the binaries come back as $OUT/bin.tgz (carry them next time);
# every file of $OUT also as $OUT/0-all.tgz (a call returns only 8 files).
set -u -o pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/rs-overhead-out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/overhead.log") 2>&1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
nproc; uptime
grep '^cpu ' /proc/stat # user nice system idle iowait irq softirq steal: the steal column says whether the VM shares its cores
if [ -z "${RS_BUILD:-}" ]; then
    export RS_BUILD=$PWD/build/gpu
    if ! make -j16 BUILD=build/gpu build/gpu/librailscope.so build/gpu/railscope >/tmp/rs-build.log 2>&1; then
        tail -30 /tmp/rs-build.log; exit 1
    fi
    gcc -O2 -shared -fPIC -I/usr/local/cuda/include -o "$RS_BUILD/mincupti.so" bench/gpu/mincupti.c -ldl || exit 1
    gcc -O2 -shared -fPIC -I/usr/local/cuda/include -o "$RS_BUILD/cuptitoggle.so" bench/gpu/cuptitoggle.c -ldl || exit 1
    tar czf "$OUT/bin.tgz" -C "$RS_BUILD" librailscope.so railscope mincupti.so
    echo "built in $(($(date +%s) - T0)) s"
fi
export MINCUPTI=$RS_BUILD/mincupti.so
# every workload process gets a native backtrace of a fatal signal (bench/gpu/segvbt.c; ablate.py's crash_env)
gcc -O2 -shared -fPIC -o /tmp/rs-segvbt.so bench/gpu/segvbt.c && export RS_SEGVBT=/tmp/rs-segvbt.so
# A fresh machine has an empty CUDA JIT cache: the first ResNet process JIT-compiles NCCL's PTX (cuda-gdb, session
# 11: cudaFuncGetAttributes -> cuLibraryLoadData -> libnvidia-ptxjitcompiler, ~10 s) and its first step looks like
# a 15 s "autotuning" whatever its mode; the first transformer process's step 0 took 2.4 s, not 0.4. So one short
# untraced run of each workload fills the cache before anything is measured (RS_NO_JIT_WARM=1 skips it).
if [ -z "${RS_NO_JIT_WARM:-}" ]; then
    for w in "tests/gpu/train.py --phases bench:3 --warmup 2" "bench/gpu/transformer.py --steps 3 --warmup 2"; do
        t=$(date +%s.%N)
        # shellcheck disable=SC2086 # the workload's arguments, split on purpose
        taskset -c 2-13 python3 $w --out /tmp/rs-jitwarm.json >/tmp/rs-jitwarm.log 2>&1 || tail -5 /tmp/rs-jitwarm.log
        echo "JIT cache warm-up: ${w%% *} $(python3 -c "import time; print(f'{time.time() - $t:.1f}')") s"
    done
fi
part() {
    local kind=$1
    shift
    echo "== $kind $* ($(($(date +%s) - T0)) s)"
    case $kind in
    lockstep) taskset -c 0,1,14,15 python3 bench/gpu/lockstep.py --out "$OUT" "$@" ;;
    ablate) taskset -c 0,1,14,15 python3 bench/gpu/ablate.py --out "$OUT" "$@" ;;
    report)
        for d in "$@"; do
            n=$(basename "$d")
            "$RS_BUILD/railscope" report --json "$d" >"/tmp/rs-rep-$n.json" 2>"/tmp/rs-rep-$n.err"
            echo "$n: report exit $?"
            "$RS_BUILD/railscope" report "$d" 2>&1 | head -40
        done
        tar czf "$OUT/reports.tgz" /tmp/rs-rep-*.json /tmp/rs-rep-*.err "$@" 2>/dev/null
        ls -la "$OUT/reports.tgz" ;;
    netcost) taskset -c 2-13 python3 bench/gpu/netcost.py --out "$OUT" "$@" ;;
    hostcost) taskset -c 0,1,14,15 python3 bench/gpu/hostcost.py --out "$OUT" "$@" ;;
    toggle) taskset -c 2-7 python3 bench/gpu/cuptitoggle.py --out "$OUT" "$@" ;;
    parttoggle) parttoggle "$@" ;;
    detach) taskset -c 2-7 python3 tests/gpu/detach_check.py --rs-build "$RS_BUILD" --out "$OUT" "$@" ;;
    counts) # CUPTI records per transformer step, by kind: (records at 70 steps - at 20) / 50
        for kinds in kernel memcpy,memcpy2,memset; do
            for n in 20 70; do
                echo "$kinds steps=$n: $(CUDA_INJECTION64_PATH=$MINCUPTI MINCUPTI_KINDS=$kinds taskset -c 2-7 python3 \
                    bench/gpu/transformer.py --steps $n --warmup 10 --out /tmp/rs-counts.json 2>&1 | grep mincupti)"
            done
        done ;;
    donewhen) donewhen ;;
    resnetcost) resnetcost ;;
    ncclsplit) # which part of the NCCL family is ResNet's ~0.6 % (session 23: nonccl/default 0.9941 over 13 groups):
        # mirrored lock-step groups of eight (DW_ROUNDS, default 7) of the default against the family off, NCCL's
        # INFO log off and NVTX off; ~8.5 min with the JIT fill: run it alone in a call
        part lockstep --workload "${RC_WORKLOAD:-resnet}" --steps "${DW_RSTEPS:-160}" --warmup 25 \
            --budget "${DW_BUDGET:-440}" ${RC_CPUS:+--cpus-shared "$RC_CPUS"} \
            --pairs "$(DW_ROUNDS=${DW_ROUNDS:-7} dw_groups "${NS_GROUP:-default:nonccl:default-nolog:nonvtx:default:nonccl:default-nolog:nonvtx}")"
        python3 bench/gpu/lockstep_summary.py "$OUT/lockstep-${RC_WORKLOAD:-resnet}.json" --ref default ;;
    tailcost) tailcost ;;
    fullfloor) fullfloor ;;
    crashhunt) bash bench/gpu/crashhunt.sh "$@" ;;
    shares) # the default-vs-full report shares of both workloads alone (donewhen's shares step, ~3 min)
        rm -rf /tmp/rs-dw-rep && mkdir -p /tmp/rs-dw-rep
        dw_shares transformer default-w7 300 40
        dw_shares resnet default-w15 400 25
        python3 bench/gpu/done_when.py --json "$OUT/done_when.json" \
            --shares "transformer:/tmp/rs-dw-rep/report-transformer-default.json:/tmp/rs-dw-rep/report-transformer-full.json" \
            --shares "resnet:/tmp/rs-dw-rep/report-resnet-default.json:/tmp/rs-dw-rep/report-resnet-full.json"
        tar czf "$OUT/shares.tgz" -C / tmp/rs-dw-rep tmp/rs-dw-transformer/transformer-default-w7-1 \
            tmp/rs-dw-resnet/resnet-default-w15-1 $(cd / && ls tmp/rs-dw-*/*.err) ;;
    *) echo "unknown part $kind" ;;
    esac
    bundle
}
# A device call returns at most 8 files of $OUT, the first by name (session 15's call 4 lost overhead.log, the
# transformer's lock-step results and the reports to five detach files): the rest of $OUT, this log so far included,
# also goes into 0-all.tgz, first by name, after every part (a call cut at its time limit keeps the last one), the
# smallest entries first up to 14 MiB (a returned file may be 16 MiB); 0-all.left.txt inside names what stayed out.
# A later overhead.sh in the same call rewrites it with its own.
bundle() {
    local lst=/tmp/rs-bundle.lst tot=0 sz e rc
    : >"$OUT/0-all.left.txt"
    : >"$lst"
    while read -r sz e; do
        if [ $((tot + sz)) -le $((14 << 20)) ]; then
            tot=$((tot + sz))
            echo "$e" >>"$lst"
        else
            echo "$e ($sz bytes)" >>"$OUT/0-all.left.txt"
        fi
    done < <(cd "$OUT" && for x in *; do
        case $x in 0-all.* | bin.tgz | '*') continue ;; esac
        du -sb "$x"
    done | sort -n)
    echo 0-all.left.txt >>"$lst"
    # written outside $OUT (it must not list itself); "file changed as we read it" (the log, being written) is fine
    (cd "$OUT" && tar czf /tmp/rs-bundle.tgz --warning=no-file-changed -T "$lst")
    rc=$?
    if [ $rc -le 1 ]; then mv -f /tmp/rs-bundle.tgz "$OUT/0-all.tgz"; else echo "bundle: tar failed ($rc)"; fi
    rm -f "$OUT/0-all.left.txt"
}
# Groups of eight in turns: two untraced, two default, two full, the floor, torch.profiler; the mirror reversed.
# dw_groups [GROUP]: DW_ROUNDS=3 groups, GROUP (donewhen's by default) and its mirror (the order reversed) alternating
dw_groups() {
    local g=${1:-untraced:default:full:min-full:torchprof:untraced:default:full} m i out=""
    m=$(tr : '\n' <<<"$g" | tac | paste -sd:)
    for ((i = 0; i < ${DW_ROUNDS:-3}; i++)); do
        out+=$([ $((i % 2)) = 0 ] && echo "$g" || echo "$m"),
    done
    echo "${out%,}"
}
resnetcost() {
    local pairs
    pairs=$(dw_groups untraced:default:nonccl:kernels-off:nocuda:untraced:default:nonccl)
    rm -rf /tmp/rs-rc && mkdir -p /tmp/rs-rc
    # RC_WORKLOAD=stub RC_CPUS=0-1: a dry run of this part on a machine without a GPU (no windows there)
    local w=${RC_WORKLOAD:-resnet}
    part lockstep --workload "$w" --steps "${DW_RSTEPS:-200}" --warmup 25 --budget "${DW_BUDGET:-400}" \
        --keep default --work /tmp/rs-rc --pairs "$pairs" ${RC_CPUS:+--cpus-shared "$RC_CPUS"}
    python3 bench/gpu/lockstep_summary.py "$OUT/lockstep-$w.json"
    for x in default nonccl kernels-off nocuda; do
        python3 bench/gpu/lockstep_bins.py "$OUT/lockstep-$w.json" --mode "$x" --bin 25
    done
    python3 bench/gpu/lockstep_windows.py "$OUT/lockstep-$w.json" --railscope "$RS_BUILD/railscope"
    tar czf "$OUT/resnetcost.tgz" -C /tmp rs-rc
}
# What a window and the detach tail after it cost, measured by the default reports themselves (session 20: the trace
# marks each detach, the report measures the steps between a window's close and it): lone runs of both workloads
# with a window every 5 s, the detach armed one tick after the close (default-w5s) or two (default-w5s-detach2, as
# before session 20), in both orders; each kept trace's report JSON `sampling` printed, and all of them in
# $OUT/tailcost.tgz. TC_WORKLOADS / TC_STEPS / TC_CPUS: e.g. "stub" / 300 / 0-1 for a dry run without a GPU.
tailcost() {
    local w k m steps warm tc_other=${TC_OTHER:-default-w5s-tickarm}
    rm -rf /tmp/rs-tc && mkdir -p /tmp/rs-tc/rep
    for w in ${TC_WORKLOADS:-resnet transformer}; do
        k=0
        case $w in resnet) steps=700 warm=25 ;; transformer) steps=1000 warm=40 ;; *) steps=300 warm=10 ;; esac
        for order in "default-w5s,$tc_other" "$tc_other,default-w5s"; do
            k=$((k + 1))
            taskset -c "${TC_CPUS:-2-13}" python3 bench/gpu/ablate.py --out "/tmp/rs-tc/out-$w-$k" --work "/tmp/rs-tc/$w-$k" \
                --workload "$w" --modes "$order" --rounds 1 --steps "${TC_STEPS:-$steps}" --warmup "$warm" \
                --keep "default-w5s,$tc_other" --debug-modes "default-w5s,$tc_other"
            for m in default-w5s "$tc_other"; do
                "$RS_BUILD/railscope" report --json "/tmp/rs-tc/$w-$k/$w-$m-1" >"/tmp/rs-tc/rep/$w-$m-$k.json" \
                    2>"/tmp/rs-tc/rep/$w-$m-$k.err"
                echo "report $w $m $k: exit $?; $(grep -h "CUPTI: detached" "/tmp/rs-tc/$w-$k/$w-$m-1.err" | tail -1)"
            done
        done
    done
    python3 - /tmp/rs-tc/rep/*.json <<'PY'
import json, sys
keys = ("steps", "steps_in_windows", "window_steps_measured", "window_step_excess", "window_cost_share", "detach_tails",
        "detach_tail_mean_ms", "detach_tail_steps_measured", "detach_tail_step_excess", "detach_tail_cost_share")
for f in sys.argv[1:]:
    try:
        j = json.load(open(f))
    except (OSError, ValueError) as e:
        print(f"{f}: {e}")
        continue
    sm = j.get("sampling", {})
    print(f.rsplit("/", 1)[-1], " ".join(f"{k}={sm.get(k)}" for k in keys), f"step_mean_s={j.get('step_mean_s')}")
PY
    tar czf "$OUT/tailcost.tgz" -C /tmp/rs-tc rep resnet-1/resnet-default-w5s-1 2>/dev/null
    ls -la "$OUT/tailcost.tgz"
}
# Full mode against CUPTI's floor on ResNet-50 DDP (session 17: full 1.015x the floor over 16 groups, about half of
# it the tick's flush, since changed): groups of min-full, full and full-notick (DW_ROUNDS=8, mirrored), then the
# pooled ratios against min-full and against full. FF_WORKLOAD=stub DW_CPUS=1: a dry run without a GPU.
fullfloor() {
    local w=${FF_WORKLOAD:-resnet} cpus=(${DW_CPUS:+--cpus-shared "$DW_CPUS"})
    part lockstep --workload "$w" --steps "${DW_RSTEPS:-160}" --warmup "${DW_WARMUP:-25}" --budget "${DW_BUDGET:-450}" \
        --pairs "$(DW_ROUNDS=${DW_ROUNDS:-8} dw_groups "${FF_GROUP:-min-full:full:full-notick:min-full:full:full-notick:min-full:full}")" \
        "${cpus[@]}"
    python3 bench/gpu/lockstep_summary.py "$OUT/lockstep-$w.json" --ref min-full
    python3 bench/gpu/lockstep_summary.py "$OUT/lockstep-$w.json" --ref full
}
parttoggle() {
    local m d
    for m in full default; do
        d=/tmp/rs-pt-$m
        rm -rf "$d"
        if [ $m = full ]; then
            RAILSCOPE_BENCH_HOOKS=1 RAILSCOPE_CUDA_KERNELS=all taskset -c 2-13 "$RS_BUILD/railscope" record -q -o "$d" -- \
                python3 bench/gpu/parttoggle.py --out "$OUT" --tag full --budget "${PT_FULL_S:-180}" --cycles 1000 "$@"
        else # no window after the one at CUDA's initialisation: what the default costs outside windows
            RAILSCOPE_BENCH_HOOKS=1 RAILSCOPE_CUDA_KERNEL_WINDOW=500/600000/600000 taskset -c 2-13 \
                "$RS_BUILD/railscope" record -q -o "$d" -- python3 bench/gpu/parttoggle.py --out "$OUT" --tag default \
                --phases all,rs-off --budget "${PT_DEFAULT_S:-60}" --cycles 1000 "$@"
        fi
        echo "parttoggle $m: exit $?"
        "$RS_BUILD/railscope" report --json "$d" >"$d.report.json" 2>"$d.report.err"
        "$RS_BUILD/railscope" report "$d" 2>&1 | head -25
    done
    tar czf "$OUT/parttoggle.tgz" -C /tmp rs-pt-full.report.json rs-pt-full.report.err rs-pt-default.report.json \
        rs-pt-default.report.err
}
dw_shares() { # $1 workload, $2 default's mode (its first window on steady steps), $3 steps, $4 warm-up: one run each
    local w=$1 m
    rm -rf "/tmp/rs-dw-$w"
    taskset -c 2-13 python3 bench/gpu/ablate.py --out "/tmp/rs-dw-out-$w" --work "/tmp/rs-dw-$w" --workload "$w" \
        --modes "$2",full --rounds 1 --steps "$3" --warmup "$4" --keep "$2",full --debug-modes "$2"
    cp "/tmp/rs-dw-out-$w/ablate-$w.json" "$OUT/ablate-shares-$w.json"
    # the default's attach/detach times in this workload (its exit line): a window's fixed cost, per workload
    grep -h "CUPTI: detached" "/tmp/rs-dw-$w/$w-$2-1.err" | tail -1
    for m in "$2" full; do # reports into one archive at the end: a call returns only a few files
        "$RS_BUILD/railscope" report --json "/tmp/rs-dw-$w/$w-$m-1" >"/tmp/rs-dw-rep/report-$w-$m.json" \
            2>"/tmp/rs-dw-rep/report-$w-$m.err"
        echo "report $w $m: exit $? ($(wc -c <"/tmp/rs-dw-rep/report-$w-$m.json") bytes)"
    done
    ln -sf "/tmp/rs-dw-rep/report-$w-$2.json" "/tmp/rs-dw-rep/report-$w-default.json"
}
# The shares from the lock-step groups' own default and full processes (traces kept; session 12): separate shares
# runs took ~120 s, and with them three ResNet rounds did not fit one 600-s call (session 11: 538 s with two).
# Each kept trace gets a report; done_when.py judges the default whose windows covered the most steps (a 0.5 s
# window holds 1-3 of a process's lock-step steps) against the first full. DW_SHARES=separate: the lone runs.
dw_ls_reports() { # $1 workload: reports of its kept traces; prints "DEFAULTS:FULLS" (comma lists)
    local w=$1 d m f n rc ds="" fs="" nf=0
    for d in "/tmp/rs-dw-ls-$w"/*-default /tmp/rs-dw-ls-"$w"/*-full; do
        [ -d "$d" ] || continue
        m=${d##*-}
        [ "$m" = full ] && [ $nf -ge 2 ] && continue
        n=$(basename "$d")
        f=/tmp/rs-dw-rep/report-$n.json
        # the timed steps only: under the lock-step gate the workloads name their warm-up steps "warmup N"
        "$RS_BUILD/railscope" report --json --step-marker step "$d" >"$f" 2>"/tmp/rs-dw-rep/report-$n.err"
        rc=$?
        echo "report $n: exit $rc ($(wc -c <"$f") bytes; $(grep -o 'windows covering [0-9]* of [0-9]* steps' "$f" | head -1))" >&2
        # a killed process's partial trace (exit 1) is no full to compare with (session 15: both kept fulls were
        # of the group whose process died, so no ResNet full was judged); done_when.py passes such reports over too
        [ "$m" = full ] && [ $rc = 0 ] && nf=$((nf + 1))
        if [ "$m" = full ]; then fs+=${fs:+,}$f; else ds+=${ds:+,}$f; fi
    done
    echo "$ds:$fs"
}
donewhen() {
    # DW_BUDGET: no transformer group starts after it (s). Session 11's third started ~160 s in (groups ~80 s with
    # torch.profiler's 12-s exit) under 160: 180 keeps it; ResNet's budget below is what time is left either way
    local b=${DW_BUDGET:-180} r=/tmp/rs-dw-rep keep=() tsh rsh left tj
    # DW_TWORKLOAD/DW_RWORKLOAD=stub (and DW_CPUS=0-1): a dry run of this part's plumbing without a GPU
    local tw=${DW_TWORKLOAD:-transformer} rw=${DW_RWORKLOAD:-resnet} cpus=(${DW_CPUS:+--cpus-shared "$DW_CPUS"})
    rm -rf "$r" /tmp/rs-dw-ls-* && mkdir -p "$r"
    [ "${DW_SHARES:-lockstep}" = lockstep ] && keep=(--keep default,full)
    part lockstep --workload "$tw" --steps "${DW_TSTEPS:-250}" --warmup 40 --budget "$b" --pairs "$(dw_groups)" \
        --work "/tmp/rs-dw-ls-$tw" "${keep[@]}" "${cpus[@]}"
    tj=$OUT/lockstep-$tw.json
    if [ "$tw" = "$rw" ]; then mv "$tj" "$OUT/lockstep-$tw-1.json" && tj=$OUT/lockstep-$tw-1.json; fi # a dry run
    if [ "${DW_SHARES:-lockstep}" = lockstep ]; then
        tsh=$(dw_ls_reports "$tw")
    else
        echo "== shares ($(($(date +%s) - T0)) s)"
        dw_shares transformer default-w7 300 40
        dw_shares resnet default-w15 400 25
        tsh=$r/report-transformer-default.json:$r/report-transformer-full.json
        rsh=$r/report-resnet-default.json:$r/report-resnet-full.json
    fi
    # no ResNet group is started that would not end (~90 s each, then reports and verdicts) inside the call's 600 s:
    # its budget is that time left (DW_RBUDGET caps it further), not DW_BUDGET (the transformer's), which would stop
    # the third ResNet group, which starts ~180 s in (session 11's call 1: "2 pairs in 179 s")
    left=$((${DW_LIMIT:-595} - ($(date +%s) - T0) - 120))
    b=${DW_RBUDGET:-$left}
    [ "$left" -gt "$b" ] || b=$left
    part lockstep --workload "$rw" --steps "${DW_RSTEPS:-160}" --warmup 25 --budget "$b" --pairs "$(dw_groups)" \
        --work "/tmp/rs-dw-ls-$rw" "${keep[@]}" "${cpus[@]}"
    [ "${DW_SHARES:-lockstep}" = lockstep ] && rsh=$(dw_ls_reports "$rw")
    echo "== verdicts ($(($(date +%s) - T0)) s)"
    python3 bench/gpu/done_when.py --json "$OUT/done_when.json" \
        --lockstep "$tj" "$OUT/lockstep-$rw.json" \
        --shares "transformer:$tsh" --shares "resnet:$rsh"
    tar czhf "$OUT/reports.tgz" -C "$r" $(cd "$r" && ls report-*.json report-*.err)
}
args=()
for x in "$@" --; do
    if [ "$x" = "--" ]; then
        [ ${#args[@]} -gt 0 ] && part "${args[@]}"
        args=()
    else
        args+=("$x")
    fi
done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
grep '^cpu ' /proc/stat
echo "done in $(($(date +%s) - T0)) s"
bundle
